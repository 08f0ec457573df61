import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { initialMindState, type MindStore, openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import type { Message } from "../../src/core/message.ts";
import { fixItem, forgetItem } from "../../src/mind/forget.ts";
import { applyReflectionUpdate, REFLECT_TOOL, reflectionUpdateSchema } from "../../src/mind/reflect.ts";
import { RETRY_BACKOFF_MS, Reflector } from "../../src/mind/reflection-queue.ts";
import { ModelClient } from "../../src/model/llm.ts";
import { fixedPersona, loadPersona } from "../../src/model/persona.ts";
import type { ModelConfig } from "../../src/model/settings.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { Trace } from "../../src/store/trace.ts";
import {
  fakeModelConfig,
  lastUserText,
  type MessagesApiFake,
  startMessagesApiFake,
  systemText,
  toolReply,
} from "../../testkit/messages-api.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";

let root: string;
let dataDir: string;
let clock: SettableClock;
let api: MessagesApiFake;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-reflect-"));
  dataDir = join(root, "data");
  clock = new SettableClock("2026-11-22T09:00:00.000Z");
  api = await startMessagesApiFake();
});
afterEach(async () => {
  await api.close();
  await rm(root, { recursive: true, force: true });
});

function modelConfig(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return fakeModelConfig(api, overrides);
}

interface World {
  mind: MindStore;
  log: MessageLog;
  notes: NotesStore;
  trace: Trace;
  reflector: Reflector;
  exchange: Message[];
}

async function world(config: ModelConfig = modelConfig()): Promise<World> {
  const mind = await openMind(dataDir, clock);
  const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
  const notes = new NotesStore({ dataDir });
  const trace = new Trace({ dataDir, clock });
  const model = new ModelClient(config, { clock });
  const reflector = new Reflector({
    mind,
    log,
    notes,
    model,
    config,
    clock,
    settings: BERLIN_CHECKIN_SETTINGS,
    persona: fixedPersona(await loadPersona()),
    trace,
  });
  const exchange = log.recent().slice(-2);
  return { mind, log, notes, trace, reflector, exchange };
}

async function converse(): Promise<Message[]> {
  const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
  const person = await log.append({
    role: "user",
    text: "The job interview went well, I think!",
    channel: "cli",
  });
  clock.advanceMinutes(1);
  const reply = await log.append({
    role: "assistant",
    trigger: "reply",
    text: "That's lovely to hear. When will they let you know?",
    channel: "cli",
  });
  return [person, reply];
}

