import type { Logger } from "../log.ts";

/**
 * Work the companion starts off the turn path (reflection, a retried reply). It is tracked
 * so that idle() and close() can wait for it, and its failures are logged instead of
 * surfacing as unhandled rejections that would take the process down.
 */
export class BackgroundWork {
  readonly #logger: Logger;
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Starts tracking `work`; the caller does not wait for it. */
  track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      this.#logger.error({ err: error }, "background work failed");
    });
    this.#inFlight.add(tracked);
    void tracked.finally(() => this.#inFlight.delete(tracked));
  }

  /** Whether anything is still running, so idle() knows whether to wait again. */
  get busy(): boolean {
    return this.#inFlight.size > 0;
  }

  /** Resolves when the work running now has settled; work it starts meanwhile may still run. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }
}
