import { Api, GrammyError, HttpError } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { Backoff, type BackoffSchedule, waitToRetry } from "../../core/backoff.ts";
import { systemTimers } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";

/**
 * The first call to Telegram (getMe), as `start` and `setup` make it: bounded in all and per
 * attempt, and stoppable. grammY's own `bot.init()` retries network errors without end, so a
 * wrong TELEGRAM_API_ROOT or a dead network would leave the process waiting forever, deaf to
 * the one line that would tell the person what to fix.
 */

/** Telegram's own Bot API root, used when TELEGRAM_API_ROOT is not set. */
export const TELEGRAM_API_ROOT = "https://api.telegram.org";

/** Telegram refused the token at getMe: the person must fix TELEGRAM_BOT_TOKEN. */
export class TelegramTokenRejectedError extends Error {
  override readonly name = "TelegramTokenRejectedError";
}

/** Telegram did not answer getMe within the bound: the network or TELEGRAM_API_ROOT is at fault, and a restart may fix it. */
export class TelegramUnreachableError extends Error {
  override readonly name = "TelegramUnreachableError";
  constructor(
    /** The Bot API root that was tried. */
    readonly apiRoot: string,
    /** The last attempt's failure, in words that carry no token. */
    readonly reason: string,
    readonly attempts: number,
    /** How long it kept trying, in milliseconds (at most TELEGRAM_CONNECT_TIMEOUT_MS). */
    readonly waitedMs: number,
  ) {
    super(
      `could not reach Telegram at ${apiRoot} (${reason}; tried ${attempts === 1 ? "once" : `${attempts} times`} in ${formatSeconds(waitedMs)}). Check the network and TELEGRAM_API_ROOT${apiRoot === TELEGRAM_API_ROOT ? " (unset: Telegram's own)" : ""}.`,
    );
  }
}

/** The default bound on reaching Telegram at start: long enough for a slow network, short enough for pm2's back-off to take over. */
export const DEFAULT_TELEGRAM_CONNECT_TIMEOUT_MS = 30_000;

export interface FirstContactOptions {
  /** A Bot API root other than Telegram's; undefined for Telegram's own. */
  apiRoot: string | undefined;
  /** All attempts together may take this long (TELEGRAM_CONNECT_TIMEOUT_MS). */
  timeoutMs: number;
  /** Stops trying at once (a signal while starting); the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  logger?: Logger;
}

/** One attempt may take this long, so that a request that hangs still leaves time for another. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** The waits between attempts: 500 ms after the first failure, doubling up to 5 s. */
const BACKOFF: BackoffSchedule = { firstMs: 500, maxMs: 5_000 };

/**
 * Asks Telegram who the bot is. A rejected token (401, or 404 for a malformed one) fails at
 * once with TelegramTokenRejectedError; network failures, timeouts, 5xx and 429 are tried
 * again with a growing wait until `timeoutMs` has passed, then TelegramUnreachableError.
 */
export async function firstContact(token: string, options: FirstContactOptions): Promise<UserFromGetMe> {
  const apiRoot = options.apiRoot ?? TELEGRAM_API_ROOT;
  // A bare client: the channel's retry transformer would retry inside one attempt.
  const api = new Api(token, { apiRoot });
  const started = performance.now();
  const deadline = started + options.timeoutMs;
  const backoff = new Backoff(BACKOFF);
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    const attemptMs = Math.max(1, Math.ceil(Math.min(ATTEMPT_TIMEOUT_MS, deadline - performance.now())));
    const timeout = AbortSignal.timeout(attemptMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let reason: string;
    let retryAfterMs: number | undefined;
    try {
      // grammY types its signal as a polyfill's; it only adds an abort listener, which Node's has.
      return await api.getMe(signal as Parameters<Api["getMe"]>[0]);
    } catch (error) {
      options.signal?.throwIfAborted();
      if (error instanceof GrammyError) {
        if (error.error_code === 401 || error.error_code === 404) {
          throw new TelegramTokenRejectedError(
            `Telegram rejected TELEGRAM_BOT_TOKEN (${error.description}). Copy the token again from @BotFather (/mybots → your bot → API Token) and put it in .env.`,
          );
        }
        if (error.error_code !== 429 && error.error_code < 500) throw error;
        reason = `${error.error_code} ${error.description}`;
        const retryAfter = error.parameters.retry_after;
        if (typeof retryAfter === "number") retryAfterMs = retryAfter * 1000;
      } else if (error instanceof HttpError) {
        reason = timeout.aborted ? `no answer within ${formatSeconds(attemptMs)}` : networkReason(error);
      } else {
        throw error;
      }
    }
    // Counted even when a 429's retry_after replaces it: the wait after the next failure doubles all the same.
    const backoffMs = backoff.next();
    const waitMs = retryAfterMs ?? backoffMs;
    const left = deadline - performance.now();
    if (waitMs >= left)
      throw new TelegramUnreachableError(apiRoot, reason, attempt, performance.now() - started);
    options.logger?.warn({ attempt, waitMs, problem: reason }, "telegram unreachable at start, retrying");
    // The machine's timers, as the bound is the machine's time (performance.now, AbortSignal.timeout).
    await waitToRetry(systemTimers, waitMs, options.signal).catch((error: unknown) => {
      options.signal?.throwIfAborted();
      throw error;
    });
  }
}

/**
 * What went wrong on the wire, by its system error code where there is one. The underlying
 * error's message quotes the request URL, which holds the token, so it is never repeated.
 */
function networkReason(error: HttpError): string {
  const cause = error.error as { code?: unknown; type?: unknown; cause?: { code?: unknown } } | undefined;
  const code = typeof cause?.code === "string" ? cause.code : cause?.cause?.code;
  if (typeof code === "string") return `network error ${code}`;
  // node-fetch's FetchError: a server answered, but not as a Bot API does.
  if (cause?.type === "invalid-json") return "the answer was not JSON, so not from a Bot API";
  return "the request failed";
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
