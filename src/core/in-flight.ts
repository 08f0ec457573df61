import type { Timer, Timers } from "./clock.ts";

/**
 * Work started and not awaited (a reply the channel asked for, a reflection, a retried reply),
 * kept track of so that shutdown and idle() can wait for it. Its failure goes to `onError`
 * instead of surfacing as an unhandled rejection, which would take the process down.
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();
  readonly #onError: (error: unknown) => void;

  /** `onError` hears each failure (logs it, tells the person); by default a failure is dropped. */
  constructor(onError: (error: unknown) => void = () => undefined) {
    this.#onError = onError;
  }

  /** Starts tracking `work`; the caller does not wait for it. */
  track(work: Promise<unknown>): void {
    const tracked = work.then(
      () => undefined,
      (error: unknown) => this.#onError(error),
    );
    this.#running.add(tracked);
    void tracked.finally(() => this.#running.delete(tracked));
  }

  /** Whether anything tracked is still running. */
  get busy(): boolean {
    return this.#running.size > 0;
  }

  /** Resolves once nothing tracked runs, work tracked while it waits included. */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Like settled(), but gives up after `ms` on `timers`; says whether everything settled in time. */
  settledWithin(ms: number, timers: Timers): Promise<boolean> {
    return settledWithin(this.settled(), ms, timers);
  }
}

/**
 * Waits for `work` to settle, but no longer than `ms` on `timers` (a shutdown's bound, so one
 * stuck request cannot hold it forever); says whether it settled in time.
 */
export async function settledWithin(work: Promise<unknown>, ms: number, timers: Timers): Promise<boolean> {
  let timer: Timer | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = timers.after(ms, () => resolve(false));
  });
  const done = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([done, expired]);
  } finally {
    timer?.cancel();
  }
}
