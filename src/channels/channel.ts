import type { Companion } from "../companion/companion.ts";

/**
 * The part of the companion a channel drives: it hands over what the person said, and the
 * companion's settled replies answer it (each channel with its own settle times; replies asked
 * for while a turn runs join the next turn). Kept this small so Telegram and the terminal depend
 * on nothing else; a channel never writes the log itself, and everything the person receives
 * goes through the companion.
 */
export type ChannelCompanion = Pick<
  Companion,
  "receive" | "answerFixed" | "receiveEdit" | "settleReplies" | "hearsVoiceNotes"
>;
