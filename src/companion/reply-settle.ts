import type { Timer, Timers } from "../core/clock.ts";

/**
 * How long a channel lets the person's messages settle before the reply starts. People often
 * send a thought as several short messages a moment apart: answering the first at once would
 * give the burst two replies, the first blind to the rest. Each channel says its own, by how
 * people write there.
 */
export interface SettleTimes {
  /** The wait after the person's latest message for another; 0 answers each message at once. */
  pauseMs: number;
  /**
   * The longest a burst's reply waits from its first message: the settle waits for a pause, and
   * someone who keeps writing never pauses. What comes while the reply is written is answered in
   * the next turn.
   */
  maxMs: number;
}

interface ReplySettleOptions {
  times: SettleTimes;
  /** What the pause and its bound wait on. */
  timers: Timers;
  /** Answers everything unanswered (Companion.reply). */
  reply(): Promise<unknown>;
  /** Shows the companion working ("typing…") while a burst settles, when the channel can; returns a stop function. */
  showWorking?(): () => void;
  /** Hears each reply it starts, for the channel to wait for when it stops and to report a failure its own way. */
  started(reply: Promise<unknown>): void;
}

/**
 * The reply to a burst of the person's messages, started once they pause (Companion.settleReplies):
 * each message restarts the pause, the bound runs from the burst's first message, whichever ends
 * first starts the reply. Messages that arrive during the reply itself join the companion's next turn.
 */
export class ReplySettle {
  readonly #options: ReplySettleOptions;
  /** The burst waiting for its reply: `pause` restarts with each message, `bound` runs from the first. */
  #settling: { pause: Timer; bound: Timer; stopWorking: () => void } | undefined;

  constructor(options: ReplySettleOptions) {
    this.#options = options;
  }

  /** The person's message is logged: the reply waits for the burst to settle, or starts now when the pause is 0. */
  arrived(): void {
    const { times, timers } = this.#options;
    if (times.pauseMs === 0) {
      this.#options.started(this.#options.reply());
      return;
    }
    const pause = timers.after(times.pauseMs, () => this.flush());
    if (this.#settling) {
      this.#settling.pause.cancel();
      this.#settling.pause = pause;
      return;
    }
    const bound = timers.after(times.maxMs, () => this.flush());
    this.#settling = { pause, bound, stopWorking: this.#options.showWorking?.() ?? (() => {}) };
  }

  /** Starts the reply a settling burst waits for, if one does (when its time comes, or the channel stops). */
  flush(): void {
    const settling = this.#settling;
    if (!settling) return;
    this.#settling = undefined;
    settling.pause.cancel();
    settling.bound.cancel();
    settling.stopWorking();
    this.#options.started(this.#options.reply());
  }
}
