import type { Timer, Timers } from "./clock.ts";

/**
 * How long to wait before trying again after failures in a row, and the wait itself, on the
 * injected Timers. Every retry in presence reads its waits here: a Telegram call, the first
 * getMe, a reply the model could not write yet, a reflection. Written here rather than taken
 * from p-retry or the like: those wait on the global setTimeout (a simulation's virtual time
 * would not move them), and p-retry 9 needs Node 22.
 */

/**
 * The waits after one failure, two, three…: a table the retry reads from (the last wait
 * repeats), or a wait that doubles from `firstMs` up to `maxMs`.
 */
export type BackoffSchedule =
  | { readonly delaysMs: readonly number[] }
  | { readonly firstMs: number; readonly maxMs: number };

/**
 * The wait after `failures` failures in a row (1 for the first). Pure, for a retry whose
 * count of failures is kept elsewhere (reflection keeps it in mind.json, across restarts).
 */
export function backoffDelay(schedule: BackoffSchedule, failures: number): number {
  if ("delaysMs" in schedule) {
    const delay = schedule.delaysMs[Math.min(failures, schedule.delaysMs.length) - 1];
    if (delay === undefined)
      throw new RangeError(`no back-off after ${failures} failures: the table is empty`);
    return delay;
  }
  // The first wait as given, even above maxMs; only the doubled ones are capped.
  return failures <= 1 ? schedule.firstMs : Math.min(schedule.firstMs * 2 ** (failures - 1), schedule.maxMs);
}

/** A schedule with its own count of failures, for a retry that runs in one place. */
export class Backoff {
  readonly #schedule: BackoffSchedule;
  #failures = 0;

  constructor(schedule: BackoffSchedule) {
    this.#schedule = schedule;
  }

  /** Counts one more failure and returns the wait before the next attempt. */
  next(): number {
    this.#failures += 1;
    return backoffDelay(this.#schedule, this.#failures);
  }

  /** Starts over from the first wait: what was retried succeeded, or nothing waits any more. */
  reset(): void {
    this.#failures = 0;
  }
}

/** What can call a wait off: Node's AbortSignal, or grammY's polyfill type of one. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * Waits `ms` on `timers` before the next attempt, or rejects as soon as `signal` aborts (at
 * once when it already has), so a retry never outlives the request or start-up it belongs to.
 */
export function waitToRetry(timers: Timers, ms: number, signal?: AbortSignalLike): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new Error("aborted while waiting to retry"));
      return;
    }
    let timer: Timer | undefined;
    const onAbort = () => {
      timer?.cancel();
      reject(new Error("aborted while waiting to retry"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    // Listening first: a timer that fires at once (a test's) then finds the listener to remove.
    timer = timers.after(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
