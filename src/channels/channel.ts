import type { Message } from "../core/message.ts";
import type { IncomingInput } from "../core/port.ts";

/**
 * The part of the companion a channel drives: it hands over what the person said, then asks
 * for an answer. Kept this small so Telegram and the terminal depend on nothing else.
 */
export interface ChannelCompanion {
  /** Logs the person's message durably (before any model call). */
  receive(input: IncomingInput): Promise<Message>;
  /** Answers everything unanswered; calls made while a turn runs join the next turn. */
  reply(): Promise<unknown>;
}
