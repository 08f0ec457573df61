import { join } from "node:path";
import { Low } from "lowdb";
import { DateTime } from "luxon";
import { z } from "zod";
import {
  checkinNoticeStateSchema,
  emptyCheckinNoticeState,
  emptyHeartbeatState,
  heartbeatStateSchema,
  noticeSaidSchema,
} from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { type Decision, decisionSchema } from "../core/decision.ts";
import {
  annotationsSchema,
  channelSchema,
  externalIdsSchema,
  isoUtc,
  messageRefSchema,
} from "../core/message.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import { mentionMatcher } from "../core/text.ts";
import { type UsageRecord, usageTotal } from "../core/usage.ts";
import { DataFileError, DurableJsonFile, ensurePrivateDir, removeLeftoverTemps } from "./files.ts";
import {
  forgottenHash,
  ITEM_FIELDS,
  initialScratchpad,
  initialThreads,
  isItemField,
  itemPrefix,
  type MemoryItem,
  memoryItemSchema,
  SCRATCHPAD_FIELDS,
  scratchpadSchema,
  threadsSchema,
} from "./mind-schema.ts";
import { PERSON_FILES } from "./person-files.ts";

/**
 * data/mind.json: everything the companion keeps about the person besides the log — the
 * scratchpad, threads, episodic memory, heartbeat state and decisions, the usage ledger and
 * the reflection queue. One file written atomically, so a reflection's changes land
 * together or not at all; updates go through one queue, so none is lost.
 */

/**
 * The format version this code writes (2: UNDERSTANDING lines are items with provenance; 3: an
 * outbox entry's channel ids are `external`, not `telegram`).
 */
export const MIND_VERSION = 3;
/** Heartbeat decisions kept for /why and status; older ones have been answered for. */
export const DECISIONS_KEPT = 500;
/** Days of per-call usage records kept; daily totals are kept for good. */
export const USAGE_DETAIL_DAYS = 8;

const tokenCount = z.number().int().nonnegative();

/** One model call's tokens: what the daily budget, status and the trace count. */
export const usageRecordSchema = z.looseObject({
  ts: isoUtc,
  purpose: z.enum(["reply", "heartbeat-decide", "heartbeat-write", "reflect", "judge"]),
  model: z.string(),
  input: tokenCount,
  output: tokenCount,
  cacheWrite: tokenCount,
  cacheRead: tokenCount,
});

/** One UTC day's spend, kept after its detailed records age out. */
export const usageTotalsSchema = z.object({
  calls: tokenCount,
  input: tokenCount,
  output: tokenCount,
  cacheWrite: tokenCount,
  cacheRead: tokenCount,
});
export type UsageTotals = z.infer<typeof usageTotalsSchema>;

/** An exchange waiting to be reflected on. */
export const reflectionJobSchema = z.looseObject({
  id: z.string().min(1),
  exchange: z.object({
    /** The exchange's log entries (the person's messages and the reply, or a check-in). */
    messageIds: z.array(z.string().min(1)).min(1),
    trigger: z.enum(["reply", "heartbeat"]),
    /** Messages leaving the working window, shown once so reflection can keep what matters. */
    evicting: z.array(z.string().min(1)).default([]),
  }),
  attempts: z.number().int().nonnegative(),
  enqueuedAt: isoUtc,
  /** Not retried before this instant (backoff after a transient failure). */
  notBefore: isoUtc.optional(),
  lastError: z.string().optional(),
});
export type ReflectionJob = z.infer<typeof reflectionJobSchema>;

/**
 * An outgoing message recorded before it is handed to the channel (companion/outbox.ts). Its
 * shape is checked when mind.json is read, like everything else in it: an entry presence could
 * not deliver makes it refuse to start rather than drop that message when it next writes.
 */
