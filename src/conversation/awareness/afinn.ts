import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * The AFINN-165 word list and emoji scores that ship with the `sentiment` package, read
 * once at load. The tone detector builds on them and the topic fallback uses them to tell
 * feelings from subjects, so both share one maintained list instead of a home-made one.
 */
export const AFINN_WORDS: Readonly<Record<string, number>> = require("sentiment/languages/en/labels.json");

/** Emoji scores from the Emoji Sentiment Ranking, as shipped with `sentiment`. */
export const AFINN_EMOJI: Readonly<Record<string, number>> = require("sentiment/build/emoji.json");
