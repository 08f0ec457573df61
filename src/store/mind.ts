import { join } from "node:path";
import { Low } from "lowdb";
import { DateTime } from "luxon";
import { z } from "zod";
import {
  checkinNoticeStateSchema,
  emptyCheckinNoticeState,
  noticeSaidSchema,
} from "../core/checkin-notices.ts";
import { emptyHeartbeatState, heartbeatStateSchema } from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { type Decision, decisionSchema } from "../core/decision.ts";
import { annotationsSchema, isoUtc } from "../core/message.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import { mentionMatcher } from "../core/text.ts";
import { type UsageRecord, usageTotal } from "../core/usage.ts";
import { DataFileError, DurableJsonFile, ensurePrivateDir, removeLeftoverTemps } from "./files.ts";
import {
  initialScratchpad,
  initialThreads,
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

/** The format version this code writes. */
export const MIND_VERSION = 1;
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

const telegramIdsSchema = z.object({ chatId: z.number(), messageId: z.number() });

/**
 * An outgoing message recorded before it is handed to the channel (companion/outbox.ts). Its
 * shape is checked when mind.json is read, like everything else in it: an entry presence could
 * not deliver makes it refuse to start rather than drop that message when it next writes.
 */
export const outboxIntentSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(["reply", "heartbeat", "notice"]),
  text: z.string().min(1),
  trigger: z.enum(["reply", "heartbeat"]),
  channel: z.enum(["telegram", "cli", "simulation"]),
  createdAt: isoUtc,
  replyTo: z.string().optional(),
  answeredThrough: z.string().optional(),
  annotations: annotationsSchema.optional(),
  /** A check-in's decision record, written (with the message id) in the same write that logs it as sent. */
  decision: decisionSchema.optional(),
  /** Parts of a split text the channel already accepted: a later attempt sends only the rest. */
  partsDelivered: z.number().int().min(0).optional(),
  /** The first part's Telegram identifiers, once it was accepted (the log records them). */
  telegram: telegramIdsSchema.optional(),
  /** A notice about check-ins stopping or resuming: recorded as told in the write that logs it as sent. */
  said: noticeSaidSchema.optional(),
});
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
  readonly #low: Low<MindState>;
  readonly #clock: Clock;
  readonly #readOnly: boolean;
  /** Writes in the order they were asked for, each on the state the one before left. */
  readonly #queue = new SerialQueue();

  private constructor(file: string, low: Low<MindState>, clock: Clock, readOnly: boolean) {
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
    return new MindStore(file, low, clock, options.readOnly ?? false);
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
      const scratchpadLines: string[] = [];
      for (const field of SCRATCHPAD_FIELDS) {
        const lines = mind.scratchpad[field.key].split("\n");
        const removed = lines.filter(mentions);
        if (removed.length === 0) continue;
        const path = field.label === null ? field.section : `${field.section}.${field.label}`;
        scratchpadLines.push(...removed.map((line) => `${path}: ${line.trim()}`));
        mind.scratchpad[field.key] = lines.filter((line) => !mentions(line)).join("\n");
      }
      const threadNotes: string[] = [];
      for (const thread of mind.threads.list) {
        threadNotes.push(...thread.notes.filter((n) => mentions(n.text)).map((n) => n.text));
        thread.notes = thread.notes.filter((n) => !mentions(n.text));
      }
      return { memory: forgotten, scratchpadLines, threadNotes };
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

/**
 * Reads mind.json into today's shape, or says what is wrong with it. Version 1 is the first
 * format; fields added within it carry schema defaults, so a file written before them still
 * loads and gains them on the next write. A change defaults cannot express raises
 * MIND_VERSION and adds its migration step here.
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
  const parsed = mindStateSchema.safeParse(data);
  if (!parsed.success) {
    throw new DataFileError(
      file,
      `${describeIssue(parsed.error, data)} (the file was left as it is; fix or remove that entry by hand, or restore a backup)`,
    );
  }
  return parsed.data;
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
