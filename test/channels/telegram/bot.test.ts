import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Api } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CommandHandlers } from "../../../src/channels/command-handlers.ts";
import { BOT_COMMANDS } from "../../../src/channels/commands.ts";
import {
  REPLY_SETTLE_MAX_MS,
  REPLY_SETTLE_MS,
  TelegramChannel,
  type TelegramChannelOptions,
} from "../../../src/channels/telegram/bot.ts";
import {
  TelegramConnection,
  type TelegramConnectionOptions,
} from "../../../src/channels/telegram/connection.ts";
import { TelegramTokenRejectedError } from "../../../src/channels/telegram/first-contact.ts";
import { TelegramUpdatesState } from "../../../src/channels/telegram/updates-state.ts";
import { openMind } from "../../../src/companion/mind-document.ts";
import { ReplySettle, type SettleTimes } from "../../../src/companion/reply-settle.ts";
import type { Timers } from "../../../src/core/clock.ts";
import { SettableClock, systemTimers, VirtualTimers } from "../../../src/core/clock.ts";
import { createLogger, type Logger, silentLogger } from "../../../src/core/log.ts";
import type { Channel, ExternalIds, Media, Message } from "../../../src/core/message.ts";
import type { DownloadedSound, IncomingInput } from "../../../src/core/port.ts";
import { MessageLog } from "../../../src/store/messages.ts";
import { type BotApiFake, startBotApiFake } from "../../../testkit/bot-api.ts";
import { checkinControlsFor, dataRightsFor } from "../helpers.ts";

const OWNER = 1001;
const FAST_RETRY = { maxAttempts: 6, baseDelayMs: 10, maxDelayMs: 40, maxRetryAfterSeconds: 5 };

let fake: BotApiFake;
let dataDir: string;
let clock: SettableClock;
let channels: TelegramChannel[];

beforeEach(async () => {
  fake = await startBotApiFake();
  dataDir = await mkdtemp(join(tmpdir(), "presence-bot-"));
  clock = new SettableClock("2026-03-10T10:00:00Z");
  channels = [];
});

afterEach(async () => {
  for (const channel of channels) await channel.stop(1_000);
  await fake.close();
  await rm(dataDir, { recursive: true, force: true });
});

/**
 * A stand-in for the companion with the same contract: receive() logs, reply() answers every
 * unanswered message in one message and logs it, the companion's own settle starts it. Replies
 * wait on `gate` when a test holds it.
 */
function companionDouble(messages: MessageLog, outbound: TelegramConnection["outbound"], timers: Timers) {
  const received: IncomingInput[] = [];
  /** The downloads of the sounds handed over, started once each message is logged, as the companion does. */
  const downloads: Promise<DownloadedSound>[] = [];
  let gate: Promise<void> = Promise.resolve();
  let turn: Promise<unknown> = Promise.resolve();
  return {
    received,
    downloads,
    /** Whether the companion hears voice notes: the channel downloads them only then. */
    hearsVoiceNotes: false,
    hold() {
      let release = () => {};
      gate = new Promise((r) => {
        release = r;
      });
      return release;
    },
    async receive(input: IncomingInput) {
      received.push(input);
      const logged = await messages.append({
        role: "user",
        text: input.text,
        channel: input.channel,
        ...(input.media ? { media: input.media } : {}),
        ...(input.external ? { external: input.external } : {}),
      });
      if (input.sound) downloads.push(input.sound.download());
      return logged;
    },
    /** As Companion.answerFixed: the answer when the message is all that waits, else a notice. */
    async answerFixed(message: Message, text: string) {
      const log = await messages.all();
      if (log.some((m) => m.role === "assistant" && m.replyTo === message.id)) return "already" as const;
      const lastAnswer = log.findLastIndex((m) => m.role === "assistant" && !m.notice);
      const unanswered = log.slice(lastAnswer + 1).filter((m) => m.role === "user");
      const alone = unanswered.length === 1 && unanswered[0]?.id === message.id;
      const delivery = await outbound.send({ text, kind: "notice", replyTo: message.id });
      await messages.append({
        role: "assistant",
        text,
        channel: "telegram",
        replyTo: message.id,
        ...(alone ? { trigger: "reply", answeredThrough: message.id } : { notice: true }),
        ...delivery,
      });
      return alone ? ("answered" as const) : ("noticed" as const);
    },
    async receiveEdit(
      channel: Channel,
      ids: ExternalIds,
      edit: { text: string; editedAt: string; media?: Media },
    ) {
      const logged = await messages.findByExternal(channel, ids);
      if (logged) await messages.update(logged.id, edit);
      return logged;
    },
    reply() {
      turn = turn.then(async () => {
        await gate;
        const log = await messages.all();
        const lastAnswer = log.findLastIndex((m) => m.role === "assistant" && !m.notice);
        const unanswered = log.slice(lastAnswer + 1).filter((m) => m.role === "user");
        if (unanswered.length === 0) return;
        const text = `echo: ${unanswered.map((m) => m.text).join(" + ")}`;
        const delivery = await outbound.send({ text, kind: "reply" });
        await messages.append({
          role: "assistant",
          trigger: "reply",
          text,
          channel: "telegram",
          ...delivery,
        });
      });
      return turn;
    },
    settleReplies(times: SettleTimes, started: (reply: Promise<unknown>) => void) {
      const showWorking = () => outbound.showWorking();
      return new ReplySettle({ times, timers, reply: () => this.reply(), showWorking, started });
    },
  };
}

