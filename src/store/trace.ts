import { chmod, rename } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import type { Clock } from "../core/clock.ts";
import { heartbeatDecisionSchema } from "../core/decision.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import {
  appendPrivate,
  DataWriteError,
  damagedCopyTime,
  ensurePrivateDir,
  fsyncDir,
  isErrnoCode,
  keepDamagedCopy,
  namesInDir,
  PRIVATE_FILE_MODE,
  parseJsonOrNull,
  readTextIfExists,
  removeDurable,
  removeLeftoverTemps,
  unlinkIfExists,
  writeFileDurable,
} from "./files.ts";
import { PERSON_FILES } from "./person-files.ts";

const ts = z.iso.datetime();
const count = z.number().int().nonnegative();
/**
 * What another room shaped and the trace only keeps, as given: the prompt's section sizes
 * (mind/compose.ts), the model's answer and usage (model/llm.ts), its check-in decision, the
 * topic guard's verdict, reflection's exchange.
 */
const asGiven = z.unknown().optional();

/** The person's messages a reply answers, as the turn saw them. */
const inputSchema = z.array(z.strictObject({ id: z.string(), ts, text: z.string() }));
/**
 * What a reply said besides its text: the person's message it was anchored to (quoted), or the
 * emoji it reacted with instead of words.
 */
const mannersFields = { anchoredTo: z.string().optional(), reaction: z.string().optional() };
/** What went out: the logged message's id, and its text when the turn had it. */
const sentSchema = z.strictObject({ id: z.string(), text: z.string().optional(), ...mannersFields });
/** Tokens one reflection call used. */
const tokensSchema = z.strictObject({ input: count, output: count, cacheWrite: count, cacheRead: count });
/** What a delivery ended as (companion/outbox.ts). */
const deliverySchema = z.enum(["sent", "failed", "blocked", "refused"]);

/** A reply turn: what came in, what the model was shown and returned, what went out or why not. */
const replyRecordSchema = z.strictObject({
  ts,
  kind: z.literal("reply"),
  outcome: z.enum([
    "sent",
    "failed",
    "blocked",
    "refused",
    "deferred",
    "empty",
    "images-dropped",
    "documents-dropped",
    /** Everything waiting was sound that could not be heard: fixed words, no model call. */
    "unheard",
  ]),
  input: inputSchema.optional(),
  shown: asGiven,
  awareness: z.enum(["full", "slim"]).optional(),
  returned: asGiven,
  usage: asGiven,
  /** A reply the channel refused earlier, sent again from its outbox entry. */
  held: z.strictObject({ outbox: z.string(), partsDelivered: count }).optional(),
  text: z.string().optional(),
  ...mannersFields,
  sent: sentSchema.optional(),
  /** What reflection does with the exchange (companion/outbox.ts). */
  reflection: z.string().optional(),
  why: z.string().optional(),
  /** The person's message marked as dealt with although nothing was said. */
  handledWithoutReply: z.string().optional(),
  error: z.string().optional(),
  retryInMs: z.number().nonnegative().optional(),
  /** Whether the one notice went out with this deferral or failure. */
  notice: z.boolean().optional(),
  /** The messages whose photos the model refused. */
  messages: z.array(z.string()).optional(),
});

/** A check-in turn, one record per stage it reached. */
const heartbeatRecordSchema = z.strictObject({
  ts,
  kind: z.literal("heartbeat"),
  stage: z.enum([
    "reply-pending",
    "pre-check",
    "model",
    "decide",
    "topic-guard",
    "leak-guard",
    "send",
    "sent",
    "notice",
  ]),
  preCheck: heartbeatDecisionSchema.optional(),
  tokensToday: count.optional(),
  shown: asGiven,
  usage: asGiven,
  decision: asGiven,
  verdict: asGiven,
  returned: asGiven,
  /** Why the model's decision could not be read. */
  problem: z.string().optional(),
  why: z.string().optional(),
  outcome: deliverySchema.optional(),
  sent: sentSchema.optional(),
  reflection: z.string().optional(),
  error: z.string().optional(),
});

