import Sentiment from "sentiment";
import type { Message, Tone } from "../../core/message.ts";
import { AFINN_EMOJI, AFINN_WORDS } from "./afinn.ts";

/** A tone, or `unknown` when the person has not spoken in the exchange. */
export type ExchangeTone = Tone | "unknown";

/** Scores at or beyond these read as warm / tense; AFINN words score ±1 to ±5. */
const WARM_AT = 2;
const TENSE_AT = -2;
/** How far back a negator reaches: "not really that happy" is still negated. */
const NEGATION_REACH = 3;
/** Negated feelings are weaker than their opposite ("not bad" is not "good"). */
const NEGATION_FACTOR = -0.75;
const SHOUTING_FACTOR = 1.5;
const EXCLAMATION_FACTOR = 1.25;
/** Replies this short or shorter can read as curt. */
const CURT_MAX_WORDS = 4;

/** Chat words and emoji the AFINN list lacks, scored on its scale. */
const CHAT_SCORES: Record<string, number> = {
  thx: 2,
  ty: 2,
  tysm: 3,
  haha: 2,
  hahaha: 2,
  hehe: 2,
  yay: 3,
  woohoo: 3,
  meh: -1,
  whatever: -2,
  nagging: -2,
  nag: -2,
  pestering: -2,
  annoyed: -2,
  exhausted: -2,
  drained: -2,
  rough: -2,
  "🙂": 2,
  "😀": 2,
  "😅": 1,
  "🥰": 3,
  "🤗": 2,
  "🥹": 2,
  "🫶": 3,
  "😌": 2,
  "🤩": 3,
  "🥳": 3,
  "🙁": -2,
  "🙄": -2,
  "😤": -3,
  "😠": -3,
  "🤬": -4,
  "😑": -2,
  "😐": -1,
  "💔": -3,
  "👎": -2,
  "😮‍💨": -1,
};

const NEGATORS = new Set(
  `not no never none nothing nobody neither nor without hardly barely cant can't dont don't doesnt doesn't
  didnt didn't isnt isn't wasnt wasn't arent aren't werent weren't wont won't wouldnt wouldn't couldnt
  couldn't shouldnt shouldn't havent haven't hasnt hasn't aint ain't non`.split(/\s+/),
);
const INTENSIFIERS = new Set(
  "very so really super extremely totally absolutely incredibly truly deeply quite too such".split(" "),
);
const DIMINISHERS = new Set("bit slightly kinda somewhat little barely".split(" "));

/** Whole replies that, on their own, close a door rather than open one. */
const DISMISSIVE_REPLIES = new Set([
  "k",
  "fine",
  "whatever",
  "stop",
  "enough",
  "i know",
  "i said",
  "already did",
  "not now",
  "leave it",
  "drop it",
  "yeah yeah",
  "ok ok",
  "okay okay",
  "yes yes",
  "if you say so",
  "told you",
  "i told you",
  "busy",
  "seriously",
  "again",
  "fine whatever",
]);
/** Acknowledgements that read curt when closed with a full stop ("Ok.", "Sure."). */
const FLAT_ACKS = new Set(["ok", "okay", "sure", "yep", "yup", "noted", "mhm", "k", "kk", "alright"]);