/** Short enough to keep the suite fast; the burst test sets a realistic one. */
const TEST_SETTLE_MS = 20;

async function startChannel(
  token = fake.token,
  logger: Logger = silentLogger,
  replySettleMs = TEST_SETTLE_MS,
  extra: Partial<TelegramChannelOptions> & Pick<TelegramConnectionOptions, "timeouts"> = {},
) {
  const messages = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
  const mind = await openMind(dataDir, clock);
  const { timeouts, ...channelOptions } = extra;
  const timers = channelOptions.timers ?? systemTimers;
  const connection = new TelegramConnection({
    token,
    ownerId: OWNER,
    apiRoot: fake.apiRoot,
    timers,
    logger,
    retryPolicy: FAST_RETRY,
    pollTimeoutSeconds: 1,
    ...(timeouts ? { timeouts } : {}),
  });
  const companion = companionDouble(messages, connection.outbound, timers);
  const updates = await TelegramUpdatesState.open(dataDir, clock.now());
  const commands = new CommandHandlers({
    rights: await dataRightsFor(dataDir, clock, mind, messages, {
      exportAll: async () => ({ messages: await messages.all(), mind: mind.exportAll() }),
      wipeAll: async () => {
        await messages.deleteAll();
        await mind.deleteAll();
      },
    }),
    checkins: checkinControlsFor(mind, clock, {
      timezone: "Europe/Berlin",
      quietHours: { start: 22 * 60, end: 8 * 60 },
    }),
    clock,
    status: async () => "all good",
  });
  const fatal: unknown[] = [];
  const channel = new TelegramChannel({
    connection,
    companion,
    messages,
    updates,
    commands,
    clock,
    timers,
    logger,
    replySettleMs,
    onFatal: (error) => fatal.push(error),
    ...channelOptions,
  });
  await channel.start();
  channels.push(channel);
  return { channel, messages, mind, companion, fatal, updates };
}