/** A reflection: the exchange, what the model was shown and returned, what changed or why not. */
const reflectRecordSchema = z.strictObject({
  ts,
  kind: z.literal("reflect"),
  outcome: z.enum(["applied", "refused", "dropped", "deferred"]),
  /** Reflection done in the reply's own call rather than a second one. */
  mode: z.literal("single-phase").optional(),
  job: z.string().optional(),
  exchange: asGiven,
  shown: asGiven,
  returned: asGiven,
  tokens: tokensSchema.optional(),
  changes: z.array(z.string()).optional(),
  /** Operations refused one by one (they touched what the person corrected or deleted), with why. */
  refusedOps: z.array(z.string()).optional(),
  reason: z.string().optional(),
  attempts: count.optional(),
  notBefore: ts.optional(),
});

/** What the start after a crash did with an outbox entry. */
const recoverRecordSchema = z.strictObject({
  ts,
  kind: z.literal("recover"),
  outbox: z.string(),
  action: z.enum(["already-sent", "dropped-stale", "resent"]),
  outcome: deliverySchema.optional(),
  reflection: z.string().optional(),
});

/** A turn that failed unexpectedly (a bug, a full disk), traced before the error goes on. */
const failedTurnRecordSchema = z.strictObject({
  ts,
  kind: z.enum(["reply-error", "heartbeat-error", "recover-error"]),
  error: z.string(),
});

/** One record of the trace as this version writes it: a kind, and the fields that kind keeps. */
const traceRecordSchema = z.discriminatedUnion("kind", [
  replyRecordSchema,
  heartbeatRecordSchema,
  reflectRecordSchema,
  recoverRecordSchema,
  failedTurnRecordSchema,
]);
export type TraceRecord = z.infer<typeof traceRecordSchema>;

/** Each kind of record with `ts` optional. */
type WithoutTime<R> = R extends unknown ? Omit<R, "ts"> & { ts?: string } : never;
/** A record to append; the trace stamps it with the clock when `ts` is missing. */
export type NewTraceRecord = WithoutTime<TraceRecord>;

/**
 * A line as it is read back: a time and a kind, the rest as written. Lines written by an
 * older version (or a newer one) are kept as they are, never judged by today's schema: the
 * trace drops only what it cannot read at all.
 */
const traceLineSchema = z.looseObject({ ts, kind: z.string().min(1) });
export type TraceLine = z.infer<typeof traceLineSchema>;

export interface TraceOptions {
  dataDir: string;
  clock: Clock;
  /** Lines older than this are deleted for real (default 30). */
  maxAgeDays?: number;
  /** Upper bound of the trace on disk, current and rotated file together (default 50 MB). */
  maxBytes?: number;
  /** Told (without any text from the trace) when a damaged trace file is kept aside. */
  logger?: Logger;
  /**
   * Simulations only (WriteOptions): records wait in memory and are appended together at
   * flush(), or when the trace is read or rewritten; a month notes some two thousand.
   */
  writeOnFlush?: boolean;
}

const DAY_MS = 86_400_000;
/** Expired lines are swept at most this often, so a busy turn never pays for a sweep twice. */
const SWEEP_INTERVAL_MS = 3_600_000;

/**
 * The turn-by-turn record (`trace` command, /why): what came in, what the model was shown and
 * returned, what changed. It holds private text, so it is owner-only and bounded: trace.jsonl
 * rotates into trace.1.jsonl at half the size budget (replacing the previous one), and lines
 * older than the age limit are removed from both within the hour they expire.
 *
 * It is the one data file presence repairs on its own: a line it cannot read (torn by a
 * crash, or damaged) is dropped when the file is next rewritten, but only after the whole
 * original was kept beside it as `<name>.damaged-<time>` (owner-only, one log line). Those
 * copies are deleted once they are as old as the age limit.
 */
export class Trace {
  readonly file: string;
  readonly rotatedFile: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #maxAgeMs: number;
  readonly #rotateAtBytes: number;
  #bytes = 0;
  #oldestMs: number | null = null;
  #lastSweepMs = Number.NEGATIVE_INFINITY;
  #swept = false;
  readonly #writeOnFlush: boolean;
  /** With writeOnFlush: lines noted but not yet appended, oldest first. */
  #pending: string[] = [];
  /** Appends and rewrites in call order, so a line never lands in a file being rewritten. */
  readonly #queue = new SerialQueue();

