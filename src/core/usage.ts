/**
 * What one model call used, in tokens: the record the usage ledger (mind.json), the trace,
 * the cache plan and the simulations' costs all read. It lives at the core level because the
 * model client returns it, the companion records it and the store keeps it.
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
