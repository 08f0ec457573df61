import { afterEach, describe, expect, it, vi } from "vitest";
import type { CoreConfig } from "../../src/app/config.ts";
import { CommandHandlers, type CommandReply } from "../../src/channels/command-handlers.ts";
import {
  type Companion,
  type CompanionOptions,
  createCompanion,
  DEFAULT_NOTICE_AFTER_MS,
  DEFAULT_NOTICE_TEXT,
  DEFAULT_RETRY_DELAYS_MS,
  pendingMessages,
} from "../../src/companion/companion.ts";
import { type MindStore, openMind } from "../../src/companion/mind-document.ts";
import { buildAwarenessContext } from "../../src/conversation/awareness/build.ts";
import { defaultAwarenessSettings } from "../../src/conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../../src/conversation/awareness/format.ts";
import { SettableClock, systemTimers, VirtualTimers } from "../../src/core/clock.ts";
import { lastDecision } from "../../src/core/decision.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { Message } from "../../src/core/message.ts";
import {
  type Delivery,
  type IncomingInput,
  type OutgoingMessage,
  type OutgoingReaction,
  RecipientBlockedError,
} from "../../src/core/port.ts";
import { tokensOnLocalDay, type UsageRecord, usageTotal } from "../../src/core/usage.ts";
import { REACTION_ANSWERS_ONE } from "../../src/mind/generate.ts";
import type { MemoryItem } from "../../src/mind/memory.ts";
import { RETRY_BACKOFF_MS } from "../../src/mind/reflection-queue.ts";
import { ModelClient } from "../../src/model/llm.ts";
import { loadPersona, personaFromDir } from "../../src/model/persona.ts";
import type { ModelConfig } from "../../src/model/settings.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { SentFiles } from "../../src/store/sent-files.ts";
import { Trace } from "../../src/store/trace.ts";
import {
  fakeModelConfig,
  lastUserText,
  type MessagesApiFake,
  type MessagesRequestBody,
  startMessagesApiFake,
  systemText,
  textReply,
  toolReply,
} from "../../testkit/messages-api.ts";
import { tempDataDir } from "../store/helpers.ts";
import { testCoreConfig } from "../support/core-config.ts";
import { eveningAnswererLog } from "../support/evening-answerer.ts";

/** Wednesday 4 March 2026, 10:00 in Berlin. */
const START = "2026-03-04T09:00:00.000Z";

interface Harness {
  companion: Companion;
  api: MessagesApiFake;
  clock: SettableClock;
  /** Timers on `clock`; the companion waits on them when built with `virtualTimers`. */
  virtual: VirtualTimers;
  log: MessageLog;
  mind: MindStore;
  trace: Trace;
  sent: OutgoingMessage[];
  /** Reactions the channel accepted, in order. */
  reactions: OutgoingReaction[];
  /** Every part the channel accepted: it splits a text at blank lines, like Telegram's port at its limit. */
  parts: string[];
  port: PortState;
  dataDir: string;
}

/** How the fake channel misbehaves: every send fails, or the send of one part fails once. */
interface PortState {
  fail?: Error;
  /** Reactions are refused for good with this reason, as Telegram's 400 for a deleted message. */
  refuseReactions?: string;
  /** How often the channel was asked to show the companion working ("typing…"), and stopped. */
  working?: { shown: number; stopped: number };
  failPart?: { index: number; error: Error };
}

const open: Harness[] = [];

afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.companion.close();
    await h.api.close();
  }
});

async function harness(
  options: {
    model?: Partial<ModelConfig>;
    core?: Partial<CoreConfig>;
    /** The clock's first instant, when not START. */
    start?: string;
    companion?: CompanionOptions;
    dataDir?: string;
    api?: MessagesApiFake;
    /** Waits on `virtual` (moved with advanceTo) instead of the machine's timers. */
    virtualTimers?: boolean;
  } = {},
): Promise<Harness> {
  const clock = new SettableClock(options.start ?? START);
  // The fake's prompt cache ages on the same virtual clock as the companion.
  const api = options.api ?? (await startMessagesApiFake({ clock }));
  const dataDir = options.dataDir ?? (await tempDataDir());
  const virtual = new VirtualTimers(clock);
  const core = { ...testCoreConfig(dataDir), ...options.core };
  const model = fakeModelConfig(api, { reflectMode: "off", ...options.model });
  const log = await MessageLog.open({ dataDir, clock, timeZone: core.timezone });
  const mind = await openMind(dataDir, clock);
  const notes = new NotesStore({ dataDir });
  const trace = new Trace({ dataDir, clock });
  const sent: OutgoingMessage[] = [];
  const reactions: OutgoingReaction[] = [];
  const parts: string[] = [];
  const portState: PortState = {};
  const companion = createCompanion({
    clock,
    timers: options.virtualTimers ? virtual : systemTimers,
    core,
    model,
    log,
    mind,
    notes,
    files: new SentFiles({ dataDir }),
    trace,
    llm: new ModelClient(model, { clock }),
    soundKeepDays: 30,
    port: {
      async send(message, progress) {
        if (portState.fail) throw portState.fail;
        let first: Delivery = {};
        for (const [index, part] of message.text.split("\n\n").entries()) {
          if (index < (message.partsDelivered ?? 0)) continue;
          const failure = portState.failPart;
          if (failure?.index === index) {
            delete portState.failPart;
            throw failure.error;
          }
          parts.push(part);
          const delivery = { external: { chatId: 1, messageId: 100 + parts.length } };
          if (!first.external) first = delivery;
          await progress?.(index + 1, delivery);
        }
        sent.push(message);
        return first;
      },
      async react(reaction) {
        if (portState.fail) throw portState.fail;
        if (portState.refuseReactions) return { refused: portState.refuseReactions };
        reactions.push(reaction);
        return {};
      },
      showWorking() {
        portState.working ??= { shown: 0, stopped: 0 };
        portState.working.shown += 1;
        return () => {
          if (portState.working) portState.working.stopped += 1;
        };
      },
    },
    persona: personaFromDir(),
    logger: silentLogger,
    options: { retryDelaysMs: [20], closeTimeoutMs: 2_000, ...options.companion },
  });
  const h = {
    companion,
    api,
    clock,
    virtual,
    log,
    mind,
    trace,
    sent,
    reactions,
    parts,
    port: portState,
    dataDir,
  };
  open.push(h);
  return h;
}

const said = (text: string): IncomingInput => ({ text, channel: "telegram" });

/** Something the person wrote on Telegram earlier, already in the log. */
async function personSaid(h: Harness, text: string, ts: string): Promise<void> {
  await h.log.append({ role: "user", text, channel: "telegram", ts });
}

/** Something the companion sent on Telegram earlier, already in the log. */
async function companionSaid(
  h: Harness,
  text: string,
  trigger: "reply" | "heartbeat",
  ts: string,
): Promise<void> {
  await h.log.append({ role: "assistant", text, channel: "telegram", trigger, ts });
}

/** Ends a companion as a process exit would, keeping its data dir and model fake for the next one. */
async function endProcess(h: Harness): Promise<void> {
  open.splice(open.indexOf(h), 1);
  await h.companion.close();
}

/** What a crash between writing a reply's intent and handing it to the channel leaves behind. */
async function crashedBeforeSending(
  h: Harness,
  question: Message,
  text: string,
  partsDelivered = 0,
): Promise<void> {
  await h.mind.update((mind) => {
    mind.outbox.push({
      id: "o-unsent",
      kind: "reply",
      text,
      trigger: "reply",
      channel: "telegram",
      createdAt: h.clock.now().toISOString(),
      replyTo: question.id,
      answeredThrough: question.id,
      ...(partsDelivered ? { partsDelivered } : {}),
    });
  });
}

function memoryItem(id: string, kind: MemoryItem["kind"], text: string): MemoryItem {
  return {
    id,
    kind,
    text,
    learnedAt: "2026-03-01T09:00:00.000Z",
    sourceMessageIds: [],
    importance: 4,
    topics: [],
  };
}

/** The model's check-in decision and message, answered per request kind. */
function checkinModel(
  decision: { send: boolean; why: string; topic: string },
  message = "How did the dentist go?",
) {
  return (body: MessagesRequestBody) => {
    if (body.tool_choice?.name === "decide_checkin") return toolReply("decide_checkin", decision);
    if (body.tool_choice?.name === "write_message") return toolReply("write_message", { message });
    return textReply("Glad to hear from you!");
  };
}

