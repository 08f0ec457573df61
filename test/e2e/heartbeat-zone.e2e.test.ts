import { describe, expect, it } from "vitest";
import { SettableClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { OWNER_ID, waitFor } from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";

/**
 * The heartbeat schedule following the person's /tz: something the real process does not show
 * from outside, so `start` runs in this process.
 */

const presence = inProcessBotPerTest();

describe("the heartbeat schedule", () => {
  it("moves to the person's zone on /tz, and back on /tz off", async () => {
    const clock = new SettableClock("2026-03-10T10:30:00Z");
    const running = await presence.start(
      { PRESENCE_TIMEZONE: "UTC", PRESENCE_HEARTBEAT_CRON: "0 9 * * *" },
      { clock, timers: systemTimers, logger: silentLogger },
    );
    const now = clock.now();
    const next = () => running.nextHeartbeat(now)?.toISOString();
    const untilNextHeartbeat = (expected: string) =>
      waitFor(
        () => next() === expected,
        5_000,
        () => `next heartbeat still ${next()}`,
      );
    expect(next()).toBe("2026-03-11T09:00:00.000Z");

    const { bot } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    bot.message(owner, { text: "/tz Asia/Tokyo" });
    await bot.waitForSent(1);
    await untilNextHeartbeat("2026-03-11T00:00:00.000Z");

    bot.message(owner, { text: "/tz off" });
    await bot.waitForSent(2);
    await untilNextHeartbeat("2026-03-11T09:00:00.000Z");
    expect(bot.sent.map((s) => s.text)).toEqual([
      expect.stringContaining("Asia/Tokyo"),
      expect.stringContaining("home zone, UTC"),
    ]);
  });
});
