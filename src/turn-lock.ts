/**
 * One turn at a time. A reply and a heartbeat must never interleave — both read the log,
 * call the model and write back — so every turn runs through this first-in, first-out
 * lock. Coalescing: a turn of a kind that is already waiting to run is not queued twice;
 * the caller shares the waiting turn's result, which (because it starts later) sees
 * everything the extra caller wanted handled.
 */
export class TurnLock {
  #tail: Promise<unknown> = Promise.resolve();
  #running = 0;
  #waiting = 0;
  readonly #waitingByKey = new Map<string, Promise<unknown>>();

  /** Runs `task` after every turn queued before it; its failure does not block later turns. */
  run<T>(task: () => Promise<T>): Promise<T> {
    this.#waiting += 1;
    const start = async (): Promise<T> => {
      this.#waiting -= 1;
      this.#running += 1;
      try {
        return await task();
      } finally {
        this.#running -= 1;
      }
    };
    const result = this.#tail.then(start, start);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Like run(), but while a turn with the same key is queued and not yet started, further
   * calls join it instead of queuing another one.
   */
  runCoalesced<T>(key: string, task: () => Promise<T>): Promise<T> {
    const queued = this.#waitingByKey.get(key);
    if (queued) return queued as Promise<T>;
    const result = this.run(async () => {
      this.#waitingByKey.delete(key);
      return task();
    });
    this.#waitingByKey.set(key, result);
    result.catch(() => undefined);
    return result;
  }

  /** True while a turn runs or waits. */
  get busy(): boolean {
    return this.#running + this.#waiting > 0;
  }

  /** Resolves once every turn queued so far has finished (successfully or not). */
  async idle(): Promise<void> {
    while (this.busy) await this.#tail;
  }
}