describe("reflection through the real SDK", () => {
  it("makes one forced tool call with the cheaper model and applies the update atomically", async () => {
    const [person, reply] = await converse();
    const w = await world();
    const p = person as Message;
    const r = reply as Message;
    await w.reflector.enqueue({ messageIds: [p.id, r.id], trigger: "reply" });
    api.enqueue(
      toolReply("update_mind", {
        trajectory_now: "Waiting on the interview result",
        understanding: [{ op: "add", list: "known", text: "- (user) had a job interview on 22 Nov" }],
        self_confidence: "MEDIUM - they sound hopeful",
        memory: [{ op: "add", kind: "open_loop", text: "Hear back about the job interview", importance: 4 }],
        threads: [{ op: "scope", name: "job hunt", note: "the interview" }],
        annotations: [
          { messageId: p.id, topics: ["work"], question: false, tone: "warm" },
          { messageId: r.id, topics: ["work"], question: true, tone: "warm" },
        ],
      }),
    );

    const summary = await w.reflector.runPending();
    expect(summary).toEqual({ applied: 1, refused: 0, dropped: 0, retryAt: null });
    expect(api.problems).toEqual([]);
    const request = api.requests[0]?.body;
    expect(request?.model).toBe("claude-haiku-5-5");
    expect(request?.tool_choice).toEqual({ type: "tool", name: "update_mind" });
    expect(request?.tools?.map((t) => t.name)).toEqual(["update_mind"]);
    const shown = lastUserText(request as never);
    expect(shown).toContain("<prior_understanding>");
    expect(shown).toContain(`[${p.id}] Sun 22 Nov 10:00 person: The job interview went well, I think!`);
    expect(shown).toContain("you: That's lovely to hear.");

    const state = w.mind.read();
    expect(state.scratchpad.trajectory_now).toBe("Waiting on the interview result");
    expect(state.scratchpad.understanding_known).toEqual([
      {
        id: expect.stringMatching(/^k[0-9a-f]{6}$/),
        text: "- (user) had a job interview on 22 Nov",
        learnedAt: clock.now().toISOString(),
        sourceMessageIds: [p.id, r.id],
      },
    ]);
    expect(state.memory).toMatchObject([
      {
        kind: "open_loop",
        text: "Hear back about the job interview",
        importance: 4,
        sourceMessageIds: [p.id, r.id],
      },
    ]);
    expect(state.threads.current).toBe("job hunt");
    expect(state.threads.list[0]?.notes.map((n) => n.text)).toEqual(["[→ job hunt] the interview"]);
    expect(state.reflectionQueue).toEqual([]);
    expect(state.usage.map((u) => u.purpose)).toEqual(["reflect"]);
    expect((await w.log.get(r.id))?.annotations).toEqual({ topics: ["work"], question: true, tone: "warm" });

    const [record] = await w.trace.last(1);
    if (!record) throw new Error("no trace record");
    expect(record).toMatchObject({ kind: "reflect", outcome: "applied" });
    expect((record.shown as { sections: { name: string }[] }).sections.map((s) => s.name)).toEqual([
      "prior_understanding",
      "memory",
      "threads",
      "exchange",
    ]);
    expect(record.changes).toContain("scratchpad TRAJECTORY.Now");
    expect(record.tokens).toMatchObject({ input: expect.any(Number), output: expect.any(Number) });
  });

  it("reads the exchange as the reply did: a photo labelled, a reaction as the one wording the model knows", async () => {
    const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
    const photo = await log.append({
      role: "user",
      text: "my balcony garden",
      media: { kind: "photo" },
      channel: "telegram",
    });
    const reaction = await log.append({
      role: "assistant",
      trigger: "reply",
      text: "",
      reaction: "❤",
      replyTo: photo.id,
      channel: "telegram",
    });
    const w = await world();
    await w.reflector.enqueue({ messageIds: [photo.id, reaction.id], trigger: "reply" });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const shown = lastUserText(api.requests[0]?.body as never);
    expect(shown).toContain(`[${photo.id}] Sun 22 Nov 10:00 person: [photo] my balcony garden`);
    expect(shown).toContain(`[${reaction.id}] Sun 22 Nov 10:00 you: [you reacted ❤]`);
  });

  it("shows local times in the zone the person set with /tz, not the configured one", async () => {
    const [person, reply] = await converse();
    const w = await world();
    await w.mind.update((mind) => {
      mind.heartbeat.timezone = "America/New_York";
    });
    const p = person as Message;
    await w.reflector.enqueue({ messageIds: [p.id, (reply as Message).id], trigger: "reply" });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const shown = lastUserText(api.requests[0]?.body as never);
    expect(shown).toContain(`[${p.id}] Sun 22 Nov 04:00 person:`);
  });

  it("caches its stable part (tool, guidance, persona) once reflections come in quick succession", async () => {
    const [person, reply] = await converse();
    const w = await world();
    const ids = [(person as Message).id, (reply as Message).id];
    api.setHandler(() => toolReply("update_mind", {}));
    for (let i = 0; i < 6; i++) {
      await w.reflector.enqueue({ messageIds: ids, trigger: "reply" });
      await w.reflector.runPending();
    }
    const system = systemText(api.requests[0]?.body as never);
    expect(system).toContain("You are Claire");
    expect(system).toContain("# The person, in their own words");
    // No breakpoint until the ledger shows three quick gaps; then written once and read.
    const usage = w.mind.read().usage;
    expect(usage.slice(0, 4).every((u) => u.cacheWrite === 0 && u.cacheRead === 0)).toBe(true);
    expect(usage[4]?.cacheWrite).toBeGreaterThan(2_048);
    expect(usage[5]).toMatchObject({ cacheWrite: 0, cacheRead: usage[4]?.cacheWrite });
  });

  it("a refused update changes nothing, leaves the queue and is traced with its reason", async () => {
    const [person, reply] = await converse();
    const w = await world();
    await w.reflector.enqueue({
      messageIds: [(person as Message).id, (reply as Message).id],
      trigger: "reply",
    });
    const before = w.mind.read();
    api.enqueue(
      toolReply("update_mind", {
        trajectory_now: "Something new",
        self_confidence: "fairly sure",
        annotations: [{ messageId: (person as Message).id, topics: ["work"], question: false, tone: "warm" }],
      }),
    );
    expect(await w.reflector.runPending()).toMatchObject({ applied: 0, refused: 1 });
    const after = w.mind.read();
    expect(after.scratchpad).toEqual(before.scratchpad);
    expect(after.reflectionQueue).toEqual([]);
    expect((await w.log.get((person as Message).id))?.annotations).toBeUndefined();
    const [record] = await w.trace.last(1);
    expect(record).toMatchObject({ kind: "reflect", outcome: "refused" });
    expect(String(record?.reason)).toMatch(/SELF.Confidence must start with HIGH, MEDIUM or LOW/);
  });

  it("survives a crash between the reply and its reflection", async () => {
    const [person, reply] = await converse();
    const first = await world();
    await first.reflector.enqueue({
      messageIds: [(person as Message).id, (reply as Message).id],
      trigger: "reply",
    });
    expect(JSON.parse(await readFile(join(dataDir, "mind.json"), "utf8")).reflectionQueue).toHaveLength(1);

    // The process dies here: a new one opens the same data directory.
    const restarted = await world();
    api.enqueue(toolReply("update_mind", { trajectory_now: "Reflected after the restart" }));
    expect(await restarted.reflector.runPending()).toMatchObject({ applied: 1 });
    expect(restarted.mind.read().scratchpad.trajectory_now).toBe("Reflected after the restart");
    expect(restarted.mind.read().reflectionQueue).toEqual([]);
  });

  it("retries after a 529 with backoff, on a later run", async () => {
    const [person, reply] = await converse();
    const w = await world();
    await w.reflector.enqueue({
      messageIds: [(person as Message).id, (reply as Message).id],
      trigger: "reply",
    });
    api.failNext("529");
    const failed = await w.reflector.runPending();
    const retryAt = new Date(clock.now().getTime() + (RETRY_BACKOFF_MS[0] as number)).toISOString();
    expect(failed).toEqual({ applied: 0, refused: 0, dropped: 0, retryAt });
    const [job] = w.mind.read().reflectionQueue;
    expect(job).toMatchObject({ attempts: 1, notBefore: retryAt });
    expect(job?.lastError).toMatch(/529/);

    expect(await w.reflector.runPending()).toMatchObject({ applied: 0, retryAt });
    expect(api.requests).toHaveLength(1);

    clock.set(retryAt);
    api.enqueue(toolReply("update_mind", { trajectory_now: "After the outage" }));
    expect(await w.reflector.runPending()).toMatchObject({ applied: 1, retryAt: null });
    expect(w.mind.read().scratchpad.trajectory_now).toBe("After the outage");
  });

  it("runs one reflection at a time, each seeing the state the one before left", async () => {
    const [person, reply] = await converse();
    const w = await world();
    await w.reflector.enqueue({ messageIds: [(person as Message).id], trigger: "reply" });
    await w.reflector.enqueue({ messageIds: [(reply as Message).id], trigger: "reply" });
    let inFlight = 0;
    let most = 0;
    api.setHandler(async (body, index) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight -= 1;
      return toolReply("update_mind", {
        trajectory_path: `APPEND: step ${index} saw ${lastUserText(body).includes("step 0") ? "step 0" : "nothing"}`,
      });
    });
    const [a, b] = await Promise.all([w.reflector.runPending(), w.reflector.runPending()]);
    expect((a?.applied ?? 0) + (b?.applied ?? 0)).toBe(2);
    expect(most).toBe(1);
    expect(w.mind.read().scratchpad.trajectory_path).toBe("step 0 saw nothing\nstep 1 saw step 0");
  });

  it("tells reflection once which messages are leaving the window", async () => {
    const [person, reply] = await converse();
    const w = await world();
    await w.reflector.enqueue({
      messageIds: [(reply as Message).id],
      trigger: "reply",
      evicting: [person as Message],
    });
    expect(w.mind.read().flushedThrough).toEqual({
      messageId: (person as Message).id,
      ts: (person as Message).ts,
    });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const shown = lastUserText(api.requests[0]?.body as never);
    expect(shown).toContain("<leaving_window>");
    expect(shown).toContain("The job interview went well");
  });

  it("archives an over-full WORKSPACE into a keyed note", async () => {
    const [person] = await converse();
    const w = await world();
    await w.reflector.enqueue({ messageIds: [(person as Message).id], trigger: "reply" });
    const big = "- a long list of things to remember about the move\n".repeat(60);
    api.enqueue(toolReply("update_mind", { workspace: big }));
    await w.reflector.runPending();
    const pointer = w.mind.read().scratchpad.workspace;
    const key = /"(workspace-[0-9-]+)"/.exec(pointer)?.[1] as string;
    expect(await w.notes.read(key)).toBe(big.trim());
  });

  it("a /wipe while the model thinks is not undone by the reflection landing after it", async () => {
    const [person] = await converse();
    const w = await world();
    await w.reflector.enqueue({ messageIds: [(person as Message).id], trigger: "reply" });
    const big = "- notes on the interview panel\n".repeat(120);
    api.setHandler(async () => {
      await w.mind.deleteAll();
      return toolReply("update_mind", { understanding_known: "- (user) had an interview", workspace: big });
    });
    expect(await w.reflector.runPending()).toMatchObject({ applied: 0, dropped: 1 });
    const file = await readFile(join(dataDir, "mind.json"), "utf8");
    expect(file).not.toContain("interview");
    expect(await w.notes.list()).toEqual([]);
    expect(JSON.stringify(await w.trace.last(100))).not.toContain("interview");
  });

  it("drops a job whose messages were deleted (/forget, /wipe) without calling the model", async () => {
    const [person] = await converse();
    const w = await world();
    await w.reflector.enqueue({ messageIds: [(person as Message).id], trigger: "heartbeat" });
    await w.log.deleteAll();
    expect(await w.reflector.runPending()).toMatchObject({ dropped: 1 });
    expect(api.requests).toHaveLength(0);
    expect(w.mind.read().reflectionQueue).toEqual([]);
  });

  it("does nothing in off mode; single-phase applies inline updates and queues the rest", async () => {
    const [person] = await converse();
    const off = await world(modelConfig({ reflectMode: "off" }));
    expect(
      await off.reflector.enqueue({ messageIds: [(person as Message).id], trigger: "reply" }),
    ).toBeNull();
    expect(off.mind.read().reflectionQueue).toEqual([]);

    const single = await world(modelConfig({ reflectMode: "single-phase" }));
    const queued = await single.reflector.enqueue({
      messageIds: [(person as Message).id],
      trigger: "heartbeat",
    });
    expect(single.mind.read().reflectionQueue.map((j) => j.id)).toEqual([queued?.id]);
    await single.mind.update((mind) => {
      mind.reflectionQueue = [];
    });
    const outcome = await single.reflector.applyInline(
      { messageIds: [(person as Message).id], trigger: "reply" },
      { trajectory_now: "Inline" },
    );
    expect(outcome.ok).toBe(true);
    expect(single.mind.read().scratchpad.trajectory_now).toBe("Inline");
    expect(api.requests).toHaveLength(0);
  });
});

