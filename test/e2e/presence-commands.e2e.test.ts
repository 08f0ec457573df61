import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../src/companion/mind-document.ts";
import { systemClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { createWorld, dataDirText, OWNER_ID, QUIET_SETTINGS, stopPresence, type World } from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";
import { loggedMessages, replyRequests, start } from "./presence-start.ts";

describe("commands on Telegram, end to end", () => {
  let world: World;

  beforeEach(async () => {
    world = await createWorld();
  });

  afterEach(async () => {
    await world.close();
  });

  it("/forget 2 after a restart deletes the item the person saw as 2 in /memory, from a mind.json of the old shape", async () => {
    await mkdir(world.dataDir, { recursive: true, mode: 0o700 });
    await copyFile(
      join(import.meta.dirname, "../fixtures/data-files/mind.v1-understanding.json"),
      join(world.dataDir, "mind.json"),
    );
    const owner = world.bot.user(OWNER_ID, "Ada");
    const first = await start(world);
    world.bot.message(owner, { text: "/memory" });
    await world.bot.waitForSent(1, 15_000);
    expect(await stopPresence(first)).toMatchObject({ code: 0 });
    expect(world.bot.sent[0]?.text).toContain(
      "What I know\n1. - (user) runs on Sundays\n    source unknown\n2. - (inferred) trains for a half marathon\n    source unknown",
    );
    // While it is down, something is learned that a new listing would put first.
    const mind = await openMind(world.dataDir, systemClock);
    await mind.update((m) => {
      m.scratchpad.understanding_known.unshift({
        id: "k-new",
        text: "- (user) has a knee injury",
        sourceMessageIds: [],
      });
    });

    const second = await start(world);
    world.bot.message(owner, { text: "/forget 2" });
    await world.bot.waitForSent(2, 15_000);
    world.bot.message(owner, { text: "/forget 9" });
    await world.bot.waitForSent(3, 15_000);
    expect(await stopPresence(second)).toMatchObject({ code: 0 });
    const [, forgot, unknown] = world.bot.sent.map((s) => s.text);
    expect(forgot).toContain('Forgotten: "- (inferred) trains for a half marathon".');
    expect(unknown).toBe(
      'There is no 9 in your last /memory list (it had 5). Send /memory to see the list. To forget the words "9", send /forget "9".',
    );
    const data = await dataDirText(world.dataDir);
    expect(data).not.toContain("(inferred) trains for a half marathon");
    expect(data).toContain("- (user) runs on Sundays");
    expect(data).toContain("knee injury");
    expect(replyRequests(world)).toBe(0);
  });
});

/**
 * Commands answered on Telegram where the process around the bot is not the point: the whole
 * wiring of `start` (real grammY, the real SDK, the same settings, clock and timers) in this
 * process, which spares each case a process's start-up.
 */
describe("commands on Telegram, through start's wiring in this process", () => {
  const presence = inProcessBotPerTest();
  const startBot = () =>
    presence.start(QUIET_SETTINGS, { clock: systemClock, timers: systemTimers, logger: silentLogger });

  it("answers /help with the menu's commands, one line each, and an unknown command locally: no model call", async () => {
    const { world } = presence;
    const running = await startBot();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { text: "/help" });
    world.bot.message(owner, { text: "/dance like nobody's watching" });
    await world.bot.waitForSent(2, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    await running.stop();
    const [help, unknown] = world.bot.sent.map((s) => s.text);
    const listed = (help ?? "").split("\n").filter((line) => line.startsWith("/"));
    expect(listed).toEqual(world.bot.commands.map((c) => `/${c.command} — ${c.description}`));
    expect(listed.map((line) => line.split(" ")[0])).toContain("/help");
    expect(unknown).toBe("I don't know the command /dance. /help lists the ones I do.");
    expect(world.bot.sent).toHaveLength(2);
    expect(replyRequests(world)).toBe(0);
    expect(await loggedMessages(world)).toEqual([]);
  });

  it("/wipe asks, /wipe no cancels, /wipe yes deletes; /status then says the token count was kept, and why", async () => {
    const { world } = presence;
    const running = await startBot();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { text: "My sister's wedding is in June." });
    await world.bot.waitForSent(1, 15_000);
    const steps = ["/wipe", "/wipe no", "/wipe yes", "/status"];
    for (const [i, text] of steps.entries()) {
      world.bot.message(owner, { text });
      await world.bot.waitForSent(2 + i, 15_000);
    }
    await running.stop();
    const [, question, cancelled, done, status] = world.bot.sent.map((s) => s.text);
    expect(question).toContain("It keeps only the count of tokens I've used (numbers, no words)");
    expect(cancelled).toBe("Cancelled: nothing was deleted. (/wipe yes deletes everything.)");
    expect(done).toContain("Everything is deleted");
    expect(status).toMatch(
      /^Tokens today: [1-9][\d,]* of [\d,]+; the count was kept through your \/wipe at \d\d:\d\d \(a number, no words\), so today's budget still holds$/m,
    );
    expect(replyRequests(world)).toBe(1);
    expect(await loggedMessages(world)).toEqual([]);
    expect(await dataDirText(world.dataDir)).not.toContain("wedding");
  });
});
