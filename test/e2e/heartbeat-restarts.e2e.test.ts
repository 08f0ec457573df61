import { describe, expect, it, vi } from "vitest";
import type { HeartbeatScheduleOptions } from "../../src/app/scheduler.ts";
import { SettableClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { OWNER_ID, waitFor } from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";

/**
 * Two /tz in quick succession, while stopping a schedule takes a moment (a tick finishing):
 * the restarts must not overlap, or one of the schedules they start is never stopped and the
 * heartbeat fires twice per tick for the rest of the process.
 */

const schedules = vi.hoisted(() => ({ started: 0, live: new Set<number>() }));

vi.mock("../../src/app/scheduler.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/app/scheduler.ts")>();
  return {
    ...real,
    startHeartbeatSchedule(options: HeartbeatScheduleOptions) {
      const schedule = real.startHeartbeatSchedule(options);
      schedules.started += 1;
      const id = schedules.started;
      schedules.live.add(id);
      return {
        nextRun: (now: Date) => schedule.nextRun(now),
        async stop() {
          await new Promise((resolve) => setTimeout(resolve, 150));
          await schedule.stop();
          schedules.live.delete(id);
        },
      };
    },
  };
});

const presence = inProcessBotPerTest();

describe("the heartbeat schedule across quick /tz changes", () => {
  it("leaves exactly one live schedule, and none after stopping", async () => {
    const running = await presence.start(
      { PRESENCE_TIMEZONE: "UTC", PRESENCE_HEARTBEAT_CRON: "0 9 * * *" },
      {
        clock: new SettableClock("2026-03-10T10:30:00Z"),
        timers: systemTimers,
        logger: silentLogger,
      },
    );
    expect(schedules.live.size).toBe(1);

    const { bot } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    bot.message(owner, { text: "/tz Asia/Tokyo" });
    bot.message(owner, { text: "/tz Europe/Lisbon" });
    await bot.waitForSent(2);
    await waitFor(
      () => schedules.started === 3,
      5_000,
      () => `${schedules.started} schedules started`,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(schedules.live.size).toBe(1);
    expect(running.nextHeartbeat(new Date("2026-03-10T10:30:00Z"))?.toISOString()).toBe(
      "2026-03-11T09:00:00.000Z",
    );

    await running.stop();
    expect(schedules.live.size).toBe(0);
  });
});