describe("what a message answers", () => {
  /**
   * A day of check-ins before the exchange: one answered already (a later message of the
   * person's names it), seven still open, one that asks nothing; then the person writes and the
   * companion replies with a question of its own.
   */
  async function questionsThenExchange() {
    const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
    const checkin = (text: string) =>
      log.append({ role: "assistant", trigger: "heartbeat", text, channel: "telegram" });
    const answered = await checkin("Did you sleep well?");
    clock.advanceMinutes(5);
    await log.append({
      role: "user",
      text: "yes, fine",
      channel: "telegram",
      annotations: { topics: ["sleep"], question: false, tone: "neutral", answers: [answered.id] },
    });
    const open: Message[] = [];
    for (const text of [
      "Water?",
      "Lunch?",
      "A walk today?",
      "How is the deck coming along?",
      "Any news from the landlord?",
      "Time for a break?",
      "Nervous about the interview?",
    ]) {
      clock.advanceMinutes(60);
      open.push(await checkin(text));
    }
    clock.advanceMinutes(30);
    await checkin("Enjoy the sunshine.");
    clock.advanceMinutes(60);
    const person = await log.append({
      role: "user",
      text: "Interview done. I think it went ok",
      channel: "telegram",
    });
    clock.advanceMinutes(1);
    const reply = await log.append({
      role: "assistant",
      trigger: "reply",
      text: "Well done! What did they ask?",
      channel: "telegram",
    });
    return { answered, open, person, reply };
  }

  it("shows the companion's open questions with ids and local times, the newest five, none already in view", async () => {
    const { answered, open, person, reply } = await questionsThenExchange();
    const w = await world();
    await w.reflector.enqueue({
      messageIds: [person.id, reply.id],
      trigger: "reply",
      evicting: [open[6] as Message],
    });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const shown = lastUserText(api.requests[0]?.body as never);
    const section = /<open_questions>\n([\s\S]*?)\n<\/open_questions>/.exec(shown)?.[1] ?? "";
    // In Berlin: the check-ins went out at 11:05, 12:05, … on Sunday 22 November.
    expect(section.split("\n")).toEqual([
      `[${open[1]?.id}] Sun 22 Nov 12:05 you: Lunch?`,
      `[${open[2]?.id}] Sun 22 Nov 13:05 you: A walk today?`,
      `[${open[3]?.id}] Sun 22 Nov 14:05 you: How is the deck coming along?`,
      `[${open[4]?.id}] Sun 22 Nov 15:05 you: Any news from the landlord?`,
      `[${open[5]?.id}] Sun 22 Nov 16:05 you: Time for a break?`,
    ]);
    expect(shown).not.toContain(answered.id);
    // In time order: the questions, then the exchange; the one leaving the window is shown there.
    expect(shown.indexOf("<open_questions>")).toBeLessThan(shown.indexOf("<exchange>"));
    expect(shown).toContain(`<leaving_window>\n[${open[6]?.id}]`);
  });

  it("shows no open questions beside a check-in, which cannot answer them", async () => {
    const { reply } = await questionsThenExchange();
    clock.advanceMinutes(60);
    const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
    const checkin = await log.append({
      role: "assistant",
      trigger: "heartbeat",
      text: "Any news?",
      channel: "telegram",
    });
    const w = await world();
    await w.reflector.enqueue({ messageIds: [checkin.id], trigger: "heartbeat" });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const shown = lastUserText(api.requests[0]?.body as never);
    expect(shown).not.toContain("<open_questions>");
    expect(shown).not.toContain(reply.id);
  });

  it("stores what a message answers when it is a shown message, drops an id not shown and applies the rest", async () => {
    const { open, person, reply } = await questionsThenExchange();
    const w = await world();
    await w.reflector.enqueue({ messageIds: [person.id, reply.id], trigger: "reply" });
    const nervous = open[6] as Message;
    const notShown = open[0] as Message;
    api.enqueue(
      toolReply("update_mind", {
        trajectory_now: "The interview is done; waiting to hear",
        annotations: [
          {
            messageId: person.id,
            topics: ["work"],
            question: false,
            tone: "warm",
            mood: "calm",
            answers: [nervous.id, notShown.id, "zz"],
          },
          { messageId: reply.id, topics: ["work"], question: true, tone: "warm", mood: "upbeat" },
        ],
      }),
    );
    const summary = await w.reflector.runPending();
    expect(summary.applied).toBe(1);
    expect((await w.log.get(person.id))?.annotations).toEqual({
      topics: ["work"],
      question: false,
      tone: "warm",
      mood: "calm",
      answers: [nervous.id],
    });
    // Mood is the person's: the companion's own message keeps none.
    expect((await w.log.get(reply.id))?.annotations).toEqual({
      topics: ["work"],
      question: true,
      tone: "warm",
    });
    const state = w.mind.read();
    expect(state.scratchpad.trajectory_now).toBe("The interview is done; waiting to hear");
    const dropped = `annotation ${person.id}: answers ${notShown.id}, zz: not shown, dropped`;
    expect(state.refusedLastTime).toEqual([dropped]);
    const [record] = await w.trace.last(1);
    expect(record).toMatchObject({ kind: "reflect", outcome: "applied", refusedOps: [dropped] });

    // The question answered is no longer open for the next exchange; the one reflection was told of last time is said.
    clock.advanceMinutes(10);
    const next = await w.log.append({
      role: "user",
      text: "They asked about my last project",
      channel: "telegram",
    });
    await w.reflector.enqueue({ messageIds: [next.id], trigger: "reply" });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const shown = lastUserText(api.requests[1]?.body as never);
    expect(shown).toContain(`[${open[5]?.id}]`);
    expect(shown).not.toContain(`[${nervous.id}]`);
    expect(shown).toContain(`<refused_last_time>\n- ${dropped}`);
  });
});