const outboxIntentFields = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(["reply", "heartbeat", "notice"]),
  /** What is said; empty only for a reaction. */
  text: z.string(),
  /** A reply given as a reaction with this emoji (on the person's message `replyTo`) instead of words. */
  reaction: z.string().min(1).optional(),
  /**
   * The person's message a reply is shown as answering, decided before the intent was written
   * (conversation/reply-anchor.ts), with the ids on the channel it needs, so a crash between
   * the decision and the send still anchors it; for a reaction, the message it is put on.
   */
  anchor: messageRefSchema.optional(),
  trigger: z.enum(["reply", "heartbeat"]),
  channel: channelSchema,
  createdAt: isoUtc,
  replyTo: z.string().optional(),
  answeredThrough: z.string().optional(),
  annotations: annotationsSchema.optional(),
  /** A check-in's decision record, written (with the message id) in the same write that logs it as sent. */
  decision: decisionSchema.optional(),
  /** Parts of a split text the channel already accepted: a later attempt sends only the rest. */
  partsDelivered: z.number().int().min(0).optional(),
  /** The first part's identifiers on the channel, once it was accepted (the log records them). */
  external: externalIdsSchema.optional(),
  /** A notice about check-ins stopping or resuming: recorded as told in the write that logs it as sent. */
  said: noticeSaidSchema.optional(),
});
/** An outbox entry as mind.json holds it: words to say, or a reaction. */
export const outboxIntentSchema = outboxIntentFields.refine(
  (intent) => (intent.reaction === undefined ? intent.text !== "" : intent.anchor !== undefined),
  { message: "an outbox entry needs text, or a reaction and the message it is put on", path: ["text"] },
);
/** A message recorded in the outbox, with how far its delivery got. */
export type OutboxIntent = z.infer<typeof outboxIntentSchema>;

/** Everything the companion knows besides the log, in one file (mind.json) so a change is one atomic write. */
export const mindStateSchema = z.looseObject({
  version: z.literal(MIND_VERSION),
  scratchpad: scratchpadSchema,
  threads: threadsSchema,
  memory: z.array(memoryItemSchema),
  heartbeat: heartbeatStateSchema.default(() => ({ ...emptyHeartbeatState })),
  decisions: z.array(decisionSchema).default([]),
  /** What the person was told about check-ins stopping for a reason they cannot see (conversation/checkin-notices.ts). */
  checkinNotices: checkinNoticeStateSchema.default(() => structuredClone(emptyCheckinNoticeState)),
  usage: z.array(usageRecordSchema).default([]),
  /** Totals per UTC day (YYYY-MM-DD). */
  usageDaily: z.record(z.string(), usageTotalsSchema).default({}),
  reflectionQueue: z.array(reflectionJobSchema).default([]),
  /** The newest message reflection was told is leaving the working window. */
  flushedThrough: z.object({ messageId: z.string(), ts: isoUtc }).optional(),
  /** Messages recorded as about to be sent and not yet recorded as sent (companion/outbox.ts). */
  outbox: z.array(outboxIntentSchema).default([]),
  /** When the person last wiped everything (/wipe): /status says the token count outlived it, and why. */
  wipedAt: isoUtc.optional(),
  /** Hashes (forgottenHash) of items the person deleted or corrected: reflection may not add those words again. */
  forgottenHashes: z.array(z.string()).default([]),
  /**
   * The person's last /memory listing: the item id behind each number (index 0 is number 1), so
   * "/forget 3" means the item they saw as 3, after a restart too.
   */
  memoryListing: z.object({ ids: z.array(z.string()) }).optional(),
  /** Why parts of the last reflection were refused (ids only, no words): the next reflection is told. */
  refusedLastTime: z.array(z.string()).default([]),
});
export type MindState = z.infer<typeof mindStateSchema>;

