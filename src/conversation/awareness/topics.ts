import { stemmer } from "stemmer";
import type { Message } from "../../core/message.ts";
import type { Domain } from "./context.ts";
import { IDIOMS, NOT_TOPICS, STOPWORDS, TOPIC_LEXICON } from "./lexicon.ts";
import { DEFAULT_LANGUAGE, englishReading, englishWords, type Word } from "./reading.ts";
import { detectMood, detectTone } from "./tone.ts";

/** At most this many noun phrases per message: what it is about, not every noun in it. */
const MAX_PHRASES = 2;
/** Longer runs of nouns are cut to their last words (the head and what is compounded onto it). */
const MAX_PHRASE_WORDS = 3;

interface Token {
  readonly surface: string;
  readonly stem: string;
  readonly offset: number;
  readonly end: number;
}

interface Hit {
  readonly topic: string;
  readonly offset: number;
}

const WORD = /[\p{L}\p{N}]+(?:'[\p{L}]+)*/gu;
const VOLUME = /\b\d+(?:[.,]\d+)?\s?(?:ml|l|liters?|litres?|fl oz)\b/iu;

/** Stems per word: chat reuses a small vocabulary, so most words are stemmed once per process. */
const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

/** Porter stems are only a matching key for the lexicon; they are never shown as a label. */
function stemOf(word: string): string {
  let stem = stemCache.get(word);
  if (stem === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stem = stemmer(word);
    stemCache.set(word, stem);
  }
  return stem;
}

function tokenize(text: string): Token[] {
  const normalized = text.replace(/[\u2018\u2019]/g, "'");
  const tokens: Token[] = [];
  for (const match of normalized.matchAll(WORD)) {
    const surface = match[0].toLowerCase().replace(/'s$/, "");
    tokens.push({ surface, stem: stemOf(surface), offset: match.index, end: match.index + match[0].length });
  }
  return tokens;
}

function stems(phrase: string): string[] {
  return tokenize(phrase).map((t) => t.stem);
}

/** A run of stems to look for: an idiom (no topic, only consumed) or a subject's phrase. */
interface Sequence {
  readonly priority: number;
  readonly topic: string | null;
  readonly stems: readonly string[];
}

const domains = new Map<string, Domain>(TOPIC_LEXICON.map((e) => [e.topic, e.domain]));
const byStem = new Map<string, string>();
const bySurface = new Map<string, string>();
/** Nouns that name one thing to follow up on (an interview, a wedding): a topic of their own, within a subject. */
const eventSubject = new Map<string, string>();
const emoji: { topic: string; symbol: string }[] = [];
const sequences: Sequence[] = IDIOMS.map((idiom, priority) => ({
  priority,
  topic: null,
  stems: stems(idiom),
}));
for (const entry of TOPIC_LEXICON) {
  for (const word of entry.words) {
    const stem = stemOf(word);
    if (!byStem.has(stem)) byStem.set(stem, entry.topic);
  }
  for (const word of entry.exact ?? []) bySurface.set(word, entry.topic);
  for (const word of entry.events ?? []) eventSubject.set(word, entry.topic);
  for (const phrase of entry.phrases ?? []) {
    sequences.push({ priority: sequences.length, topic: entry.topic, stems: stems(phrase) });
  }
  for (const symbol of entry.emoji ?? []) emoji.push({ topic: entry.topic, symbol });
}
/** Sequences by their first stem, so a message only tries the few that could start in it. */
const sequencesByFirstStem = new Map<string, Sequence[]>();
for (const sequence of sequences) {
  const first = sequence.stems[0];
  if (first === undefined) continue;
  sequencesByFirstStem.set(first, [...(sequencesByFirstStem.get(first) ?? []), sequence]);
}
const NON_ASCII = /[^\p{ASCII}]/u;

function isEvent(word: string): boolean {
  return eventSubject.has(word) || (word.endsWith("s") && eventSubject.has(word.slice(0, -1)));
}

/** Marks every unconsumed run of `sequence` as consumed and returns where each run starts. */
function consumeRuns(tokens: readonly Token[], consumed: boolean[], sequence: readonly string[]): number[] {
  const starts: number[] = [];
  for (let i = 0; i + sequence.length <= tokens.length; i += 1) {
    const fits = sequence.every((stem, k) => !consumed[i + k] && tokens[i + k]?.stem === stem);
    if (!fits) continue;
    for (let k = 0; k < sequence.length; k += 1) consumed[i + k] = true;
    starts.push(i);
  }
  return starts;
}

/** Idioms first, then subjects' phrases in lexicon order, then single words, then volumes. */
function lexiconHits(text: string, tokens: readonly Token[], consumed: boolean[]): Hit[] {
  const hits: Hit[] = [];
  const candidates = new Set<Sequence>();
  for (const token of tokens) for (const s of sequencesByFirstStem.get(token.stem) ?? []) candidates.add(s);
  for (const sequence of [...candidates].sort((a, b) => a.priority - b.priority)) {
    for (const start of consumeRuns(tokens, consumed, sequence.stems)) {
      if (sequence.topic !== null) hits.push({ topic: sequence.topic, offset: tokens[start]?.offset ?? 0 });
    }
  }
  tokens.forEach((token, i) => {
    if (consumed[i] || isEvent(token.surface)) return;
    const topic = bySurface.get(token.surface) ?? byStem.get(token.stem);
    if (topic === undefined) return;
    consumed[i] = true;
    hits.push({ topic, offset: token.offset });
  });
  const volume = VOLUME.exec(text);
  if (volume) hits.push({ topic: "hydration", offset: volume.index });
  return hits;
}

/** Emoji say their subject in any language. */
function emojiHits(text: string): Hit[] {
  if (!NON_ASCII.test(text)) return [];
  const hits: Hit[] = [];
  for (const { topic, symbol } of emoji) {
    const offset = text.indexOf(symbol);
    if (offset >= 0) hits.push({ topic, offset });
  }
  return hits;
}

const NOUNS = new Set(["NOUN", "PROPN"]);

/** A plural noun in its singular, only where the singular is plainly the same word ("clubs" → "club"). */
function singular(word: Word): string {
  const { lower, lemma } = word;
  if (lemma === lower || !NOUNS.has(word.pos)) return lower;
  const plainPlural =
    lower === `${lemma}s` ||
    lower === `${lemma}es` ||
    (lemma.endsWith("y") && lower === `${lemma.slice(0, -1)}ies`);
  return plainPlural ? lemma : lower;
}

/**
 * Whether a word can be part of what a message is about: a noun (or name) that is not a
 * function word, a time word, chat filler or a unit, and, when the message was too short to
 * tell its language, one the English model knows ("vale" or "danke" are no English nouns).
 */
function topicalNoun(word: Word, next: Word | undefined, undetermined: boolean): boolean {
  if (!NOUNS.has(word.pos)) return false;
  if (!/^\p{L}[\p{L}'-]*$/u.test(word.text) || word.lower.length < 2) return false;
  if (STOPWORDS.has(word.lower) || NOT_TOPICS.has(word.lower) || NOT_TOPICS.has(singular(word))) return false;
  if ((undetermined && !word.known) || word.foreign) return false;
  // A word drawn out ("hellooo", "sooo") is a sound, not a thing.
  if (/(\p{L})\1\1/u.test(word.lower)) return false;
  // A short word the English model does not know is chat shorthand ("af", "rps"), not a name.
  if (!word.known && word.lower.length <= 3 && word.text === word.lower) return false;
  // A gerund with an object is a verb at work ("painting the hallway"), not a thing.
  if (word.lower.endsWith("ing") && next !== undefined && ["DET", "PRON", "NOUN", "PROPN"].includes(next.pos))
    return false;
  return true;
}

/**
 * What a message is about beyond the lexicon's subjects: its noun phrases as the person wrote
 * them (runs of nouns, the head singularised: "book clubs" → "book club"). A run whose head a
 * subject already claimed is that subject ("water bottle" is hydration); one whose modifier it
 * claimed keeps the whole phrase ("dentist appointment"). Never a verb, never a stem.
 */
function nounPhrases(
  words: readonly Word[],
  claimed: (offset: number) => boolean,
  undetermined: boolean,
): { phrases: Hit[]; all: Hit[]; overruled: Set<number> } {
  const phrases: Hit[] = [];
  const overruled = new Set<number>();
  let run: Word[] = [];
  let start = 0;
  const close = () => {
    const kept = run.slice(-MAX_PHRASE_WORDS);
    const head = kept[kept.length - 1];
    const first = kept[0];
    const incidental =
      isCircumstance(words, start) ||
      isBareGerund(words, start + run.length - kept.length, kept) ||
      isCounted(words, start) ||
      isPossessor(words, start + run.length) ||
      takesAnObject(words, start + run.length) ||
      isWordPart(words, start);
    // A subject's word heading a compound of other nouns is not that subject: a "test run" is no
    // exercise, the "data slides" no work in general.
    const ownModifier = kept.slice(0, -1).some((w) => !claimed(w.offset));
    if (head !== undefined && first !== undefined && !incidental && (!claimed(head.offset) || ownModifier)) {
      const label = [...kept.slice(0, -1).map((w) => w.lower), singular(head)].join(" ");
      phrases.push({ topic: label, offset: first.offset });
      if (claimed(head.offset)) overruled.add(head.offset);
    }
    run = [];
  };
  words.forEach((word, i) => {
    if (topicalNoun(word, words[i + 1], undetermined)) {
      if (run.length === 0) start = i;
      run.push(word);
    } else close();
  });
  close();
  return { phrases: phrases.slice(0, MAX_PHRASES), all: phrases, overruled };
}

/** A counted noun is a measure ("80 pages left", "4 yrs", "3 miles"), not what the message is about. */
function isCounted(words: readonly Word[], index: number): boolean {
  const before = words[index - 1];
  // A clock time is when and an ordinal which, not how many ("the 0:14 train", "her 60th birthday").
  const count = before !== undefined && (before.pos === "NUM" || /^\d/.test(before.text));
  return count && !/\d:\d\d|\d(?:st|nd|rd|th)$/i.test(before.text);
}

/** "Nadia's sister": the owner names whose the thing is; the thing is what the message is about. */
function isPossessor(words: readonly Word[], after: number): boolean {
  const mark = words[after];
  const owned = words[after + 1];
  const possessive = mark !== undefined && (mark.lower === "'s" || mark.lower === "'") && mark.pos === "PART";
  // "screen's a spiderweb" is "screen is": only a noun (or its adjective) after the mark is owned.
  return possessive && owned !== undefined && ["NOUN", "PROPN", "ADJ"].includes(owned.pos);
}

/**
 * "members use the app", "mom lands the job": a noun followed at once by a determiner was a verb
 * the tagger took for a noun, and the run around it is no phrase of the message.
 */
function takesAnObject(words: readonly Word[], after: number): boolean {
  const next = words[after];
  return next?.pos === "DET" && ["the", "a", "an", "this", "that", "these", "those"].includes(next.lower);
}

/** "c-section recovery": a run that starts inside a hyphenated word would show half of it. */
function isWordPart(words: readonly Word[], index: number): boolean {
  const hyphen = words[index - 1];
  const before = words[index - 2];
  return hyphen?.text === "-" && before !== undefined && before.offset + before.text.length === hyphen.offset;
}

/** Whether the word at `offset` is only a comparison ("you sound like my mom", "slept like a baby"). */
function comparedTo(words: readonly Word[], offset: number): boolean {
  const index = words.findIndex((w) => w.offset === offset);
  for (let i = index - 1; i >= 0; i -= 1) {
    const word = words[i];
    if (word === undefined) return false;
    if (["ADJ", "NUM", "DET", "PRON", "PART"].includes(word.pos)) continue;
    return word.pos === "ADP" && word.lower === "like";
  }
  return false;
}

/** Prepositions that set a scene ("at my desk", "on the floor", "with my kid") rather than a subject. */
const CIRCUMSTANCE = new Set(
  "at on like with near over around under by behind across through into onto inside outside past beside".split(
    " ",
  ),
);

/**
 * Prepositions that set the place or time of something else rather than raise a subject
 * ("near work", "before work"). Not "with": who they were with is what they tell ("with my kid").
 */
const SCENE = new Set(
  [...CIRCUMSTANCE, "before", "after", "till", "until", "during"].filter((p) => p !== "with"),
);
/** Subjects that are people: where they were is who they were with ("dinner at my grandma's"). */
const PEOPLE = new Set(["family", "social"]);

/**
 * Whether a subject's word only sets the scene or the time of something else the message is
 * about ("a copy shop near work", "15 min before work, F chord rang").
 */
function setsTheScene(words: readonly Word[], offset: number): boolean {
  const index = words.findIndex((w) => w.offset === offset);
  for (let i = index - 1; i >= 0; i -= 1) {
    const word = words[i];
    if (word === undefined) return false;
    // Back over the words before it in its phrase ("on the case study").
    if (["ADJ", "NUM", "DET", "PRON", "PART", "NOUN", "PROPN"].includes(word.pos)) continue;
    const before = words[i - 1];
    const afterNoun = before !== undefined && (before.pos === "NOUN" || before.pos === "PROPN");
    return word.pos === "ADP" && SCENE.has(word.lower) && !(afterNoun && word.lower === "on");
  }
  return false;
}

/** Whether the noun phrase starting at `index` is the object of a scene-setting preposition. */
function isCircumstance(words: readonly Word[], index: number): boolean {
  for (let i = index - 1; i >= 0; i -= 1) {
    const word = words[i];
    if (word === undefined) return false;
    if (["ADJ", "NUM", "DET", "PRON", "PART"].includes(word.pos)) continue;
    // "news on moltbook", "work on the deck": after a noun the preposition says what about.
    const before = words[i - 1];
    const afterNoun = before !== undefined && (before.pos === "NOUN" || before.pos === "PROPN");
    return word.pos === "ADP" && CIRCUMSTANCE.has(word.lower) && !(afterNoun && word.lower === "on");
  }
  return false;
}

/** Nouns in -ing that name a thing, not an act ("wedding", "meeting"); other bare gerunds are verbs at work. */
const THING_IN_ING = new Set(
  "wedding meeting building ceiling clothing housing training painting thing something evening morning feeling".split(
    " ",
  ),
);

/**
 * A one-word phrase in -ing ("crying", "sitting", "fixing") names an act, not a thing, unless a
 * determiner makes it one ("the packing").
 */
function isBareGerund(words: readonly Word[], index: number, phrase: readonly Word[]): boolean {
  const [only] = phrase;
  const determined = words[index - 1]?.pos === "DET";
  return (
    phrase.length === 1 &&
    only !== undefined &&
    only.lower.endsWith("ing") &&
    !THING_IN_ING.has(only.lower) &&
    !determined
  );
}

function partition<T>(values: readonly T[], test: (value: T) => boolean): [T[], T[]] {
  return [values.filter(test), values.filter((value) => !test(value))];
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The canonical subjects of a text, in the order they appear: lexicon labels when the text
 * names an everyday subject however it is phrased (negated or not: "haven't had any water" is
 * still about hydration), and the noun phrases it is about in the person's words ("book club",
 * "plant", "interview"). A text not in English gets only what its emoji say: code does not
 * guess at words it cannot read. `language` is the conversation's, for texts too short to tell.
 */
export function detectTopics(text: string, language: string = DEFAULT_LANGUAGE): string[] {
  const english = englishReading(text, language);
  if (english === null) return unique(emojiHits(text).map((h) => h.topic));
  const tokens = tokenize(text);
  const consumed = tokens.map(() => false);
  const subjects = [...lexiconHits(text, tokens, consumed), ...emojiHits(text)];
  const claimed = (offset: number) =>
    tokens.some((t, i) => consumed[i] && t.offset <= offset && offset < t.end);
  const { phrases, all, overruled } = nounPhrases(english.words, claimed, english.undetermined);
  const said = subjects.filter((hit) => !overruled.has(hit.offset) && !comparedTo(english.words, hit.offset));
  const [scene, raised] = partition(
    said,
    (hit) => !PEOPLE.has(hit.topic) && setsTheScene(english.words, hit.offset),
  );
  // The scene is the topic only when nothing else in the message is ("long day at work").
  const kept = raised.length + phrases.length > 0 ? raised : scene;
  const topics = unique(
    [...kept, ...phrases, ...eventsLeft(tokens, consumed, all)]
      .filter((hit) => !isAddress(text, hit.offset))
      .sort((a, b) => a.offset - b.offset)
      .map((h) => h.topic),
  );
  // How they feel is the subject when it is all the message tells ("pretty stressed out honestly"),
  // so an answer meets "how are you feeling?"; beside other news it is their mood, not the topic.
  if (topics.length === 0 && detectMood(text, language) !== null) return ["mood"];
  return topics;
}

/** The one word after a comma that ends the sentence calls the reader by a name ("Goodnight, friend."). */
function isAddress(text: string, offset: number): boolean {
  return /,\s*$/.test(text.slice(0, offset)) && /^[\p{L}'-]+\s*(?:[.!?\u2026]|$)/u.test(text.slice(offset));
}

/**
 * Events the noun phrases missed ("no. launch.", "launch day" when the tagger reads a verb): an
 * event word names one thing to follow up on whatever the tagger says, so it is a topic as written.
 */
function eventsLeft(tokens: readonly Token[], consumed: readonly boolean[], phrases: readonly Hit[]): Hit[] {
  const inPhrases = new Set(phrases.flatMap((p) => p.topic.split(" ")));
  return tokens.flatMap((token, i) => {
    if (consumed[i] || !isEvent(token.surface)) return [];
    const word = eventSubject.has(token.surface) ? token.surface : token.surface.slice(0, -1);
    const named = inPhrases.has(token.surface) || inPhrases.has(token.surface.replace(/s$/, ""));
    return named ? [] : [{ topic: word, offset: token.offset }];
  });
}

/** Labels written before topics were noun phrases (`other:<stem>`): stems, so no longer shown. */
const LEGACY_PREFIX = "other:";
/** Words that only say which side of a subject a label means ("water intake", "sleep schedule"). */
const ASPECTS = new Set(
  "intake level levels schedule routine habit habits quality amount time check status update plan plans goal goals".split(
    " ",
  ),
);

/**
 * Maps any label (lexicon, noun phrase, or reflection's free text) onto the label the code
 * would give, so an annotated message and a read one meet. A label becomes a lexicon subject
 * only when it IS that subject ("Water intake" is hydration; "books" is not learning): every
 * word of it belongs to one subject, or only says which side of it. Anything else stays as
 * written, lowered, its last word singular. Null for what is no topic (an old stem label).
 */
export function canonicalTopic(label: string): string | null {
  const cleaned = label
    .trim()
    .toLowerCase()
    .replace(/^(?:the|a|an|my|your|our|their|his|her)\s+/, "");
  if (cleaned === "" || cleaned.startsWith(LEGACY_PREFIX)) return null;
  if (domains.has(cleaned)) return cleaned;
  const tokens = tokenize(cleaned);
  const consumed = tokens.map(() => false);
  const subjects = unique(lexiconHits(cleaned, tokens, consumed).map((h) => h.topic));
  const rest = tokens.filter((t, i) => !consumed[i] && !ASPECTS.has(t.surface) && !STOPWORDS.has(t.surface));
  if (subjects.length === 1 && subjects[0] !== undefined && rest.length === 0) return subjects[0];
  const words = englishWords(cleaned);
  const last = words.findLast((w) => /\p{L}/u.test(w.text));
  if (last === undefined || !NOUNS.has(last.pos)) return cleaned;
  return `${cleaned.slice(0, last.offset)}${singular(last)}${cleaned.slice(last.offset + last.text.length)}`;
}

/**
 * The lexicon subject a label belongs to, or null: the subject itself, or the subject of the
 * event a noun phrase names ("job interview" → work, "wedding" → social).
 */
export function topicSubject(topic: string): string | null {
  if (domains.has(topic)) return topic;
  const head = topic.split(" ").at(-1) ?? "";
  return eventSubject.get(head) ?? null;
}

/** The domain a topic belongs to, so a change of subject can be told from a change of domain. */
export function topicDomain(topic: string): Domain {
  const subject = topicSubject(topic);
  return subject === null ? "other" : (domains.get(subject) ?? "other");
}

/** Every label the lexicon knows, in lexicon order. */
export function knownTopics(): string[] {
  return TOPIC_LEXICON.map((e) => e.topic);
}

/** The text with a caption the text does not already hold (older logs kept some captions apart). */
function messageText(message: Message): string {
  const caption = message.media?.caption;
  return caption && !message.text.includes(caption) ? `${message.text}\n${caption}` : message.text;
}

/**
 * Topics per message object and conversation language, so one build reads each message once
 * however many questions it asks of it. Keyed weakly; a message edited in place is read again.
 */
const topicCache = new WeakMap<
  Message,
  { text: string; annotations: unknown; language: string; topics: readonly string[] }
>();

/**
 * A message's topics: reflection's annotations when it has them (they read meaning, in any
 * language), otherwise what code reads from its words. Either way the labels are canonical.
 * `language` is the conversation's (see `conversationLanguage`), for messages too short to tell.
 */
export function messageTopics(message: Message, language: string = DEFAULT_LANGUAGE): readonly string[] {
  const text = messageText(message);
  const cached = topicCache.get(message);
  if (
    cached !== undefined &&
    cached.text === text &&
    cached.annotations === message.annotations &&
    cached.language === language
  )
    return cached.topics;
  const annotated = message.annotations?.topics;
  const topics =
    annotated !== undefined
      ? unique(annotated.flatMap((label) => canonicalTopic(label) ?? []))
      : detectTopics(text, language);
  topicCache.set(message, { text, annotations: message.annotations, language, topics });
  return topics;
}

const WH_OPENERS = new Set(
  "how what when where why who which whose whom how's what's where's who's when's why's any anything".split(
    " ",
  ),
);
const AUXILIARY_OPENERS = new Set(
  `did do does are is was were have has had can could would will should shall isn't aren't don't didn't
  doesn't won't haven't hasn't`.split(/\s+/),
);
const SUBJECTS = new Set("you u ya we i it they he she that this there your everything anything".split(" "));
/** A request to be told ("tell me how it went"), not a report of being told ("I'm glad you tell me"). */
const REQUESTS =
  /(?:^|[.!?]\s*|\b(?:please|pls|can you|could you|do)\s+)(?:tell me|let me know)\b|\bcurious (?:how|what|whether|if)\b/i;

function asksBySyntax(sentence: string): boolean {
  const [first = "", second = ""] = sentence
    .trim()
    .toLowerCase()
    .split(/[\s,]+/);
  if (WH_OPENERS.has(first)) return second !== "a" && second !== "an";
  return AUXILIARY_OPENERS.has(first) && SUBJECTS.has(second);
}

/**
 * Whether a text asks for an answer: a question mark (in any language; "?!" exclaims), or, in
 * English, a sentence shaped like a question without one ("how's the water going", "did you
 * sleep") or a request to be told something. The person's friction with the companion asks
 * nothing, whatever its shape ("why do you keep asking?"): `by` says whose text it is.
 */
export function isQuestion(text: string, by: Message["role"], language: string = DEFAULT_LANGUAGE): boolean {
  const english = englishReading(text, language) !== null;
  // The person's friction asks nothing ("do you have to open with that every day?", "happy?").
  if (by === "user" && english && detectTone(text, language) === "tense") return false;
  // "?!" exclaims ("Foundation on the sleeve?!"); "?" after a hedge doubts ("went fine i think??").
  const marks = text
    .replace(/\?+!+|!+\?+/g, "!")
    .replace(/\b(?:i think|i guess|i hope|maybe|probably)\s*\?+/gi, ".");
  if (/[?\u00bf\uff1f]/.test(marks)) return true;
  if (!english) return false;
  if (REQUESTS.test(text)) return true;
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .split(/[.!\n]+/)
    .some(asksBySyntax);
}

/** Whether a message asks something: reflection's annotation when present, else {@link isQuestion}. */
export function messageIsQuestion(message: Message, language: string = DEFAULT_LANGUAGE): boolean {
  return message.annotations?.question ?? isQuestion(messageText(message), message.role, language);
}

/** How a topic reads in prose: lexicon subjects as they are, the person's own words in quotes. */
export function topicName(topic: string): string {
  return domains.has(topic) ? topic : `"${topic}"`;
}