describe("the companion replying", () => {
  it("logs the person's message before calling the model, and answers it", async () => {
    const h = await harness();
    h.api.setHandler(() => {
      expect(h.log.recent().map((m) => m.text)).toContain("Morning! Slept badly.");
      return textReply("Oh no — what kept you up?");
    });
    const outcome = await h.companion.reply(said("Morning! Slept badly."));
    expect(outcome).toMatchObject({ status: "sent" });
    expect(h.sent).toEqual([expect.objectContaining({ text: "Oh no — what kept you up?", kind: "reply" })]);
    const messages = h.log.recent();
    expect(messages.map((m) => [m.role, m.text])).toEqual([
      ["user", "Morning! Slept badly."],
      ["assistant", "Oh no — what kept you up?"],
    ]);
    expect(messages[1]).toMatchObject({
      trigger: "reply",
      replyTo: messages[0]?.id,
      external: { chatId: 1, messageId: 101 },
    });
    expect(h.mind.read().outbox).toEqual([]);
  });

  it("answers everything pending in one turn, and a reply with nothing pending is a no-op", async () => {
    const h = await harness();
    h.api.setHandler((body) => textReply(`got: ${lastUserText(body).replace(/\n/g, " / ")}`));
    for (const text of ["one", "two", "three"]) await h.companion.receive(said(text));
    const outcome = await h.companion.reply();
    expect(outcome).toMatchObject({ status: "sent" });
    expect(h.api.requests).toHaveLength(1);
    expect(h.sent.map((m) => m.text)).toEqual(["got: one / two / three"]);
    expect(await h.companion.reply()).toEqual({ status: "nothing-pending" });
    expect(h.api.requests).toHaveLength(1);
  });

  it("answers a burst once it settles, by the channel's settle times, showing the channel's typing meanwhile", async () => {
    const h = await harness({ virtualTimers: true });
    h.api.setHandler((body) => textReply(`got: ${lastUserText(body).replace(/\n/g, " / ")}`));
    const replies: Promise<unknown>[] = [];
    const settle = h.companion.settleReplies({ pauseMs: 1_500, maxMs: 5_000 }, (reply) =>
      replies.push(reply),
    );
    for (const text of ["one", "two"]) {
      await h.companion.receive(said(text));
      settle.arrived();
    }
    await h.virtual.advanceTo(new Date(h.clock.now().getTime() + 1_499));
    expect(replies).toEqual([]);
    expect(h.port.working).toEqual({ shown: 1, stopped: 0 });
    await h.virtual.advanceTo(new Date(h.clock.now().getTime() + 1));
    expect(replies).toHaveLength(1);
    expect(await replies[0]).toMatchObject({ status: "sent" });
    expect(h.sent.map((m) => m.text)).toEqual(["got: one / two"]);
    // The turn shows its own while it writes; nothing is left showing.
    expect(h.port.working?.stopped).toBe(h.port.working?.shown);
  });

  it("answers messages that arrive while a reply is being written together, in the next turn", async () => {
    const h = await harness();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.api.setHandler(async (body, index) => {
      if (index === 0) await gate;
      return textReply(`re: ${lastUserText(body).replace(/\n/g, " + ")}`);
    });
    const first = h.companion.reply(said("A"));
    await vi.waitFor(() => expect(h.api.requests).toHaveLength(1));
    const second = h.companion.reply(said("B"));
    const third = h.companion.reply(said("C"));
    release();
    const outcomes = await Promise.all([first, second, third]);
    expect(outcomes.map((o) => o.status)).toEqual(["sent", "sent", "sent"]);
    expect(h.api.requests).toHaveLength(2);
    expect(h.sent.map((m) => m.text)).toEqual(["re: A", "re: B + C"]);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("asks once more when the answer is all leakage, and sends what the second try says", async () => {
    const h = await harness();
    h.api.enqueue(
      textReply("<thinking>I should say something kind</thinking>\nNO_MESSAGE"),
      textReply("Hm indeed. Long day?"),
    );
    const outcome = await h.companion.reply(said("hm"));
    expect(outcome).toMatchObject({ status: "sent" });
    expect(h.sent.map((m) => m.text)).toEqual(["Hm indeed. Long day?"]);
    expect(h.api.requests).toHaveLength(2);
  });

  it("sends nothing when both tries are all leakage, and counts the messages as handled", async () => {
    const h = await harness();
    const leak = textReply("<thinking>I should say something kind</thinking>\nNO_MESSAGE");
    h.api.enqueue(leak, leak);
    const outcome = await h.companion.reply(said("hm"));
    expect(outcome).toMatchObject({ status: "empty" });
    expect(h.sent).toEqual([]);
    expect(h.api.requests).toHaveLength(2);
    const [record] = await h.trace.last(1);
    expect(record).toMatchObject({
      kind: "reply",
      outcome: "empty",
      why: expect.stringContaining("leak guard"),
      handledWithoutReply: outcome.status === "empty" ? outcome.answered[0] : "",
    });
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
    expect(await h.companion.reply()).toEqual({ status: "nothing-pending" });
    expect(h.api.requests).toHaveLength(2);
    h.clock.advanceMinutes(1);
    h.api.enqueue(textReply("Yes, here."));
    expect(await h.companion.reply(said("still there?"))).toMatchObject({ status: "sent" });
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("keeps the stable prefix byte-identical across turns and between replies and check-ins", async () => {
    const h = await harness();
    h.api.setHandler(checkinModel({ send: false, why: "they are busy", topic: "" }));
    await h.companion.reply(said("Off to the dentist"));
    h.clock.advanceMinutes(120);
    await h.companion.heartbeat();
    h.clock.advanceMinutes(60);
    await h.companion.reply(said("Back, all fine"));
    expect(h.api.requests).toHaveLength(3);
    const prefixes = h.api.requests.map((r) =>
      JSON.stringify({
        tools: r.body.tools,
        first: Array.isArray(r.body.system) ? r.body.system[0]?.text : null,
      }),
    );
    expect(new Set(prefixes).size).toBe(1);
    const usage = h.mind.read().usage;
    expect(usage.map((u) => [u.purpose, u.model])).toEqual([
      ["reply", "claude-sonnet-5-5"],
      ["heartbeat-decide", "claude-haiku-5-5"],
      ["reply", "claude-sonnet-5-5"],
    ]);
    // Calls hours apart, and no rhythm to go by yet: no breakpoint is paid for.
    expect(JSON.stringify(h.api.requests.map((r) => r.body.system))).not.toContain("cache_control");
    expect(usage.every((u) => u.cacheWrite === 0 && u.cacheRead === 0)).toBe(true);
  });

  it("marks the stable prefix once replies come minutes apart, and the next reply reads it", async () => {
    const h = await harness();
    h.api.setHandler(() => textReply("Mm, tell me more."));
    const marked: boolean[] = [];
    for (const text of ["So", "the", "interview", "went", "well", "really", "well"]) {
      await h.companion.reply(said(text));
      const system = h.api.requests.at(-1)?.body.system;
      marked.push(Array.isArray(system) && system[0]?.cache_control !== undefined);
      h.clock.advanceMinutes(1);
    }
    // Once the ledger holds three quick gaps (four replies), every reply marks the prefix.
    expect(marked).toEqual([false, false, false, false, true, true, true]);
    const usage = h.mind.read().usage;
    expect(usage[4]?.cacheWrite).toBeGreaterThan(1_000);
    expect(usage[5]).toMatchObject({ cacheWrite: 0, cacheRead: usage[4]?.cacheWrite });
    expect(usage[6]).toMatchObject({ cacheWrite: 0, cacheRead: usage[4]?.cacheWrite });
    // An hour later the rhythm still says bursts, but the entry has expired: written again.
    h.clock.advanceMinutes(60);
    await h.companion.reply(said("Back again"));
    expect(h.mind.read().usage.at(-1)).toMatchObject({ cacheRead: 0, cacheWrite: usage[4]?.cacheWrite });
  });

  it("shows only the current thread's messages", async () => {
    const h = await harness();
    h.api.setHandler(() => textReply("ok"));
    await h.companion.reply(said("The tax return is due Friday"));
    h.clock.advanceMinutes(5);
    await h.mind.update((mind) => {
      mind.threads.list.push({ name: "garden", createdAt: h.clock.now().toISOString(), notes: [] });
      mind.threads.switches.push({ at: h.clock.now().toISOString(), thread: "garden" });
      mind.threads.current = "garden";
    });
    await h.companion.reply(said("The tomatoes finally sprouted"));
    const shown = h.api.requests[1]?.body.messages.map((m) => JSON.stringify(m.content)).join("\n") ?? "";
    expect(shown).toContain("tomatoes");
    expect(shown).not.toContain("tax return");
  });

  it("mentions in the prompt how long a late message waited", async () => {
    const h = await harness();
    await h.companion.receive(said("are you there?"));
    h.clock.advanceMinutes(50);
    h.api.enqueue(textReply("Sorry for the wait!"));
    await h.companion.reply();
    expect(systemText(h.api.requests[0]?.body as MessagesRequestBody)).toMatch(/has waited 50/);
  });
});

describe("the companion saying fixed words for what it cannot take in", () => {
  const FIXED = "I can't listen to that one. Could you type it?";
  const voiceNote = (): IncomingInput => ({
    text: "[voice note, 9 s]",
    channel: "telegram",
    media: { kind: "voice", durationSeconds: 9 },
  });

  it("answers a message that is all the person waits on through the outbox, as written, and never asks the model", async () => {
    const h = await harness();
    const note = await h.companion.receive(voiceNote());
    expect(await h.companion.answerFixed(note, FIXED)).toBe("answered");
    expect(h.sent).toEqual([{ text: FIXED, kind: "notice", replyTo: note.id }]);
    const answer = h.log.recent().at(-1);
    expect(answer).toMatchObject({
      role: "assistant",
      text: FIXED,
      answeredThrough: note.id,
      replyTo: note.id,
    });
    expect(answer?.notice).toBeUndefined();
    expect(answer?.outboxId).toBeDefined();
    expect(h.mind.read().outbox).toEqual([]);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
    expect(await h.companion.reply()).toEqual({ status: "nothing-pending" });
    expect(h.api.requests).toHaveLength(0);
    // Said once: a second ask (the update delivered again after a restart) says nothing.
    expect(await h.companion.answerFixed(note, FIXED)).toBe("already");
    expect(h.sent).toHaveLength(1);
  });

  it("says the words as a notice when other messages wait, and the next turn answers them all", async () => {
    const h = await harness();
    h.api.setHandler(() => textReply("Tell me in words when you can."));
    await h.companion.receive(said("listen to this"));
    const note = await h.companion.receive(voiceNote());
    expect(await h.companion.answerFixed(note, FIXED)).toBe("noticed");
    expect(h.log.recent().at(-1)).toMatchObject({ text: FIXED, notice: true });
    expect(pendingMessages(h.log.recent(), h.clock.now())).toHaveLength(2);
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    expect(h.sent.map((m) => m.text)).toEqual([FIXED, "Tell me in words when you can."]);
  });

  it("throws when the channel cannot deliver, leaving the message waiting", async () => {
    const h = await harness();
    const note = await h.companion.receive(voiceNote());
    h.port.fail = new Error("network down");
    await expect(h.companion.answerFixed(note, FIXED)).rejects.toThrow(/network down/);
    expect(h.mind.read().outbox).toEqual([]);
    expect(pendingMessages(h.log.recent(), h.clock.now()).map((m) => m.id)).toEqual([note.id]);
  });

  it("records the person's edit of a logged message, found by its channel and its ids there", async () => {
    const h = await harness();
    const logged = await h.companion.receive({ ...said("helo"), external: { chatId: 1, messageId: 7 } });
    const editedAt = h.clock.now().toISOString();
    expect(
      await h.companion.receiveEdit("telegram", { chatId: 1, messageId: 7 }, { text: "hello", editedAt }),
    ).toMatchObject({
      id: logged.id,
    });
    expect(await h.log.get(logged.id)).toMatchObject({ text: "hello", editedAt });
    const edit = { text: "x", editedAt };
    expect(await h.companion.receiveEdit("telegram", { chatId: 1, messageId: 8 }, edit)).toBeNull();
    expect(await h.companion.receiveEdit("cli", { chatId: 1, messageId: 7 }, edit)).toBeNull();
  });
});

describe("the companion when the model is unavailable", () => {
  it("retries a reply in the background, sends at most one fixed notice, then the real answer", async () => {
    const h = await harness({ companion: { retryDelaysMs: [30], noticeAfterMs: 60_000 } });
    h.api.failNext("529", 4);
    h.api.setHandler(() => textReply("Here now — how did it go?"));
    const outcome = await h.companion.reply(said("Big interview today"));
    expect(outcome).toMatchObject({ status: "deferred" });
    expect(h.sent).toEqual([]);
    h.clock.advanceMinutes(2);
    await vi.waitFor(() => expect(h.sent.map((m) => m.kind)).toEqual(["notice", "reply"]), {
      timeout: 3_000,
    });
    expect(h.sent[0]?.text).toBe(
      "I'm having trouble thinking right now — I have your message and will answer as soon as I can.",
    );
    expect(h.sent[1]?.text).toBe("Here now — how did it go?");
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["529", "529", "529", "529", "answered"]);
    expect(h.log.recent().map((m) => m.text)).toEqual([
      "Big interview today",
      "I'm having trouble thinking right now — I have your message and will answer as soon as I can.",
      "Here now — how did it go?",
    ]);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("with the default waits, in virtual time: the notice with the attempt just past a minute, then the answer", async () => {
    const h = await harness({
      virtualTimers: true,
      companion: { retryDelaysMs: DEFAULT_RETRY_DELAYS_MS, noticeAfterMs: DEFAULT_NOTICE_AFTER_MS },
    });
    h.api.failNext("529", 4);
    h.api.setHandler(() => textReply("Here now — how did it go?"));
    expect(await h.companion.reply(said("Big interview today"))).toMatchObject({ status: "deferred" });
    expect(h.virtual.next()?.toISOString()).toBe("2026-03-04T09:00:05.000Z");
    await h.virtual.advanceTo(new Date("2026-03-04T09:10:00.000Z"), () => h.companion.idle());
    // Attempts at 0 s, 5 s, 20 s and 61 s fail; the fourth is past a minute, so it says the notice; 61 + 120 s answers.
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["529", "529", "529", "529", "answered"]);
    expect(h.log.recent().map((m) => [m.ts, m.text])).toEqual([
      ["2026-03-04T09:00:00.000Z", "Big interview today"],
      ["2026-03-04T09:01:01.000Z", DEFAULT_NOTICE_TEXT],
      ["2026-03-04T09:03:01.000Z", "Here now — how did it go?"],
    ]);
    expect(h.virtual.next()).toBeNull();
  });

  it("answers quickly without any notice when the model comes back within a minute", async () => {
    const h = await harness({ companion: { retryDelaysMs: [10] } });
    h.api.failNext("529", 2);
    h.api.setHandler(() => textReply("Sorry, I'm here."));
    await h.companion.reply(said("hello?"));
    await vi.waitFor(() => expect(h.sent.map((m) => m.kind)).toEqual(["reply"]), { timeout: 3_000 });
  });

  it("skips a check-in, recording model-unavailable", async () => {
    const h = await harness();
    await personSaid(h, "Off to work", "2026-03-04T06:00:00.000Z");
    await companionSaid(h, "Have a good day!", "reply", "2026-03-04T06:01:00.000Z");
    h.api.failNext("529", 1);
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({ status: "held", decision: { reason: "model-unavailable", fire: false } });
    expect(lastDecision(h.mind.read())?.reason).toBe("model-unavailable");
    expect(h.sent).toEqual([]);
  });
});

describe("the companion when the API refuses the request", () => {
  const PIXEL =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
  const hasImage = (h: Harness, index: number) =>
    JSON.stringify(h.api.requests[index]?.body.messages ?? []).includes('"type":"image"');

  it("says the fixed failure notice once, however many replies fail, and never generates it", async () => {
    const h = await harness();
    h.api.failNext("401", 2);
    expect(await h.companion.reply(said("Are you there?"))).toMatchObject({ status: "failed" });
    expect(await h.companion.reply(said("Hello??"))).toMatchObject({ status: "failed" });
    expect(h.sent.map((m) => [m.kind, m.text])).toEqual([
      ["notice", "Something went wrong on my side and I couldn't answer that — I've noted it."],
    ]);
    expect(pendingMessages(h.log.recent(), h.clock.now()).map((m) => m.text)).toEqual([
      "Are you there?",
      "Hello??",
    ]);
  });

  it("still answers when the usage cannot be written to the ledger", async () => {
    const h = await harness();
    // The ledger's write fails (a write that adds a day's totals); every other write lands.
    const update = h.mind.update.bind(h.mind);
    vi.spyOn(h.mind, "update").mockImplementation((edit) =>
      update(async (draft) => {
        const before = JSON.stringify(draft.usageDaily);
        const result = await edit(draft);
        if (JSON.stringify(draft.usageDaily) !== before) throw new Error("disk full");
        return result;
      }),
    );
    h.api.setHandler(() => textReply("Still here."));
    expect(await h.companion.reply(said("You there?"))).toMatchObject({ status: "sent" });
    expect(h.sent.map((m) => m.text)).toEqual(["Still here."]);
  });

  it("still counts a notes round's tokens in the ledger when the call after it is refused", async () => {
    const h = await harness();
    h.api.setHandler((_body, index) => {
      if (index > 0) return textReply("unused");
      h.api.failNext("400", 1); // the call that carries the tool's result
      return toolReply("notes_list", {});
    });
    expect(await h.companion.reply(said("What did I say about Sunday?"))).toMatchObject({ status: "failed" });
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["answered", "400"]);
    expect(h.mind.read().usage).toEqual([expect.objectContaining({ purpose: "reply" })]);
  });

  it("holds check-ins while a failed reply's messages wait, with no retry scheduled", async () => {
    const h = await harness();
    h.api.failNext("401", 1);
    expect(await h.companion.reply(said("Can you help me plan Sunday?"))).toMatchObject({ status: "failed" });
    h.clock.advanceMinutes(180);
    h.api.setHandler(checkinModel({ send: true, why: "a while since we talked", topic: "sunday" }));
    expect(await h.companion.heartbeat()).toMatchObject({
      status: "held",
      decision: { reason: "reply-pending" },
    });
    expect(h.api.requests).toHaveLength(1);
    expect(h.sent.map((m) => m.kind)).toEqual(["notice"]);
  });

  it("drops a photo the API refuses and answers as text, then leaves the photo out of later replies", async () => {
    const h = await harness();
    h.api.failNext("400", 1);
    h.api.setHandler(() => textReply("I couldn't see the photo, but tell me about the trip!"));
    const outcome = await h.companion.reply({
      text: "[photo] the lake",
      channel: "telegram",
      image: { mediaType: "image/png", base64: PIXEL },
    });
    expect(outcome).toMatchObject({ status: "sent" });
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["400", "answered"]);
    expect(hasImage(h, 0)).toBe(true);
    expect(hasImage(h, 1)).toBe(false);
    expect(h.sent.map((m) => m.kind)).toEqual(["reply"]);

    h.api.setHandler(() => textReply("Sounds lovely."));
    expect(await h.companion.reply(said("It was sunny"))).toMatchObject({ status: "sent" });
    expect(hasImage(h, 2)).toBe(false);
  });
});

describe("the companion checking in", () => {
  async function quietMorning(h: Harness): Promise<void> {
    await personSaid(h, "Dentist at 11, wish me luck", "2026-03-04T06:00:00.000Z");
    await companionSaid(h, "Good luck!", "reply", "2026-03-04T06:01:00.000Z");
    h.clock.set("2026-03-04T12:07:00.000Z");
  }

  it("makes no model call when the pre-check says no, and records why", async () => {
    const h = await harness();
    await quietMorning(h);
    h.clock.set("2026-03-04T22:07:00.000Z");
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({ status: "held", decision: { reason: "quiet-hours" } });
    expect(h.api.requests).toEqual([]);
    expect(lastDecision(h.mind.read())).toMatchObject({ fire: false, reason: "quiet-hours" });
  });

  it("costs one call and sends nothing when the model decides not to write", async () => {
    const h = await harness();
    await quietMorning(h);
    h.api.setHandler(checkinModel({ send: false, why: "Let them rest after the dentist", topic: "" }));
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({
      status: "held",
      decision: { reason: "model-declined", detail: "Let them rest after the dentist" },
    });
    expect(h.api.requests).toHaveLength(1);
    expect(h.sent).toEqual([]);
    expect(h.log.recent()).toHaveLength(2);
  });

  it("still counts the decision's tokens in the ledger when writing the check-in then fails", async () => {
    const h = await harness();
    await quietMorning(h);
    const decide = checkinModel({ send: true, why: "see how the dentist went", topic: "dentist" });
    h.api.setHandler((body) => {
      // The decision is answered; the write that follows it is refused by the API.
      if (body.tool_choice?.name === "decide_checkin") h.api.failNext("400", 1);
      return decide(body);
    });
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({ status: "held", decision: { reason: "model-error" } });
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["answered", "400"]);
    expect(h.sent).toEqual([]);
    const ledger = h.mind.read().usage;
    expect(ledger).toEqual([
      expect.objectContaining({ purpose: "heartbeat-decide", ts: "2026-03-04T12:07:00.000Z" }),
    ]);
    expect(tokensOnLocalDay(h.mind.read(), h.clock.now(), "UTC")).toBe(usageTotal(ledger[0] as UsageRecord));
    expect(tokensOnLocalDay(h.mind.read(), h.clock.now(), "UTC")).toBeGreaterThan(0);
  });

  it("holds back a check-in about a topic the person already answered", async () => {
    const h = await harness();
    await quietMorning(h);
    await personSaid(h, "Already drank 2 liters of water today!", "2026-03-04T10:00:00.000Z");
    await companionSaid(h, "Impressive!", "reply", "2026-03-04T10:01:00.000Z");
    h.api.setHandler(
      checkinModel({ send: true, why: "hydration check", topic: "water" }, "How's the water going?"),
    );
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({
      status: "held",
      decision: { reason: "already-answered", topic: "water" },
    });
    expect(h.api.requests).toHaveLength(1);
    expect(h.sent).toEqual([]);
  });

  it("holds back a check-in that repeats an unanswered question", async () => {
    const h = await harness();
    await personSaid(h, "Off to work", "2026-03-04T06:00:00.000Z");
    await companionSaid(h, "How's the water intake looking?", "heartbeat", "2026-03-04T09:07:00.000Z");
    h.clock.set("2026-03-04T12:07:00.000Z");
    h.api.setHandler(checkinModel({ send: true, why: "again", topic: "hydration" }));
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({ status: "held", decision: { reason: "repeated-topic" } });
    expect(h.sent).toEqual([]);
  });

  it("holds back a second check-in on the same decided topic, however differently it was worded", async () => {
    const h = await harness();
    await quietMorning(h);
    h.api.setHandler(
      checkinModel({ send: true, why: "Moving day", topic: "the move" }, "How's the packing going?"),
    );
    expect(await h.companion.heartbeat()).toMatchObject({ status: "sent" });
    expect(h.log.recent().at(-1)?.annotations).toEqual({
      topics: ["move", "packing"],
      question: true,
      tone: "neutral",
    });
    h.clock.advanceMinutes(3 * 60);
    h.api.setHandler(
      checkinModel({ send: true, why: "Still moving", topic: "the move" }, "How did the move go?"),
    );
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({
      status: "held",
      decision: { reason: "repeated-topic", topic: "the move" },
    });
    if (outcome.status === "held")
      expect(outcome.decision.detail).toMatch(/^already asked about the move once/);
    expect(h.sent.map((m) => m.text)).toEqual(["How's the packing going?"]);
  });

  it("shows declared patterns and open loops once: in the full awareness block, else in episodic context", async () => {
    const h = await harness();
    await quietMorning(h);
    await h.mind.update((mind) => {
      mind.memory = [
        memoryItem("m1", "pattern", "Weekends are loose, no plans before noon"),
        memoryItem("m2", "open_loop", "Book the follow-up appointment with the dentist"),
      ];
    });
    h.api.setHandler(checkinModel({ send: true, why: "The dentist was at 11", topic: "dentist" }));
    await h.companion.heartbeat();
    h.clock.advanceMinutes(1);
    await h.companion.reply(said("It went fine!"));
    h.clock.advanceMinutes(1);
    await h.companion.reply(said("Only a small filling"));
    const systems = h.api.requests
      .filter((r) => r.body.tool_choice?.name !== "write_message")
      .map((r) => systemText(r.body));
    expect(systems).toHaveLength(3);
    for (const system of systems) {
      expect(system.split("Weekends are loose").length - 1).toBe(1);
      expect(system.split("Book the follow-up").length - 1).toBe(1);
    }
    const [checkin, , slim] = systems as [string, string, string];
    expect(checkin).toContain("- Declared pattern: Weekends are loose, no plans before noon");
    expect(checkin).toContain("- Open loop: Book the follow-up appointment with the dentist");
    expect(slim).toContain("## Recent context (active conversation)");
    expect(slim).toMatch(/From memory:\n(- .*\n)*- \(open loop, since 2026-03-01\) Book the follow-up/);
  });

  it("in single-phase mode still reflects on a check-in it sent, with the reflect model", async () => {
    const h = await harness({ model: { reflectMode: "single-phase" } });
    await quietMorning(h);
    h.api.setHandler((body) =>
      body.tool_choice?.name === "update_mind"
        ? toolReply("update_mind", { trajectory_now: "Asked about the dentist" })
        : checkinModel({ send: true, why: "The dentist was at 11", topic: "dentist" })(body),
    );
    expect(await h.companion.heartbeat()).toMatchObject({ status: "sent" });
    await h.companion.idle();
    // The decision on the cheaper decide model, the message on the main one, reflection on the reflect model.
    expect(h.api.requests.map((r) => r.body.model)).toEqual([
      "claude-haiku-5-5",
      "claude-sonnet-5-5",
      "claude-haiku-5-5",
    ]);
    expect(h.mind.read().scratchpad.trajectory_now).toBe("Asked about the dentist");
  });

  it("decides, writes only the message, sends it and records the decision", async () => {
    const h = await harness();
    await quietMorning(h);
    h.api.setHandler(
      checkinModel(
        { send: true, why: "The dentist was at 11", topic: "dentist" },
        "Decision: send\n<thinking>keep it light</thinking>\nHow did the dentist go?",
      ),
    );
    const outcome = await h.companion.heartbeat();
    expect(outcome).toMatchObject({
      status: "sent",
      decision: { fire: true, reason: "sent", topic: "dentist" },
    });
    expect(h.sent).toEqual([{ text: "How did the dentist go?", kind: "heartbeat" }]);
    expect(h.log.recent().at(-1)).toMatchObject({
      role: "assistant",
      trigger: "heartbeat",
      text: "How did the dentist go?",
    });
    expect(h.mind.read().heartbeat.checkinsSent).toEqual(["2026-03-04T12:07:00.000Z"]);
    expect(h.api.requests.map((r) => r.body.tool_choice?.name)).toEqual(["decide_checkin", "write_message"]);
    const [record] = await h.trace.last(1);
    expect(record).toMatchObject({ kind: "heartbeat", stage: "sent", shown: { prefix: expect.any(Number) } });
  });

  /** The companion of someone who lived three weeks of evenings with it (from Monday 2 February 2026). */
  const eveningHarness = (options: Parameters<typeof harness>[0] = {}) =>
    harness({ start: "2026-02-02T00:00:00.000Z", ...options });

  /** Three weeks of an evening answerer in the log, the last check-in sent Monday 20:37; then Tuesday 10:07. */
  async function eveningAnswererLived(h: Harness): Promise<void> {
    for (const { id: _, ...message } of eveningAnswererLog()) await h.log.append(message);
    const lastSent = "2026-02-23T19:37:00.000Z";
    await h.mind.update((mind) => {
      mind.heartbeat.checkinsSent = [lastSent];
    });
    h.clock.set("2026-02-24T09:07:00.000Z");
  }

  it("holds a check-in at an hour the person rarely answers, with no model call, and /why says when they do", async () => {
    const h = await eveningHarness();
    await eveningAnswererLived(h);
    const held = await h.companion.heartbeat();
    expect(held).toMatchObject({
      status: "held",
      decision: { reason: "unlikely-moment", moment: { local: "10:07", weekend: false } },
    });
    expect(h.api.requests).toEqual([]);
    const why = new CommandHandlers({
      clock: h.clock,
      status: async () => "",
      rights: h.companion.rights,
      checkins: h.companion.checkins,
    });
    const reply: CommandReply = await why.run("why", "");
    expect("text" in reply && reply.text).toBe(
      "At 10:07 I didn't check in: it was 10:07 on a weekday, and you've rarely answered at this hour; your best hours lately are 19–22.",
    );

    h.clock.set("2026-02-24T19:37:00.000Z");
    h.api.setHandler(checkinModel({ send: true, why: "evening", topic: "food" }, "Eaten yet?"));
    expect(await h.companion.heartbeat()).toMatchObject({ status: "sent" });
  });

  it("checks in at that hour all the same once none went out for 24 hours, or with PRESENCE_LEARN_TIMING=off", async () => {
    const late = await eveningHarness();
    await eveningAnswererLived(late);
    await late.mind.update((mind) => {
      mind.heartbeat.checkinsSent = ["2026-02-23T09:06:00.000Z"];
    });
    late.api.setHandler(checkinModel({ send: true, why: "a day without", topic: "mood" }, "How are you?"));
    expect(await late.companion.heartbeat()).toMatchObject({ status: "sent" });

    const off = await eveningHarness({ core: { learnTiming: false } });
    await eveningAnswererLived(off);
    off.api.setHandler(checkinModel({ send: true, why: "morning", topic: "sleep" }, "Slept well?"));
    expect(await off.companion.heartbeat()).toMatchObject({ status: "sent" });
  });

  it("stops checking in once today's tokens pass the budget, while replies go on", async () => {
    const h = await harness({ model: { dailyTokenBudget: 5_000 } });
    await quietMorning(h);
    h.api.enqueue(textReply("Glad it went well!", { input_tokens: 6_000, output_tokens: 10 }));
    await h.companion.reply(said("Dentist done!"));
    h.clock.advanceMinutes(90);
    const held = await h.companion.heartbeat();
    expect(held).toMatchObject({ status: "held", decision: { reason: "budget" } });
    expect(h.api.requests).toHaveLength(1);
    h.api.enqueue(textReply("Of course!"));
    expect(await h.companion.reply(said("One more thing"))).toMatchObject({ status: "sent" });
    h.clock.set("2026-03-05T09:07:00.000Z");
    h.api.setHandler(checkinModel({ send: false, why: "new day, nothing to say", topic: "" }));
    expect(await h.companion.heartbeat()).toMatchObject({ decision: { reason: "model-declined" } });
  });

  it("stops check-ins when the person blocked the bot, until they write again", async () => {
    const h = await harness();
    await quietMorning(h);
    h.api.setHandler(checkinModel({ send: true, why: "dentist", topic: "dentist" }));
    h.port.fail = new RecipientBlockedError("Forbidden: bot was blocked by the user");
    expect(await h.companion.heartbeat()).toMatchObject({ decision: { reason: "blocked" } });
    expect(h.mind.read().heartbeat.blocked).toBe(true);
    h.clock.advanceMinutes(60);
    const calls = h.api.requests.length;
    expect(await h.companion.heartbeat()).toMatchObject({ decision: { reason: "blocked" } });
    expect(h.api.requests).toHaveLength(calls);
    delete h.port.fail;
    await h.companion.receive(said("I'm back"));
    expect(h.mind.read().heartbeat.blocked).toBe(false);
  });

  it("never sends a check-in the channel refused, not on the next turn nor after a restart", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    const first = await harness({ dataDir, api });
    await quietMorning(first);
    api.setHandler(checkinModel({ send: true, why: "dentist", topic: "dentist" }));
    first.port.fail = new Error("Call to 'sendMessage' failed! (502: Bad Gateway)");
    expect(await first.companion.heartbeat()).toMatchObject({ decision: { reason: "send-failed" } });
    expect(first.mind.read().outbox).toEqual([]);
    delete first.port.fail;
    expect(await first.companion.reply()).toMatchObject({ status: "nothing-pending" });
    await endProcess(first);

    const second = await harness({ dataDir, api });
    second.clock.set(first.clock.now().toISOString());
    await second.companion.recover();
    await second.companion.idle();
    expect(first.sent).toEqual([]);
    expect(second.sent).toEqual([]);
  });
});

