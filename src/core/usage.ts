import { DateTime } from "luxon";
import { z } from "zod";
import { isoUtc } from "./message.ts";
import { type MindAccess, type MindDocument, mindLogRecord, mindRecord } from "./mind-record.ts";

/**
 * What one model call used, in tokens: the record the usage ledger (mind.json), the trace,
 * the cache plan and the simulations' costs all read, and the ledger itself: its records in
 * mind.json, how a call joins it and what the daily budget counts. It lives at the core level
 * because the model client returns it, the companion and reflection record it, and the
 * check-in pre-check and status read it.
 */

/** Why a call is made; replies and check-in messages use the main model, the others the cheaper one(s). */
export type CallPurpose = "reply" | "heartbeat-decide" | "heartbeat-write" | "reflect" | "judge";

/** One call's token usage, as the ledger in the mind store and the trace keep it. */
export interface UsageRecord {
  /** When the answer arrived (from the clock), ISO UTC. */
  ts: string;
  purpose: CallPurpose;
  model: string;
  input: number;
  output: number;
  /** Tokens written to the prompt cache by this call. */
  cacheWrite: number;
  /** Of cacheWrite, the tokens written with the one-hour TTL (priced higher than the five-minute ones). */
  cacheWrite1h?: number;
  /** Tokens read from the prompt cache by this call. */
  cacheRead: number;
}

/** Total tokens a record stands for, the figure the daily budget counts. */
export function usageTotal(u: Pick<UsageRecord, "input" | "output" | "cacheWrite" | "cacheRead">): number {
  return u.input + u.output + u.cacheWrite + u.cacheRead;
}

/** Days of per-call usage records kept; daily totals are kept for good. */
const USAGE_DETAIL_DAYS = 8;

const tokenCount = z.number().int().nonnegative();

/** One model call's tokens as the ledger keeps it: what the daily budget, status and the trace count. */
const usageRecordSchema = z.looseObject({
  ts: isoUtc,
  purpose: z.enum(["reply", "heartbeat-decide", "heartbeat-write", "reflect", "judge"]),
  model: z.string(),
  input: tokenCount,
  output: tokenCount,
  cacheWrite: tokenCount,
  cacheRead: tokenCount,
});

/** One UTC day's spend, kept after its detailed records age out. */
const usageTotalsSchema = z.object({
  calls: tokenCount,
  input: tokenCount,
  output: tokenCount,
  cacheWrite: tokenCount,
  cacheRead: tokenCount,
});

/**
 * The ledger's detailed records in mind.json (the last USAGE_DETAIL_DAYS days). Token counts
 * hold no words, so they outlive /wipe: the daily budget still holds.
 */
export const usageRecord = mindLogRecord({
  key: "usage",
  entry: usageRecordSchema,
  afterWipe: (kept) => kept,
});

/** Totals per UTC day (YYYY-MM-DD), kept for good, through /wipe too. */
export const usageDailyRecord = mindRecord({
  key: "usageDaily",
  schema: z.record(z.string(), usageTotalsSchema).default({}),
  initial: () => ({}),
  afterWipe: (kept) => kept,
});

/** When the person last wiped everything (/wipe): /status says the token count outlived it, and why. */
export const wipedAtRecord = mindRecord({
  key: "wipedAt",
  schema: isoUtc.optional(),
  initial: () => undefined,
  afterWipe: (_kept, now) => now.toISOString(),
});

/** The usage ledger as mind.json holds it. */
export type UsageLedger = MindDocument<typeof usageRecord | typeof usageDailyRecord>;

/**
 * Adds model calls to the ledger in one write (none when there are none); records older than
 * USAGE_DETAIL_DAYS before `now` leave, their day's totals stay.
 */
export async function recordUsage(
  mind: MindAccess<UsageLedger>,
  calls: readonly UsageRecord[],
  now: Date,
): Promise<void> {
  if (calls.length === 0) return;
  await mind.update((ledger) => {
    for (const usage of calls) {
      ledger.usage.push({ ...usage });
      const day = usage.ts.slice(0, 10);
      const totals = ledger.usageDaily[day] ?? { calls: 0, input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
      ledger.usageDaily[day] = {
        calls: totals.calls + 1,
        input: totals.input + usage.input,
        output: totals.output + usage.output,
        cacheWrite: totals.cacheWrite + usage.cacheWrite,
        cacheRead: totals.cacheRead + usage.cacheRead,
      };
    }
    const cutoff = isoUtcText(now.getTime() - USAGE_DETAIL_DAYS * 86_400_000);
    ledger.usage = ledger.usage.filter((u) => atOrAfter(u.ts, cutoff));
  });
}

/**
 * Tokens (input, output, cache write and read: what the daily budget counts) spent on the
 * local day that holds `date` in `zone`. Exact for the last USAGE_DETAIL_DAYS days.
 */
export function tokensOnLocalDay(ledger: Pick<UsageLedger, "usage">, date: Date, zone: string): number {
  const { from, to } = localDayBounds(date.getTime(), zone);
  return ledger.usage
    .filter((u) => atOrAfter(u.ts, from) && !atOrAfter(u.ts, to))
    .reduce((sum, u) => sum + usageTotal(u), 0);
}

/** The local day last asked about: its first and last instants, and the bounds as ledger times. */
let lastDay: { zone: string; startMs: number; nextStartMs: number; from: string; to: string } | undefined;

/**
 * The bounds, as ledger times, of the local day that holds `ms` in `zone`: from its start to the
 * start of the next (23 or 25 hours on a clock change). Every check-in asks, mostly about the day
 * the last one asked about; working the day out in luxon each time was 0.07 s of a simulated month.
 */
function localDayBounds(ms: number, zone: string): { from: string; to: string } {
  if (lastDay?.zone === zone && ms >= lastDay.startMs && ms < lastDay.nextStartMs) return lastDay;
  const start = DateTime.fromMillis(ms, { zone }).startOf("day");
  // Where the next local day begins: not a wall-clock day after `start` when a clock change
  // skips midnight (Santiago's 6 September 2026 starts at 01:00, its 7th at 00:00).
  const nextStartMs = start.plus({ days: 1 }).startOf("day").toMillis();
  lastDay = {
    zone,
    startMs: start.toMillis(),
    nextStartMs,
    from: isoUtcText(start.toMillis()),
    to: isoUtcText(nextStartMs),
  };
  return lastDay;
}

/** An instant as toISOString writes it, the form the ledger's times are recorded in. */
function isoUtcText(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Whether the ledger time `ts` is at or after `bound` (isoUtcText). The ledger is read at
 * every check-in and trimmed at every call, a week of records each time: a time in
 * toISOString's own 24 characters compares as text, where text order is time order, and only
 * another spelling (a file written by hand) is parsed.
 */
function atOrAfter(ts: string, bound: string): boolean {
  return ts.length === 24 && bound.length === 24 && ts.endsWith("Z")
    ? ts >= bound
    : Date.parse(ts) >= Date.parse(bound);
}
