import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../src/companion/mind-document.ts";
import { systemClock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { textReply, toolReply } from "../../testkit/messages-api.ts";
import {
  createWorld,
  dataDirText,
  OWNER_ID,
  type Presence,
  startPresence,
  stopPresence,
  untilListening,
  type World,
  waitFor,
} from "./harness.ts";

/** pm2's kill_timeout in ecosystem.config.cjs: a stop must finish well within it. */
const KILL_TIMEOUT_MS = 10_000;

let world: World;

beforeEach(async () => {
  world = await createWorld();
});

afterEach(async () => {
  await world.close();
});

async function start(env: Record<string, string> = {}): Promise<Presence> {
  const presence = startPresence(world, env);
  await untilListening(world, presence);
  return presence;
}

async function loggedMessages() {
  const log = await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" });
  return log.all();
}

const replyRequests = () => world.model.requests.length;

/** Writes an earlier conversation into the log before the bot starts, each entry some hours back. */
async function seedLog(
  ...entries: {
    hoursAgo: number;
    role: "user" | "assistant";
    trigger?: "reply" | "heartbeat";
    text: string;
  }[]
): Promise<void> {
  const log = await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" });
  for (const { hoursAgo, ...entry } of entries) {
    const ts = new Date(systemClock.now().getTime() - hoursAgo * 3_600_000).toISOString();
    await log.append({ ...entry, channel: "telegram", ts });
  }
}

describe("presence start, end to end", () => {
  it("answers the owner's message with exactly one reply, and stops on SIGTERM with exit 0", async () => {
    const presence = await start();
    expect(world.bot.commands.map((c) => c.command)).toContain("pause");
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { text: "Good morning, just woke up." });
    await world.bot.waitForSent(1, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(world.bot.sent.map((s) => [s.chatId, s.text])).toEqual([[OWNER_ID, "Answer 1."]]);
    // An immediate answer to one message is not a quoted reply: the chat stays clean.
    expect(world.bot.sent[0]?.replyTo).toBeUndefined();
    expect(world.bot.actions.some((a) => a.action === "typing")).toBe(true);
    const { code, ms } = await stopPresence(presence);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(KILL_TIMEOUT_MS);
    const log = await loggedMessages();
    expect(log.map((m) => [m.role, m.text])).toEqual([
      ["user", "Good morning, just woke up."],
      ["assistant", "Answer 1."],
    ]);
    expect(world.model.problems).toEqual([]);
    expect(presence.stdout()).not.toContain("Good morning");
  });

  it("shows the model a photo the owner sends, with its caption", async () => {
    const presence = await start();
    const bytes = Uint8Array.from(Buffer.from("ffd8ffe000104a46494600010100000100010000ffd9", "hex"));
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { photo: { bytes, caption: "my balcony garden" } });
    await world.bot.waitForSent(1, 15_000);
    await stopPresence(presence);
    const blocks = world.model.requests[0]?.body.messages.flatMap((m) =>
      typeof m.content === "string" ? [] : m.content,
    );
    const image = blocks?.find((b) => b.type === "image") as
      | { source?: { media_type?: string; data?: string } }
      | undefined;
    expect(image?.source).toMatchObject({
      media_type: "image/jpeg",
      data: Buffer.from(bytes).toString("base64"),
    });
    expect(JSON.stringify(blocks)).toContain("my balcony garden");
    expect(world.model.problems).toEqual([]);
  });

  it("reacts to a message that needs no answer instead of writing, and the next reply knows it reacted", async () => {
    const presence = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.model.enqueue(toolReply("react", { emoji: "👍" }));
    const thanks = world.bot.message(owner, { text: "ok thanks" });
    await world.bot.waitForCall((c) => c.method === "setMessageReaction" && c.status === 200, 15_000);
    expect(world.bot.reactions).toEqual([{ chatId: OWNER_ID, messageId: thanks.messageId, emoji: ["👍"] }]);
    world.bot.message(owner, { text: "oh, one more thing" });
    await world.bot.waitForSent(1, 15_000);
    await stopPresence(presence);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    const log = await loggedMessages();
    expect(log.map((m) => [m.role, m.text, m.reaction])).toEqual([
      ["user", "ok thanks", undefined],
      ["assistant", "", "👍"],
      ["user", "oh, one more thing", undefined],
      ["assistant", "Answer 1.", undefined],
    ]);
    const next = JSON.stringify(world.model.requests[1]?.body);
    expect(next).toContain("you reacted 👍");
    expect(world.model.problems).toEqual([]);
  });

  it("logs no reaction Telegram refused (their message was deleted): the message counts as handled, and the next reply knows of no reaction", async () => {
    const presence = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.model.enqueue(toolReply("react", { emoji: "👍" }));
    world.bot.failNext("setMessageReaction", { type: "bad-request", description: "MESSAGE_ID_INVALID" });
    world.bot.message(owner, { text: "ok thanks" });
    await world.bot.waitForCall((c) => c.method === "setMessageReaction", 15_000);
    world.bot.message(owner, { text: "oh, one more thing" });
    await world.bot.waitForSent(1, 15_000);
    await stopPresence(presence);
    expect(world.bot.reactions).toEqual([]);
    const log = await loggedMessages();
    expect(log.map((m) => [m.role, m.text, m.reaction, m.handledWithoutReply])).toEqual([
      ["user", "ok thanks", undefined, true],
      ["user", "oh, one more thing", undefined, undefined],
      ["assistant", "Answer 1.", undefined, undefined],
    ]);
    // The awareness block and the conversation; the react tool's description names the wording too.
    const { system, messages } = world.model.requests[1]?.body ?? {};
    expect(JSON.stringify({ system, messages })).not.toContain("reacted");
    expect(world.model.problems).toEqual([]);
  });

  it("gives a stranger the fixed reply with their id, calls no model and logs nothing of theirs", async () => {
    const presence = await start();
    world.bot.message(world.bot.user(555, "Eve"), { text: "hey, who are you? secret-stranger-words" });
    await world.bot.waitForSent(1, 15_000);
    expect(world.bot.sent[0]?.chatId).toBe(555);
    expect(world.bot.sent[0]?.text).toContain("555");
    await stopPresence(presence);
    expect(replyRequests()).toBe(0);
    expect(await dataDirText(world.dataDir)).not.toContain("secret-stranger-words");
    expect(presence.stdout()).not.toContain("secret-stranger-words");
  });

  it("after kill -9 mid-turn, a restart answers exactly once and the log is intact", async () => {
    const first = await start();
    world.model.failNext("slow", 1, { delayMs: 4_000 });
    const question = world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Are you there?" });
    await waitFor(() => replyRequests() === 1, 15_000);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    expect(world.bot.sent).toEqual([]);

    const second = await start();
    await world.bot.waitForSent(1, 15_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(world.bot.sent).toHaveLength(1);
    const answer = world.bot.sent[0]?.text;
    // Sent after a restart: shown as the answer to the message it answers.
    expect(world.bot.sent[0]?.replyTo).toEqual({
      messageId: question.messageId,
      allowSendingWithoutReply: true,
    });
    expect(await stopPresence(second)).toMatchObject({ code: 0 });
    expect(world.model.requests.length).toBe(2);
    const log = await loggedMessages();
    expect(log.map((m) => [m.role, m.text])).toEqual([
      ["user", "Are you there?"],
      ["assistant", answer],
    ]);
    expect(world.bot.pendingUpdates()).toBe(0);
  });

  it("anchors its answer to a message sent while it was not running, though it answers at once", async () => {
    // Sent ten minutes ago, while presence was down: Telegram hands it over once presence starts.
    const question = world.bot.message(
      world.bot.user(OWNER_ID, "Ada"),
      { text: "Did you get my note?" },
      { sentAt: new Date(Date.now() - 10 * 60_000) },
    );
    const presence = await start();
    await world.bot.waitForSent(1, 15_000);
    await stopPresence(presence);
    expect(world.bot.sent[0]?.replyTo).toEqual({
      messageId: question.messageId,
      allowSendingWithoutReply: true,
    });
    expect(world.model.problems).toEqual([]);
  });

  it("delivers every reply through 429s, 5xx and dropped connections, in order, none twice", async () => {
    const presence = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    const faults = [
      { type: "rate-limit", retryAfter: 1 },
      { type: "server-error", status: 502 },
      { type: "drop" },
    ] as const;
    for (const [i, text] of ["first", "second", "third"].entries()) {
      world.bot.failNext("sendMessage", faults[i] as (typeof faults)[number]);
      world.bot.message(owner, { text });
      await world.bot.waitForSent(i + 1, 20_000);
    }
    await stopPresence(presence);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1.", "Answer 2.", "Answer 3."]);
    const statuses = world.bot.calls.filter((c) => c.method === "sendMessage").map((c) => c.status);
    expect(statuses).toEqual([429, 200, 502, 200, "dropped", 200]);
    const log = await loggedMessages();
    expect(log.filter((m) => m.role === "assistant").map((m) => m.text)).toEqual([
      "Answer 1.",
      "Answer 2.",
      "Answer 3.",
    ]);
  });

  it("resumes a long two-part reply Telegram refused half-way: each part once, one model call", async () => {
    const presence = await start();
    const parts = [`${"Part one. ".repeat(300).trim()}`, `${"Part two. ".repeat(300).trim()}`];
    world.model.setHandler(() => textReply(parts.join("\n\n")));
    world.bot.failNext("sendMessage", { type: "slow", ms: 0 }, { type: "rate-limit", retryAfter: 3600 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Tell me everything." });
    await world.bot.waitForSent(2, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    await stopPresence(presence);
    expect(world.bot.sent.map((s) => s.text)).toEqual(parts);
    expect(replyRequests()).toBe(1);
    const log = await loggedMessages();
    expect(log.filter((m) => m.role === "assistant").map((m) => m.text)).toEqual([parts.join("\n\n")]);
  });

  it("answers later when the model is overloaded for a while, without crashing", async () => {
    const presence = await start({ PRESENCE_MAX_RETRIES: "2" });
    world.model.failNext("529", 3, { retryAfterMs: 1 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Long day." });
    await world.bot.waitForSent(1, 20_000);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    expect(world.model.requests.length).toBe(4);
    expect(presence.child.exitCode).toBeNull();
    expect((await stopPresence(presence)).code).toBe(0);
  });

  it("holds a heartbeat with 3 unanswered check-ins without calling the model", async () => {
    await seedLog(
      { hoursAgo: 7, role: "user", text: "see you later" },
      { hoursAgo: 6.9, role: "assistant", trigger: "reply", text: "see you!" },
      ...[5, 3, 1].map((h) => ({
        hoursAgo: h,
        role: "assistant" as const,
        trigger: "heartbeat" as const,
        text: `check-in ${h}`,
      })),
    );
    const presence = await start({
      PRESENCE_HEARTBEAT_CRON: "* * * * * *",
      PRESENCE_WEEKEND_MAX_UNANSWERED: "3",
    });
    await waitFor(
      async () => (await openMind(world.dataDir, systemClock)).read().decisions.length >= 1,
      15_000,
    );
    await stopPresence(presence);
    const mind = await openMind(world.dataDir, systemClock);
    const decisions = mind.read().decisions;
    expect(decisions.every((d) => d.fire === false)).toBe(true);
    expect(decisions[0]?.reason).toMatch(/unanswered/);
    expect(replyRequests()).toBe(0);
    expect(world.bot.sent).toEqual([]);
  });

  it("stops checking in when the person blocked the bot, without a retry loop, until they write again", async () => {
    await seedLog(
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
    const presence = await start({
      PRESENCE_HEARTBEAT_CRON: "* * * * * *",
      PRESENCE_WEEKEND_MAX_UNANSWERED: "3",
    });
    const decisions = async () => (await openMind(world.dataDir, systemClock)).read().decisions;
    await waitFor(
      async () => (await decisions()).some((d) => d.reason === "blocked"),
      15_000,
      () => `${presence.stdout()}\n${JSON.stringify(world.model.problems)}`,
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
    await stopPresence(presence);
  });

  it("finishes the reply in flight on SIGINT (pm2's stop signal), then exits 0 within the kill timeout", async () => {
    const presence = await start();
    world.model.failNext("slow", 1, { delayMs: 1_500 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Quick question" });
    await waitFor(() => replyRequests() === 1, 15_000);
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
    const first = await start();
    const second = startPresence(world);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toBe(
      `npm run cli -- start: presence is already running (pid ${first.pid}, start) for data directory ${world.dataDir}; stop it first\n`,
    );
    expect(first.child.exitCode).toBeNull();
    await stopPresence(first);
  });
});

describe("commands on Telegram, end to end", () => {
  it("answers /help with the menu's commands, one line each, and an unknown command locally: no model call", async () => {
    const presence = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { text: "/help" });
    world.bot.message(owner, { text: "/dance like nobody's watching" });
    await world.bot.waitForSent(2, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    await stopPresence(presence);
    const [help, unknown] = world.bot.sent.map((s) => s.text);
    const listed = (help ?? "").split("\n").filter((line) => line.startsWith("/"));
    expect(listed).toEqual(world.bot.commands.map((c) => `/${c.command} — ${c.description}`));
    expect(listed.map((line) => line.split(" ")[0])).toContain("/help");
    expect(unknown).toBe("I don't know the command /dance. /help lists the ones I do.");
    expect(world.bot.sent).toHaveLength(2);
    expect(replyRequests()).toBe(0);
    expect(await loggedMessages()).toEqual([]);
  });

  it("/forget 2 after a restart deletes the item the person saw as 2 in /memory, from a mind.json of the old shape", async () => {
    await mkdir(world.dataDir, { recursive: true, mode: 0o700 });
    await copyFile(
      join(import.meta.dirname, "../fixtures/data-files/mind.v1-understanding.json"),
      join(world.dataDir, "mind.json"),
    );
    const owner = world.bot.user(OWNER_ID, "Ada");
    const first = await start();
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

    const second = await start();
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
    expect(replyRequests()).toBe(0);
  });

  it("/wipe asks, /wipe no cancels, /wipe yes deletes; /status then says the token count was kept, and why", async () => {
    const presence = await start();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { text: "My sister's wedding is in June." });
    await world.bot.waitForSent(1, 15_000);
    const steps = ["/wipe", "/wipe no", "/wipe yes", "/status"];
    for (const [i, text] of steps.entries()) {
      world.bot.message(owner, { text });
      await world.bot.waitForSent(2 + i, 15_000);
    }
    await stopPresence(presence);
    const [, question, cancelled, done, status] = world.bot.sent.map((s) => s.text);
    expect(question).toContain("It keeps only the count of tokens I've used (numbers, no words)");
    expect(cancelled).toBe("Cancelled: nothing was deleted. (/wipe yes deletes everything.)");
    expect(done).toContain("Everything is deleted");
    expect(status).toMatch(
      /^Tokens today: [1-9][\d,]* of [\d,]+; the count was kept through your \/wipe at \d\d:\d\d \(a number, no words\), so today's budget still holds$/m,
    );
    expect(replyRequests()).toBe(1);
    expect(await loggedMessages()).toEqual([]);
    expect(await dataDirText(world.dataDir)).not.toContain("wedding");
  });
});