describe("the companion after a crash between logging a message and finishing its bookkeeping", () => {
  const options = { model: { reflectMode: "two-phase" as const }, companion: { reflectInBackground: false } };

  /** The process dies right after the log write of the companion's own message. */
  function crashAfterLoggingOwnMessage(h: Harness): void {
    const append = h.log.append.bind(h.log);
    vi.spyOn(h.log, "append").mockImplementation(async (entry) => {
      const message = await append(entry);
      if (entry.role === "assistant") throw new Error("simulated crash");
      return message;
    });
  }

  async function restarted(first: Harness, dataDir: string): Promise<Harness> {
    await endProcess(first);
    const second = await harness({ ...options, dataDir, api: first.api });
    second.clock.set(first.clock.now().toISOString());
    await second.companion.recover();
    return second;
  }

  it("still reflects on a reply, without sending it again", async () => {
    const dataDir = await tempDataDir();
    const first = await harness({ ...options, dataDir });
    first.api.enqueue(textReply("Sounds like a good day."));
    crashAfterLoggingOwnMessage(first);
    await expect(first.companion.reply(said("Went for a long walk"))).rejects.toThrow("simulated crash");
    const [person, answer] = first.log.recent();
    const second = await restarted(first, dataDir);
    expect(second.mind.read().outbox).toEqual([]);
    expect(second.mind.read().reflectionQueue.map((j) => j.exchange.messageIds)).toEqual([
      [person?.id, answer?.id],
    ]);
    expect(second.sent).toEqual([]);
  });

  it("still counts a check-in, records its decision and reflects on it", async () => {
    const dataDir = await tempDataDir();
    const first = await harness({ ...options, dataDir });
    await personSaid(first, "Dentist at 11, wish me luck", "2026-03-04T06:00:00.000Z");
    await companionSaid(first, "Good luck!", "reply", "2026-03-04T06:01:00.000Z");
    first.clock.set("2026-03-04T12:07:00.000Z");
    first.api.setHandler(checkinModel({ send: true, why: "The dentist was at 11", topic: "dentist" }));
    crashAfterLoggingOwnMessage(first);
    await expect(first.companion.heartbeat()).rejects.toThrow("simulated crash");
    const checkin = first.log.recent().at(-1) as Message;
    const second = await restarted(first, dataDir);
    const mind = second.mind.read();
    expect(mind.outbox).toEqual([]);
    expect(mind.heartbeat.checkinsSent).toEqual([checkin.ts]);
    expect(lastDecision(second.mind.read())).toMatchObject({
      fire: true,
      reason: "sent",
      topic: "dentist",
      messageId: checkin.id,
    });
    expect(mind.reflectionQueue.map((j) => j.exchange)).toMatchObject([
      { messageIds: [checkin.id], trigger: "heartbeat" },
    ]);
    expect(second.sent).toEqual([]);
  });
});

