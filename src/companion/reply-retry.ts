import { isNotice } from "../conversation/pending-messages.ts";
import { Backoff } from "../core/backoff.ts";
import type { Clock } from "../core/clock.ts";
import type { Message } from "../core/message.ts";
import type { MessageLog } from "../store/messages.ts";
import type { Outbox } from "./outbox.ts";

/** Background retries of a reply: the third lands just past a minute, when the notice is due; then every 5 min. */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 15_000, 41_000, 120_000, 300_000] as const;
/** "If it takes longer than a minute": the wait after which the one notice goes out. */
export const DEFAULT_NOTICE_AFTER_MS = 60_000;
/** The one notice a person may see while the model is away: fixed words, never generated. */
export const DEFAULT_NOTICE_TEXT =
  "I'm having trouble thinking right now — I have your message and will answer as soon as I can.";

/** The notice for a reply the API refused (a bad request, a rejected key): fixed words, said once per wait. */
export const FAILURE_NOTICE_TEXT =
  "Something went wrong on my side and I couldn't answer that — I've noted it.";

/** How patient the companion is while the model is away; tests shorten it, production uses the defaults. */
export interface ReplyRetryOptions {
  /** Waits between background attempts at a reply while the model is unavailable (the last repeats). */
  retryDelaysMs?: readonly number[];
  /** After the person waited this long (clock time), a failed attempt sends the one fixed notice. */
  noticeAfterMs?: number;
  noticeText?: string;
}

/** What the retry needs: the log to see what waits and the outbox to say the notice. */
export interface ReplyRetryDeps {
  clock: Clock;
  log: MessageLog;
  outbox: Outbox;
}

/**
 * A reply the model could not write yet is not dropped: it is attempted again in the
 * background with growing waits, and if the person has waited long enough they get one
 * honest, fixed notice (never generated, never repeated within the same wait).
 *
 * This is the schedule only: a turn tells it that an attempt is due again (schedule) or that
 * none is (cancel), and the companion, once the turn is over, asks it what changed
 * (takeChange) and keeps the timer and runs the attempt itself. Nothing here calls back.
 */
export class ReplyRetry {
  readonly #deps: ReplyRetryDeps;
  /** The waits before each background attempt, started over once nothing waits. */
  readonly #backoff: Backoff;
  readonly #noticeAfterMs: number;
  readonly #noticeText: string;
  /** What the last schedule or cancel asked for and the companion has not taken yet: a delay, or null for none. */
  #change: number | null | undefined;
  #stopped = false;

  constructor(deps: ReplyRetryDeps, options: ReplyRetryOptions) {
    this.#deps = deps;
    this.#backoff = new Backoff({
      delaysMs: options.retryDelaysMs?.length ? options.retryDelaysMs : DEFAULT_RETRY_DELAYS_MS,
    });
    this.#noticeAfterMs = options.noticeAfterMs ?? DEFAULT_NOTICE_AFTER_MS;
    this.#noticeText = options.noticeText ?? DEFAULT_NOTICE_TEXT;
  }

  /** Asks for the next background attempt at the unanswered messages, after a growing wait; returns the wait. */
  schedule(): number {
    if (this.#stopped) return 0;
    const delay = this.#backoff.next();
    this.#change = delay;
    return delay;
  }

  /** No attempt is due and the backoff starts over: the messages were answered (or none wait). */
  cancel(): void {
    this.#change = null;
    this.#backoff.reset();
  }

  /** Cancels for good: a closing companion takes no more turns. */
  stop(): void {
    this.#stopped = true;
    this.cancel();
  }

  /**
   * What changed since it was last asked, and forgets it: the wait before the next attempt,
   * null when no attempt is due any more, undefined when nothing changed.
   */
  takeChange(): number | null | undefined {
    const change = this.#change;
    this.#change = undefined;
    return change;
  }

  /** Sends the fixed notice once per wait, when the oldest unanswered message has waited long enough. */
  async noticeIfOverdue(pending: readonly Message[]): Promise<boolean> {
    const oldest = pending[0];
    if (!oldest) return false;
    const waited = this.#deps.clock.now().getTime() - Date.parse(oldest.ts);
    if (waited < this.#noticeAfterMs) return false;
    return this.noticeOnce(pending, this.#noticeText);
  }

  /** Sends `text` as a notice unless one was already said since the oldest unanswered message. */
  async noticeOnce(pending: readonly Message[], text: string): Promise<boolean> {
    const oldest = pending[0];
    if (!oldest) return false;
    const recent = this.#deps.log.recent();
    const from = recent.findIndex((m) => m.id === oldest.id);
    if (recent.slice(from + 1).some(isNotice)) return false;
    const delivered = await this.#deps.outbox.deliver(
      { text, kind: "notice", replyTo: oldest.id },
      { trigger: "reply", channel: oldest.channel },
    );
    return delivered.status === "sent";
  }
}