/** A fresh mind: nothing learned, nothing decided. */
export function initialMindState(now: Date): MindState {
  return {
    version: MIND_VERSION,
    scratchpad: initialScratchpad(),
    threads: initialThreads(now),
    memory: [],
    heartbeat: { ...emptyHeartbeatState },
    decisions: [],
    checkinNotices: structuredClone(emptyCheckinNoticeState),
    usage: [],
    usageDaily: {},
    reflectionQueue: [],
    outbox: [],
    forgottenHashes: [],
    refusedLastTime: [],
  };
}

/**
 * Adds a heartbeat decision to a mind being updated, keeping the last DECISIONS_KEPT: the one
 * place decisions are trimmed, for a decision recorded alone and for one that lands with the
 * check-in it sent.
 */
export function addDecision(mind: MindState, decision: Decision): void {
  mind.decisions.push({ ...decision });
  if (mind.decisions.length > DECISIONS_KEPT)
    mind.decisions.splice(0, mind.decisions.length - DECISIONS_KEPT);
}

/** What /forget removed, so the person can be told exactly. */
export interface ForgetResult {
  memory: MemoryItem[];
  /** Scratchpad lines removed, as "UNDERSTANDING.Known: the line". */
  scratchpadLines: string[];
  threadNotes: string[];
}

/** The mind's file: one object, read once, written whole through one queue. */
export class MindStore {
  readonly file: string;
  /** The data directory mind.json is in, where the other copies of the person's words live too (/forget). */
  readonly dataDir: string;
  readonly #low: Low<MindState>;
  readonly #clock: Clock;
  readonly #readOnly: boolean;
  /** Writes in the order they were asked for, each on the state the one before left. */
  readonly #queue = new SerialQueue();

  private constructor(dataDir: string, file: string, low: Low<MindState>, clock: Clock, readOnly: boolean) {
    this.dataDir = dataDir;
    this.file = file;
    this.#low = low;
    this.#clock = clock;
    this.#readOnly = readOnly;
  }

  /**
   * Loads data/mind.json, creating the private directory if needed; a missing file is a
   * fresh mind. A file that is not valid throws DataFileError naming the file and the
   * first problem, and is left exactly as it was. Opening never touches the directory's
   * other files: another process may be writing there. `readOnly` is for commands that
   * only look (status): such a store refuses to write.
   */
  static async open(dataDir: string, clock: Clock, options: { readOnly?: boolean } = {}): Promise<MindStore> {
    await ensurePrivateDir(dataDir);
    const file = join(dataDir, PERSON_FILES.mind);
    const adapter = new DurableJsonFile<MindState>(file, { parse: (value) => parseMindFile(file, value) });
    const low = new Low(adapter, initialMindState(clock.now()));
    await low.read();
    return new MindStore(dataDir, file, low, clock, options.readOnly ?? false);
  }

  /** A copy of the current state; changing it changes nothing. */
  read(): MindState {
    return structuredClone(this.#low.data);
  }

  /**
   * Changes the state: `fn` edits a draft; once it returns, the draft is validated and
   * written durably before this resolves. If `fn` throws or the draft is invalid, nothing
   * changes. Updates run one at a time, in call order.
   */
  update<R>(fn: (draft: MindState) => R | Promise<R>): Promise<R> {
    return this.#queue.run(async () => {
      const draft = structuredClone(this.#low.data);
      const result = await fn(draft);
      const checked = mindStateSchema.safeParse(draft);
      if (!checked.success) {
        throw new Error(`mind update would write an invalid state: ${describeIssue(checked.error)}`);
      }
      await this.#write(checked.data);
      return result;
    });
  }

