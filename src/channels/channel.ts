import type { FixedAnswer } from "../companion/companion.ts";
import type { Message } from "../core/message.ts";
import type { IncomingInput } from "../core/port.ts";

/**
 * The part of the companion a channel drives: it hands over what the person said, then asks
 * for an answer. Kept this small so Telegram and the terminal depend on nothing else; a channel
 * never writes the log itself, and everything the person receives goes through the companion.
 */
export interface ChannelCompanion {
  /** Logs the person's message durably (before any model call). */
  receive(input: IncomingInput): Promise<Message>;
  /** Says fixed words for a message the companion cannot take in (Companion.answerFixed). */
  answerFixed(message: Message, text: string): Promise<FixedAnswer>;
  /** Records the person's edit of a logged message (Companion.receiveEdit). */
  receiveEdit(
    telegram: { chatId: number; messageId: number },
    edit: { text: string; editedAt: string },
  ): Promise<Message | null>;
  /** Answers everything unanswered; calls made while a turn runs join the next turn. */
  reply(): Promise<unknown>;
}