describe("UNDERSTANDING lines as items, edited by id", () => {
  async function seeded(): Promise<{ w: World; ids: string[] }> {
    const exchange = await converse();
    const w = await world();
    await w.mind.update((m) => {
      m.scratchpad.understanding_known = [
        { id: "k-1", text: "- (user) sees dr alvarez monthly", sourceMessageIds: [] },
        { id: "k-2", text: "- (user) works nights", sourceMessageIds: [] },
        { id: "k-3", text: "- (user) lives in Berlin", sourceMessageIds: [] },
      ];
      m.scratchpad.understanding_believed = [{ id: "b-1", text: "- prefers mornings", sourceMessageIds: [] }];
      m.memory = [
        {
          id: "m1",
          kind: "open_loop",
          text: "Hear back from the clinic",
          learnedAt: "2026-11-20T10:00:00.000Z",
          sourceMessageIds: [],
          importance: 3,
          topics: [],
        },
      ];
    });
    return { w, ids: exchange.map((m) => m.id) };
  }

  it("shows the lines with their ids and applies add, change, move and retire by id", async () => {
    const { w, ids } = await seeded();
    await w.reflector.enqueue({ messageIds: ids, trigger: "reply" });
    api.enqueue(
      toolReply("update_mind", {
        understanding: [
          { op: "change", id: "k-2", text: "- (user) works days since the interview" },
          { op: "retire", id: "k-3" },
          { op: "change", id: "b-1", list: "known" },
          { op: "add", list: "unknown", text: "When the interview result comes" },
        ],
      }),
    );
    expect(await w.reflector.runPending()).toMatchObject({ applied: 1 });
    const shown = lastUserText(api.requests[0]?.body as never);
    expect(shown).toContain("Known:\n[k-1] - (user) sees dr alvarez monthly\n[k-2] - (user) works nights\n");
    const pad = w.mind.read().scratchpad;
    expect(pad.understanding_known.map((i) => [i.id, i.text])).toEqual([
      ["k-1", "- (user) sees dr alvarez monthly"],
      ["k-2", "- (user) works days since the interview"],
      ["b-1", "- prefers mornings"],
    ]);
    expect(pad.understanding_known[1]).toMatchObject({
      learnedAt: clock.now().toISOString(),
      sourceMessageIds: ids,
    });
    expect(pad.understanding_believed).toEqual([]);
    expect(pad.understanding_unknown.at(-1)).toMatchObject({
      id: expect.stringMatching(/^u[0-9a-f]{6}$/),
      text: "When the interview result comes",
      sourceMessageIds: ids,
    });
  });

  it("refuses to write back what the person deleted or to touch what they corrected, applies the rest, and says why next time", async () => {
    const { w, ids } = await seeded();
    expect(await forgetItem(w.mind, "k-1")).toEqual({
      text: "- (user) sees dr alvarez monthly",
      earlier: [],
    });
    await fixItem(w.mind, "k-2", "I work days now", clock.now());
    await fixItem(w.mind, "m1", "Hear back from the clinic about the knee", clock.now());
    await w.reflector.enqueue({ messageIds: ids, trigger: "reply" });
    // A model that tries: the deleted line again (other case, a full stop), a change and a retire
    // of the corrected line, a corrected loop closed, the deleted words as a memory item.
    api.enqueue(
      toolReply("update_mind", {
        trajectory_now: "Waiting on the interview result",
        understanding: [
          { op: "add", list: "known", text: "- (User) sees Dr  Alvarez monthly." },
          { op: "change", id: "k-2", text: "- (user) works nights" },
          { op: "retire", id: "k-2" },
          { op: "add", list: "known", text: "- (user) had an interview" },
        ],
        memory: [
          { op: "close", id: "m1", note: "done" },
          { op: "add", kind: "pattern", text: "sees Dr Alvarez monthly" },
          { op: "add", kind: "pattern", text: "- (user) sees dr alvarez monthly" },
        ],
      }),
    );
    expect(await w.reflector.runPending()).toMatchObject({ applied: 1, refused: 0 });
    const state = w.mind.read();
    expect(state.scratchpad.trajectory_now).toBe("Waiting on the interview result");
    expect(state.scratchpad.understanding_known.map((i) => i.text)).toEqual([
      "I work days now",
      "- (user) lives in Berlin",
      "- (user) had an interview",
    ]);
    expect(state.scratchpad.understanding_known[0]).toMatchObject({
      id: "k-2",
      correctedAt: clock.now().toISOString(),
    });
    expect(state.memory).toHaveLength(2);
    expect(state.memory[0]).toMatchObject({ id: "m1", text: "Hear back from the clinic about the knee" });
    expect(state.memory[0]?.retiredAt).toBeUndefined();
    // "sees Dr Alvarez monthly" is other words than the deleted line: only word for word is refused.
    expect(state.memory[1]?.text).toBe("sees Dr Alvarez monthly");
    const refusals = [
      "understanding op 1 (add): the person asked me to forget those words: they stay forgotten",
      "understanding op 2 (change k-2): the person corrected it themselves (/fix): leave it as they wrote it",
      "understanding op 3 (retire k-2): the person corrected it themselves (/fix): leave it as they wrote it",
      "memory op 1 (close) m1: the person corrected it themselves (/fix): leave it as they wrote it",
      "memory op 3 (add): the person asked me to forget those words: they stay forgotten",
    ];
    expect(state.refusedLastTime).toEqual(refusals);
    const [record] = await w.trace.last(1);
    expect(record).toMatchObject({ kind: "reflect", outcome: "applied", refusedOps: refusals });
    // Neither the mind nor the trace holds the deleted line again.
    expect((await readFile(w.mind.file, "utf8")).toLowerCase()).not.toContain("- (user) sees dr");
    expect(JSON.stringify(record).toLowerCase()).not.toMatch(/- \(user\) sees dr alvarez monthly/);

    // The next reflection is told why, and once it applies cleanly the note is gone.
    clock.advanceMinutes(5);
    await w.reflector.enqueue({ messageIds: ids, trigger: "reply" });
    api.enqueue(toolReply("update_mind", {}));
    await w.reflector.runPending();
    const next = lastUserText(api.requests[1]?.body as never);
    expect(next).toContain(`<refused_last_time>\n- ${refusals[0]}`);
    expect(next).toContain("[k-2] I work days now (corrected by the person: keep as is)");
    expect(next).toContain(
      "- [m1] open loop (importance 3): Hear back from the clinic about the knee (corrected by the person: keep as is)",
    );
    expect(w.mind.read().refusedLastTime).toEqual([]);
  });
});

