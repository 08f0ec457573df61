import { eld } from "eld/small";
import model from "wink-eng-lite-web-model";
import winkNLP from "wink-nlp";

/**
 * How the code reads one message, once: its language and, for English, its words with their
 * parts of speech. Topics, questions, tone and mood are all drawn from this reading, so a message
 * is parsed once per process however many times awareness is built over it (the reading is
 * cached by text). Everything here is a pure function of the text: no clock, no files.
 *
 * The parser is wink-nlp with its English model (both ship in npm; nothing is downloaded), and the
 * language is told by eld's n-gram tables. What the code cannot read with confidence it leaves
 * out: a message in another language gets no topics or tone from code (reflection's labels speak
 * for it), and a message too short to judge ("k", "fine.", "gym done 💪") counts as the
 * conversation's language.
 */

const nlp = winkNLP(model);
const its = nlp.its;

/** The languages told apart. A message in none of them is usually read as the closest, which is never English for real text. */
const LANGUAGES = ["en", "es", "de", "fr", "it", "pt", "nl"];
eld.setLanguageSubset(LANGUAGES);

/** Letters in a script English is never written in: such a message is not English, however short. */
const OTHER_SCRIPT =
  /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Devanagari}\p{Script=Thai}]/u;

/** The first id wink gives a word its model does not know: every id from here on is such a word. */
const FIRST_UNKNOWN_ID = nlp.readDoc("qzxjvwq").tokens().out(its.uniqueId)[0] ?? Number.MAX_SAFE_INTEGER;

/** One word (or emoji, number, punctuation) of an English reading. */
export interface Word {
  /** As written. */
  readonly text: string;
  readonly lower: string;
  /** Universal part of speech as wink tags it (NOUN, PROPN, VERB, ADJ, PUNCT…). */
  readonly pos: string;
  /** The dictionary form wink gives ("interviews" → "interview"); only used to singularise. */
  readonly lemma: string;
  /** Whether the English model knows the word (names and words of other languages it does not). */
  readonly known: boolean;
  /**
   * Whether it is a word of another language in an English message ("no es mi culpa", "una
   * sorpresa"): one the English model does not know, written in lower case (names keep their
   * capital), that eld reads on its own as another language well clear of English; or any word
   * of a sentence eld reads so.
   */
  readonly foreign: boolean;
  /** Whether wink reads it as negated ("not tired"). */
  readonly negated: boolean;
  /** Where it starts in the text. */
  readonly offset: number;
}

/** A message as read: its language, and its words when it is (or may be) English. */
export interface Reading {
  /** ISO 639-1 code, or null when the text is too short or mixed to tell. */
  readonly language: string | null;
  /** The words, tagged; empty when the language is known not to be English. */
  readonly words: readonly Word[];
}

/** Reading a language from fewer letters or words than this is guessing ("EXACTEMENT" reads as English). */
const MIN_LETTERS_TO_JUDGE = 8;
const MIN_WORDS_TO_JUDGE = 2;

/** How clearly a lone word must read as another language to be called foreign. */
const FOREIGN_WORD_SCORE = 0.75;
/** How far another language's score must lead English's, for a lone word, a sentence or a message. */
const FOREIGN_LEAD = 0.2;

function languageOf(text: string): string | null {
  if (OTHER_SCRIPT.test(text)) return "other";
  const letters = text.replace(/[^\p{L}]/gu, "");
  const words = text.match(/\p{L}+/gu)?.length ?? 0;
  if (letters.length < MIN_LETTERS_TO_JUDGE || words < MIN_WORDS_TO_JUDGE) return null;
  const result = eld.detect(text.toLowerCase());
  if (result.language === "" || !result.isReliable()) return null;
  // "no raccoon. ate.": a few English words that read a little more like Italian are too few to
  // tell; every one of them known to the English model, the message counts as the conversation's.
  if (result.language !== "en" && !leadsEnglish(result.getScores()) && knownWords(text) === "all")
    return null;
  // "obvio, 40 fotos" reads as English to eld, yet the English model knows none of its words:
  // too little to tell, so it counts as the conversation's language too.
  if (result.language === "en" && knownWords(text) === "none") return null;
  return result.language;
}

/** Whether the best language's score is well clear of English's. */
function leadsEnglish(scores: Record<string, number>): boolean {
  const best = Math.max(...Object.values(scores));
  return best - (scores.en ?? 0) >= FOREIGN_LEAD;
}

/** Whether the English model knows all of the text's words, none of them, or some. */
function knownWords(text: string): "all" | "none" | "some" {
  const doc = nlp.readDoc(text.toLowerCase());
  const ids = doc
    .tokens()
    .filter((t) => t.out(its.type) === "word")
    .out(its.uniqueId);
  const known = ids.filter((id) => id < FIRST_UNKNOWN_ID).length;
  return known === ids.length ? "all" : known === 0 ? "none" : "some";
}

/**
 * Stretches of another language inside an English message ("… bc of visiting hours. no es mi
 * culpa 😩"): sentences of at least three words, one of them unknown to the English model, that
 * eld reads as another language well clear of English. Their words are no English nouns, known
 * ones ("culpa") included.
 */
