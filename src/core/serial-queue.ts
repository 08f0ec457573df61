/**
 * Runs jobs one at a time, first in, first out: the one mechanism wherever two pieces of work
 * must not interleave (a reply and a check-in, two writes of one file, two sends to one chat,
 * two reflections). A job that fails rejects only its own promise; the next runs as if it
 * had succeeded. A job never starts inside run(), even on an idle queue: it starts a microtask
 * later, so the caller finishes its own bookkeeping first (runCoalesced relies on that).
 *
 * Written here rather than taken from p-queue or async-mutex: p-queue starts a job inside
 * add() when idle, which would break coalescing, and neither joins a waiting job by key.
 */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();
  /** Jobs added and not yet finished, the running one included. */
  #pending = 0;
  readonly #waitingByKey = new Map<string, Promise<unknown>>();

  /** Runs `job` after every job added before it, whether they succeeded or not. */
  run<T>(job: () => Promise<T>): Promise<T> {
    this.#pending += 1;
    const start = async (): Promise<T> => {
      try {
        return await job();
      } finally {
        this.#pending -= 1;
      }
    };
    const result = this.#tail.then(start, start);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Like run(), but while a job with the same key waits and has not started, further calls join
   * it instead of adding another: the waiting job starts later than they were made, so it sees
   * everything they wanted handled.
   */
  runCoalesced<T>(key: string, job: () => Promise<T>): Promise<T> {
    const waiting = this.#waitingByKey.get(key);
    if (waiting) return waiting as Promise<T>;
    const result = this.run(() => {
      this.#waitingByKey.delete(key);
      return job();
    });
    this.#waitingByKey.set(key, result);
    result.catch(() => undefined);
    return result;
  }

  /** True while a job runs or waits. */
  get busy(): boolean {
    return this.#pending > 0;
  }

  /** Resolves once no job runs or waits, jobs added meanwhile included (successful or not). */
  async idle(): Promise<void> {
    while (this.busy) await this.#tail;
  }
}