describe("the companion when the channel fails", () => {
  const refused = () => new Error("Call to 'sendMessage' failed! (429: Too Many Requests: retry after 3600)");

  it("resends the reply it already wrote, as written, without asking the model again", async () => {
    const h = await harness({ companion: { retryDelaysMs: [20] } });
    let written = 0;
    h.api.setHandler(() => textReply(`Answer number ${++written}`));
    h.port.fail = refused();
    expect(await h.companion.reply(said("Did the parcel come?"))).toMatchObject({ status: "deferred" });
    expect(h.sent).toEqual([]);
    expect(h.mind.read().outbox).toMatchObject([{ kind: "reply", text: "Answer number 1" }]);
    delete h.port.fail;
    await vi.waitFor(() => expect(h.sent.map((m) => m.text)).toEqual(["Answer number 1"]), {
      timeout: 3_000,
    });
    await h.companion.idle();
    expect(h.api.requests).toHaveLength(1);
    expect(h.log.recent().map((m) => m.text)).toEqual(["Did the parcel come?", "Answer number 1"]);
    expect(h.mind.read().outbox).toEqual([]);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("sends a held reply first, then answers what the person wrote meanwhile", async () => {
    const h = await harness({ companion: { retryDelaysMs: [600_000] } });
    h.api.setHandler((body) => textReply(`re: ${lastUserText(body).replace(/\n/g, " + ")}`));
    h.port.fail = refused();
    await h.companion.reply(said("Lunch at noon?"));
    delete h.port.fail;
    h.clock.advanceMinutes(1);
    const outcome = await h.companion.reply(said("Or one?"));
    expect(outcome).toMatchObject({ status: "sent" });
    expect(h.sent.map((m) => m.text)).toEqual(["re: Lunch at noon?", "re: Or one?"]);
    expect(h.api.requests).toHaveLength(2);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("after a failure on the second part of a split reply, sends only the rest", async () => {
    const h = await harness({ companion: { retryDelaysMs: [20] } });
    h.api.setHandler(() => textReply("First, the good news.\n\nSecond, the plan."));
    h.port.failPart = {
      index: 1,
      error: new Error("Call to 'sendMessage' failed! (500: Internal Server Error)"),
    };
    expect(await h.companion.reply(said("What now?"))).toMatchObject({ status: "deferred" });
    expect(h.parts).toEqual(["First, the good news."]);
    expect(h.mind.read().outbox).toMatchObject([{ partsDelivered: 1, external: { messageId: 101 } }]);
    await vi.waitFor(() => expect(h.sent).toHaveLength(1), { timeout: 3_000 });
    await h.companion.idle();
    expect(h.parts).toEqual(["First, the good news.", "Second, the plan."]);
    expect(h.api.requests).toHaveLength(1);
    expect(h.log.recent().at(-1)).toMatchObject({
      role: "assistant",
      text: "First, the good news.\n\nSecond, the plan.",
      external: { chatId: 1, messageId: 101 },
    });
  });

  it("after a crash between the parts of a reply, sends only the parts that had not gone out", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    const first = await harness({ dataDir, api });
    const question = await first.companion.receive(said("Recipe?"));
    await crashedBeforeSending(first, question, "Flour and eggs.\n\nBake for 40 minutes.", 1);
    await endProcess(first);

    const second = await harness({ dataDir, api });
    await second.companion.recover();
    expect(second.parts).toEqual(["Bake for 40 minutes."]);
    expect(api.requests).toEqual([]);
    expect(second.log.recent().at(-1)).toMatchObject({ text: "Flour and eggs.\n\nBake for 40 minutes." });
    expect(second.mind.read().outbox).toEqual([]);
  });
});

describe("the companion after a crash", () => {
  it("finishes an interrupted send once, and never resends what was already logged", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    const first = await harness({ dataDir, api });
    const question = await first.companion.receive(said("Did you get my list?"));
    await crashedBeforeSending(first, question, "Yes — eggs, flour, butter.");
    await first.mind.update((mind) => {
      mind.outbox.push({
        id: "o-logged",
        kind: "reply",
        text: "Already out",
        trigger: "reply",
        channel: "telegram",
        createdAt: first.clock.now().toISOString(),
      });
    });
    await first.log.append({
      role: "assistant",
      text: "Already out",
      channel: "telegram",
      trigger: "reply",
      outboxId: "o-logged",
      answeredThrough: "nothing",
    });
    await endProcess(first);

    const second = await harness({ dataDir, api });
    await second.companion.recover();
    expect(second.sent.map((m) => m.text)).toEqual(["Yes — eggs, flour, butter."]);
    expect(second.mind.read().outbox).toEqual([]);
    expect(api.requests).toEqual([]);
    await second.companion.recover();
    expect(second.sent).toHaveLength(1);
  });

  it("answers what was left unanswered exactly once and runs queued reflections", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    api.setHandler((body) =>
      body.tool_choice?.name === "update_mind"
        ? toolReply("update_mind", { trajectory_now: "Waiting to hear about the cake" })
        : textReply("Sorry, I'm here! How did the cake turn out?"),
    );
    const first = await harness({ dataDir, api, model: { reflectMode: "two-phase" } });
    await first.companion.receive(said("Made a cake"));
    await endProcess(first);

    const second = await harness({ dataDir, api, model: { reflectMode: "two-phase" } });
    await second.companion.recover();
    await second.companion.idle();
    expect(second.sent.map((m) => m.text)).toEqual(["Sorry, I'm here! How did the cake turn out?"]);
    expect(second.mind.read().scratchpad.trajectory_now).toBe("Waiting to hear about the cake");
    await second.companion.recover();
    await second.companion.idle();
    expect(second.sent).toHaveLength(1);
    expect(api.requests.map((r) => r.body.model)).toEqual(["claude-sonnet-5-5", "claude-haiku-5-5"]);
  });
});

describe("the companion across a restart while the model is down", () => {
  it("keeps the person's message, sends one notice in all, and answers once when the model is back", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    api.failNext("529", 3);
    api.setHandler(() => textReply("Sorry for the wait — Sunday: market, then the lake?"));
    const first = await harness({ dataDir, api, companion: { retryDelaysMs: [600_000] } });
    expect(await first.companion.reply(said("Can you help me plan Sunday?"))).toMatchObject({
      status: "deferred",
    });
    expect(first.sent).toEqual([]);
    first.clock.advanceMinutes(2);
    await first.companion.reply();
    expect(first.sent.map((m) => m.kind)).toEqual(["notice"]);
    await endProcess(first);

    const second = await harness({ dataDir, api, companion: { retryDelaysMs: [20] } });
    second.clock.set("2026-03-04T09:10:00.000Z");
    await second.companion.recover();
    expect(second.sent).toEqual([]);
    await vi.waitFor(() => expect(second.sent.map((m) => m.kind)).toEqual(["reply"]), { timeout: 3_000 });
    await second.companion.recover();
    await second.companion.idle();
    expect(second.sent).toHaveLength(1);
    expect(api.requests.map((r) => r.outcome)).toEqual(["529", "529", "529", "answered"]);
    expect(second.log.recent().map((m) => [m.role, m.notice === true])).toEqual([
      ["user", false],
      ["assistant", true],
      ["assistant", false],
    ]);
    expect(pendingMessages(second.log.recent(), second.clock.now())).toEqual([]);
  });

  it("queues a reply it resent after a crash for reflection", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    api.setHandler(() => toolReply("update_mind", { trajectory_now: "Shopping list confirmed" }));
    const first = await harness({ dataDir, api, model: { reflectMode: "two-phase" } });
    const question = await first.companion.receive(said("Did you get my list?"));
    await crashedBeforeSending(first, question, "Yes — eggs, flour, butter.");
    await endProcess(first);

    const second = await harness({ dataDir, api, model: { reflectMode: "two-phase" } });
    await second.companion.recover();
    await second.companion.idle();
    expect(second.sent.map((m) => m.text)).toEqual(["Yes — eggs, flour, butter."]);
    expect(api.requests.map((r) => r.body.model)).toEqual(["claude-haiku-5-5"]);
    const shown = lastUserText(api.requests[0]?.body as MessagesRequestBody);
    expect(shown).toContain("person: Did you get my list?");
    expect(shown).toContain("you: Yes — eggs, flour, butter.");
    expect(second.mind.read().scratchpad.trajectory_now).toBe("Shopping list confirmed");
  });
});