function otherLanguageStretches(text: string, words: readonly Word[]): [number, number][] {
  const stretches: [number, number][] = [];
  for (const sentence of text.matchAll(/[^.!?\n]+/g)) {
    const from = sentence.index;
    const to = from + sentence[0].length;
    const letters = sentence[0].match(/\p{L}+/gu) ?? [];
    if (letters.length < 3 || letters.join("").length < MIN_LETTERS_TO_JUDGE) continue;
    const unknown = words.some((w) => w.offset >= from && w.offset < to && !w.known && /\p{L}/u.test(w.text));
    if (!unknown) continue;
    const result = eld.detect(sentence[0].toLowerCase());
    if (result.language !== "en" && result.isReliable() && leadsEnglish(result.getScores()))
      stretches.push([from, to]);
  }
  return stretches;
}

function isForeignWord(lower: string): boolean {
  if (lower.length < 4) return false;
  const scores = eld.detect(lower).getScores();
  const [best, score = 0] = Object.entries(scores).sort((a, b) => b[1] - a[1])[0] ?? [];
  return best !== undefined && best !== "en" && score >= FOREIGN_WORD_SCORE && leadsEnglish(scores);
}

/**
 * Sentence-opening capitals make the tagger call ordinary words names ("Long shift" → PROPN), so
 * each sentence's first word is lowered before tagging when the model knows the lowered word.
 */
function lowerSentenceOpeners(text: string): string {
  return text.replace(
    /(^|[.!?\n]\s*)(\p{Lu})(\p{Ll}+)/gu,
    (whole, before: string, first: string, rest: string) => {
      const word = `${first.toLowerCase()}${rest}`;
      if (word === "i") return whole;
      return isKnown(word) ? `${before}${word}` : whole;
    },
  );
}

/**
 * wink splits a name it does not know from its "'s" ("jas's" → "jas", "'s") until it has once kept
 * the whole ("jas's!"), and then keeps it whole for the rest of the process: a message's words
 * would depend on what was read before it. Splitting such a clitic first makes them a function of
 * the text alone; words the model knows ("that's", "mum's") it splits the same way every time.
 */
function splitClitics(text: string): string {
  return text.replace(/([\p{L}\p{N}]+)('s)\b/giu, (whole, base: string, clitic: string) =>
    isKnown(base.toLowerCase()) ? whole : `${base} ${clitic}`,
  );
}

function isKnown(word: string): boolean {
  const id = nlp.readDoc(word).tokens().out(its.uniqueId)[0];
  return id !== undefined && id < FIRST_UNKNOWN_ID;
}

/** The words of a text read as English, whatever its language: for short labels, not for messages. */
export function englishWords(text: string): Word[] {
  const tagged = nlp.readDoc(splitClitics(lowerSentenceOpeners(text.replace(/[\u2018\u2019]/g, "'"))));
  const tokens = tagged.tokens();
  const values = tokens.out(its.value);
  const pos = tokens.out(its.pos);
  const lemmas = tokens.out(its.lemma as Parameters<typeof tokens.out>[0]) as string[];
  const ids = tokens.out(its.uniqueId);
  const negated = tokens.out(its.negationFlag);
  const words: Word[] = [];
  let cursor = 0;
  values.forEach((value, i) => {
    const found = text.toLowerCase().indexOf(value.toLowerCase(), cursor);
    const offset = found >= 0 ? found : cursor;
    const written = found >= 0 ? text.slice(found, found + value.length) : value;
    const known = (ids[i] ?? FIRST_UNKNOWN_ID) < FIRST_UNKNOWN_ID;
    cursor = found >= 0 ? found + value.length : cursor;
    words.push({
      text: written,
      lower: value.toLowerCase(),
      // wink tags some emoji X (🫡, 🫶): every emoji is a symbol, closing a clause as punctuation does.
      pos: /^\p{Extended_Pictographic}/u.test(value) ? "SYM" : (pos[i] ?? "X"),
      lemma: (lemmas[i] ?? value).toLowerCase(),
      known,
      foreign: !known && written === written.toLowerCase() && isForeignWord(written),
      negated: negated[i] === true,
      offset,
    });
  });
  const elsewhere = otherLanguageStretches(text, words);
  if (elsewhere.length === 0) return words;
  return words.map((w) =>
    elsewhere.some(([from, to]) => w.offset >= from && w.offset < to) ? { ...w, foreign: true } : w,
  );
}

/** Readings by text: chat repeats itself, and awareness asks about the same messages every turn. */
const cache = new Map<string, Reading>();
const CACHE_LIMIT = 20_000;

/** The reading of a text, computed once per process (bounded cache). */
export function readText(text: string): Reading {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const language = languageOf(text);
  const reading: Reading = {
    language,
    words: language === null || language === "en" ? englishWords(text) : [],
  };
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, reading);
  return reading;
}

/** The language a conversation is taken to be in when nothing the person wrote says otherwise. */
export const DEFAULT_LANGUAGE = "en";

/**
 * The conversation's language: that of the person's latest message long enough to judge, or
 * English when none is. Short messages ("k", "vale", "ok") are read in it.
 */
export function conversationLanguage(texts: readonly string[]): string {
  for (let i = texts.length - 1; i >= 0; i -= 1) {
    const language = readText(texts[i] ?? "").language;
    if (language !== null) return language;
  }
  return DEFAULT_LANGUAGE;
}

/**
 * The English words of a text in a conversation held in `language`, or null when the text is
 * not English (then code says nothing about its topics or tone beyond emoji). A short message
 * counts as the conversation's language; `undetermined` says it was too short to tell.
 */
export function englishReading(
  text: string,
  language: string = DEFAULT_LANGUAGE,
): { words: readonly Word[]; undetermined: boolean } | null {
  const reading = readText(text);
  const effective = reading.language ?? language;
  if (effective !== "en") return null;
  return { words: reading.words, undetermined: reading.language === null };
}