  constructor(options: TraceOptions) {
    this.file = join(options.dataDir, PERSON_FILES.trace);
    this.rotatedFile = join(options.dataDir, PERSON_FILES.rotatedTrace);
    this.#clock = options.clock;
    this.#logger = options.logger ?? silentLogger;
    this.#maxAgeMs = (options.maxAgeDays ?? 30) * DAY_MS;
    this.#rotateAtBytes = Math.floor((options.maxBytes ?? 50 * 1024 * 1024) / 2);
    this.#writeOnFlush = options.writeOnFlush ?? false;
  }

  /**
   * Adds one record and never throws: the trace explains a turn afterwards, so a trace that
   * cannot be written (a full disk) must not fail the turn or lose its answer. A failure goes
   * to the process log, without the record.
   */
  async note(record: NewTraceRecord): Promise<void> {
    try {
      await this.append(record);
    } catch (error) {
      this.#logger.warn({ err: error, kind: record.kind }, "could not write the trace");
    }
  }

  /** Adds one record as one line; resolves once it is written. Records are written in call order. */
  append(record: NewTraceRecord): Promise<TraceRecord> {
    return this.#queue.run(async () => {
      const parsed = traceRecordSchema.parse({ ...record, ts: record.ts ?? this.#clock.now().toISOString() });
      if (!this.#swept) await this.#prepare();
      const nowMs = this.#clock.now().getTime();
      if (this.#oldestMs !== null && this.#oldestMs < nowMs - this.#maxAgeMs) {
        if (nowMs - this.#lastSweepMs >= SWEEP_INTERVAL_MS) await this.#sweep();
      }
      const line = `${JSON.stringify(parsed)}\n`;
      const size = Buffer.byteLength(line);
      if (this.#bytes > 0 && this.#bytes + size > this.#rotateAtBytes) await this.#rotate();
      if (this.#writeOnFlush) this.#pending.push(line);
      else await appendPrivate(this.file, line);
      this.#bytes = this.#bytes + size;
      const ms = Date.parse(parsed.ts);
      this.#oldestMs = this.#oldestMs === null ? ms : Math.min(this.#oldestMs, ms);
      return parsed;
    });
  }

  /** Appends the records noted but not yet written (only a trace opened with writeOnFlush holds any). */
  flush(): Promise<void> {
    return this.#queue.run(() => this.#appendPending());
  }

  /** The newest `n` records, oldest first. Lines that are not valid records are skipped. */
  async last(n: number): Promise<TraceLine[]> {
    if (n <= 0) return [];
    if (this.#pending.length > 0) await this.flush();
    const records = lastRecords((await readTextIfExists(this.file)) ?? "", n);
    if (records.length < n) {
      records.unshift(...lastRecords((await readTextIfExists(this.rotatedFile)) ?? "", n - records.length));
    }
    return records;
  }

  /**
   * Deletes for real the records `matches` picks (/forget), from both files; returns how many.
   * Lines it cannot read are kept aside first, like any repair.
   */
  deleteWhere(matches: (record: TraceLine) => boolean): Promise<number> {
    return this.#queue.run(async () => {
      if (!this.#swept) await this.#prepare();
      return this.#rewrite((record) => !matches(record));
    });
  }

  /** Deletes the trace for real (/wipe). */
  deleteAll(): Promise<void> {
    return this.#queue.run(async () => {
      await removeDurable(this.file);
      await removeDurable(this.rotatedFile);
      await removeLeftoverTemps(this.file);
      await removeLeftoverTemps(this.rotatedFile);
      this.#pending = [];
      this.#bytes = 0;
      this.#oldestMs = null;
    });
  }

  /** First write of this process: private directory and file, then a sweep that also drops a torn last line. */
  async #prepare(): Promise<void> {
    await ensurePrivateDir(dirname(this.file));
    for (const file of [this.file, this.rotatedFile]) {
      try {
        await chmod(file, PRIVATE_FILE_MODE);
      } catch (error) {
        if (!isErrnoCode(error, "ENOENT")) throw error;
      }
    }
    await this.#sweep();
    this.#swept = true;
  }

  /** Removes expired lines from both files, and damaged copies as old as the age limit. */
  async #sweep(): Promise<void> {
    const nowMs = this.#clock.now().getTime();
    const cutoff = nowMs - this.#maxAgeMs;
    await this.#rewrite((record) => Date.parse(record.ts) >= cutoff);
    await this.#removeExpiredCopies(cutoff);
    this.#lastSweepMs = nowMs;
  }