  /**
   * Adds model calls to the ledger in one write (none when there are none); records older than
   * USAGE_DETAIL_DAYS leave, their day's totals stay.
   */
  async recordUsage(calls: readonly UsageRecord[]): Promise<void> {
    if (calls.length === 0) return;
    await this.update((mind) => {
      for (const usage of calls) {
        mind.usage.push({ ...usage });
        const day = usage.ts.slice(0, 10);
        const totals = mind.usageDaily[day] ?? { calls: 0, input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
        mind.usageDaily[day] = {
          calls: totals.calls + 1,
          input: totals.input + usage.input,
          output: totals.output + usage.output,
          cacheWrite: totals.cacheWrite + usage.cacheWrite,
          cacheRead: totals.cacheRead + usage.cacheRead,
        };
      }
      const cutoff = this.#clock.now().getTime() - USAGE_DETAIL_DAYS * 86_400_000;
      mind.usage = mind.usage.filter((u) => Date.parse(u.ts) >= cutoff);
    });
  }

  /**
   * Tokens (input, output, cache write and read: what the daily budget counts) spent on the
   * local day that holds `date` in `zone`. Exact for the last USAGE_DETAIL_DAYS days.
   */
  tokensOnLocalDay(date: Date, zone: string): number {
    const start = DateTime.fromJSDate(date, { zone }).startOf("day");
    const from = start.toMillis();
    const to = start.plus({ days: 1 }).toMillis();
    return this.#low.data.usage
      .filter((u) => {
        const ms = Date.parse(u.ts);
        return ms >= from && ms < to;
      })
      .reduce((sum, u) => sum + usageTotal(u), 0);
  }

  /** Tokens spent so far on the person's local day. */
  tokensToday(zone: string): number {
    return this.tokensOnLocalDay(this.#clock.now(), zone);
  }

  /** Records a heartbeat decision, keeping the last DECISIONS_KEPT. */
  recordDecision(decision: Decision): Promise<void> {
    return this.update((mind) => addDecision(mind, decision));
  }

  /** The most recent heartbeat decision, for /why and status. */
  lastDecision(): Decision | null {
    const last = this.#low.data.decisions.at(-1);
    return last ? structuredClone(last) : null;
  }

  /**
   * Forgets everything about the person (/wipe): the file is rewritten as a fresh mind, so
   * nothing of the old contents remains in it, and temp files a crash left beside it are
   * deleted. Only the usage ledger stays — token counts, no words — so the daily budget
   * still holds, with the time of the wipe so /status can say why the count outlived it.
   */
  deleteAll(): Promise<void> {
    return this.#queue.run(async () => {
      const { usage, usageDaily } = this.#low.data;
      const now = this.#clock.now();
      await this.#write({ ...initialMindState(now), usage, usageDaily, wipedAt: now.toISOString() });
      await removeLeftoverTemps(this.file);
    });
  }

  /**
   * Deletes for real what mentions `text` (/forget): matching memory items (retired ones
   * too), scratchpad lines and thread notes. Returns what was removed.
   */
  forget(text: string): Promise<ForgetResult> {
    const mentions = mentionMatcher(text);
    return this.update((mind) => {
      const forgotten = mind.memory.filter((item) => mentions(item.text));
      mind.memory = mind.memory.filter((item) => !mentions(item.text));
      rememberForgotten(mind, forgotten);
      const scratchpadLines: string[] = [];
      const path = (field: (typeof SCRATCHPAD_FIELDS)[number]) =>
        field.label === null ? field.section : `${field.section}.${field.label}`;
      for (const field of SCRATCHPAD_FIELDS) {
        const key = field.key;
        if (isItemField(key)) {
          const removed = mind.scratchpad[key].filter((item) => mentions(item.text));
          scratchpadLines.push(...removed.map((item) => `${path(field)}: ${item.text}`));
          mind.scratchpad[key] = mind.scratchpad[key].filter((item) => !mentions(item.text));
          rememberForgotten(mind, removed);
          continue;
        }
        const lines = mind.scratchpad[key].split("\n");
        const removed = lines.filter(mentions);
        if (removed.length === 0) continue;
        scratchpadLines.push(...removed.map((line) => `${path(field)}: ${line.trim()}`));
        mind.scratchpad[key] = lines.filter((line) => !mentions(line)).join("\n");
      }
      const threadNotes: string[] = [];
      for (const thread of mind.threads.list) {
        threadNotes.push(...thread.notes.filter((n) => mentions(n.text)).map((n) => n.text));
        thread.notes = thread.notes.filter((n) => !mentions(n.text));
      }
      return { memory: forgotten, scratchpadLines, threadNotes };
    });
  }