describe("pendingMessages", () => {
  const at = (minute: number, role: Message["role"], id: string, extra: Partial<Message> = {}): Message => ({
    id,
    ts: new Date(Date.parse(START) + minute * 60_000).toISOString(),
    role,
    text: id,
    channel: "telegram",
    ...extra,
  });
  const now = new Date(Date.parse(START) + 60 * 60_000);

  it("counts what came after the last answer, and what arrived while it was being written", () => {
    const log = [
      at(0, "user", "u1"),
      at(1, "user", "u2"),
      at(2, "assistant", "r1", { trigger: "reply", answeredThrough: "u1" }),
      at(3, "user", "u3"),
    ];
    expect(pendingMessages(log, now).map((m) => m.id)).toEqual(["u2", "u3"]);
  });

  it("does not count a notice as an answer; a check-in covers what it saw, not what came during it", () => {
    const log = [
      at(0, "user", "u1"),
      at(1, "assistant", "r1", { trigger: "reply" }),
      at(2, "user", "u2"),
      at(3, "assistant", "notice", { trigger: "reply", notice: true }),
    ];
    expect(pendingMessages(log, now).map((m) => m.id)).toEqual(["u2"]);
    const during = [
      ...log,
      at(4, "user", "u3"),
      at(5, "assistant", "h1", { trigger: "heartbeat", answeredThrough: "u2" }),
    ];
    expect(pendingMessages(during, now).map((m) => m.id)).toEqual(["u3"]);
    expect(pendingMessages([at(0, "user", "u1"), at(90, "user", "later")], now).map((m) => m.id)).toEqual([
      "u1",
    ]);
  });
});

