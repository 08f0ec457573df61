import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DataRights } from "../../src/companion/data-rights.ts";
import { openMind } from "../../src/companion/mind-document.ts";
import { pendingMessages } from "../../src/conversation/pending-messages.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { awaitsHearing } from "../../src/core/sound.ts";
import { renderScratchpad } from "../../src/mind/scratchpad.ts";
import { DataFileError } from "../../src/store/files.ts";
import { loadLogFile } from "../../src/store/log-file.ts";
import { MESSAGE_LOG_VERSION, MessageLog } from "../../src/store/messages.ts";
import { MIND_VERSION } from "../../src/store/mind.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { SentFiles } from "../../src/store/sent-files.ts";
import { Trace } from "../../src/store/trace.ts";
import { tempDataDir } from "./helpers.ts";

/**
 * Data files as earlier versions wrote them (test/fixtures/data-files) still load now that
 * the schemas name every field: the message log's companion fields and its Telegram ids under
 * their old name, the decision reasons of every version so far (checked against the history), the
 * outbox's Telegram ids under their old name, trace lines of older and newer shapes.
 */
const FIXTURES = join(import.meta.dirname, "../fixtures/data-files");
const NOW = "2026-11-20T13:00:00.000Z";

async function dataDirWith(fixture: string, as: string): Promise<string> {
  const dataDir = await tempDataDir();
  await mkdir(dataDir, { recursive: true });
  await copyFile(join(FIXTURES, fixture), join(dataDir, as));
  return dataDir;
}

describe("messages.json written by earlier versions", () => {
  it.each(["messages.v0.json", "messages.v1.json"])(
    "%s loads with every field typed, the pending rule reads it, and writing keeps it whole",
    async (fixture) => {
      const dataDir = await dataDirWith(fixture, "messages.json");
      const clock = new SettableClock(NOW);
      const log = await MessageLog.open({ dataDir, clock, timeZone: "Europe/Berlin" });
      const byId = new Map(log.recent().map((m) => [m.id, m]));
      expect(byId.get("m-assistant-1")).toMatchObject({
        answeredThrough: "m-user-1",
        outboxId: "o-mi8jz1-00aa11bb",
      });
      expect(byId.get("m-assistant-3")?.notice).toBe(true);
      expect(byId.get("m-user-4")?.handledWithoutReply).toBe(true);
      expect(byId.get("m-user-2")?.media).toEqual({ kind: "voice", durationSeconds: 12 });
      // A voice note from before they were heard has no sound kept: nothing for a turn to hear, and its text stays.
      expect(awaitsHearing(byId.get("m-user-2")?.media)).toBe(false);
      expect(byId.get("m-user-2")?.text).toBe(
        "[voice note, 12 s — not heard: voice notes can't be listened to yet]",
      );
      expect(byId.get("m-user-4")?.media?.place).toBe("Tiergarten, Berlin");
      expect(byId.get("m-user-5")?.document).toBe("a field a newer version wrote");
      // The check-in answered through m-user-3, m-user-4 was handled without a reply, the notice answers nothing.
      expect(pendingMessages(log.recent(), clock.now()).map((m) => m.id)).toEqual(["m-user-5"]);

      // The ids Telegram gave, kept as `telegram` before version 2, are the message's external ids.
      expect(byId.get("m-user-1")?.external).toEqual({ chatId: 42, messageId: 100, updateId: 9001 });
      expect(byId.get("m-assistant-1")?.external).toEqual({ chatId: 42, messageId: 101 });
      expect([...byId.values()].filter((m) => "telegram" in m)).toEqual([]);
      expect(await log.findByExternal("telegram", { chatId: 42, messageId: 102 })).toBe(byId.get("m-user-2"));
      expect(log.hasUpdate("telegram", 9002)).toBe(true);

      await log.append({ role: "user", text: "Ok", channel: "telegram" });
      const written = JSON.parse(await readFile(join(dataDir, "messages.json"), "utf8"));
      const original: Record<string, unknown>[] = JSON.parse(
        await readFile(join(FIXTURES, "messages.v0.json"), "utf8"),
      );
      expect(written.version).toBe(MESSAGE_LOG_VERSION);
      // Written back whole, the ids under their new name.
      const renamed = original.map(({ telegram, ...entry }) =>
        telegram === undefined ? entry : { ...entry, external: telegram },
      );
      expect(written.messages.slice(0, original.length)).toEqual(renamed);
    },
  );

  it("a log given on the command line reads the old name of the ids too", async () => {
    const messages = await loadLogFile(join(FIXTURES, "messages.v1.json"));
    expect(messages.find((m) => m.id === "m-user-1")?.external).toEqual({
      chatId: 42,
      messageId: 100,
      updateId: 9001,
    });
    expect(messages.filter((m) => "telegram" in m)).toEqual([]);
  });

  it("refuses a companion field on the person's message, naming the entry and the field", async () => {
    const entries = JSON.parse(await readFile(join(FIXTURES, "messages.v0.json"), "utf8"));
    entries[0].answeredThrough = "m-user-1";
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, "messages.json"), JSON.stringify(entries));
    const opening = MessageLog.open({ dataDir, clock: new SettableClock(NOW), timeZone: "UTC" });
    await expect(opening).rejects.toMatchObject({ kind: "damaged-file" });
    await expect(opening).rejects.toThrow(
      /entry 1 \(index 0, id "m-user-1"\): answeredThrough: answeredThrough is only for assistant messages/,
    );
  });
});

