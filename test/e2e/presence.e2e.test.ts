import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import { textReply, toolReply } from "../../testkit/messages-api.ts";
import {
  createWorld,
  dataDirText,
  OWNER_ID,
  QUIET_SETTINGS,
  stopPresence,
  type World,
  waitFor,
} from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";
import { KILL_TIMEOUT_MS, loggedMessages, replyRequests, start } from "./presence-start.ts";

describe("presence start, end to end", () => {
  let world: World;

  beforeEach(async () => {
    world = await createWorld();
  });

  afterEach(async () => {
    await world.close();
  });

  it("answers the owner's message with exactly one reply, and stops on SIGTERM with exit 0", async () => {
    const presence = await start(world);
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
    const log = await loggedMessages(world);
    expect(log.map((m) => [m.role, m.text])).toEqual([
      ["user", "Good morning, just woke up."],
      ["assistant", "Answer 1."],
    ]);
    expect(world.model.problems).toEqual([]);
    expect(presence.stdout()).not.toContain("Good morning");
  });

  it("gives a stranger the fixed reply with their id, calls no model and logs nothing of theirs", async () => {
    const presence = await start(world);
    world.bot.message(world.bot.user(555, "Eve"), { text: "hey, who are you? secret-stranger-words" });
    await world.bot.waitForSent(1, 15_000);
    expect(world.bot.sent[0]?.chatId).toBe(555);
    expect(world.bot.sent[0]?.text).toContain("555");
    await stopPresence(presence);
    expect(replyRequests(world)).toBe(0);
    expect(await dataDirText(world.dataDir)).not.toContain("secret-stranger-words");
    expect(presence.stdout()).not.toContain("secret-stranger-words");
  });

  it("after kill -9 mid-turn, a restart answers exactly once and the log is intact", async () => {
    const first = await start(world);
    world.model.failNext("slow", 1, { delayMs: 4_000 });
    const question = world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Are you there?" });
    await waitFor(() => replyRequests(world) === 1, 15_000);
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    expect(world.bot.sent).toEqual([]);

    const second = await start(world);
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
    const log = await loggedMessages(world);
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
    const presence = await start(world);
    await world.bot.waitForSent(1, 15_000);
    await stopPresence(presence);
    expect(world.bot.sent[0]?.replyTo).toEqual({
      messageId: question.messageId,
      allowSendingWithoutReply: true,
    });
    expect(world.model.problems).toEqual([]);
  });
});

/**
 * What a reply carries to the model and to Telegram, through faults, where the process around
 * the bot is not the point: the whole wiring of `start` (real grammY, the real SDK, the same
 * settings, clock and timers) in this process, which spares each case a process's start-up.
 */
describe("replies through start's wiring, in this process", () => {
  const presence = inProcessBotPerTest();
  const startBot = () =>
    presence.start(QUIET_SETTINGS, { clock: systemClock, timers: systemTimers, logger: silentLogger });

  it("shows the model a photo the owner sends, with its caption", async () => {
    const { world } = presence;
    const running = await startBot();
    const bytes = Uint8Array.from(Buffer.from("ffd8ffe000104a46494600010100000100010000ffd9", "hex"));
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { photo: { bytes, caption: "my balcony garden" } });
    await world.bot.waitForSent(1, 15_000);
    await running.stop();
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
    const { world } = presence;
    const running = await startBot();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.model.enqueue(toolReply("react", { emoji: "👍" }));
    const thanks = world.bot.message(owner, { text: "ok thanks" });
    await world.bot.waitForCall((c) => c.method === "setMessageReaction" && c.status === 200, 15_000);
    expect(world.bot.reactions).toEqual([{ chatId: OWNER_ID, messageId: thanks.messageId, emoji: ["👍"] }]);
    world.bot.message(owner, { text: "oh, one more thing" });
    await world.bot.waitForSent(1, 15_000);
    await running.stop();
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    const log = await loggedMessages(world);
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
    const { world } = presence;
    const running = await startBot();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.model.enqueue(toolReply("react", { emoji: "👍" }));
    world.bot.failNext("setMessageReaction", { type: "bad-request", description: "MESSAGE_ID_INVALID" });
    world.bot.message(owner, { text: "ok thanks" });
    await world.bot.waitForCall((c) => c.method === "setMessageReaction", 15_000);
    world.bot.message(owner, { text: "oh, one more thing" });
    await world.bot.waitForSent(1, 15_000);
    await running.stop();
    expect(world.bot.reactions).toEqual([]);
    const log = await loggedMessages(world);
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

  it("delivers every reply through 429s, 5xx and dropped connections, in order, none twice", async () => {
    const { world } = presence;
    const running = await startBot();
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
    await running.stop();
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1.", "Answer 2.", "Answer 3."]);
    const statuses = world.bot.calls.filter((c) => c.method === "sendMessage").map((c) => c.status);
    expect(statuses).toEqual([429, 200, 502, 200, "dropped", 200]);
    const log = await loggedMessages(world);
    expect(log.filter((m) => m.role === "assistant").map((m) => m.text)).toEqual([
      "Answer 1.",
      "Answer 2.",
      "Answer 3.",
    ]);
  });

  it("resumes a long two-part reply Telegram refused half-way: each part once, one model call", async () => {
    const { world } = presence;
    const running = await startBot();
    const parts = [`${"Part one. ".repeat(300).trim()}`, `${"Part two. ".repeat(300).trim()}`];
    world.model.setHandler(() => textReply(parts.join("\n\n")));
    world.bot.failNext("sendMessage", { type: "slow", ms: 0 }, { type: "rate-limit", retryAfter: 3600 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Tell me everything." });
    await world.bot.waitForSent(2, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    await running.stop();
    expect(world.bot.sent.map((s) => s.text)).toEqual(parts);
    expect(replyRequests(world)).toBe(1);
    const log = await loggedMessages(world);
    expect(log.filter((m) => m.role === "assistant").map((m) => m.text)).toEqual([parts.join("\n\n")]);
  });
});