describe("the companion's housekeeping", () => {
  it("stops waiting for a turn in flight at the close bound, counted on its timers", async () => {
    const h = await harness({ virtualTimers: true, companion: { closeTimeoutMs: 2_000 } });
    h.api.failNext("slow", 1, { delayMs: 1_000 });
    h.api.setHandler(() => textReply("Sorry, slow today."));
    let replied = false;
    const reply = h.companion.reply(said("still there?")).finally(() => {
      replied = true;
    });
    await vi.waitFor(() => expect(h.api.requests).toHaveLength(1));
    let closed = false;
    const closing = h.companion.close().then(() => {
      closed = true;
    });
    await h.virtual.advanceTo(new Date("2026-03-04T09:00:01.999Z"));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    await h.virtual.advanceTo(new Date("2026-03-04T09:00:02.000Z"));
    await closing;
    expect(replied).toBe(false);
    await reply;
  });

  it("applies a single-phase reflection that came with the reply", async () => {
    const h = await harness({ model: { reflectMode: "single-phase" } });
    h.api.enqueue(
      toolReply("update_mind", { trajectory_now: "Planning the garden" }, { text: "Tomatoes first?" }),
    );
    expect(await h.companion.reply(said("Planning the garden this weekend"))).toMatchObject({
      status: "sent",
    });
    await h.companion.idle();
    expect(h.sent.map((m) => m.text)).toEqual(["Tomatoes first?"]);
    expect(h.mind.read().scratchpad.trajectory_now).toBe("Planning the garden");
    expect(h.api.requests).toHaveLength(1);
    expect(h.api.requests[0]?.body.tools?.map((t) => t.name)).toContain("update_mind");
  });

  it("shows UNDERSTANDING ids to the reply only when it reflects too (single-phase), which then edits by id", async () => {
    const single = await harness({ model: { reflectMode: "single-phase" } });
    single.api.enqueue(
      toolReply(
        "update_mind",
        { understanding: [{ op: "change", id: "u-1", text: "What they do on weekends" }] },
        { text: "Tomatoes first?" },
      ),
    );
    await single.companion.reply(said("Planning the garden this weekend"));
    await single.companion.idle();
    const request = single.api.requests[0]?.body as MessagesRequestBody;
    expect(`${systemText(request)}\n${lastUserText(request)}`).toContain(
      "Unknown:\n[u-1] What their days look like; what they want from these conversations.",
    );
    expect(single.mind.read().scratchpad.understanding_unknown).toMatchObject([
      { id: "u-1", text: "What they do on weekends" },
    ]);

    const twoPhase = await harness({ model: { reflectMode: "two-phase" } });
    twoPhase.api.setHandler((body) =>
      body.tool_choice?.name === "update_mind" ? toolReply("update_mind", {}) : textReply("Tomatoes first?"),
    );
    await twoPhase.companion.reply(said("Planning the garden this weekend"));
    await twoPhase.companion.idle();
    const reply = twoPhase.api.requests[0]?.body as MessagesRequestBody;
    const seen = `${systemText(reply)}\n${lastUserText(reply)}`;
    expect(seen).toContain("Unknown: What their days look like; what they want from these conversations.");
    expect(seen).not.toContain("[u-1]");
  });

  it("in single-phase mode queues a reply that carried no update, telling reflection what is leaving", async () => {
    const h = await harness({ model: { reflectMode: "single-phase" } });
    for (let i = 0; i < 40; i++) {
      await h.log.append({
        role: i % 2 === 0 ? "user" : "assistant",
        text: `Message ${i} about the garden, the tomatoes, the weather and the long week at work.`,
        channel: "telegram",
        ...(i % 2 === 0 ? {} : { trigger: "reply" as const }),
        ts: new Date(Date.parse("2026-03-04T07:00:00.000Z") + i * 60_000).toISOString(),
      });
    }
    h.api.setHandler((body) =>
      body.tool_choice?.name === "update_mind" ? toolReply("update_mind", {}) : textReply("Noted!"),
    );
    expect(await h.companion.reply(said("One more thing about the garden"))).toMatchObject({
      status: "sent",
    });
    await h.companion.idle();
    expect(h.api.requests.map((r) => r.body.model)).toEqual(["claude-sonnet-5-5", "claude-haiku-5-5"]);
    expect(lastUserText(h.api.requests[1]?.body as MessagesRequestBody)).toContain("<leaving_window>");
    expect(h.mind.read().flushedThrough).toBeDefined();
    expect(h.mind.read().reflectionQueue).toEqual([]);
  });

  it("retries a reflection the model could not take after its back-off, in virtual time", async () => {
    const h = await harness({ model: { reflectMode: "two-phase" }, virtualTimers: true });
    h.api.setHandler((body) => {
      if (body.tool_choice?.name === "update_mind") {
        return toolReply("update_mind", {
          understanding: [{ op: "add", list: "known", text: "(user) Bakes sourdough on Sundays" }],
        });
      }
      h.api.failNext("529", 1); // the request after the reply's own: the reflection
      return textReply("What kind of bread?");
    });
    expect(await h.companion.reply(said("Baking today"))).toMatchObject({ status: "sent" });
    await h.companion.idle();
    const retryAt = new Date(h.clock.now().getTime() + (RETRY_BACKOFF_MS[0] as number));
    expect(h.mind.read().reflectionQueue).toMatchObject([{ attempts: 1, notBefore: retryAt.toISOString() }]);
    expect(h.virtual.next()).toEqual(retryAt);
    await h.virtual.advanceTo(new Date(retryAt.getTime() - 1), () => h.companion.idle());
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["answered", "529"]);
    await h.virtual.advanceTo(retryAt, () => h.companion.idle());
    expect(h.api.requests.map((r) => r.outcome)).toEqual(["answered", "529", "answered"]);
    expect(h.mind.read().reflectionQueue).toEqual([]);
    expect(h.mind.read().scratchpad.understanding_known.map((i) => i.text)).toEqual([
      "(user) Bakes sourdough on Sundays",
    ]);
  });

  it("reflects after each exchange off the reply path", async () => {
    const h = await harness({ model: { reflectMode: "two-phase" } });
    h.api.setHandler((body) =>
      body.tool_choice?.name === "update_mind"
        ? toolReply("update_mind", {
            understanding: [{ op: "add", list: "known", text: "(user) Bakes sourdough on Sundays" }],
          })
        : textReply("What kind of bread?"),
    );
    expect(await h.companion.reply(said("Baking today"))).toMatchObject({ status: "sent" });
    await h.companion.idle();
    expect(h.mind.read().scratchpad.understanding_known.map((i) => i.text)).toEqual([
      "(user) Bakes sourdough on Sundays",
    ]);
    expect(h.mind.read().reflectionQueue).toEqual([]);
  });

  it("writes one trace record per turn with what the model was shown and the tokens", async () => {
    const h = await harness();
    h.api.enqueue(textReply("Hi!"));
    await h.companion.reply(said("hello"));
    const [record] = await h.trace.last(1);
    expect(record).toMatchObject({
      kind: "reply",
      outcome: "sent",
      input: [{ text: "hello" }],
      shown: {
        prefix: expect.any(Number),
        scratchpad: expect.any(Number),
        awareness: expect.any(Number),
        total: expect.any(Number),
      },
      returned: { raw: "Hi!", removed: [] },
      usage: [expect.objectContaining({ purpose: "reply", cacheWrite: expect.any(Number) })],
    });
  });

  it("finishes the turn in flight on close but starts none that were waiting", async () => {
    const h = await harness();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    h.api.setHandler(async () => {
      await gate;
      return textReply("First answer.");
    });
    const first = h.companion.reply(said("A"));
    await vi.waitFor(() => expect(h.api.requests).toHaveLength(1));
    const second = h.companion.reply(said("B"));
    const closing = h.companion.close();
    release();
    await closing;
    expect(await first).toMatchObject({ status: "sent" });
    expect(await second).toEqual({ status: "closed" });
    expect(h.api.requests).toHaveLength(1);
    expect(pendingMessages(h.log.recent(), h.clock.now()).map((m) => m.text)).toEqual(["B"]);
  });

  it("takes no new turns once closed", async () => {
    const h = await harness();
    await h.companion.close();
    expect(await h.companion.reply(said("still there?"))).toEqual({ status: "closed" });
    expect(await h.companion.heartbeat()).toEqual({ status: "closed" });
    expect(h.log.recent().map((m) => m.text)).toEqual(["still there?"]);
  });

  it("ships a persona it can load", async () => {
    await expect(loadPersona()).resolves.toMatchObject({ soul: expect.stringContaining("Claire") });
  });
});