describe("mind.json written by earlier versions", () => {
  it("loads every decision reason ever recorded, and the check-in waiting in the outbox", async () => {
    const dataDir = await dataDirWith("mind.v1.json", "mind.json");
    const mind = await openMind(dataDir, new SettableClock(NOW));
    const state = mind.read();
    expect(new Set(state.decisions.map((d) => d.reason))).toEqual(
      new Set([
        "paused",
        "blocked",
        "quiet-hours",
        "unanswered-limit",
        "weekend-limit",
        "recent-conversation",
        "too-soon",
        "daily-limit",
        "budget",
        "reply-pending",
        "model-unavailable",
        "model-error",
        "invalid-decision",
        "model-declined",
        "already-answered",
        "repeated-topic",
        "leak-guard-empty",
        "send-failed",
        "sent",
      ]),
    );
    expect(state.outbox[0]?.decision?.reason).toBe("sent");
    expect(state.heartbeat).toMatchObject({
      timezone: "Europe/Lisbon",
      quietHours: { start: 1380, end: 420 },
    });
    // Written before check-ins could be announced as stopped: nothing told yet.
    expect(state.checkinNotices).toEqual({
      budget: { announcedAt: null, resumedAt: null },
      model: { announcedAt: null, resumedAt: null },
    });
    await mind.update(() => undefined);
    const written = JSON.parse(await readFile(join(dataDir, "mind.json"), "utf8"));
    const original = JSON.parse(await readFile(join(FIXTURES, "mind.v1.json"), "utf8"));
    expect(written.decisions).toEqual(original.decisions);
    expect(written.outbox).toEqual(original.outbox);
  });

  it("refuses a decision reason no version wrote, naming the file and the field, and leaves the file as it was", async () => {
    const original = JSON.parse(await readFile(join(FIXTURES, "mind.v1.json"), "utf8"));
    original.decisions[3].reason = "felt-like-it";
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    const text = JSON.stringify(original);
    await writeFile(join(dataDir, "mind.json"), text);
    const opening = openMind(dataDir, new SettableClock(NOW));
    await expect(opening).rejects.toThrow(DataFileError);
    await expect(opening).rejects.toThrow(
      /mind\.json: decisions entry 4 \(index 3\): reason: Invalid option/,
    );
    expect(await readFile(join(dataDir, "mind.json"), "utf8")).toBe(text);
  });
});

