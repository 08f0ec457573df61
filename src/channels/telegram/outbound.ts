import { type Api, GrammyError, InputFile } from "grammy";
import type { MessageEntity } from "grammy/types";
import type { Timer, Timers } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import {
  type Delivery,
  type OutboundPort,
  type OutgoingMessage,
  RecipientBlockedError,
  type SendProgress,
} from "../../core/port.ts";
import { SerialQueue } from "../../core/serial-queue.ts";
import { type FormattedText, formatMarkdown } from "./format.ts";
import { splitFormatted } from "./split.ts";

/** Telegram shows "typing…" for about 5 s; refreshing a little sooner keeps it steady. */
export const TYPING_REFRESH_MS = 4_000;

export interface TelegramOutboundOptions {
  /** A grammY Api with the retry transformer installed (see retry.ts). */
  api: Api;
  /** The owner's private chat: the only chat this companion speaks in. */
  chatId: number;
  /** What the typing indicator's refresh waits on. */
  timers: Timers;
  logger: Logger;
  typingRefreshMs?: number;
}

/**
 * The outbound port over Telegram. A reply becomes one or more messages (formatted, split at
 * natural boundaries) sent strictly in order; sends from different turns never interleave.
 * A blocked bot surfaces as RecipientBlockedError so check-ins stop instead of retrying. The
 * split is deterministic, so a retry that names the parts already delivered sends only the rest.
 */
export class TelegramOutbound implements OutboundPort {
  readonly #api: Api;
  readonly #chatId: number;
  readonly #timers: Timers;
  readonly #logger: Logger;
  readonly #typingRefreshMs: number;
  /** Sends from different turns never interleave: each waits for the one before. */
  readonly #sends = new SerialQueue();

  constructor(options: TelegramOutboundOptions) {
    this.#api = options.api;
    this.#chatId = options.chatId;
    this.#timers = options.timers;
    this.#logger = options.logger;
    this.#typingRefreshMs = options.typingRefreshMs ?? TYPING_REFRESH_MS;
  }

  /**
   * Sends every part of the message not delivered yet (see `partsDelivered`), reporting each to
   * `progress`; resolves with the first part this attempt sent (nothing, when all were through).
   * Model text is markdown and gets formatted; a notice is fixed text and goes out exactly as written.
   */
  send(message: OutgoingMessage, progress?: SendProgress): Promise<Delivery> {
    const formatted =
      message.kind === "notice" ? { text: message.text, entities: [] } : formatMarkdown(message.text);
    const parts = splitFormatted(formatted);
    if (parts.length === 0) return Promise.reject(new Error("refusing to send an empty message"));
    return this.#sends.run(async () => {
      let first: Delivery = {};
      for (const [index, part] of parts.entries()) {
        if (index < (message.partsDelivered ?? 0)) continue;
        const delivery = { telegram: { chatId: this.#chatId, messageId: await this.#sendPart(part) } };
        if (!first.telegram) first = delivery;
        await progress?.(index + 1, delivery);
      }
      return first;
    });
  }

  /** Sends a file (the /export), in turn with the messages. */
  sendDocument(fileName: string, contents: Uint8Array, caption?: string): Promise<Delivery> {
    return this.#sends.run(async () => {
      const sent = await this.#call(() =>
        this.#api.sendDocument(this.#chatId, new InputFile(contents, fileName), caption ? { caption } : {}),
      );
      return { telegram: { chatId: this.#chatId, messageId: sent.message_id } };
    });
  }

  /**
   * Shows "typing…" now and keeps it showing until the returned function is called. Failures
   * are only logged: a missing indicator must never cost the reply.
   */
  showWorking(): () => void {
    let timer: Timer | undefined;
    let stopped = false;
    const tick = () => {
      if (stopped) return;
      this.#api.sendChatAction(this.#chatId, "typing").catch((err: unknown) => {
        this.#logger.debug({ err }, "typing indicator not shown");
      });
      timer = this.#timers.after(this.#typingRefreshMs, tick, { keepAlive: false });
    };
    tick();
    return () => {
      stopped = true;
      timer?.cancel();
    };
  }

  async #sendPart(part: FormattedText): Promise<number> {
    try {
      const sent = await this.#call(() =>
        this.#api.sendMessage(
          this.#chatId,
          part.text,
          part.entities.length > 0 ? { entities: part.entities as MessageEntity[] } : {},
        ),
      );
      return sent.message_id;
    } catch (error) {
      if (!isFormattingRefused(error) || part.entities.length === 0) throw error;
      this.#logger.warn(
        { err: (error as GrammyError).description },
        "telegram refused the formatting; sending plain text",
      );
      const sent = await this.#call(() => this.#api.sendMessage(this.#chatId, part.text));
      return sent.message_id;
    }
  }

  async #call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof GrammyError && error.error_code === 403) {
        throw new RecipientBlockedError(`Telegram refused to deliver: ${error.description}`);
      }
      throw error;
    }
  }
}

function isFormattingRefused(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    error.error_code === 400 &&
    /can't parse entities|entity/i.test(error.description)
  );
}