describe("Telegram manners: anchored replies", () => {
  /** The person's message as Telegram hands it over, with its ids there. */
  const onTelegram = (text: string, messageId: number): IncomingInput => ({
    text,
    channel: "telegram",
    external: { chatId: 1, messageId },
  });

  it("does not anchor an immediate answer to one message", async () => {
    const h = await harness();
    h.api.setHandler(() => textReply("Morning!"));
    await h.companion.reply(onTelegram("Morning", 7));
    expect(h.sent).toHaveLength(1);
    expect(h.sent[0]?.anchor).toBeUndefined();
    expect(h.mind.read().outbox).toEqual([]);
  });

  it("anchors an answer to several messages to the newest of them", async () => {
    const h = await harness();
    h.api.setHandler(() => textReply("Both good ideas."));
    await h.companion.receive(onTelegram("Pasta tonight?", 7));
    const newest = await h.companion.receive(onTelegram("Or soup", 8));
    await h.companion.reply();
    expect(h.sent[0]?.anchor).toEqual({ id: newest.id, external: { chatId: 1, messageId: 8 } });
  });

  it("anchors an answer to a message that waited more than two minutes, by the clock", async () => {
    const h = await harness();
    h.api.setHandler(() => {
      h.clock.advanceMinutes(3);
      return textReply("Sorry, that took a while — yes!");
    });
    const question = await h.companion.receive(onTelegram("Can you remind me later?", 7));
    await h.companion.reply();
    expect(h.sent[0]?.anchor).toEqual({ id: question.id, external: { chatId: 1, messageId: 7 } });
  });

  it("anchors the answer sent after a restart to the message it answers", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    api.setHandler(() => textReply("I'm here."));
    const first = await harness({ dataDir, api });
    const question = await first.companion.receive(onTelegram("Are you there?", 7));
    await endProcess(first);

    const second = await harness({ dataDir, api, start: "2026-03-04T09:00:30.000Z" });
    await second.companion.recover();
    expect(second.sent.map((m) => [m.text, m.anchor])).toEqual([
      ["I'm here.", { id: question.id, external: { chatId: 1, messageId: 7 } }],
    ]);
  });

  it("anchors a reply a crash kept in the outbox when it is finally sent, although it was not when written", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    const first = await harness({ dataDir, api });
    const question = await first.companion.receive(onTelegram("Eggs or flour?", 7));
    await crashedBeforeSending(first, question, "Both.");
    await endProcess(first);

    const second = await harness({ dataDir, api, start: "2026-03-04T09:00:30.000Z" });
    await second.companion.recover();
    expect(second.sent.map((m) => [m.text, m.anchor?.id])).toEqual([["Both.", question.id]]);
    expect(api.requests).toEqual([]);
  });

  it("keeps the anchor it decided in the outbox entry, so a crash before the send still anchors", async () => {
    const h = await harness();
    h.api.setHandler(() => textReply("Both, then."));
    h.port.fail = new Error("Call to 'sendMessage' failed! (502: Bad Gateway)");
    await h.companion.receive(onTelegram("Tea?", 7));
    const newest = await h.companion.receive(onTelegram("Or coffee?", 8));
    expect(await h.companion.reply()).toMatchObject({ status: "deferred" });
    expect(h.mind.read().outbox).toMatchObject([
      { text: "Both, then.", anchor: { id: newest.id, external: { chatId: 1, messageId: 8 } } },
    ]);
  });
});

