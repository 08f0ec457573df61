import { type Api, GrammyError, InputFile } from "grammy";
import type { MessageEntity, ReactionTypeEmoji } from "grammy/types";
import type { Timer, Timers } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import {
  type Delivery,
  type OutboundPort,
  type OutgoingMessage,
  type OutgoingReaction,
  RecipientBlockedError,
  type SendProgress,
} from "../../core/port.ts";
import { SerialQueue } from "../../core/serial-queue.ts";
import { type FormattedText, formatMarkdown } from "./format.ts";
import { splitFormatted } from "./split.ts";

/** Telegram shows "typing…" for about 5 s; refreshing a little sooner keeps it steady. */
const TYPING_REFRESH_MS = 4_000;

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
 * An anchored reply quotes the person's message with its first part only (`reply_parameters`,
 * still sent if that message was deleted); a reaction is a message reaction on theirs.
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
   * The anchor (`message.anchor`) goes with the first part of the whole text, never with the rest.
   */
  send(message: OutgoingMessage, progress?: SendProgress): Promise<Delivery> {
    const formatted =
      message.kind === "notice" ? { text: message.text, entities: [] } : formatMarkdown(message.text);
    const parts = splitFormatted(formatted);
    if (parts.length === 0) return Promise.reject(new Error("refusing to send an empty message"));
    return this.#sends.run(async () => {
      let first: Delivery = {};
      const anchor = message.anchor?.external?.messageId;
      for (const [index, part] of parts.entries()) {
        if (index < (message.partsDelivered ?? 0)) continue;
        const replyTo = index === 0 ? anchor : undefined;
        const delivery = {
          external: { chatId: this.#chatId, messageId: await this.#sendPart(part, replyTo) },
        };
        if (!first.external) first = delivery;
        await progress?.(index + 1, delivery);
      }
      return first;
    });
  }

  /**
   * Puts the emoji on the person's message (`setMessageReaction`), in turn with the messages. A
   * message without Telegram ids (written in the terminal, answered here) cannot carry one: the
   * emoji goes out as a message instead. A reaction Telegram refuses with 400 (the message was
   * deleted, the emoji is not allowed there) is given up with a warning and reported as `refused`:
   * trying again cannot change it, and the outbox must not log as given what the person never saw.
   */
  react(reaction: OutgoingReaction): Promise<Delivery> {
    const target = reaction.to.external;
    if (!target) return this.send({ text: reaction.emoji, kind: "notice" });
    return this.#sends.run(async () => {
      try {
        await this.#call(() =>
          this.#api.setMessageReaction(target.chatId, target.messageId, [
            { type: "emoji", emoji: reaction.emoji as ReactionTypeEmoji["emoji"] },
          ]),
        );
      } catch (error) {
        if (!(error instanceof GrammyError && error.error_code === 400)) throw error;
        this.#logger.warn({ err: error.description }, "telegram refused the reaction; not retried");
        return { refused: error.description };
      }
      return {};
    });
  }

  /** Sends a file (the /export), in turn with the messages. */
  sendDocument(fileName: string, contents: Uint8Array, caption?: string): Promise<Delivery> {
    return this.#sends.run(async () => {
      const sent = await this.#call(() =>
        this.#api.sendDocument(this.#chatId, new InputFile(contents, fileName), caption ? { caption } : {}),
      );
      return { external: { chatId: this.#chatId, messageId: sent.message_id } };
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

  async #sendPart(part: FormattedText, replyTo: number | undefined): Promise<number> {
    const anchor =
      replyTo === undefined
        ? {}
        : { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } };
    try {
      const sent = await this.#call(() =>
        this.#api.sendMessage(this.#chatId, part.text, {
          ...(part.entities.length > 0 ? { entities: part.entities as MessageEntity[] } : {}),
          ...anchor,
        }),
      );
      return sent.message_id;
    } catch (error) {
      if (!isFormattingRefused(error) || part.entities.length === 0) throw error;
      this.#logger.warn(
        { err: (error as GrammyError).description },
        "telegram refused the formatting; sending plain text",
      );
      const sent = await this.#call(() => this.#api.sendMessage(this.#chatId, part.text, anchor));
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