  /**
   * Deletes one reviewable item for real (/forget N), by id: an UNDERSTANDING line or a memory
   * item (retired or not). A memory item goes with its earlier versions — the retired items it
   * superseded, directly or through others — whose words are mostly its own. Returns the words
   * deleted (the item's, then its earlier versions'), or null when no item has that id.
   */
  forgetItem(id: string): Promise<{ text: string; earlier: string[] } | null> {
    return this.update((mind) => {
      for (const key of ITEM_FIELDS) {
        const item = mind.scratchpad[key].find((i) => i.id === id);
        if (!item) continue;
        mind.scratchpad[key] = mind.scratchpad[key].filter((i) => i.id !== id);
        rememberForgotten(mind, [item]);
        return { text: item.text, earlier: [] };
      }
      const item = mind.memory.find((i) => i.id === id);
      if (!item) return null;
      const gone = new Set([id]);
      for (let size = 0; gone.size > size; ) {
        size = gone.size;
        for (const older of mind.memory) {
          if (older.supersededBy !== undefined && gone.has(older.supersededBy)) gone.add(older.id);
        }
      }
      const earlier = mind.memory.filter((i) => i.id !== id && gone.has(i.id));
      mind.memory = mind.memory.filter((i) => !gone.has(i.id));
      rememberForgotten(mind, [item, ...earlier]);
      return { text: item.text, earlier: earlier.map((i) => i.text) };
    });
  }

  /**
   * Replaces one item's words with the person's own (/fix N) and marks it corrected, so
   * reflection leaves it as they wrote it; the old words join the forgotten hashes, so they
   * are not written back. Returns the old words, or null when no item has that id.
   */
  fixItem(id: string, text: string): Promise<{ before: string } | null> {
    const at = this.#clock.now().toISOString();
    return this.update((mind) => {
      const item =
        ITEM_FIELDS.flatMap((key) => mind.scratchpad[key]).find((i) => i.id === id) ??
        mind.memory.find((i) => i.id === id);
      if (!item) return null;
      const before = item.text;
      if (forgottenHash(before) !== forgottenHash(text)) rememberForgotten(mind, [{ text: before }]);
      mind.forgottenHashes = mind.forgottenHashes.filter((hash) => hash !== forgottenHash(text));
      item.text = text;
      item.correctedAt = at;
      return { before };
    });
  }

  /** Everything the mind keeps, for /export. */
  exportAll(): MindState {
    return this.read();
  }

  async #write(data: MindState): Promise<void> {
    if (this.#readOnly) throw new Error(`${this.file} was opened read-only; it is not written`);
    const previous = this.#low.data;
    this.#low.data = data;
    try {
      await this.#low.write();
    } catch (error) {
      this.#low.data = previous;
      throw error;
    }
  }
}

/** Keeps the hashes of deleted items' words (never the words), so reflection cannot add them back verbatim. */
function rememberForgotten(mind: MindState, items: readonly { text: string }[]): void {
  const hashes = new Set(mind.forgottenHashes);
  for (const item of items) hashes.add(forgottenHash(item.text));
  mind.forgottenHashes = [...hashes];
}

/**
 * Reads mind.json into today's shape, or says what is wrong with it. Fields added within a
 * version carry schema defaults, so a file written before them still loads and gains them on
 * the next write. A change defaults cannot express raises MIND_VERSION and adds its migration
 * step here: version 1 kept UNDERSTANDING as text (see migrateFromV1), version 2 named the
 * outbox's channel ids `telegram` (migrateFromV2).
 */
