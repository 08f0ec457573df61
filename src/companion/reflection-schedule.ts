import type { Clock, Timer, Timers } from "../core/clock.ts";
import { InFlight } from "../core/in-flight.ts";
import type { Logger } from "../core/log.ts";
import type { Message } from "../core/message.ts";
import type { ExchangeInput, Reflector } from "../mind/reflection-queue.ts";
import type { ModelConfig } from "../model/settings.ts";
import type { MindState } from "./mind-document.ts";
import type { AfterSent } from "./outbox.ts";

/** What decides when reflection runs: the mode setting, the queue's own retry time, and the companion's lifetime. */
export interface ReflectionScheduleDeps {
  reflector: Reflector;
  model: ModelConfig;
  clock: Clock;
  /** What the wait before a retry is spent on. */
  timers: Timers;
  logger: Logger;
  /** The companion's background work, which idle() and close() wait for. */
  background: InFlight;
  /** Run queued reflections right away in the background (tests turn this off to run them by hand). */
  inBackground: boolean;
}

/**
 * Keeps reflection off the reply path: every exchange is handed over as it ends, and the
 * queue is drained in the background, again when it asks to retry later, and never after
 * the companion closed.
 */
export class ReflectionSchedule {
  readonly #deps: ReflectionScheduleDeps;
  readonly #timers = new Set<Timer>();
  /** Reflection alone (a turn may wait for it in settle(), so never a reply, which waits for the turn). */
  readonly #running = new InFlight();
  #stopped = false;

  constructor(deps: ReflectionScheduleDeps) {
    this.#deps = deps;
  }

  /**
   * Hands the exchange to reflection inside the caller's mind write (the one that records
   * its message as sent): an update that came with the reply (single-phase) is applied
   * after the write, as it is; anything else — two-phase, a check-in, a single-phase reply
   * that carried no update — is queued in the write itself, so no exchange goes unreflected,
   * not even across a crash. Returns whether it queued, for {@link started}.
   */
  queueIn(mind: MindState, exchange: ExchangeInput, inline: unknown): boolean {
    const mode = this.#deps.model.reflectMode;
    if (mode === "off" || (mode === "single-phase" && inline !== undefined)) return false;
    return this.#deps.reflector.enqueueIn(mind, exchange) !== null;
  }

  /**
   * The outbox follow-up that hands the exchange a sent message closes to reflection: queued
   * in the outbox's completion write (queueIn), started once it is durable (started).
   */
  afterSent(exchange: (message: Message) => ExchangeInput, inline?: unknown): AfterSent {
    return (message) => {
      const closed = exchange(message);
      let queued = false;
      return {
        inWrite: (mind) => {
          queued = this.queueIn(mind, closed, inline);
        },
        afterWrite: () => this.started(closed, inline, queued),
      };
    };
  }

  /** After the write: applies the inline update or drains the queue off the path. Returns what happened, for the trace. */
  started(exchange: ExchangeInput, inline: unknown, queued: boolean): string {
    const mode = this.#deps.model.reflectMode;
    if (mode === "off") return "off";
    if (!queued && mode === "single-phase" && inline !== undefined) {
      this.#track(this.#deps.reflector.applyInline(exchange, inline));
      return "single-phase: applying";
    }
    if (this.#deps.inBackground) this.#track(this.runPending());
    return "queued";
  }

  /** Runs the queued reflections now (after a restart, or in the background); a failure is logged, not thrown. */
  async runPending(): Promise<void> {
    try {
      const summary = await this.#deps.reflector.runPending();
      if (summary.retryAt !== null && !this.#stopped) {
        const delay = Math.min(
          Math.max(Date.parse(summary.retryAt) - this.#deps.clock.now().getTime(), 1_000),
          3_600_000,
        );
        const timer = this.#deps.timers.after(
          delay,
          () => {
            this.#timers.delete(timer);
            this.#track(this.runPending());
          },
          { keepAlive: false },
        );
        this.#timers.add(timer);
      }
    } catch (error) {
      this.#deps.logger.error({ err: error }, "reflection run failed");
    }
  }

  /** Cancels the waiting retries for good: a closing companion starts no more work. */
  stop(): void {
    this.#stopped = true;
    this.#cancelTimers();
  }

  /**
   * Cancels the waiting retries and resolves once no reflection runs, so a /wipe or /forget
   * that follows cannot be undone by a reflection that finishes after it. Reflection never
   * takes the turn lock, so a turn holding it may wait here.
   */
  async settle(): Promise<void> {
    this.#cancelTimers();
    await this.#running.settled();
  }

  /** After settle(): drains the queue again (a waiting job sets its timer anew), unless closed. */
  resume(): void {
    if (!this.#stopped && this.#deps.inBackground) this.#track(this.runPending());
  }

  #cancelTimers(): void {
    for (const timer of this.#timers) timer.cancel();
    this.#timers.clear();
  }

  /** Runs `work` in the background, where both idle() and settle() can see it. */
  #track(work: Promise<unknown>): void {
    this.#deps.background.track(work);
    this.#running.track(work);
  }
}
