import { Bot, type Transformer } from "grammy";
import type { Timers } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import { TELEGRAM_API_ROOT } from "./first-contact.ts";
import { TelegramOutbound } from "./outbound.ts";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, retryTransformer } from "./retry.ts";
import {
  DEFAULT_TRANSPORT_TIMEOUTS,
  describeTransportFailure,
  type TransportTimeouts,
  telegramFetch,
} from "./transport.ts";

export interface TelegramConnectionOptions {
  token: string;
  ownerId: number;
  /** A Bot API root other than Telegram's (a local Bot API server, or the tests' fake). */
  apiRoot?: string | undefined;
  /** What the typing refresh and the retries' waits use. */
  timers: Timers;
  logger: Logger;
  retryPolicy?: RetryPolicy;
  /** Long-poll timeout; Telegram's recommended 30 s unless told otherwise. */
  pollTimeoutSeconds?: number;
  /** Limits on each request to Telegram (DEFAULT_TRANSPORT_TIMEOUTS unless told); tests set them lower. */
  timeouts?: Partial<Omit<TransportTimeouts, "pollSeconds">>;
}

/** Telegram's recommended long-poll length. */
const POLL_TIMEOUT_SECONDS = 30;

/**
 * The Bot API client (grammY with the bounded transport, the retry and the polling-health
 * transformers) and the outbound port over it, made before anything else Telegram: the
 * companion is built over `outbound`, and the channel that feeds the companion is built over
 * the companion and this connection, so the wiring reads top-down with nothing bound late.
 * Nothing is sent until something calls it.
 */
export class TelegramConnection {
  readonly bot: Bot;
  /** The owner's private chat: the only chat this companion speaks in. */
  readonly outbound: TelegramOutbound;
  readonly token: string;
  readonly ownerId: number;
  readonly apiRoot: string;
  readonly pollTimeoutSeconds: number;
  /** Every request to Telegram goes through it, grammY's and the photo downloads alike. */
  readonly fetch: typeof fetch;

  constructor(options: TelegramConnectionOptions) {
    this.token = options.token;
    this.ownerId = options.ownerId;
    this.apiRoot = options.apiRoot ?? TELEGRAM_API_ROOT;
    this.pollTimeoutSeconds = options.pollTimeoutSeconds ?? POLL_TIMEOUT_SECONDS;
    this.fetch = telegramFetch({
      ...DEFAULT_TRANSPORT_TIMEOUTS,
      ...options.timeouts,
      pollSeconds: this.pollTimeoutSeconds,
    });
    // grammY's own client timeout (500 s by default) stays as it is: the limits above end a request first.
    this.bot = new Bot(options.token, { client: { apiRoot: this.apiRoot, fetch: this.fetch } });
    this.bot.api.config.use(
      retryTransformer(options.retryPolicy ?? DEFAULT_RETRY_POLICY, options.logger, options.timers),
    );
    this.bot.api.config.use(pollingHealthTransformer(options.logger));
    this.outbound = new TelegramOutbound({
      api: this.bot.api,
      chatId: options.ownerId,
      timers: options.timers,
      logger: options.logger,
    });
  }
}

/**
 * Says in the process log when receiving from Telegram stops working and when it works again.
 * grammY retries a failed long poll every few seconds on its own and says nothing; without
 * this an outage would leave no trace in the log, and a line per retry would flood it.
 */
export function pollingHealthTransformer(logger: Logger): Transformer {
  let failing = false;
  const failed = (problem: string) => {
    if (failing) return;
    failing = true;
    logger.warn({ problem }, "cannot receive from Telegram; retrying every few seconds until it answers");
  };
  return async (prev, method, payload, signal) => {
    if (method !== "getUpdates") return prev(method, payload, signal);
    try {
      const result = await prev(method, payload, signal);
      if (!result.ok) failed(`${result.error_code} ${result.description}`);
      else if (failing) {
        failing = false;
        logger.info("receiving from Telegram again");
      }
      return result;
    } catch (error) {
      if (!signal?.aborted) failed(describeTransportFailure(error));
      throw error;
    }
  };
}
