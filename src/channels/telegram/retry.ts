import { HttpError, type Transformer } from "grammy";
import { Backoff, waitToRetry } from "../../core/backoff.ts";
import { systemTimers, type Timers } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import { describeTransportFailure, mayHaveReachedTelegram } from "./transport.ts";

/**
 * How hard a Telegram call is retried before the caller hears about the failure. Bounded in
 * attempts and in waiting, so a long outage surfaces as an error (the companion keeps the
 * message unanswered and recovery answers it later) instead of an endless loop.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff after a 5xx or a dropped connection; doubles each time. */
  baseDelayMs: number;
  /** Longest backoff between two attempts. */
  maxDelayMs: number;
  /** A 429 asking to wait longer than this is not waited for: the error goes to the caller. */
  maxRetryAfterSeconds: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterSeconds: 120,
};

/**
 * Methods that are not retried here: long polling has grammY's own loop, and a "typing…"
 * that arrives late is worse than none.
 */
const NOT_RETRIED = new Set(["getUpdates", "sendChatAction"]);

/**
 * A grammY transformer that retries 429 (honouring retry_after), 5xx and dropped connections
 * with exponential backoff, within the policy's bounds. Written here rather than taken from
 * @grammyjs/auto-retry (2.x), which cannot give these bounds: it retries a network error
 * (grammY's HttpError) in a loop that `maxRetryAttempts` does not count, so without end, or,
 * with `rethrowHttpErrors`, not at all; and it would repeat a send whose answer was lost.
 *
 * A send whose answer was lost after the request went out (cut off, or none in time) may be in
 * the chat already, so it is repeated once at most: a second such loss ends the call, and the
 * caller's own schedule takes over (the outbox keeps a reply for later). A refused connection
 * never reached Telegram and is retried like a 5xx. A 429's retry_after is waited as asked and
 * does not count towards the backoff. The waits are spent on `timers`, the machine's unless a
 * caller passes its own.
 */
export function retryTransformer(
  policy: RetryPolicy,
  logger: Logger,
  timers: Timers = systemTimers,
): Transformer {
  return async (prev, method, payload, signal) => {
    if (NOT_RETRIED.has(method)) return prev(method, payload, signal);
    const delivers = method.startsWith("send");
    let repeatedAfterLoss = false;
    const backoff = new Backoff({ firstMs: policy.baseDelayMs, maxMs: policy.maxDelayMs });
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= policy.maxAttempts;
      let waitMs: number;
      try {
        const result = await prev(method, payload, signal);
        if (result.ok || last) return result;
        const retryAfter = result.parameters?.retry_after;
        if (typeof retryAfter === "number") {
          if (retryAfter > policy.maxRetryAfterSeconds) return result;
          waitMs = retryAfter * 1000;
        } else if (result.error_code >= 500) {
          waitMs = backoff.next();
        } else {
          return result;
        }
        logger.warn(
          { method, attempt, errorCode: result.error_code, waitMs },
          "telegram call failed, retrying",
        );
      } catch (error) {
        if (!(error instanceof HttpError) || last || signal?.aborted) throw error;
        if (delivers && mayHaveReachedTelegram(error)) {
          if (repeatedAfterLoss) throw error;
          repeatedAfterLoss = true;
        }
        waitMs = backoff.next();
        logger.warn(
          { method, attempt, waitMs, err: describeTransportFailure(error) },
          "telegram unreachable, retrying",
        );
      }
      await waitToRetry(timers, waitMs, signal);
    }
  };
}
