import { describe, expect, it } from "vitest";
import { systemClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { OWNER_ID, QUIET_SETTINGS } from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";

/**
 * Telegram answering half a response and then nothing, through the whole wiring of `start` (in
 * this process: real grammY against the Bot API fake) with its default limits and real time:
 * each must cost seconds (the 5 s limit on a stalled answer, then a retry), where one
 * client-wide 60 s timeout used to hold everything up for a minute.
 */

const presence = inProcessBotPerTest();

const start = () =>
  presence.start(QUIET_SETTINGS, { clock: systemClock, timers: systemTimers, logger: silentLogger });

async function assistantTexts(): Promise<string[]> {
  const log = await MessageLog.open({
    dataDir: presence.world.dataDir,
    clock: systemClock,
    timeZone: "UTC",
  });
  return (await log.all()).filter((m) => m.role === "assistant").map((m) => m.text);
}

describe("Telegram cutting its answers off, end to end", () => {
  it("repeats a reply whose answer stalled within seconds, once, and answers the next message at once", async () => {
    const { world } = presence;
    const running = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.failNext("sendMessage", { type: "cut-off", ending: "stall" });
    const asked = performance.now();
    world.bot.message(owner, { text: "Are you there?" });
    await world.bot.waitForSent(2, 20_000);
    // The settle (1.5 s), the stalled answer's 5 s, a 1 s backoff, and the model: about 9 s here.
    expect(performance.now() - asked).toBeLessThan(15_000);
    const next = performance.now();
    world.bot.message(owner, { text: "Good." });
    await world.bot.waitForSent(3, 10_000);
    expect(performance.now() - next).toBeLessThan(5_000);
    await running.stop();
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1.", "Answer 1.", "Answer 2."]);
    expect(await assistantTexts()).toEqual(["Answer 1.", "Answer 2."]);
  }, 60_000);

  it("answers within seconds a message whose long poll answer stalled half-way", async () => {
    const { world } = presence;
    const running = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    // The poll under way answers the first message; the one after it takes the fault.
    world.bot.failNext("getUpdates", { type: "cut-off", ending: "stall" });
    world.bot.message(owner, { text: "Morning." });
    await world.bot.waitForSent(1, 15_000);
    const asked = performance.now();
    world.bot.message(owner, { text: "Still there?" });
    await world.bot.waitForSent(2, 20_000);
    // The stalled answer's 5 s, grammY's 3 s before polling again, the settle and the model.
    expect(performance.now() - asked).toBeLessThan(15_000);
    await running.stop();
    expect(world.bot.calls.filter((c) => c.method === "getUpdates" && c.status === "cut-off")).toHaveLength(
      1,
    );
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1.", "Answer 2."]);
  }, 60_000);
});