describe("TelegramChannel", () => {
  it("refuses a token Telegram rejects, with a message that says where to get one", async () => {
    const error = await startChannel("123:rejectedrejectedrejectedrejected").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TelegramTokenRejectedError);
    expect(String(error)).toContain("@BotFather");
  });

  it("registers the command menu", async () => {
    await startChannel();
    expect(fake.commands.map((c) => c.command)).toEqual(BOT_COMMANDS.map((c) => c.command));
  });

  it("logs the owner's message with its Telegram identifiers (as its external ids) and when Telegram says it was sent, and answers it once", async () => {
    const { messages } = await startChannel();
    const sentAt = new Date(Date.now() - 10 * 60_000);
    const sent = fake.message(fake.user(OWNER, "Ada"), { text: "good morning" }, { sentAt });
    await fake.waitForSent(1);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: good morning"]);
    const log = await messages.all();
    expect(log[0]).toMatchObject({
      role: "user",
      text: "good morning",
      external: {
        chatId: OWNER,
        messageId: sent.messageId,
        updateId: sent.updateId,
        sentAt: new Date(Math.floor(sentAt.getTime() / 1000) * 1000).toISOString(),
      },
    });
  });

  it("answers a stranger once an hour with the fixed reply and their id, logging nothing", async () => {
    const { messages, companion } = await startChannel();
    const stranger = fake.user(555, "Eve");
    fake.message(stranger, { text: "hi bot" });
    fake.message(stranger, { text: "hello??" });
    await fake.waitForSent(1);
    await new Promise((r) => setTimeout(r, 150));
    clock.advanceMinutes(61);
    fake.message(stranger, { text: "anyone?" });
    await fake.waitForSent(2);
    expect(fake.sent.map((s) => s.chatId)).toEqual([555, 555]);
    expect(fake.sent[0]?.text).toContain("555");
    expect(fake.sent[0]?.text).toBe(fake.sent[1]?.text);
    expect(await messages.all()).toEqual([]);
    expect(companion.received).toEqual([]);
  });

  it("ignores group chats, even the owner's", async () => {
    const { messages } = await startChannel();
    const group = { id: -100, type: "group" as const, title: "Friends" };
    fake.message(fake.user(OWNER, "Ada"), { text: "in the group" }, { chat: group });
    fake.message(fake.user(555, "Eve"), { text: "me too" }, { chat: group });
    fake.message(fake.user(OWNER, "Ada"), { text: "private" });
    await fake.waitForSent(1);
    await waitFor(async () => (await messages.all()).length === 2);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: private"]);
    expect((await messages.all()).map((m) => m.text)).toEqual(["private", "echo: private"]);
  });

  it("answers a burst of messages once, after the person stops typing, showing typing meanwhile", async () => {
    const { companion } = await startChannel(fake.token, silentLogger, 700);
    const owner = fake.user(OWNER, "Ada");
    for (const text of ["one", "two", "three"]) {
      fake.message(owner, { text });
      await waitFor(() => companion.received.some((r) => r.text === text));
      await new Promise((r) => setTimeout(r, 300));
    }
    await fake.waitForSent(1);
    await new Promise((r) => setTimeout(r, 900));
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: one + two + three"]);
    expect(fake.actions).toContainEqual({ chatId: OWNER, action: "typing" });
  });

  it("answers someone who keeps writing within the longest settle of their first message", async () => {
    // Scaled down from a message a second for 20 s against the 1.5 s settle: each message comes
    // well inside the settle, so only the bound from the burst's first message can start a reply.
    const bound = 1_000;
    const { companion } = await startChannel(fake.token, silentLogger, 400, { replySettleMaxMs: bound });
    const owner = fake.user(OWNER, "Ada");
    const written: { text: string; at: number }[] = [];
    for (let i = 1; i <= 20; i += 1) {
      const text = `m${i}`;
      fake.message(owner, { text });
      written.push({ text, at: Date.now() });
      await waitFor(() => companion.received.some((r) => r.text === text));
      await new Promise((r) => setTimeout(r, 200));
    }
    await waitFor(() => fake.sent.some((s) => s.text.split(/[ :+]+/).includes("m20")));
    const replyTimes = fake.calls.filter((c) => c.method === "sendMessage").map((c) => c.at);
    const waited = written.map(({ text, at }) => {
      const reply = fake.sent.findIndex((s) => s.text.split(/[ :+]+/).includes(text));
      return (replyTimes[reply] ?? Number.POSITIVE_INFINITY) - at;
    });
    expect(fake.sent.length).toBeGreaterThan(2);
    // The bound, plus the time to send the reply on a busy machine.
    expect(Math.max(...waited)).toBeLessThan(bound + 700);
  });

  it("times the settle and its bound on the channel's timers: with the real lengths, in virtual time", async () => {
    const timers = new VirtualTimers(clock);
    const { updates } = await startChannel(fake.token, silentLogger, REPLY_SETTLE_MS, { timers });
    const owner = fake.user(OWNER, "Ada");
    const start = clock.now().getTime();
    const second = (s: number) => new Date(start + s * 1_000);
    /** Once the channel has handled a message, its settle timer is set. */
    const write = async (text: string) => {
      const { updateId } = fake.message(owner, { text });
      await waitFor(() => updates.isHandled(updateId));
    };
    // A message a second: each comes inside the 1.5 s settle, so only the 5 s bound starts the reply.
    for (let i = 1; i <= 5; i += 1) {
      await write(`m${i}`);
      await timers.advanceTo(second(i));
    }
    await fake.waitForSent(1);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: m1 + m2 + m3 + m4 + m5"]);
    expect(REPLY_SETTLE_MAX_MS).toBe(5_000);
    // "typing…" from the first message, refreshed at 4 s on the same timers.
    await waitFor(() => fake.actions.filter((a) => a.action === "typing").length === 2);
    // Alone, a message waits the settle: not answered at 1.4 s after it, answered at 1.5 s.
    await write("m6");
    await timers.advanceTo(second(6.4));
    // Real time passing fires nothing: the settle waits on the channel's timers only.
    await new Promise((r) => setTimeout(r, REPLY_SETTLE_MS + 300));
    expect(fake.sent).toHaveLength(1);
    await timers.advanceTo(second(6.5));
    await fake.waitForSent(2);
    expect(fake.sent[1]?.text).toBe("echo: m6");
  });

  it("repeats a send whose answer was cut off and closed, at once: the person gets it at most twice", async () => {
    await startChannel();
    const owner = fake.user(OWNER, "Ada");
    fake.failNext("sendMessage", { type: "cut-off", ending: "close" });
    fake.message(owner, { text: "a" });
    const started = Date.now();
    await fake.waitForSent(2, 5_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    fake.message(owner, { text: "b" });
    await fake.waitForSent(3, 5_000);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: a", "echo: a", "echo: b"]);
    expect(fake.calls.filter((c) => c.method === "sendMessage").map((c) => c.status)).toEqual([
      "cut-off",
      200,
      200,
    ]);
  });

  it("repeats a send whose answer stalled half-way within seconds, and later sends do not wait behind it", async () => {
    await startChannel(fake.token, silentLogger, TEST_SETTLE_MS, { timeouts: { stallMs: 300 } });
    const owner = fake.user(OWNER, "Ada");
    fake.failNext("sendMessage", { type: "cut-off", ending: "stall" });
    fake.message(owner, { text: "a" });
    const started = Date.now();
    await fake.waitForSent(2, 5_000);
    fake.message(owner, { text: "b" });
    await fake.waitForSent(3, 5_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: a", "echo: a", "echo: b"]);
  });

  it("repeats a send at most once when its answers keep getting lost", async () => {
    await startChannel(fake.token, silentLogger, TEST_SETTLE_MS, { timeouts: { stallMs: 200 } });
    fake.failNext(
      "sendMessage",
      { type: "cut-off", ending: "close" },
      { type: "cut-off", ending: "stall" },
      { type: "cut-off", ending: "close" },
    );
    fake.message(fake.user(OWNER, "Ada"), { text: "a" });
    await fake.waitForSent(2, 5_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: a", "echo: a"]);
    expect(fake.calls.filter((c) => c.method === "sendMessage")).toHaveLength(2);
  });

  it("recovers within seconds from a long poll whose answer was cut off, stalled or closed", async () => {
    const { companion } = await startChannel(fake.token, silentLogger, TEST_SETTLE_MS, {
      timeouts: { stallMs: 300 },
    });
    const owner = fake.user(OWNER, "Ada");
    for (const [i, ending] of (["stall", "close"] as const).entries()) {
      const before = fake.calls.length;
      fake.failNext("getUpdates", { type: "cut-off", ending });
      // The next poll takes the fault; the message is what it answers, half-way.
      await fake.waitForCall((c) => c.method === "getUpdates" && fake.calls.indexOf(c) >= before);
      const started = Date.now();
      fake.message(owner, { text: `after ${ending}` });
      await fake.waitForSent(i + 1, 15_000);
      // grammY waits 3 s after a failed poll, and the stall costs its 300 ms; the poll's own
      // limit (1 s + 10 s) would cost over 11 s, the old client-wide timeout 60 s.
      expect(Date.now() - started).toBeLessThan(8_000);
    }
    expect(fake.calls.filter((c) => c.method === "getUpdates" && c.status === "cut-off")).toHaveLength(2);
    expect(companion.received.map((r) => r.text)).toEqual(["after stall", "after close"]);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: after stall", "echo: after close"]);
  });

  it("answers messages that arrive during a turn together, in the next turn", async () => {
    const { companion } = await startChannel();
    const release = companion.hold();
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { text: "one" });
    await waitFor(() => companion.received.length === 1);
    fake.message(owner, { text: "two" });
    fake.message(owner, { text: "three" });
    await waitFor(() => companion.received.length === 3);
    release();
    await fake.waitForSent(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: one + two + three"]);
  });

  it("skips an update the log already holds (delivered again after a restart)", async () => {
    const { messages, companion, channel } = await startChannel();
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { text: "first" });
    await fake.waitForSent(1);
    await channel.stop(1_000);
    const replayed = fake.message(owner, { text: "replayed" });
    await messages.append({
      role: "user",
      text: "replayed",
      channel: "telegram",
      external: { chatId: OWNER, messageId: replayed.messageId, updateId: replayed.updateId },
    });
    await messages.append({
      role: "assistant",
      trigger: "reply",
      text: "already answered",
      channel: "telegram",
    });
    const second = await startChannel();
    fake.message(owner, { text: "new" });
    await fake.waitForSent(2);
    expect(second.companion.received.map((i) => i.text)).toEqual(["new"]);
    expect(companion.received.map((i) => i.text)).toEqual(["first"]);
    await waitFor(() => fake.pendingUpdates() === 0);
  });

  it("does not run a command again that was handled just before a crash", async () => {
    const owner = fake.user(OWNER, "Ada");
    const handled = fake.message(owner, { text: "/pause" });
    await (await TelegramUpdatesState.open(dataDir, clock.now())).markHandled(handled.updateId);
    const { mind } = await startChannel();
    fake.message(owner, { text: "/status" });
    await fake.waitForSent(1);
    await waitFor(() => fake.pendingUpdates() === 0);
    expect(fake.sent.map((s) => s.text)).toEqual(["all good"]);
    expect(mind.read().heartbeat.pausedIndefinitely).toBe(false);
  });

  it("records each update as handled once it is, commands and strangers included", async () => {
    await startChannel();
    const command = fake.message(fake.user(OWNER, "Ada"), { text: "/status" });
    const stranger = fake.message(fake.user(555, "Eve"), { text: "hi" });
    await fake.waitForSent(2);
    await waitFor(async () =>
      (await TelegramUpdatesState.open(dataDir, clock.now())).isHandled(stranger.updateId),
    );
    const state = await TelegramUpdatesState.open(dataDir, clock.now());
    expect(state.isHandled(command.updateId)).toBe(true);
    expect(state.isHandled(stranger.updateId + 1)).toBe(false);
  });

  it("keeps a stranger to one reply an hour across a restart", async () => {
    const { channel } = await startChannel();
    const stranger = fake.user(555, "Eve");
    fake.message(stranger, { text: "hi bot" });
    await fake.waitForSent(1);
    await channel.stop(1_000);
    clock.advanceMinutes(30);
    await startChannel();
    fake.message(stranger, { text: "hello again" });
    fake.message(fake.user(OWNER, "Ada"), { text: "owner here" });
    await fake.waitForSent(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.sent.map((s) => s.chatId)).toEqual([555, OWNER]);
  });

  it("logs a voice note as not heard when no transcription service is set up, downloads nothing, and leaves it to the reply", async () => {
    const { messages, companion } = await startChannel();
    fake.message(fake.user(OWNER, "Ada"), { voice: { duration: 9, bytes: Buffer.from("OggS…") } });
    await fake.waitForSent(1);
    const [input] = companion.received;
    expect(input).toMatchObject({
      text: "[voice note, 0:09 — not heard: voice notes and audio can't be listened to yet]",
      media: { kind: "voice", durationSeconds: 9, notHeard: "off" },
    });
    expect(input?.sound).toBeUndefined();
    expect(fake.calls.some((c) => c.method === "getFile")).toBe(false);
    // The reply turn answers it (here the double echoes); the channel says no fixed words itself.
    expect(fake.sent.map((s) => s.text)).toEqual([`echo: ${input?.text}`]);
    expect((await messages.all())[0]?.media?.notHeard).toBe("off");
  });

  it("hands over a voice note's caption as its words, with the note not heard", async () => {
    const { companion } = await startChannel();
    fake.message(fake.user(OWNER, "Ada"), { voice: { duration: 3, caption: "sorry, on the bus" } });
    await fake.waitForSent(1);
    expect(fake.sent[0]?.text).toContain("sorry, on the bus");
    expect(companion.received[0]?.text).toBe(
      "[voice note, 0:03 — not heard: voice notes and audio can't be listened to yet] sorry, on the bus",
    );
  });

  describe("when voice notes are heard", () => {
    it("hands over a voice note as OGG, named for its message, and downloads it with getFile once it is logged", async () => {
      const { companion, messages } = await startChannel();
      companion.hearsVoiceNotes = true;
      const bytes = Buffer.from("OggS\u0000 an opus voice note");
      const sent = fake.message(fake.user(OWNER, "Ada"), { voice: { duration: 42, bytes } });
      await fake.waitForSent(1);
      expect(companion.received[0]).toMatchObject({
        text: "[voice note, 0:42]",
        media: { kind: "voice", durationSeconds: 42 },
        sound: { name: `telegram-${OWNER}-${sent.messageId}`, format: "ogg" },
      });
      expect(companion.received[0]?.media?.notHeard).toBeUndefined();
      expect(await companion.downloads[0]).toEqual({ bytes });
      expect(fake.calls.filter((c) => c.method === "getFile")).toHaveLength(1);
      expect((await messages.all())[0]?.text).toBe("[voice note, 0:42]");
    });

    it("logs a voice note, and the message after it, without waiting for the sound to download", async () => {
      const { companion, messages } = await startChannel();
      companion.hearsVoiceNotes = true;
      const release = fake.holdDownloads();
      const owner = fake.user(OWNER, "Ada");
      const bytes = Buffer.from("OggS a long voice note");
      fake.message(owner, { voice: { duration: 300, bytes } });
      fake.message(owner, { text: "and this too" });
      // The double answers each burst by echoing it: only the person's messages count here.
      const theirs = async () => (await messages.all()).filter((m) => m.role === "user").map((m) => m.text);
      await waitFor(async () => (await theirs()).length === 2);
      expect(fake.downloads).toHaveLength(1);
      expect(await theirs()).toEqual(["[voice note, 5:00]", "and this too"]);
      release();
      expect(await companion.downloads[0]).toEqual({ bytes });
    });

    it("hands over an audio file by its type, titled, and a round video note as MP4", async () => {
      const { companion } = await startChannel();
      companion.hearsVoiceNotes = true;
      const owner = fake.user(OWNER, "Ada");
      const song = Buffer.from("ID3 an mp3");
      fake.message(owner, {
        audio: { duration: 190, bytes: song, mimeType: "audio/mpeg", performer: "Nina", title: "Demo" },
      });
      const clip = Buffer.from("ftypisom a video note");
      fake.message(owner, { videoNote: { duration: 12, bytes: clip } });
      await waitFor(() => companion.downloads.length === 2);
      expect(companion.received.map((i) => [i.text, i.media?.kind, i.sound?.format])).toEqual([
        ["[audio: Nina – Demo, 3:10]", "audio", "mp3"],
        ["[video note, 0:12]", "video", "mp4"],
      ]);
      expect(await companion.downloads[1]).toEqual({ bytes: clip });
    });

    it("says why before downloading anything: too long, too large, a type no service takes; and when the download fails", async () => {
      const { companion } = await startChannel();
      companion.hearsVoiceNotes = true;
      const owner = fake.user(OWNER, "Ada");
      const small = Buffer.from("OggS");
      fake.message(owner, { voice: { duration: 11 * 60, bytes: small } });
      fake.message(owner, { voice: { duration: 30, bytes: small, fileSize: 21 * 1024 * 1024 } });
      fake.message(owner, {
        audio: { duration: 30, bytes: small, mimeType: "audio/aac", fileName: "memo.aac" },
      });
      fake.message(owner, { voice: { duration: 5 } }); // getFile does not know it
      await waitFor(() => companion.downloads.length === 1);
      expect(companion.received.map((i) => i.media?.notHeard)).toEqual(["length", "size", "type", undefined]);
      expect(companion.received.slice(0, 3).every((i) => i.sound === undefined)).toBe(true);
      expect(companion.received[0]?.text).toBe(
        "[voice note, 11:00 — not heard: longer than 10 minutes, too long to transcribe]",
      );
      expect(await companion.downloads[0]).toEqual({ notHeard: "download" });
      // Only the last was asked for.
      expect(fake.calls.filter((c) => c.method === "getFile")).toHaveLength(1);
    });

    it("neither downloads nor hands over again a voice note delivered again after a restart", async () => {
      const owner = fake.user(OWNER, "Ada");
      const replayed = fake.message(owner, { voice: { duration: 7, bytes: Buffer.from("OggS") } });
      // What the companion logged before the crash: the note, its sound on its way.
      const before = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
      await before.append({
        role: "user",
        text: "[voice note, 0:07]",
        channel: "telegram",
        media: { kind: "voice", durationSeconds: 7, stored: "files/x.ogg", downloading: true },
        external: { chatId: OWNER, messageId: replayed.messageId, updateId: replayed.updateId },
      });
      const { companion } = await startChannel();
      companion.hearsVoiceNotes = true;
      fake.message(owner, { text: "new" });
      await waitFor(() => companion.received.length === 1);
      await waitFor(() => fake.pendingUpdates() === 0);
      expect(companion.received.map((i) => i.text)).toEqual(["new"]);
      expect(companion.downloads).toEqual([]);
      expect(fake.calls.some((c) => c.method === "getFile")).toBe(false);
      expect(fake.downloads).toEqual([]);
    });

    it("keeps a heard note's transcript as its text when its caption is edited", async () => {
      const { companion, messages } = await startChannel();
      companion.hearsVoiceNotes = true;
      const sent = fake.message(fake.user(OWNER, "Ada"), {
        voice: { duration: 20, bytes: Buffer.from("OggS"), caption: "for you" },
      });
      await fake.waitForSent(1);
      const [note] = await messages.all();
      if (!note?.media) throw new Error("no note logged");
      // What the reply turn writes once it has heard it.
      await messages.update(note.id, {
        text: "the words I said",
        media: { ...note.media, stored: "files/x.ogg", transcribed: true },
      });
      fake.edit(sent, "for you, Ada");
      await waitFor(async () => (await messages.get(note.id))?.media?.caption === "for you, Ada");
      expect(await messages.get(note.id)).toMatchObject({
        text: "the words I said",
        media: { kind: "voice", transcribed: true, stored: "files/x.ogg", caption: "for you, Ada" },
      });
    });
  });

  it("leaves an update it could not log unconfirmed, and reports it as fatal", async () => {
    const { companion, channel, fatal } = await startChannel();
    companion.receive = async () => {
      throw new Error("disk full");
    };
    fake.message(fake.user(OWNER, "Ada"), { text: "don't lose me" });
    await waitFor(() => fatal.length === 1);
    await new Promise((r) => setTimeout(r, 300));
    await channel.stop(100);
    expect(String(fatal[0])).toContain("disk full");
    expect(fake.pendingUpdates()).toBe(1);
    expect(fake.sent).toEqual([]);
  });

  it("treats another process polling the same bot (409 Conflict) as fatal", async () => {
    const { fatal } = await startChannel();
    const intruder = new Api(fake.token, { apiRoot: fake.apiRoot });
    for (let tries = 0; fatal.length === 0 && tries < 5; tries += 1) {
      await intruder.getUpdates({ timeout: 1 }).catch(() => undefined);
    }
    expect(fatal).toHaveLength(1);
    expect(String(fatal[0])).toContain("409");
  });

  it("turns a photo into an image for the model, with its caption", async () => {
    const { companion } = await startChannel();
    const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    fake.message(fake.user(OWNER, "Ada"), { photo: { bytes, caption: "my garden" } });
    await fake.waitForSent(1);
    expect(companion.received[0]).toMatchObject({
      text: "my garden",
      media: { kind: "photo", caption: "my garden" },
      image: { mediaType: "image/jpeg", base64: Buffer.from(bytes).toString("base64") },
    });
  });

  it("describes voice notes, stickers, documents and locations in words", async () => {
    const { companion } = await startChannel();
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { voice: { duration: 12 } });
    fake.message(owner, { sticker: { emoji: "🥳" } });
    const pdf = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n");
    fake.message(owner, { document: { fileName: "plan.pdf", caption: "for Monday", bytes: pdf } });
    fake.message(owner, { location: { latitude: 38.7223, longitude: -9.1393 } });
    await waitFor(() => companion.received.length === 4);
    expect(companion.received.map((i) => [i.text, i.media?.kind])).toEqual([
      ["[voice note, 0:12 — not heard: voice notes and audio can't be listened to yet]", "voice"],
      ["🥳", "sticker"],
      ["[document: plan.pdf] for Monday", "document"],
      ["[location: 38.72230, -9.13930]", "location"],
    ]);
    expect(companion.received[2]?.document).toEqual({
      name: expect.stringMatching(/^telegram-1001-\d+$/),
      kind: "pdf",
      bytes: pdf,
    });
  });

  it("answers a document Telegram would not hand over with fixed words, and says so to the model when it has a caption", async () => {
    const { companion, messages } = await startChannel();
    const owner = fake.user(OWNER, "Ada");
    // No bytes: the fake answers getFile with 400 invalid file_id, as for a file gone from Telegram.
    fake.message(owner, { document: { fileName: "notes.txt", mimeType: "text/plain" } });
    await fake.waitForSent(1);
    expect(fake.sent[0]?.text).toBe(
      "I couldn't download notes.txt from Telegram just now. Could you send it again?",
    );
    const [logged] = await messages.all();
    expect(logged).toMatchObject({
      text: "[document: notes.txt — not read: it could not be downloaded from Telegram]",
      media: { kind: "document", fileName: "notes.txt", notRead: "download" },
    });
    expect(companion.received[0]?.document).toBeUndefined();

    fake.message(owner, {
      document: { fileName: "notes.txt", mimeType: "text/plain", caption: "thoughts?" },
    });
    await fake.waitForSent(2);
    expect(fake.sent[1]?.text).toBe(
      "echo: [document: notes.txt — not read: it could not be downloaded from Telegram] thoughts?",
    );
  });

  it("updates the logged text when the person edits a message", async () => {
    const { messages } = await startChannel();
    const original = fake.message(fake.user(OWNER, "Ada"), { text: "see you at 5" });
    await fake.waitForSent(1);
    fake.edit(original, "see you at 6");
    await waitFor(async () => (await messages.all())[0]?.text === "see you at 6");
    expect((await messages.all())[0]?.editedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("runs commands without logging them as conversation", async () => {
    const { messages, mind } = await startChannel();
    fake.message(fake.user(OWNER, "Ada"), { text: "/pause 2h" });
    await fake.waitForSent(1);
    expect(fake.sent[0]?.text).toMatch(/^Check-ins paused until 13:00 \(Europe\/Berlin\)/);
    expect(mind.read().heartbeat.pausedUntil).toBe("2026-03-10T12:00:00.000Z");
    expect(await messages.all()).toEqual([]);
  });

  it("lists memory numbered and deletes or corrects an item by its number", async () => {
    const { mind } = await startChannel();
    await mind.update((m) => {
      m.scratchpad.understanding_known = [
        { id: "k-1", text: "- (user) has a sister in Porto", sourceMessageIds: [] },
        { id: "k-2", text: "- (user) works nights", sourceMessageIds: [] },
      ];
      m.scratchpad.understanding_unknown = [];
    });
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { text: "/memory" });
    await fake.waitForSent(1);
    expect(fake.sent[0]?.text).toBe(
      [
        "What I remember about you:",
        "",
        "What I know",
        "1. - (user) has a sister in Porto",
        "    source unknown",
        "2. - (user) works nights",
        "    source unknown",
        "",
        "/forget 3 deletes number 3; /fix 3 new words corrects it.",
      ].join("\n"),
    );
    fake.message(owner, { text: "/forget 1" });
    await fake.waitForSent(2);
    expect(fake.sent[1]?.text).toContain('Forgotten: "- (user) has a sister in Porto".');
    fake.message(owner, { text: "/fix 2 I work days now" });
    await fake.waitForSent(3);
    expect(fake.sent[2]?.text).toContain('Corrected 2: "I work days now"');
    fake.message(owner, { text: "/forget 7" });
    await fake.waitForSent(4);
    expect(fake.sent[3]?.text).toBe(
      'There is no 7 in your last /memory list (it had 2). Send /memory to see the list. To forget the words "7", send /forget "7".',
    );
    expect(mind.read().scratchpad.understanding_known).toMatchObject([
      { id: "k-2", text: "I work days now", correctedAt: clock.now().toISOString() },
    ]);
    // Digits in quotes are words to forget, not a list number.
    await mind.update((m) => {
      m.scratchpad.understanding_known.push({
        id: "k-3",
        text: "- (user) locker 4711",
        sourceMessageIds: [],
      });
    });
    fake.message(owner, { text: '/forget "4711"' });
    await fake.waitForSent(5);
    expect(fake.sent[4]?.text).toContain('Forgotten: "4711" (1 memory).');
    expect(mind.read().scratchpad.understanding_known.map((i) => i.id)).toEqual(["k-2"]);
  });

  it("sends /export as a JSON file", async () => {
    await startChannel();
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { text: "remember this" });
    await fake.waitForSent(1);
    fake.message(owner, { text: "/export" });
    await fake.waitForSent(2);
    const file = fake.sent[1]?.document;
    expect(file?.fileName).toMatch(/^presence-export-\d{4}-\d\d-\d\d\.json$/);
    const exported = JSON.parse(new TextDecoder().decode(file?.bytes));
    expect(exported.messages.map((m: { text: string }) => m.text)).toContain("remember this");
  });

  it("answers in words when Telegram refuses the /export file, and logs the refusal without the file", async () => {
    const lines: string[] = [];
    await startChannel(
      fake.token,
      createLogger("info", false, { write: (line: string) => lines.push(line) }),
    );
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { text: "remember the blue door" });
    await fake.waitForSent(1);
    fake.failNext("sendDocument", { type: "bad-request", description: "file is too big" });
    fake.message(owner, { text: "/export" });
    await fake.waitForSent(2);
    expect(fake.sent[1]?.text).toContain("/export didn't work");
    expect(fake.sent[1]?.text).toContain("file is too big");
    const failure = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === "command failed");
    expect(failure?.error).toEqual({
      method: "sendDocument",
      error_code: 400,
      description: "Bad Request: file is too big",
    });
    expect(lines.join("\n")).not.toContain("blue door");
  });

  it("wipes only after the confirmation", async () => {
    const { messages } = await startChannel();
    const owner = fake.user(OWNER, "Ada");
    fake.message(owner, { text: "a secret" });
    await fake.waitForSent(1);
    fake.message(owner, { text: "/wipe" });
    await fake.waitForSent(2);
    expect(fake.sent[1]?.text).toContain("/wipe yes");
    expect(await messages.all()).toHaveLength(2);
    fake.message(owner, { text: "/wipe yes" });
    await fake.waitForSent(3);
    expect(await messages.all()).toEqual([]);
  });

  it("carries on through a burst of 429s and 5xx, replies in order and none twice", async () => {
    await startChannel();
    const owner = fake.user(OWNER, "Ada");
    fake.failNext(
      "sendMessage",
      { type: "rate-limit", retryAfter: 1 },
      { type: "server-error", status: 502 },
      { type: "drop" },
      { type: "server-error", status: 500 },
    );
    fake.message(owner, { text: "a" });
    await fake.waitForSent(1, 15_000);
    fake.message(owner, { text: "b" });
    await fake.waitForSent(2, 15_000);
    expect(fake.sent.map((s) => s.text)).toEqual(["echo: a", "echo: b"]);
    expect(fake.calls.filter((c) => c.method === "sendMessage").map((c) => c.status)).toEqual([
      429,
      502,
      "dropped",
      500,
      200,
      200,
    ]);
  });
});

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