  /**
   * Rewrites both files with only the records `keep` accepts (an emptied file is removed), and
   * recounts the current file's size and the oldest record. A file holding a line that is not
   * a record is first kept aside whole. Returns how many records were removed.
   */
  async #rewrite(keep: (record: TraceLine) => boolean): Promise<number> {
    await this.#appendPending();
    let oldest: number | null = null;
    let removed = 0;
    this.#bytes = 0;
    for (const file of [this.rotatedFile, this.file]) {
      const text = await readTextIfExists(file);
      if (text === null) continue;
      const lines = text.split("\n").filter((line) => line !== "");
      let unreadable = 0;
      const kept = lines.filter((line) => {
        const record = parseLine(line);
        if (record === null) {
          unreadable++;
          return false;
        }
        if (!keep(record)) {
          removed++;
          return false;
        }
        const ms = Date.parse(record.ts);
        oldest = oldest === null ? ms : Math.min(oldest, ms);
        return true;
      });
      if (unreadable > 0) {
        const copy = await keepDamagedCopy(file, this.#clock.now());
        this.#logger.warn(
          { file, copy, unreadableLines: unreadable },
          "trace: kept a copy of a damaged trace file, then dropped the lines that could not be read",
        );
      }
      const contents = kept.map((line) => `${line}\n`).join("");
      if (kept.length === 0) await unlinkIfExists(file);
      else if (contents !== text) await writeFileDurable(file, contents);
      if (file === this.file) this.#bytes = Buffer.byteLength(contents);
    }
    await fsyncDir(dirname(this.file));
    this.#oldestMs = oldest;
    return removed;
  }

  /** Damaged copies hold the same private text as the trace, so they leave on the same schedule. */
  async #removeExpiredCopies(cutoff: number): Promise<void> {
    for (const name of await namesInDir(dirname(this.file))) {
      const made =
        damagedCopyTime(name, basename(this.file)) ?? damagedCopyTime(name, basename(this.rotatedFile));
      if (made !== null && made.getTime() < cutoff) await removeDurable(join(dirname(this.file), name));
    }
  }

  /** With writeOnFlush: appends the lines waiting, in one write. */
  async #appendPending(): Promise<void> {
    if (this.#pending.length === 0) return;
    const lines = this.#pending.join("");
    this.#pending = [];
    await appendPrivate(this.file, lines);
  }

  async #rotate(): Promise<void> {
    await this.#appendPending();
    try {
      await rename(this.file, this.rotatedFile);
    } catch (error) {
      throw new DataWriteError(this.rotatedFile, error);
    }
    await fsyncDir(dirname(this.file));
    this.#bytes = 0;
  }
}

/** One line as a record, or null for a torn or foreign line (a crash mid-write leaves one). */
function parseLine(line: string): TraceLine | null {
  const result = traceLineSchema.safeParse(parseJsonOrNull(line));
  return result.success ? result.data : null;
}

/**
 * The newest `n` records of a file's text, oldest first: only the lines it takes are read,
 * walking back from the end (splitting a month's trace into lines to read ten was 40 MB of
 * garbage for the simulations, which read it after every check-in).
 */
function lastRecords(text: string, n: number): TraceLine[] {
  const records: TraceLine[] = [];
  for (let end = text.length; end >= 0 && records.length < n; ) {
    const start = end === 0 ? -1 : text.lastIndexOf("\n", end - 1);
    const record = parseLine(text.slice(start + 1, end));
    if (record !== null) records.push(record);
    end = start;
  }
  return records.reverse();
}