const TENSE_PHRASES =
  /\b(?:stop (?:asking|texting|messaging|pinging|checking)|leave me alone|not now|i already (?:told|said|answered)|you already asked|enough with|back off|give me a break|get off my back|i said i'?m fine|quit (?:asking|it))\b/i;
const WARM_PHRASES =
  /\b(?:thank you|thanks so much|love (?:it|that|you|this)|made my day|you'?re the best|miss you|means a lot|appreciate (?:it|you|that))\b/i;

const EMOTICONS: readonly [RegExp, string][] = [
  [/(^|\s):-?\)+/g, "$1🙂"],
  [/(^|\s):-?D\b/g, "$1😀"],
  [/(^|\s);-?\)/g, "$1😉"],
  [/(^|\s):-?\(+/g, "$1🙁"],
  [/(^|\s)<3+/g, "$1❤"],
];

/** Stands in for punctuation, which the analyzer's tokenizer drops, so negation stops at a clause. */
const CLAUSE_BREAK = "|";
const LANGUAGE = "presence-en";
const analyzer = new Sentiment();
analyzer.registerLanguage(LANGUAGE, {
  labels: { ...AFINN_WORDS, ...AFINN_EMOJI, ...CHAT_SCORES },
  scoringStrategy: {
    apply(tokens, cursor, tokenScore) {
      let score = tokenScore;
      const previous = tokens[cursor - 1];
      if (previous !== undefined && INTENSIFIERS.has(previous)) score *= 1.5;
      if (previous !== undefined && DIMINISHERS.has(previous)) score *= 0.5;
      const before = tokens.slice(Math.max(0, cursor - NEGATION_REACH), cursor);
      const clause = before.slice(before.lastIndexOf(CLAUSE_BREAK) + 1);
      if (clause.some((t) => NEGATORS.has(t))) score *= NEGATION_FACTOR;
      return score;
    },
  },
});

/** Emoji stuck to words, variation selectors and skin tones would hide emoji from the lexicon. */
function prepare(text: string): string {
  let prepared = text.replace(/[\u2018\u2019]/g, "'");
  for (const [pattern, emoji] of EMOTICONS) prepared = prepared.replace(pattern, emoji);
  return prepared
    .replace(/[,.;:!?\u2026]+|\s[-\u2013\u2014]\s/g, ` ${CLAUSE_BREAK} `)
    .replace(/[\uFE0F\u{1F3FB}-\u{1F3FF}]/gu, "")
    .replace(/(\p{Extended_Pictographic}(?:\u200D\p{Extended_Pictographic})*)/gu, " $1 ");
}

function isShouting(text: string): boolean {
  const letters = text.replace(/[^\p{L}]/gu, "");
  return letters.length >= 4 && letters === letters.toUpperCase() && letters !== letters.toLowerCase();
}

/** A sentiment score for a text: AFINN and emoji, with negation, intensifiers, caps and exclamation marks. */
export function toneScore(text: string): number {
  const { score } = analyzer.analyze(prepare(text), { language: LANGUAGE });
  let scaled = score;
  if (isShouting(text)) scaled *= SHOUTING_FACTOR;
  if (text.includes("!")) scaled *= EXCLAMATION_FACTOR;
  return scaled;
}

/** "fine." on its own, "Ok.", "whatever": short replies whose brevity is the message. */
function isCurt(text: string): boolean {
  const trimmed = text.trim().toLowerCase();
  if (trimmed.includes("!") || /\p{Extended_Pictographic}/u.test(trimmed)) return false;
  const words = trimmed.replace(/[\u2018\u2019]/g, "'").match(/[\p{L}']+/gu) ?? [];
  if (words.length === 0 || words.length > CURT_MAX_WORDS) return false;
  const phrase = words.join(" ");
  if (DISMISSIVE_REPLIES.has(phrase)) return true;
  return words.length === 1 && FLAT_ACKS.has(phrase) && trimmed.endsWith(".");
}

/**
 * The tone of one message as the person would hear it: curt replies and pointed phrases
 * ("stop asking") are tense whatever their words score; otherwise the sentiment score decides.
 */
export function detectTone(text: string): Tone {
  if (isCurt(text) || TENSE_PHRASES.test(text)) return "tense";
  const score = toneScore(text);
  if (score <= TENSE_AT) return "tense";
  if (score >= WARM_AT || WARM_PHRASES.test(text)) return "warm";
  return "neutral";
}

/** A message's tone: reflection's annotation when present, else {@link detectTone}. */
export function messageTone(message: Message): Tone {
  return message.annotations?.tone ?? detectTone(message.text);
}

/**
 * The tone of an exchange is the person's: any tense message of theirs makes it tense
 * (one curt reply outweighs pleasantries), else any warm one makes it warm. The
 * assistant's own words do not colour it; with nothing from the person it is unknown.
 */
export function exchangeTone(exchange: readonly Message[]): ExchangeTone {
  const tones = exchange.filter((m) => m.role === "user").map(messageTone);
  if (tones.length === 0) return "unknown";
  if (tones.includes("tense")) return "tense";
  if (tones.includes("warm")) return "warm";
  return "neutral";
}
