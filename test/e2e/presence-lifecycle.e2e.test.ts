import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../src/companion/mind-document.ts";
import { systemClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { textReply, toolReply } from "../../testkit/messages-api.ts";
import {
  createWorld,
  OWNER_ID,
  QUIET_SETTINGS,
  startPresence,
  stopPresence,
  type World,
  waitFor,
} from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";
import { KILL_TIMEOUT_MS, replyRequests, seedLog, start } from "./presence-start.ts";

describe("presence start, end to end: stopping and refusing to start", () => {
  let world: World;

  beforeEach(async () => {
    world = await createWorld();
  });

  afterEach(async () => {
    await world.close();
  });

  it("finishes the reply in flight on SIGINT (pm2's stop signal), then exits 0 within the kill timeout", async () => {
    const presence = await start(world);
    world.model.failNext("slow", 1, { delayMs: 1_500 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Quick question" });
    await waitFor(() => replyRequests(world) === 1, 15_000);
    const { code, ms } = await stopPresence(presence, "SIGINT");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(KILL_TIMEOUT_MS);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
  });

  it("exits 2 with a clear message when Telegram rejects the token", async () => {
    const presence = startPresence(world, { TELEGRAM_BOT_TOKEN: "999999:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" });
    expect(await presence.exited).toBe(2);
    expect(presence.stderr()).toContain("Telegram rejected TELEGRAM_BOT_TOKEN");
    expect(presence.stderr()).toContain("@BotFather");
    expect(presence.stderr()).not.toMatch(/\n\s+at /);
  });

  it("exits 2 listing every missing setting, without a stack trace", async () => {
    const presence = startPresence(world, { TELEGRAM_OWNER_ID: "", ANTHROPIC_API_KEY: "" });
    expect(await presence.exited).toBe(2);
    expect(presence.stderr()).toContain("TELEGRAM_OWNER_ID");
    expect(presence.stderr()).toContain("ANTHROPIC_API_KEY");
    expect(presence.stderr()).toContain("npm run setup");
    expect(presence.stderr()).not.toMatch(/\n\s+at /);
  });

  it("refuses a second start on the same data, naming the running PID", async () => {
    const first = await start(world);
    const second = startPresence(world);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toBe(
      `npm run cli -- start: presence is already running (pid ${first.pid}, start) for data directory ${world.dataDir}; stop it first\n`,
    );
    expect(first.child.exitCode).toBeNull();
    await stopPresence(first);
  });
});

/**
 * Faults and check-ins where the process around the bot is not the point: the whole wiring of
 * `start` (real grammY, the real SDK, node-cron's schedule, the same settings, clock and timers)
 * in this process, which spares each case a process's start-up.
 */
describe("presence start's wiring, in this process: faults and check-ins", () => {
  const presence = inProcessBotPerTest();
  const startBot = (env: Record<string, string> = {}) =>
    presence.start(
      { ...QUIET_SETTINGS, ...env },
      { clock: systemClock, timers: systemTimers, logger: silentLogger },
    );
  /** "running", or the exit code the bot stopped with (a fatal error stops it with 1). */
  const stillRunning = (done: Promise<number>) => Promise.race([done, Promise.resolve("running")]);

  it("answers later when the model is overloaded for a while, without crashing", async () => {
    const { world } = presence;
    const running = await startBot({ PRESENCE_MAX_RETRIES: "2" });
    world.model.failNext("529", 3, { retryAfterMs: 1 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Long day." });
    await world.bot.waitForSent(1, 20_000);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    expect(world.model.requests.length).toBe(4);
    expect(await stillRunning(running.done)).toBe("running");
    expect(await running.stop()).toBe(0);
  });

  it("holds a heartbeat with 3 unanswered check-ins without calling the model", async () => {
    const { world } = presence;
    await seedLog(
      world,
      { hoursAgo: 7, role: "user", text: "see you later" },
      { hoursAgo: 6.9, role: "assistant", trigger: "reply", text: "see you!" },
      ...[5, 3, 1].map((h) => ({
        hoursAgo: h,
        role: "assistant" as const,
        trigger: "heartbeat" as const,
        text: `check-in ${h}`,
      })),
    );
    const running = await startBot({
      PRESENCE_HEARTBEAT_CRON: "* * * * * *",
      PRESENCE_WEEKEND_MAX_UNANSWERED: "3",
    });
    await waitFor(
      async () => (await openMind(world.dataDir, systemClock)).read().decisions.length >= 1,
      15_000,
    );
    await running.stop();
    const mind = await openMind(world.dataDir, systemClock);
    const decisions = mind.read().decisions;
    expect(decisions.every((d) => d.fire === false)).toBe(true);
    expect(decisions[0]?.reason).toMatch(/unanswered/);
    expect(replyRequests(world)).toBe(0);
    expect(world.bot.sent).toEqual([]);
  });

  it("stops checking in when the person blocked the bot, without a retry loop, until they write again", async () => {
    const { world } = presence;
    await seedLog(
      world,
      { hoursAgo: 7, role: "user", text: "night!" },
      { hoursAgo: 6.9, role: "assistant", trigger: "reply", text: "sleep well" },
    );
    world.model.setHandler((body) => {
      const forced = (body as { tool_choice?: { type: string; name?: string } }).tool_choice;
      if (forced?.name === "decide_checkin")
        return toolReply("decide_checkin", { send: true, why: "morning", topic: "garden" });
      if (forced?.name === "write_message")
        return toolReply("write_message", { message: "How is the garden doing?" });
      return textReply("Welcome back.");
    });
    world.bot.block(OWNER_ID);
    const running = await startBot({
      PRESENCE_HEARTBEAT_CRON: "* * * * * *",
      PRESENCE_WEEKEND_MAX_UNANSWERED: "3",
    });
    const decisions = async () => (await openMind(world.dataDir, systemClock)).read().decisions;
    await waitFor(
      async () => (await decisions()).some((d) => d.reason === "blocked"),
      15_000,
      () => JSON.stringify(world.model.problems),
    );
    const blockedAt = (await decisions()).findIndex((d) => d.reason === "blocked");
    await waitFor(async () => (await decisions()).length >= blockedAt + 3, 15_000);
    expect(world.bot.calls.filter((c) => c.method === "sendMessage").map((c) => c.status)).toEqual([403]);
    expect(world.model.requests.length).toBe(2);
    expect((await decisions()).slice(blockedAt + 1).every((d) => !d.fire)).toBe(true);

    world.bot.unblock(OWNER_ID);
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "sorry, I'm back" });
    await world.bot.waitForSent(1, 15_000);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Welcome back."]);
    await running.stop();
  });
});