describe("forgotten words in the text fields", () => {
  it("refuses a field's edit that writes words the person deleted, applies the rest, and keeps the words out of the trace", async () => {
    const exchange = await converse();
    const w = await world();
    await w.mind.update((m) => {
      m.scratchpad.understanding_known = [
        { id: "k-1", text: "- (user) sees dr alvarez monthly", sourceMessageIds: [] },
      ];
      m.scratchpad.workspace = "Plan: ask how the interview went";
      m.scratchpad.identity_user = "Ada, 34, a night nurse";
    });
    await forgetItem(w.mind, "k-1");
    const before = w.mind.read().scratchpad;
    await w.reflector.enqueue({ messageIds: exchange.map((m) => m.id), trigger: "reply" });
    // A model that tries: the deleted line appended to TRAJECTORY.Now (other case, a full stop),
    // as one line among others in IDENTITY.User, and into WORKSPACE through an edit.
    api.enqueue(
      toolReply("update_mind", {
        identity_user: "Ada, 34, a night nurse\n- (user) sees Dr Alvarez monthly",
        trajectory_now: "APPEND: - (User) sees dr alvarez  monthly.",
        workspace: "Plan: ask when the interview result comes",
        workspace_edits: [{ op: "append", text: "(user) sees Dr Alvarez monthly" }],
        self_attention: "The interview result",
      }),
    );
    expect(await w.reflector.runPending()).toMatchObject({ applied: 1, refused: 0 });

    const pad = w.mind.read().scratchpad;
    expect(pad.self_attention).toBe("The interview result");
    expect(pad.identity_user).toBe(before.identity_user);
    expect(pad.trajectory_now).toBe(before.trajectory_now);
    expect(pad.workspace).toBe(before.workspace);
    const refusals = [
      "IDENTITY.User: the person asked me to forget those words: they stay forgotten",
      "TRAJECTORY.Now: the person asked me to forget those words: they stay forgotten",
      "WORKSPACE: the person asked me to forget those words: they stay forgotten",
    ];
    expect(w.mind.read().refusedLastTime).toEqual(refusals);
    const [record] = await w.trace.last(1);
    expect(record).toMatchObject({ kind: "reflect", outcome: "applied", refusedOps: refusals });
    expect((await readFile(w.mind.file, "utf8")).toLowerCase()).not.toContain("alvarez");
    expect(JSON.stringify(record).toLowerCase()).not.toContain("alvarez");
  });
});

