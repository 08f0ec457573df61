import { stemmer } from "stemmer";
import type { Message } from "../../core/message.ts";
import { AFINN_WORDS } from "./afinn.ts";
import type { Domain } from "./context.ts";
import { IDIOMS, STOPWORDS, TOPIC_LEXICON } from "./lexicon.ts";

/** Labels of subjects the lexicon does not know start with this, e.g. `other:guitar`. */
export const FALLBACK_PREFIX = "other:";

/** At most this many fallback labels per message: enough to meet again, few enough to stay quiet. */
const MAX_FALLBACK_TOPICS = 2;
const MIN_FALLBACK_LENGTH = 4;

interface Token {
  readonly surface: string;
  readonly stem: string;
  readonly offset: number;
  /** Capitalised in the original text while not opening a sentence: likely a name. */
  readonly proper: boolean;
}

interface Hit {
  readonly topic: string;
  readonly offset: number;
}

const WORD = /[\p{L}\p{N}]+(?:'[\p{L}]+)*/gu;
const VOLUME = /\b\d+(?:[.,]\d+)?\s?(?:ml|l|liters?|litres?|oz)\b/iu;

/** Stems per word: chat reuses a small vocabulary, so most words are stemmed once per process. */
const stemCache = new Map<string, string>();
const STEM_CACHE_LIMIT = 50_000;

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
  let previousEnd = 0;
  for (const match of normalized.matchAll(WORD)) {
    const surface = match[0].toLowerCase().replace(/'s$/, "");
    const offset = match.index;
    const gap = normalized.slice(previousEnd, offset);
    const opensSentence = tokens.length === 0 || /[.!?\n]/.test(gap);
    const proper = !opensSentence && /^\p{Lu}/u.test(match[0]);
    tokens.push({ surface, stem: stemOf(surface), offset, proper });
    previousEnd = offset + match[0].length;
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
const sentimentWords = new Set(Object.keys(AFINN_WORDS));
const NON_ASCII = /[^\p{ASCII}]/u;

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

/** Idioms first, then subjects' phrases in lexicon order, then single words, then emoji and volumes. */
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
    if (consumed[i]) return;
    const topic = bySurface.get(token.surface) ?? byStem.get(token.stem);
    if (topic === undefined) return;
    consumed[i] = true;
    hits.push({ topic, offset: token.offset });
  });
  if (NON_ASCII.test(text)) {
    for (const { topic, symbol } of emoji) {
      const offset = text.indexOf(symbol);
      if (offset >= 0) hits.push({ topic, offset });
    }
  }
  const volume = VOLUME.exec(text);
  if (volume) hits.push({ topic: "hydration", offset: volume.index });
  return hits;
}

/**
 * What an unknown subject is about: the most salient words left once function words,
 * small talk and sentiment words are set aside; names first, then longer words.
 */
function fallbackTopics(tokens: readonly Token[], consumed: readonly boolean[]): string[] {
  const candidates = tokens.filter(
    (t, i) =>
      !consumed[i] &&
      t.surface.length >= MIN_FALLBACK_LENGTH &&
      /^\p{L}+$/u.test(t.surface) &&
      !STOPWORDS.has(t.surface) &&
      !sentimentWords.has(t.surface),
  );
  const salience = (t: Token) => (t.proper ? 100 : 0) + t.surface.length;
  const chosen = [...candidates]
    .sort((a, b) => salience(b) - salience(a) || a.offset - b.offset)
    .slice(0, MAX_FALLBACK_TOPICS)
    .sort((a, b) => a.offset - b.offset);
  return unique(chosen.map((t) => `${FALLBACK_PREFIX}${t.stem}`));
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * The canonical subjects of a text, in the order they appear: lexicon labels when the
 * text names an everyday subject however it is phrased (negated or not: "haven't had any
 * water" is still about hydration), else up to two `other:<stem>` labels from its most
 * salient words, so an unknown subject raised twice still meets itself.
 */
export function detectTopics(text: string): string[] {
  const tokens = tokenize(text);
  const consumed = tokens.map(() => false);
  const hits = lexiconHits(text, tokens, consumed);
  if (hits.length === 0) return fallbackTopics(tokens, consumed);
  return unique([...hits].sort((a, b) => a.offset - b.offset).map((h) => h.topic));
}

/**
 * Maps any label (lexicon, fallback, or free text from reflection) onto the labels the
 * lexicon gives, so an annotated message and a detected one meet: "Water intake" is
 * hydration, "Moltbook" is other:moltbook. A label that maps onto nothing clearly stays as it is.
 */
export function canonicalTopic(label: string): string {
  const cleaned = label.trim().toLowerCase();
  if (domains.has(cleaned) || cleaned.startsWith(FALLBACK_PREFIX)) return cleaned;
  const detected = detectTopics(cleaned);
  const known = detected.find((t) => domains.has(t));
  if (known !== undefined) return known;
  return detected.length === 1 && detected[0] !== undefined ? detected[0] : cleaned;
}

/** The domain a topic belongs to, so a change of subject can be told from a change of domain. */
export function topicDomain(topic: string): Domain {
  return domains.get(canonicalTopic(topic)) ?? "other";
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
 * Topics per message object, so one build reads each message once however many
 * questions it asks of it. Keyed weakly; a message edited in place is read again.
 */
const topicCache = new WeakMap<Message, { text: string; annotations: unknown; topics: readonly string[] }>();

/**
 * A message's topics: reflection's annotations when it has them (they read meaning, the
 * lexicon reads words), otherwise the lexicon's. Either way the labels are canonical.
 */
export function messageTopics(message: Message): readonly string[] {
  const text = messageText(message);
  const cached = topicCache.get(message);
  if (cached !== undefined && cached.text === text && cached.annotations === message.annotations)
    return cached.topics;
  const annotated = message.annotations?.topics;
  const topics = annotated !== undefined ? unique(annotated.map(canonicalTopic)) : detectTopics(text);
  topicCache.set(message, { text, annotations: message.annotations, topics });
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
const REQUESTS = /\b(?:tell me|let me know|curious (?:how|what|whether|if))\b/i;

function asksBySyntax(sentence: string): boolean {
  const [first = "", second = ""] = sentence
    .trim()
    .toLowerCase()
    .split(/[\s,]+/);
  if (WH_OPENERS.has(first)) return second !== "a" && second !== "an";
  return AUXILIARY_OPENERS.has(first) && SUBJECTS.has(second);
}

/**
 * Whether a text asks for an answer: a question mark, a sentence shaped like a question
 * without one ("how's the water going", "did you sleep"), or a request to be told something.
 */
export function isQuestion(text: string): boolean {
  if (text.includes("?") || REQUESTS.test(text)) return true;
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .split(/[.!\n]+/)
    .some(asksBySyntax);
}

/** Whether a message asks something: reflection's annotation when present, else {@link isQuestion}. */
export function messageIsQuestion(message: Message): boolean {
  return message.annotations?.question ?? isQuestion(messageText(message));
}

/** How a topic reads in prose: lexicon labels as they are, fallback labels without their prefix. */
export function topicName(topic: string): string {
  return topic.startsWith(FALLBACK_PREFIX) ? `"${topic.slice(FALLBACK_PREFIX.length)}"` : topic;
}