function parseMindFile(file: string, value: unknown): MindState {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new DataFileError(file, `expected an object with "version": ${MIND_VERSION}`);
  }
  const data = value as Record<string, unknown>;
  const version = data.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw new DataFileError(
      file,
      `"version" must be a whole number from 1, found ${JSON.stringify(version)}`,
    );
  }
  if (version > MIND_VERSION) {
    throw new DataFileError(
      file,
      `was written by a newer presence (format version ${version}; this one reads up to ${MIND_VERSION})`,
    );
  }
  let current = data;
  if (version < 2) current = migrateFromV1(current);
  if (version < 3) current = migrateFromV2(current);
  const parsed = mindStateSchema.safeParse(current);
  if (!parsed.success) {
    throw new DataFileError(
      file,
      `${describeIssue(parsed.error, data)} (the file was left as it is; fix or remove that entry by hand, or restore a backup)`,
    );
  }
  return parsed.data;
}

/**
 * Version 1 → 2: each UNDERSTANDING field's text becomes one item per non-empty line, with
 * unknown provenance (no learnedAt, no sources). Ids are derived from the field and the line's
 * place ("k-1", "b-2", "u-1"), so reading the same old file twice gives the same ids even
 * before it is first written back. Anything not understood is left for the schema to name.
 */
function migrateFromV1(data: Record<string, unknown>): Record<string, unknown> {
  const pad = data.scratchpad;
  if (typeof pad !== "object" || pad === null || Array.isArray(pad)) return data;
  const migrated: Record<string, unknown> = { ...(pad as Record<string, unknown>) };
  for (const key of ITEM_FIELDS) {
    const text = migrated[key];
    if (typeof text !== "string") continue;
    const prefix = itemPrefix(key);
    migrated[key] = text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .map((line, index) => ({ id: `${prefix}-${index + 1}`, text: line, sourceMessageIds: [] }));
  }
  return { ...data, version: 2, scratchpad: migrated };
}

/**
 * Version 2 → 3: an outbox entry's ids on its channel move from `telegram` to `external`, the
 * first part's and those of the message its reply quotes or its reaction is put on (`anchor`),
 * unchanged. Anything not understood is left for the schema to name.
 */
function migrateFromV2(data: Record<string, unknown>): Record<string, unknown> {
  const migrated: Record<string, unknown> = { ...data, version: MIND_VERSION };
  if (Array.isArray(data.outbox)) migrated.outbox = data.outbox.map(withExternalIds);
  return migrated;
}

/** Where version 2 kept an outbox entry's ids on the channel, the only channel it knew. */
const FORMER_IDS = "telegram";

/** The entry with its former ids field named `external`, and its anchor's. */
function withExternalIds(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const { [FORMER_IDS]: external, anchor, ...rest } = value as Record<string, unknown>;
  return {
    ...rest,
    ...(anchor === undefined ? {} : { anchor: withExternalIds(anchor) }),
    ...(external === undefined ? {} : { external }),
  };
}

/**
 * The first problem, with the entry it is in named the way a person finds it in the file:
 * `outbox entry 1 (index 0, id "o-…"): kind: …`.
 */
function describeIssue(error: z.ZodError, data?: Record<string, unknown>): string {
  const issue = error.issues[0];
  if (!issue) return "invalid contents";
  const [field, index, ...rest] = issue.path;
  const list = typeof field === "string" ? data?.[field] : undefined;
  if (Array.isArray(list) && typeof index === "number") {
    const entry: unknown = list[index];
    const id =
      typeof entry === "object" && entry !== null && typeof (entry as { id?: unknown }).id === "string"
        ? `, id ${JSON.stringify((entry as { id: string }).id)}`
        : "";
    const inner = rest.length > 0 ? `${rest.map(String).join(".")}: ` : "";
    return `${String(field)} entry ${index + 1} (index ${index}${id}): ${inner}${issue.message}`;
  }
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue.message}`;
}