describe("applyReflectionUpdate", () => {
  const now = new Date("2026-11-22T09:00:00.000Z");
  const message: Message = { id: "u1", ts: now.toISOString(), role: "user", text: "hi", channel: "cli" };
  const ctx = {
    mind: initialMindState(now),
    exchange: { messageIds: ["u1"], trigger: "reply" as const, evicting: [] },
    messages: [message],
    now,
    newItemId: (prefix: string) => `${prefix}1`,
    topicsOf: () => [],
  };

  it.each([
    ["a field over its size limit", { trajectory_now: "x".repeat(1_501) }, /trajectory_now/],
    ["a wrong type", { memory: "add a loop" }, /memory/],
    [
      "an annotation for a message outside the exchange",
      { annotations: [{ messageId: "zz", topics: [], question: false, tone: "warm" }] },
      /not a message of this exchange/,
    ],
    ["a memory op on an unknown id", { memory: [{ op: "close", id: "nope" }] }, /no open item/],
    [
      "a thread goto to nowhere",
      { threads: [{ op: "goto", name: "nowhere", note: "x" }] },
      /no thread "nowhere"/,
    ],
  ])("refuses %s", (_name, input, reason) => {
    const outcome = applyReflectionUpdate(input, ctx);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.reason).toMatch(reason);
  });

  it("refuses UNDERSTANDING lines that grow a list past its size, but not an update of other fields while a list is over", () => {
    const long = (n: number) => ({
      id: `k-${n}`,
      text: `${"a fact worth keeping ".repeat(14)}${n}`,
      sourceMessageIds: [],
    });
    const mind = initialMindState(now);
    mind.scratchpad.understanding_known = Array.from({ length: 6 }, (_, i) => long(i + 1));
    const over = { ...ctx, mind };
    expect(applyReflectionUpdate({ trajectory_now: "Talking about the weekend" }, over)).toMatchObject({
      ok: true,
    });
    const adding = applyReflectionUpdate(
      { understanding: [{ op: "add", list: "known", text: "one more" }] },
      over,
    );
    expect(adding).toMatchObject({ ok: false });
    if (!adding.ok)
      expect(adding.reason).toMatch(
        /^UNDERSTANDING\.Known would hold \d+ characters \(limit 1500\): retire or shorten lines/,
      );
    const retiring = applyReflectionUpdate({ understanding: [{ op: "retire", id: "k-1" }] }, over);
    expect(retiring).toMatchObject({ ok: true });
  });

  it("lets answers name any message shown: the exchange, the ones leaving the window, the open questions", () => {
    const outcome = applyReflectionUpdate(
      {
        annotations: [
          {
            messageId: "u1",
            topics: [],
            question: false,
            tone: "tense",
            answers: ["e1", "q1", "u1", "x", "q1"],
          },
        ],
      },
      { ...ctx, exchange: { ...ctx.exchange, evicting: ["e1"] }, questions: ["q1"] },
    );
    if (!outcome.ok) throw new Error(outcome.reason);
    expect(outcome.annotations[0]?.annotations.answers).toEqual(["e1", "q1", "u1"]);
    expect(outcome.refused).toEqual(["annotation u1: answers x: not shown, dropped"]);
  });

  it("an empty call is a valid no-op", () => {
    const outcome = applyReflectionUpdate({}, ctx);
    expect(outcome).toMatchObject({ ok: true, changes: [] });
  });

  it("the tool schema offers the 10 text fields, UNDERSTANDING edits and every operation, none required", () => {
    const schema = REFLECT_TOOL.input_schema as { properties: Record<string, unknown>; required?: string[] };
    expect(Object.keys(schema.properties)).toHaveLength(15);
    expect(Object.keys(schema.properties)).toContain("understanding");
    expect(Object.keys(schema.properties)).not.toContain("understanding_known");
    expect(schema.required ?? []).toEqual([]);
    expect(Object.keys(reflectionUpdateSchema.shape)).toContain("self_confidence");
  });
});