describe("Telegram manners: a reaction instead of a message", () => {
  const onTelegram = (text: string, messageId: number): IncomingInput => ({
    text,
    channel: "telegram",
    external: { chatId: 1, messageId },
  });

  it("offers the react tool in the cached prefix of every call, the same bytes each time", async () => {
    const h = await harness();
    h.api.setHandler(checkinModel({ send: false, why: "quiet day", topic: "" }));
    await h.companion.reply(said("Hello"));
    h.clock.advanceMinutes(240);
    await h.companion.heartbeat();
    const toolLists = h.api.requests.map((r) => JSON.stringify(r.body.tools));
    expect(toolLists.length).toBeGreaterThanOrEqual(2);
    expect(new Set(toolLists).size).toBe(1);
    const react = h.api.requests[0]?.body.tools?.find((t) => t.name === "react");
    expect(react?.input_schema).toMatchObject({
      properties: { emoji: { enum: expect.arrayContaining(["👍", "❤", "🙏"]) } },
      required: ["emoji"],
    });
  });

  it("reacts on the person's newest message, logs the reaction as its answer, and says nothing", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "👍" }));
    const thanks = await h.companion.receive(onTelegram("ok thanks", 7));
    const outcome = await h.companion.reply();
    expect(outcome).toMatchObject({ status: "sent" });
    expect(h.reactions).toEqual([
      { emoji: "👍", to: { id: thanks.id, external: { chatId: 1, messageId: 7 } } },
    ]);
    expect(h.sent).toEqual([]);
    expect(h.api.requests).toHaveLength(1);
    const [, reaction] = h.log.recent();
    expect(reaction).toMatchObject({
      role: "assistant",
      text: "",
      reaction: "👍",
      trigger: "reply",
      replyTo: thanks.id,
      answeredThrough: thanks.id,
    });
    expect(reaction?.external).toBeUndefined();
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
    expect(h.mind.read().outbox).toEqual([]);
    const [turn] = await h.trace.last(1);
    expect(turn).toMatchObject({
      kind: "reply",
      outcome: "sent",
      sent: { id: reaction?.id, reaction: "👍" },
    });
  });

  it("takes the emoji as models write it, without the variation selector Telegram's list lacks", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "❤️" }));
    await h.companion.reply(onTelegram("love you, night!", 7));
    expect(h.reactions.map((r) => r.emoji)).toEqual(["❤"]);
  });

  it("tells the model an emoji Telegram does not allow, and takes its next answer", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "🦖" }), toolReply("react", { emoji: "🙏" }));
    await h.companion.reply(onTelegram("done!", 7));
    expect(lastUserText(h.api.requests[1]?.body as MessagesRequestBody)).toContain(
      "not a reaction Telegram allows",
    );
    expect(h.reactions.map((r) => r.emoji)).toEqual(["🙏"]);
    expect(h.sent).toEqual([]);
  });

  it("does not let one reaction answer several messages: the model is told to write, and its words go out", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "👍" }), textReply("Yes, Thursday works — and thanks!"));
    await h.companion.receive(onTelegram("Can we move the call to Thursday?", 7));
    const newest = await h.companion.receive(onTelegram("thanks for yesterday btw", 8));
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    expect(h.reactions).toEqual([]);
    expect(h.api.requests).toHaveLength(2);
    const second = h.api.requests[1]?.body as MessagesRequestBody;
    expect(lastUserText(second)).toBe(REACTION_ANSWERS_ONE);
    expect(second.tool_choice).toEqual({ type: "none" });
    expect(h.sent.map((m) => [m.text, m.anchor?.id])).toEqual([
      ["Yes, Thursday works — and thanks!", newest.id],
    ]);
    expect(
      h.log
        .recent()
        .filter((m) => m.role === "assistant")
        .map((m) => m.reaction),
    ).toEqual([undefined]);
  });

  it("sends the text, and no reaction, when the model both writes and reacts", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "👍" }, { text: "Anytime!" }));
    await h.companion.reply(onTelegram("ok thanks", 7));
    expect(h.sent.map((m) => m.text)).toEqual(["Anytime!"]);
    expect(h.reactions).toEqual([]);
    expect(h.log.recent()[1]).toMatchObject({ text: "Anytime!" });
    expect(h.log.recent()[1]?.reaction).toBeUndefined();
  });

  it("is not a message sent: no unanswered count, no minimum gap, and awareness shows it as a reaction", async () => {
    const reactions = await harness();
    const texts = await harness();
    reactions.api.enqueue(toolReply("react", { emoji: "👍" }));
    texts.api.enqueue(textReply("You're welcome!"));
    for (const h of [reactions, texts]) {
      await personSaid(h, "Could you remind me about the dentist?", "2026-03-04T07:00:00.000Z");
      await companionSaid(h, "Sure, at 11.", "reply", "2026-03-04T07:01:00.000Z");
      await h.companion.reply(onTelegram("ok thanks", 7));
    }
    const awareness = (h: Harness) =>
      buildAwarenessContext(h.log.recent(), h.clock.now(), {
        ...defaultAwarenessSettings,
        timezone: "Europe/Berlin",
        trigger: "heartbeat",
      });
    const reacted = awareness(reactions);
    expect(reacted.conversationState.unansweredCount).toBe(0);
    expect(reacted.self.lastMessageTime).toBe("2026-03-04T07:01:00.000Z");
    expect(formatAwarenessForPrompt(reacted, "heartbeat")).toContain(
      "You have not written since their last message; you reacted 👍 to it",
    );
    expect(formatAwarenessForPrompt(reacted, "heartbeat")).toContain("Your last written message: 8:01 AM");
    expect(formatAwarenessForPrompt(awareness(texts), "heartbeat")).toContain("Your last message: 10:00 AM");
    expect(awareness(texts).conversationState.unansweredCount).toBe(1);

    // 35 minutes on: past "recent conversation" (30), inside the minimum gap (45) only for a message.
    for (const h of [reactions, texts]) {
      h.clock.advanceMinutes(35);
      h.api.setHandler(checkinModel({ send: false, why: "nothing to add", topic: "" }));
      await h.companion.heartbeat();
    }
    expect(lastDecision(texts.mind.read())).toMatchObject({ fire: false, reason: "too-soon" });
    expect(lastDecision(reactions.mind.read())?.reason).not.toBe("too-soon");
    expect(reactions.api.requests.some((r) => r.body.tool_choice?.name === "decide_checkin")).toBe(true);
  });

  it("shows the model its reaction in the next turn, as a reaction and not as words", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "❤" }), textReply("Morning! Sleep well?"));
    await h.companion.reply(onTelegram("night!", 7));
    h.clock.advanceMinutes(1);
    await h.companion.reply(onTelegram("actually, can't sleep", 8));
    const next = h.api.requests[1]?.body as MessagesRequestBody;
    expect(systemText(next)).toContain("you reacted ❤");
    expect(JSON.stringify(next.messages)).toContain("[you reacted ❤]");
  });

  it("keeps a reaction the channel refused in the outbox and sends it, not text, on the retry", async () => {
    const h = await harness({ companion: { retryDelaysMs: [20] } });
    h.api.enqueue(toolReply("react", { emoji: "👍" }));
    h.port.fail = new Error("Call to 'setMessageReaction' failed! (502: Bad Gateway)");
    expect(await h.companion.reply(onTelegram("ok thanks", 7))).toMatchObject({ status: "deferred" });
    expect(h.mind.read().outbox).toMatchObject([{ kind: "reply", text: "", reaction: "👍" }]);
    delete h.port.fail;
    await vi.waitFor(() => expect(h.reactions.map((r) => r.emoji)).toEqual(["👍"]), { timeout: 3_000 });
    await h.companion.idle();
    expect(h.sent).toEqual([]);
    expect(h.api.requests).toHaveLength(1);
    expect(h.mind.read().outbox).toEqual([]);
  });

  it("logs no reaction the channel refused for good: the message counts as handled, and nothing is retried", async () => {
    const h = await harness();
    h.api.enqueue(toolReply("react", { emoji: "👍" }));
    h.port.refuseReactions = "Bad Request: MESSAGE_ID_INVALID";
    const thanks = await h.companion.receive(onTelegram("ok thanks", 7));
    expect(await h.companion.reply()).toMatchObject({ status: "refused", answered: [thanks.id] });
    expect(h.log.recent().map((m) => [m.role, m.reaction, m.handledWithoutReply])).toEqual([
      ["user", undefined, true],
    ]);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
    expect(h.mind.read().outbox).toEqual([]);
    const [turn] = await h.trace.last(1);
    expect(turn).toMatchObject({ outcome: "refused", reaction: "👍", handledWithoutReply: thanks.id });
    await h.companion.idle();
    expect(h.api.requests).toHaveLength(1);
    expect(h.sent).toEqual([]);
  });

  it("drops a held reaction the channel then refuses for good, and still answers what came meanwhile", async () => {
    const h = await harness({ companion: { retryDelaysMs: [20] } });
    h.api.enqueue(toolReply("react", { emoji: "👍" }), textReply("Sure, tomorrow at 9."));
    h.port.fail = new Error("Call to 'setMessageReaction' failed! (502: Bad Gateway)");
    await h.companion.receive(onTelegram("ok thanks", 7));
    expect(await h.companion.reply()).toMatchObject({ status: "deferred" });
    delete h.port.fail;
    h.port.refuseReactions = "Bad Request: MESSAGE_ID_INVALID";
    await h.companion.receive(onTelegram("oh, and can we talk tomorrow?", 8));
    await vi.waitFor(() => expect(h.sent.map((m) => m.text)).toEqual(["Sure, tomorrow at 9."]), {
      timeout: 3_000,
    });
    await h.companion.idle();
    expect(h.reactions).toEqual([]);
    expect(h.mind.read().outbox).toEqual([]);
    expect(h.log.recent().map((m) => [m.role, m.text, m.reaction, m.handledWithoutReply])).toEqual([
      ["user", "ok thanks", undefined, true],
      ["user", "oh, and can we talk tomorrow?", undefined, undefined],
      ["assistant", "Sure, tomorrow at 9.", undefined, undefined],
    ]);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("after a crash before the reaction went out, recovery reacts once and writes nothing", async () => {
    const dataDir = await tempDataDir();
    const api = await startMessagesApiFake();
    const first = await harness({ dataDir, api });
    const thanks = await first.companion.receive(onTelegram("ok thanks", 7));
    await first.mind.update((mind) => {
      mind.outbox.push({
        id: "o-reaction",
        kind: "reply",
        text: "",
        reaction: "👍",
        anchor: { id: thanks.id, external: { chatId: 1, messageId: 7 } },
        trigger: "reply",
        channel: "telegram",
        createdAt: first.clock.now().toISOString(),
        replyTo: thanks.id,
        answeredThrough: thanks.id,
      });
    });
    await endProcess(first);

    const second = await harness({ dataDir, api, start: "2026-03-04T09:00:30.000Z" });
    await second.companion.recover();
    await second.companion.recover();
    expect(second.reactions.map((r) => [r.emoji, r.to.id])).toEqual([["👍", thanks.id]]);
    expect(second.sent).toEqual([]);
    expect(api.requests).toEqual([]);
    expect(second.log.recent().map((m) => [m.role, m.text, m.reaction])).toEqual([
      ["user", "ok thanks", undefined],
      ["assistant", "", "👍"],
    ]);
  });
});
