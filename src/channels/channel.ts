import type { Companion } from "../companion/companion.ts";

/**
 * The part of the companion a channel drives: it hands over what the person said, then asks
 * for an answer. Kept this small so Telegram and the terminal depend on nothing else; a channel
 * never writes the log itself, and everything the person receives goes through the companion.
 */
export type ChannelCompanion = Pick<Companion, "receive" | "answerFixed" | "receiveEdit"> & {
  /** Answers everything unanswered; calls made while a turn runs join the next turn. The outcome is the companion's business. */
  reply(): Promise<unknown>;
};