describe("mind.json version 1: UNDERSTANDING as text becomes items", () => {
  it("turns each line into an item with unknown provenance, with the same ids on every read, and writes today's version", async () => {
    const dataDir = await dataDirWith("mind.v1-understanding.json", "mind.json");
    const clock = new SettableClock(NOW);
    const mind = await openMind(dataDir, clock);
    const pad = mind.read().scratchpad;
    expect(pad.understanding_known).toEqual([
      { id: "k-1", text: "- (user) runs on Sundays", sourceMessageIds: [] },
      { id: "k-2", text: "- (inferred) trains for a half marathon", sourceMessageIds: [] },
    ]);
    expect(pad.understanding_believed).toEqual([
      { id: "b-1", text: "- evenings are when they open up", sourceMessageIds: [] },
    ]);
    expect(pad.understanding_unknown.map((i) => i.id)).toEqual(["u-1"]);
    // The model reads the fields as before (blank lines and trailing spaces aside).
    expect(renderScratchpad(pad)).toContain(
      "Known:\n- (user) runs on Sundays\n- (inferred) trains for a half marathon\nBelieved: - evenings are when they open up",
    );
    // Not written yet: reading the old file again gives the same ids, so a listing's numbers hold.
    expect((await openMind(dataDir, clock)).read().scratchpad).toEqual(pad);

    const review = new DataRights({
      mind,
      log: await MessageLog.open({ dataDir, clock, timeZone: "UTC" }),
      notes: new NotesStore({ dataDir }),
      trace: new Trace({ dataDir, clock }),
      files: new SentFiles({ dataDir }),
      clock,
      exclusive: (work) => work(),
    });
    const listed = await review.listMemory({ fresh: true });
    expect(listed.map((e) => [e.number, e.text, e.learnedAt, e.source.kind])).toEqual([
      [1, "- (user) runs on Sundays", null, "unknown"],
      [2, "- (inferred) trains for a half marathon", null, "unknown"],
      [3, "- evenings are when they open up", null, "unknown"],
      [4, "What their days look like; what they want from these conversations.", null, "unknown"],
      [5, "Hear how the long run went", "2026-11-19T18:00:00.000Z", "gone"],
    ]);
    const written = JSON.parse(await readFile(join(dataDir, "mind.json"), "utf8"));
    expect(written.version).toBe(MIND_VERSION);
    expect(written.scratchpad.understanding_known[1]).toEqual({
      id: "k-2",
      text: "- (inferred) trains for a half marathon",
      sourceMessageIds: [],
    });
    expect(written.memoryListing.ids).toEqual(["k-1", "k-2", "b-1", "u-1", "m1a2b3c"]);
  });

  it("says a file from a newer version is newer, rather than misreading it", async () => {
    const original = JSON.parse(await readFile(join(FIXTURES, "mind.v1.json"), "utf8"));
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, "mind.json"), JSON.stringify({ ...original, version: MIND_VERSION + 1 }));
    await expect(openMind(dataDir, new SettableClock(NOW))).rejects.toThrow(
      `written by a newer presence (format version ${MIND_VERSION + 1}; this one reads up to ${MIND_VERSION})`,
    );
  });
});

describe("mind.json version 2: the outbox's Telegram ids under their old name", () => {
  it("reads a half-sent reply's and a reaction's ids as their external ids, and writes them so", async () => {
    const dataDir = await dataDirWith("mind.v2-outbox.json", "mind.json");
    const mind = await openMind(dataDir, new SettableClock(NOW));
    const [reply, reaction] = mind.read().outbox;
    expect(reply).toMatchObject({
      partsDelivered: 1,
      anchor: { id: "m-user-9", external: { chatId: 42, messageId: 120 } },
      external: { chatId: 42, messageId: 121 },
    });
    expect(reaction).toMatchObject({
      reaction: "👍",
      anchor: { id: "m-user-10", external: { chatId: 42, messageId: 122 } },
    });
    expect(JSON.stringify(mind.read().outbox)).not.toContain('telegram":');

    await mind.update(() => undefined);
    const written = JSON.parse(await readFile(join(dataDir, "mind.json"), "utf8"));
    const original = JSON.parse(await readFile(join(FIXTURES, "mind.v2-outbox.json"), "utf8"));
    expect(written.version).toBe(MIND_VERSION);
    expect(written.outbox).toEqual(
      JSON.parse(JSON.stringify(original.outbox).replaceAll('"telegram":', '"external":')),
    );
  });
});

describe("trace.jsonl written by earlier (and later) versions", () => {
  it("reads every line back as written, and a new record leaves them alone", async () => {
    const dataDir = await dataDirWith("trace.jsonl", "trace.jsonl");
    const original = await readFile(join(FIXTURES, "trace.jsonl"), "utf8");
    const trace = new Trace({ dataDir, clock: new SettableClock(NOW) });
    const lines = original.trimEnd().split("\n");
    expect(await trace.last(100)).toEqual(lines.map((line) => JSON.parse(line)));

    await trace.append({ kind: "reply-error", error: "a bug" });
    expect(await readFile(trace.file, "utf8")).toBe(
      `${original}{"ts":"${NOW}","kind":"reply-error","error":"a bug"}\n`,
    );
    expect(await readdir(dataDir)).toEqual(["trace.jsonl"]);
    expect(await trace.deleteWhere((record) => JSON.stringify(record).includes("Tiergarten"))).toBe(1);
  });

  it("refuses to write a record this version does not know", async () => {
    const trace = new Trace({ dataDir: await tempDataDir(), clock: new SettableClock(NOW) });
    // @ts-expect-error: not a kind of record the trace keeps
    await expect(trace.append({ kind: "greeting", text: "hi" })).rejects.toThrow(/kind/);
    await expect(
      // @ts-expect-error: a field a heartbeat record does not have
      trace.append({ kind: "heartbeat", stage: "pre-check", reason: "quiet-hours" }),
    ).rejects.toThrow(/reason/);
  });
});
