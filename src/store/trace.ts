import { appendFile, chmod, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import type { Clock } from "../clock.ts";
import {
  ensurePrivateDir,
  fsyncDir,
  isErrnoCode,
  PRIVATE_FILE_MODE,
  readTextIfExists,
  removeDurable,
  removeLeftoverTemps,
  unlinkIfExists,
  writeFileDurable,
} from "./files.ts";

/** One line of the trace: when, what kind of turn, and whatever that turn wants to keep. */
export const traceRecordSchema = z.looseObject({
  ts: z.iso.datetime(),
  kind: z.string().min(1),
});
export type TraceRecord = z.infer<typeof traceRecordSchema>;

/** A record to append; the trace stamps it with the clock when `ts` is missing. */
export type NewTraceRecord = { kind: string; ts?: string } & Record<string, unknown>;

export interface TraceOptions {
  dataDir: string;
  clock: Clock;
  /** Lines older than this are deleted for real (default 30). */
  maxAgeDays?: number;
  /** Upper bound of the trace on disk, current and rotated file together (default 50 MB). */
  maxBytes?: number;
}

const DAY_MS = 86_400_000;
/** Expired lines are swept at most this often, so a busy turn never pays for a sweep twice. */
const SWEEP_INTERVAL_MS = 3_600_000;

/**
 * The turn-by-turn record (`trace` command, /why): what came in, what the model was shown and
 * returned, what changed. It holds private text, so it is owner-only and bounded: trace.jsonl
 * rotates into trace.1.jsonl at half the size budget (replacing the previous one), and lines
 * older than the age limit are removed from both within the hour they expire.
 */
export class Trace {
  readonly file: string;
  readonly rotatedFile: string;
  readonly #clock: Clock;
  readonly #maxAgeMs: number;
  readonly #rotateAtBytes: number;
  #bytes = 0;
  #oldestMs: number | null = null;
  #lastSweepMs = Number.NEGATIVE_INFINITY;
  #swept = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: TraceOptions) {
    this.file = join(options.dataDir, "trace.jsonl");
    this.rotatedFile = join(options.dataDir, "trace.1.jsonl");
    this.#clock = options.clock;
    this.#maxAgeMs = (options.maxAgeDays ?? 30) * DAY_MS;
    this.#rotateAtBytes = Math.floor((options.maxBytes ?? 50 * 1024 * 1024) / 2);
  }

  /** Adds one record as one line; resolves once it is written. Records are written in call order. */
  append(record: NewTraceRecord): Promise<TraceRecord> {
    return this.#enqueue(async () => {
      const parsed = traceRecordSchema.parse({ ...record, ts: record.ts ?? this.#clock.now().toISOString() });
      if (!this.#swept) await this.#prepare();
      const nowMs = this.#clock.now().getTime();
      if (this.#oldestMs !== null && this.#oldestMs < nowMs - this.#maxAgeMs) {
        if (nowMs - this.#lastSweepMs >= SWEEP_INTERVAL_MS) await this.#sweep();
      }
      const line = `${JSON.stringify(parsed)}\n`;
      const size = Buffer.byteLength(line);
      if (this.#bytes > 0 && this.#bytes + size > this.#rotateAtBytes) await this.#rotate();
      await appendFile(this.file, line, { mode: PRIVATE_FILE_MODE });
      this.#bytes = this.#bytes + size;
      const ms = Date.parse(parsed.ts);
      this.#oldestMs = this.#oldestMs === null ? ms : Math.min(this.#oldestMs, ms);
      return parsed;
    });
  }

  /** The newest `n` records, oldest first. Lines that are not valid records are skipped. */
  async last(n: number): Promise<TraceRecord[]> {
    if (n <= 0) return [];
    const records = parseLines((await readTextIfExists(this.file)) ?? "");
    if (records.length < n) records.unshift(...parseLines((await readTextIfExists(this.rotatedFile)) ?? ""));
    return records.slice(-n);
  }

  /** Deletes the trace for real (/wipe). */
  deleteAll(): Promise<void> {
    return this.#enqueue(async () => {
      await removeDurable(this.file);
      await removeDurable(this.rotatedFile);
      await removeLeftoverTemps(this.file);
      await removeLeftoverTemps(this.rotatedFile);
      this.#bytes = 0;
      this.#oldestMs = null;
    });
  }

  #enqueue<R>(operation: () => Promise<R>): Promise<R> {
    const run = this.#queue.then(operation, operation);
    this.#queue = run.catch(() => undefined);
    return run;
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

  /** Rewrites both files without expired or unreadable lines; an emptied file is removed. */
  async #sweep(): Promise<void> {
    const nowMs = this.#clock.now().getTime();
    const cutoff = nowMs - this.#maxAgeMs;
    let oldest: number | null = null;
    this.#bytes = 0;
    for (const file of [this.rotatedFile, this.file]) {
      const text = await readTextIfExists(file);
      if (text === null) continue;
      const lines = text.split("\n").filter((line) => line !== "");
      const kept = lines.filter((line) => {
        const record = parseLine(line);
        const ms = record === null ? null : Date.parse(record.ts);
        if (ms === null || ms < cutoff) return false;
        oldest = oldest === null ? ms : Math.min(oldest, ms);
        return true;
      });
      const contents = kept.map((line) => `${line}\n`).join("");
      if (kept.length === 0) await unlinkIfExists(file);
      else if (contents !== text) await writeFileDurable(file, contents);
      if (file === this.file) this.#bytes = Buffer.byteLength(contents);
    }
    await fsyncDir(dirname(this.file));
    this.#oldestMs = oldest;
    this.#lastSweepMs = nowMs;
  }

  async #rotate(): Promise<void> {
    await rename(this.file, this.rotatedFile);
    await fsyncDir(dirname(this.file));
    this.#bytes = 0;
  }
}

/** One line as a record, or null for a torn or foreign line (a crash mid-write leaves one). */
function parseLine(line: string): TraceRecord | null {
  try {
    const result = traceRecordSchema.safeParse(JSON.parse(line));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

function parseLines(text: string): TraceRecord[] {
  return text
    .split("\n")
    .map(parseLine)
    .filter((record): record is TraceRecord => record !== null);
}
