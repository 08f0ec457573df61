import { stemmer } from "stemmer";
import { type Message, messageText } from "../../core/message.ts";
import type { Domain } from "./context.ts";
import { IDIOMS, NOT_TOPICS, STOPWORDS, TOPIC_LEXICON } from "./lexicon.ts";
import { DEFAULT_LANGUAGE, englishReading, englishWords, type Word } from "./reading.ts";
import { detectMood } from "./tone.ts";

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
/**
 * A sentence that is only a number of hours ("6h", "like 4 hrs.", "badly. 4 hours."): chat's answer
 * to how they slept, as a volume is hydration. Hours inside a sentence ("lands in 9 hours", "2 hours
 * now") say how long something else takes.
 */
const HOURS_SLEPT =
  /(?:^|[.,!?\n]\s*)(?:like|about|around|maybe|only|prob|probably|~)?\s*\d+(?:[.,]\d+)?\s?(?:h|hr|hrs|hour|hours)(?:ish)?\s*(?:$|[.,!?\n])/iu;
/** A sum of money ("$640", "£340", "£££"): what something costs them. */
const AMOUNT = /[$£€¥₹]\s?\d|[$£€]{3}/u;

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

/**
 * Idioms first, then subjects' phrases in lexicon order, then single words, then volumes, hours
 * slept and sums of money. The
 * offsets of words an idiom consumed go into `idiomatic`: they name no thing either ("a test run").
 */
function lexiconHits(
  text: string,
  tokens: readonly Token[],
  consumed: boolean[],
  idiomatic: Set<number> = new Set(),
): Hit[] {
  const hits: Hit[] = [];
  const candidates = new Set<Sequence>();
  for (const token of tokens) for (const s of sequencesByFirstStem.get(token.stem) ?? []) candidates.add(s);
  for (const sequence of [...candidates].sort((a, b) => a.priority - b.priority)) {
    for (const start of consumeRuns(tokens, consumed, sequence.stems)) {
      if (sequence.topic !== null) hits.push({ topic: sequence.topic, offset: tokens[start]?.offset ?? 0 });
      else for (let k = 0; k < sequence.stems.length; k += 1) idiomatic.add(tokens[start + k]?.offset ?? -1);
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
  const hours = HOURS_SLEPT.exec(text);
  if (hours) hits.push({ topic: "sleep", offset: hours.index });
  const amount = AMOUNT.exec(text);
  if (amount) hits.push({ topic: "money", offset: amount.index });
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

/** Whether a word is a noun in a plain plural ("clubs", "babies"). */
function isPlural(word: Word): boolean {
  return singular(word) !== word.lower;
}

/** Whether a word is the possessive mark after an owner ("Nadia's", "the twins'"). */
function isPossessiveMark(word: Word | undefined): boolean {
  return word !== undefined && (word.lower === "'s" || word.lower === "'") && word.pos === "PART";
}

/**
 * Pronouns that stand as a subject: what the tagger calls a noun right after one is a verb ("why
 * do u care", "they land at 9"). Not object pronouns, which a thing may follow ("bought me
 * flowers"), nor "her", which also owns ("her side").
 */
const SUBJECT_PRONOUNS = new Set("i you u we they he she".split(" "));
/**
 * Words a verb follows, not a thing: subject pronouns, indefinite ones ("if anything changes") and
 * modals ("will facetime it", "can't sleep"). What the tagger calls a noun after one is its verb.
 */
const VERB_BEFORE = new Set([
  ...SUBJECT_PRONOUNS,
  ..."anything something everything nothing someone anyone everyone nobody somebody anybody".split(" "),
  ..."will would can could should shall must might may 'll 'd won't can't couldn't wouldn't shouldn't".split(
    " ",
  ),
]);
const POSSESSIVES = new Set("my your his her our their".split(" "));
const OBJECT_PRONOUNS = new Set("me him her us them".split(" "));

/**
 * Whether a word can be part of what a message is about: a noun (or name) that is not a
 * function word, a time word, chat filler or a unit, and, when the message was too short to
 * tell its language, one the English model knows ("vale" or "danke" are no English nouns).
 */
function topicalNoun(
  word: Word,
  next: Word | undefined,
  previous: Word | undefined,
  undetermined: boolean,
): boolean {
  if (!NOUNS.has(word.pos)) return false;
  if (!/^\p{L}[\p{L}'-]*$/u.test(word.text) || word.lower.length < 2) return false;
  // A verb's clitic ("cc'd", "she'll") makes no noun of the word it is glued to.
  if (/'(?:d|ll|ve|re|m)$/.test(word.lower)) return false;
  const one = singular(word);
  if (STOPWORDS.has(word.lower) || STOPWORDS.has(one) || NOT_TOPICS.has(word.lower) || NOT_TOPICS.has(one))
    return false;
  if ((undetermined && !word.known) || word.foreign) return false;
  // A word drawn out ("hellooo", "sooo") is a sound, not a thing.
  if (/(\p{L})\1\1/u.test(word.lower)) return false;
  // A short word the English model does not know is chat shorthand ("af", "rps"), not a name.
  // One that owns something or is something ("pua's here", "at jas's") is a name.
  if (!word.known && word.lower.length <= 3 && word.text === word.lower && next?.lower !== "'s") return false;
  // A gerund with an object is a verb at work ("painting the hallway"), not a thing; after a
  // determiner it names which thing ("the invoicing system").
  const determined = previous?.pos === "DET" || (previous?.pos === "PRON" && POSSESSIVES.has(previous.lower));
  const object = next !== undefined && ["DET", "PRON", "NOUN", "PROPN"].includes(next.pos);
  const names = next !== undefined && NOUNS.has(next.pos) && !STOPWORDS.has(next.lower);
  if (word.lower.endsWith("ing") && object && !(determined && names)) return false;
  if (previous !== undefined && VERB_BEFORE.has(previous.lower)) return false;
  // "home." "got home", "drove us home": bare, it says where they are or went, as "here" would;
  // "my home", "a new home" name the place.
  if (word.lower === "home" && !determined && previous?.pos !== "ADJ") return false;
  return true;
}

/**
 * Chat's filler nouns that name a thing once a noun says which one: "a question" is filler, "the
 * metrics question" is what they talk about; likewise "the invoicing stuff", "a money problem".
 */
const COMPOUND_HEADS = new Set("question questions problem problems idea ideas stuff".split(" "));

/** What the noun phrases of a message are read against. */
interface PhraseContext {
  /** Whether a lexicon subject claimed the word at this offset. */
  readonly claimed: (offset: number) => boolean;
  /** Whether the word names a person: a relative, a friend, a name. */
  readonly isPerson: (word: Word) => boolean;
  /** Offsets of words an idiom consumed. */
  readonly idiomatic: ReadonlySet<number>;
  /** Offsets of words that call the companion something ("ur an app"). */
  readonly addressed: ReadonlySet<number>;
  /** Whether the message was too short to tell its language. */
  readonly undetermined: boolean;
  /** Offsets of words inside a comparison ("like a cat up a tree"). */
  readonly comparing: ReadonlySet<number>;
  /** Offsets of predicate nouns, which describe someone ("i was a jerk"). */
  readonly describing: ReadonlySet<number>;
  /** Offsets of the lexicon's subjects in the message. */
  readonly subjectOffsets: readonly number[];
}

/**
 * What a message is about beyond the lexicon's subjects: its noun phrases as the person wrote
 * them (runs of nouns, the head singularised: "book clubs" → "book club"). A run whose head a
 * subject already claimed is that subject ("water bottle" is hydration); one whose modifier it
 * claimed keeps the whole phrase ("dentist appointment"). Never a verb, never a stem: words an
 * idiom consumed are none of them ("a test run"), and a head the tagger took for a noun where it
 * is a verb is cut off (`misreadVerb`).
 */
function nounPhrases(
  words: readonly Word[],
  {
    claimed,
    isPerson,
    idiomatic,
    addressed,
    undetermined,
    comparing,
    describing,
    subjectOffsets,
  }: PhraseContext,
): { phrases: Hit[]; all: Hit[]; overruled: Set<number>; scenes: Hit[] } {
  const phrases: Hit[] = [];
  const scenes: Hit[] = [];
  const overruled = new Set<number>();
  let run: Word[] = [];
  let start = 0;
  const close = () => {
    if (misreadVerb(words, start, run, isPerson)) run = run.slice(0, -1);
    const kept = run.slice(-MAX_PHRASE_WORDS);
    const head = kept[kept.length - 1];
    const first = kept[0];
    const circumstance = isCircumstance(words, start);
    const incidental =
      isBareGerund(words, start + run.length - kept.length, kept) ||
      isCounted(words, start, start + run.length) ||
      isPossessor(words, start + run.length) ||
      takesAnObject(words, start + run.length) ||
      isPartOf(words, start, run) ||
      isAdjectiveBeside(words, start, run) ||
      isNone(words, start, run) ||
      onlyReports(words, start, run) ||
      placeAfterTopic(words, prepositionBefore(words, start, MODIFIERS), [
        ...subjectOffsets,
        ...phrases.map((p) => p.offset),
      ]) ||
      run.some((w) => addressed.has(w.offset) || comparing.has(w.offset) || describing.has(w.offset));
    // A subject's word heading a compound of other nouns is not that subject: a "test run" is no
    // exercise, the "data slides" no work in general. An act in -ing only says which kind: "the
    // planning meeting" is a meeting.
    const ownModifier = kept.slice(0, -1).some((w) => !claimed(w.offset) && !w.lower.endsWith("ing"));
    if (head !== undefined && first !== undefined && !incidental && (!claimed(head.offset) || ownModifier)) {
      // An unknown word after one of another language is of that phrase too: "tres leches" has no "lech".
      const foreignPhrase = !head.known && words[start + run.length - kept.length - 1]?.foreign === true;
      const written = [...kept.slice(0, -1).map((w) => w.lower), foreignPhrase ? head.lower : singular(head)];
      const label = `${hyphenatedStart(words, start + run.length - kept.length)}${written.join(" ")}`;
      if (circumstance) scenes.push({ topic: label, offset: first.offset });
      else {
        phrases.push({ topic: label, offset: first.offset });
        if (claimed(head.offset)) overruled.add(head.offset);
      }
    }
    run = [];
  };
  // A word said again for emphasis is the same word: "the bees swarmed. SWARMED." has no noun in it.
  const said = new Set(words.filter((w) => ["VERB", "ADJ", "ADV"].includes(w.pos)).map((w) => w.lower));
  words.forEach((word, i) => {
    const previous = words[i - 1];
    const heads = run.length > 0 && NOUNS.has(word.pos) && COMPOUND_HEADS.has(word.lower);
    const repeated = said.has(word.lower) && !word.known;
    if (run.length > 0 && opensRelativeClause(words, i, isPerson)) {
      // "the pill organiser Graeme bought me": the name is the subject of a clause about the
      // thing, not part of its name, and only says who gave or left it.
      close();
      return;
    }
    if (
      !idiomatic.has(word.offset) &&
      !repeated &&
      (heads || topicalNoun(word, words[i + 1], previous, undetermined))
    ) {
      if (run.length === 0) start = i;
      run.push(word);
    } else if (run.length > 0 && splitsCompound(words, i, undetermined) && !idiomatic.has(word.offset)) {
      run.push(word);
    } else if (run.length > 0 && !idiomatic.has(word.offset) && headsCompound(words, start, run)) {
      // "apple pay", "load shedding": the word the tagger read as a verb is the compound's head.
      run.push(word);
      close();
    } else close();
  });
  close();
  return {
    phrases: phrases.slice(0, MAX_PHRASES),
    all: phrases,
    overruled,
    scenes: scenes.slice(0, MAX_PHRASES),
  };
}

/**
 * Whether the name at `index`, right after a noun, opens a clause about that noun rather than
 * going on with its name: a name followed by its verb ("the pill organiser Graeme bought me", "a
 * chicken carcass Earl left on the counter"). After a person it is their name ("my son Graeme
 * installed it", "my flatmate Wanjiru").
 */
function opensRelativeClause(
  words: readonly Word[],
  index: number,
  isPerson: (word: Word) => boolean,
): boolean {
  const name = words[index];
  const noun = words[index - 1];
  if (name?.pos !== "PROPN" || noun?.pos !== "NOUN" || isPerson(noun)) return false;
  return words[index + 1]?.pos === "VERB";
}

/**
 * Whether the word at `index`, which the tagger read as an adjective between two nouns, is a
 * noun of their compound ("his science fair poster"): an adjective comes before a noun phrase,
 * not inside one.
 */
function splitsCompound(words: readonly Word[], index: number, undetermined: boolean): boolean {
  const next = words[index + 1];
  return (
    words[index]?.pos === "ADJ" &&
    next !== undefined &&
    topicalNoun(next, words[index + 2], words[index], undetermined)
  );
}

/** Forms of "be" that link a subject to what it is, with the contractions chat writes as one word. */
const COPULAS = new Set(
  "is was am are were be been 's 'm 're i'm im you're youre he's she's we're they're".split(" "),
);
/** Subjects whose "is a …" names a thing rather than describes someone ("it's a migraine", "that's the interview"). */
const THING_SUBJECTS = new Set("it this that there here what which".split(" "));

/**
 * Offsets of the words of a predicate noun: after a copula and an article, the noun phrase (and
 * its "of" phrase) that says what someone is ("that man is a legend", "i was a jerk", "she's the
 * brains of this operation"). It describes the subject and is no subject of its own. Not after
 * "it", "that" or "there", whose "is a …" names the thing; not after a possessive ("she's my
 * ride"), which says who someone is to them; not in a question ("what time is the appointment").
 */
function predicateNouns(words: readonly Word[]): Set<number> {
  const found = new Set<number>();
  words.forEach((word, i) => {
    if (!COPULAS.has(word.lower) || (word.pos !== "AUX" && word.pos !== "PROPN" && word.pos !== "NOUN"))
      return;
    // A subject comes first; "when is the last train", "is the clausius inequality on it" ask about one.
    const subject = words[i - 1];
    const glued = word.pos !== "AUX";
    if (!glued && (subject === undefined || !["NOUN", "PROPN", "PRON"].includes(subject.pos))) return;
    if (THING_SUBJECTS.has(subject?.lower ?? "")) return;
    // "What time is the appointment" asks about it: the noun before the copula is the question's.
    if (["what", "which", "whose", "how"].includes(words[i - 2]?.lower ?? "")) return;
    let j = i + 1;
    while (words[j]?.pos === "ADV" || words[j]?.lower === "been") j += 1;
    if (!["a", "an", "the"].includes(words[j]?.lower ?? "")) return;
    for (;;) {
      j += 1;
      while (["ADJ", "ADV", "DET", "PRON"].includes(words[j]?.pos ?? "")) j += 1;
      if (!NOUNS.has(words[j]?.pos ?? "")) return;
      for (; NOUNS.has(words[j]?.pos ?? ""); j += 1) found.add((words[j] as Word).offset);
      if (words[j]?.lower !== "of") return;
    }
  });
  return found;
}

/**
 * Verbs whose object is followed by a bare verb ("let the dog eat", "made me laugh", "saw him
 * fall"): after one, a noun before a verb in its base form is the verb's subject, not a compound.
 */
const BARE_INFINITIVE_VERBS = new Set(
  "let lets make makes made help helps helped watch watched see saw hear heard have had".split(" "),
);

/** Particles that make a phrasal verb of the word before them ("going up", "shut down"). */
const PARTICLES = new Set("up down out off away back over".split(" "));

/**
 * Whether the word after a run of nouns, which the tagger read as a verb, is the head of a
 * compound the run begins ("apple pay", "load shedding", "the Halvorsen launch"), so that the
 * compound is taken whole rather than its first noun alone. The signs are grammatical: a singular
 * noun before a verb in its base form cannot be that verb's subject ("want apple pay"), unless a
 * verb that takes a bare infinitive or an auxiliary comes first ("let the dog eat", "did the baby
 * sleep"); a bare singular noun before an -ing word that takes no object is a compound ("load
 * shedding at 8").
 */
function headsCompound(words: readonly Word[], start: number, run: readonly Word[]): boolean {
  const last = run.at(-1);
  const after = words[start + run.length];
  if (last === undefined) return false;
  if (after?.pos !== "VERB" || isPlural(last) || last.lower.endsWith("s")) return false;
  let i = start - 1;
  while (["DET", "ADJ", "PRON"].includes(words[i]?.pos ?? "") && !VERB_BEFORE.has(words[i]?.lower ?? ""))
    i -= 1;
  const governor = words[i];
  if (governor?.pos === "AUX" || BARE_INFINITIVE_VERBS.has(governor?.lower ?? "")) return false;
  if (after.lemma === after.lower && !/(?:ing|ed)$/.test(after.lower)) return true;
  const bare = words[start - 1]?.pos !== "DET" && words[start - 1]?.pos !== "PRON";
  // "rent going up": an -ing word with a particle or an object is a verb at work.
  const then = words[start + run.length + 1];
  const object =
    ["DET", "PRON", "NOUN", "PROPN"].includes(then?.pos ?? "") || PARTICLES.has(then?.lower ?? "");
  return after.lower.endsWith("ing") && bare && run.length === 1 && !object;
}

/** Whether a word ends a clause: nothing after it, or punctuation, an emoji, a conjunction. */
function endsClause(word: Word | undefined): boolean {
  return word === undefined || ["PUNCT", "SYM", "CCONJ", "INTJ"].includes(word.pos);
}

/**
 * Whether the last word of a run of "nouns" is a verb the tagger misread: a person doing
 * something ("my mom lands thursday", "Dana runs"), a verb before "as" ("the car count as
 * breakfast"), or a clause of a plural subject and its verb alone ("crisps count").
 */
function misreadVerb(
  words: readonly Word[],
  start: number,
  run: readonly Word[],
  isPerson: (word: Word) => boolean,
): boolean {
  const head = run.at(-1);
  const before = run.at(-2);
  if (head === undefined || before === undefined) return false;
  const after = words[start + run.length];
  // A name ending in s ("my friend Tomás") is no verb.
  const thirdPerson = /[^s]s$/.test(head.lower) && head.text === head.lower;
  if (thirdPerson && isPerson(before)) return true;
  if (after?.lower === "as") return true;
  // Any plural in s, even one whose lemma is spelled otherwise ("neighbours" → "neighbor").
  const plural = (w: Word) => w.lemma !== w.lower && /s$/.test(w.lower);
  return (
    run.length === 2 && plural(before) && !plural(head) && endsClause(words[start - 1]) && endsClause(after)
  );
}

/** Verbs that report what someone said or thinks: the clause after one is the news. */
const REPORTING = new Set(["says", "said"]);

/**
 * "Lorraine says I should tell you", "appa says it's routine", "Dr. Patel says my blood pressure
 * is low": a person named bare, as the source of a clause of news, is not what the message is
 * about; the news is. Someone said who they are to the person stays ("my sister Anjali says she can
 * lend me"), and so does a thing that reports ("forecast says 68").
 */
function onlyReports(words: readonly Word[], start: number, run: readonly Word[]): boolean {
  const named = run.every((w) => w.pos === "PROPN" || !w.known || /^\p{Lu}\p{Ll}/u.test(w.text));
  const bare = !["DET", "PRON", "NOUN", "ADJ"].includes(words[start - 1]?.pos ?? "");
  const verb = words[start + run.length];
  const then = words[start + run.length + 1];
  const clause = ["PRON", "DET", "NOUN", "PROPN", "SCONJ", "AUX"].includes(then?.pos ?? "");
  return named && bare && REPORTING.has(verb?.lower ?? "") && clause;
}

/**
 * "no errors", "no regrets", "no worries": things said not to be there, in the plural, are a
 * verdict on something else ("it's live. no errors."), not what the message is about.
 */
function isNone(words: readonly Word[], start: number, run: readonly Word[]): boolean {
  const head = run.at(-1);
  return words[start - 1]?.lower === "no" && head !== undefined && isPlural(head);
}

/** Nouns that before "of" name a part, a side, a container or a measure of something else. */
const PARTITIVE = new Set(
  `side sides cup cups mug mugs glass glasses bowl bowls plate plates pint pints jar jars bottle
  bottles can cans tin tins box boxes bag bags pack packs packet packets pair pairs handful piece
  pieces slice slices bit bits bunch pile front middle edge corner rest half top bottom`.split(/\s+/),
);

/**
 * "her side of the bed", "a mug of tea", "a pair of shoes": a part, a container or a measure of
 * what follows, which is what the message is about.
 */
function isPartOf(words: readonly Word[], start: number, run: readonly Word[]): boolean {
  const [only] = run;
  return (
    run.length === 1 && only !== undefined && PARTITIVE.has(only.lower) && words[start + 1]?.lower === "of"
  );
}

/**
 * "polite but firm,": a lone "noun" joined to an adjective, ending its clause, is an adjective the
 * tagger misread ("random but mocks start" goes on as a clause of its own).
 */
function isAdjectiveBeside(words: readonly Word[], start: number, run: readonly Word[]): boolean {
  const joiner = words[start - 1];
  return (
    run.length === 1 &&
    joiner?.pos === "CCONJ" &&
    words[start - 2]?.pos === "ADJ" &&
    endsClause(words[start + run.length])
  );
}

/**
 * A run that starts inside a hyphenated word ("c-section recovery", "thank-you card") takes the
 * word's first part with it, so the label shows the whole word as written. Empty otherwise.
 */
function hyphenatedStart(words: readonly Word[], index: number): string {
  const hyphen = words[index - 1];
  const before = words[index - 2];
  const glued =
    hyphen?.text === "-" &&
    before !== undefined &&
    before.offset + before.text.length === hyphen.offset &&
    hyphen.offset + 1 === words[index]?.offset &&
    /^\p{L}+$/u.test(before.text);
  return glued ? `${before.lower}-` : "";
}

/** A counted noun is a measure ("80 pages left", "4 yrs", "3 miles"), not what the message is about. */
function isCounted(words: readonly Word[], index: number, after: number): boolean {
  const before = words[index - 1];
  // A clock time is when and an ordinal which, not how many ("the 0:14 train", "her 60th birthday").
  const count = before !== undefined && (before.pos === "NUM" || /^\d/.test(before.text));
  if (!count || /\d:\d\d|\d(?:st|nd|rd|th)$/i.test(before.text)) return false;
  // Counted things that do something are the subject of their clause ("all 14 tomato plants
  // survived", "1400 pipes singing"); "80 pages left", "the 16ft bourdon quit" are still measures.
  if (/\p{L}/u.test(before.text) || !NOUNS.has(words[after - 1]?.pos ?? "")) return true;
  let i = after;
  while (words[i]?.lower === "both" || words[i]?.lower === "all") i += 1;
  const verb = words[i];
  return !(verb !== undefined && (verb.pos === "VERB" || verb.pos === "AUX") && verb.lower !== "left");
}

/** "Nadia's sister": the owner names whose the thing is; the thing is what the message is about. */
function isPossessor(words: readonly Word[], after: number): boolean {
  const mark = words[after];
  const owned = words[after + 1];
  const possessive = isPossessiveMark(mark);
  // "screen's a spiderweb" is "screen is": only a noun (or its adjective) after the mark is owned;
  // an adjective that ends its phrase says what the thing is ("Pua's asleep on my couch").
  if (!possessive || owned === undefined) return false;
  if (owned.pos === "ADJ") return NOUNS.has(words[after + 2]?.pos ?? "") || words[after + 2]?.pos === "ADJ";
  return NOUNS.has(owned.pos);
}

/**
 * "members use the app", "mom lands the job", "first check if it's the redesign", "lindiwe drives
 * her": a noun followed at once by a determiner, by "if" or "whether", or by an object pronoun was a verb the
 * tagger took for a noun, and the run around it is no phrase of the message.
 */
function takesAnObject(words: readonly Word[], after: number): boolean {
  const next = words[after];
  if (next?.lower === "if" || next?.lower === "whether") return true;
  // "lindiwe drives her mondays", "mom calls me": a word before an object pronoun is its verb;
  // "her" owns the thing a noun after it names ("fed the cat her dinner"), not a day or a time.
  if (next?.pos === "PRON" && OBJECT_PRONOUNS.has(next.lower)) {
    const then = words[after + 1];
    const owned =
      next.lower === "her" &&
      then !== undefined &&
      (NOUNS.has(then.pos) || then.pos === "ADJ") &&
      !NOT_TOPICS.has(then.lower);
    if (!owned) return true;
  }
  // "the grief pamphlet the GP gave me": a clause about the noun, not its object.
  const clause = NOUNS.has(words[after + 1]?.pos ?? "") && words[after + 2]?.pos === "VERB";
  return (
    next?.pos === "DET" &&
    ["the", "a", "an", "this", "that", "these", "those"].includes(next.lower) &&
    !clause
  );
}

/**
 * Words that can be the subject of the verb "like" in its base form: "I like tea", "kids like
 * pizza". After anything else ("stuck behind it like a cat", "he like") the base form cannot agree
 * with a subject, so the tagger's verb is the comparison.
 */
const LIKERS = new Set("i you u we they ya".split(" "));

/**
 * Whether "like" at `index` compares ("slept like a baby", "like she pays rent") rather than likes
 * or counts roughly ("like 4 hrs").
 */
function comparesLike(words: readonly Word[], index: number): boolean {
  const word = words[index];
  if (word?.lower !== "like") return false;
  // "like 4000 steps" is about 4000 steps.
  const next = words[index + 1];
  if (next !== undefined && (next.pos === "NUM" || /^\d/.test(next.text))) return false;
  if (word.pos !== "VERB") return true;
  const before = words[index - 1];
  if (before === undefined) return false;
  return !(LIKERS.has(before.lower) || ["AUX", "PART"].includes(before.pos) || isPlural(before));
}

/**
 * Whether "as" at `index` opens a comparison: after an adjective ("cool as a cucumber", "thick as
 * my arm", "as loud as a drill"). Not "such as" (an example) nor "as" after a verb ("count as
 * breakfast", "worked as a nurse"), where what follows is what the thing is.
 */
function comparesAs(words: readonly Word[], index: number): boolean {
  const before = words[index - 1];
  return words[index]?.lower === "as" && before?.pos === "ADJ" && before.lower !== "such";
}

/**
 * Offsets of the words inside a comparison: from "like" or a comparing "as" to the end of its
 * clause ("like a cat up a tree", "like they bill", "as a cucumber"). What a thing is compared to
 * is a figure of speech, not what the message is about.
 */
function comparisons(words: readonly Word[]): Set<number> {
  const inside = new Set<number>();
  words.forEach((_, i) => {
    if (!comparesLike(words, i) && !comparesAs(words, i)) return;
    for (let j = i + 1; j < words.length && !endsComparison(words[j]); j += 1)
      inside.add((words[j] as Word).offset);
  });
  return inside;
}

/** A comparison runs to the end of its clause: punctuation, an emoji, a conjunction. */
function endsComparison(word: Word | undefined): boolean {
  return endsClause(word) || word?.pos === "SCONJ";
}

/** The parts of speech between a preposition and the head of its object ("like a baby"). */
const MODIFIERS = new Set(["ADJ", "NUM", "DET", "PRON", "PART"]);
/** The same, and the nouns before the word in its phrase ("on the case study"). */
const MODIFIERS_AND_NOUNS = new Set([...MODIFIERS, "NOUN", "PROPN"]);

/**
 * The index of the preposition the phrase holding `index` is the object of: back over the words
 * of kinds `over`, the first other word if it is a preposition; -1 when there is none.
 */
function prepositionBefore(words: readonly Word[], index: number, over: ReadonlySet<string>): number {
  let i = index - 1;
  while (i >= 0 && over.has((words[i] as Word).pos)) i -= 1;
  return i >= 0 && (words[i] as Word).pos === "ADP" ? i : -1;
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
  const index = indexAt(words, offset);
  const at = prepositionBefore(words, index, MODIFIERS_AND_NOUNS);
  return at >= 0 && SCENE.has((words[at] as Word).lower) && !saysWhatAbout(words, at);
}

/** Prepositions of place and direction that locate what the clause has already named. */
const PLACING = new Set(["in", "into"]);

/**
 * Whether the preposition at `at` ("in", "to", "from") only places a topic its clause has already
 * named: "a pie from the garage", "found a wedding ring in the pipe", "a sandwich in the
 * hospital", "2 litre Energade in the bakkie". Where nothing before it in the clause is a topic,
 * the place may be what the message is about ("went to the phone shop"), so it is kept.
 */
function placeAfterTopic(words: readonly Word[], at: number, topicOffsets: readonly number[]): boolean {
  const preposition = words[at];
  if (preposition === undefined || !PLACING.has(preposition.lower)) return false;
  let from = at - 1;
  while (from >= 0 && !endsComparison(words[from])) from -= 1;
  const clauseStart = words[from + 1]?.offset ?? 0;
  return topicOffsets.some((offset) => offset >= clauseStart && offset < preposition.offset);
}

/** Nouns of telling, learning and effort: "on" after one says what about ("news on moltbook"). */
const ABOUT_NOUNS = new Set(
  `news update updates progress work notes thoughts feedback advice tips info opinion opinions take
  article book documentary podcast video talk lecture course class paper report question questions
  help focus views research study workshop`.split(/\s+/),
);

/**
 * Whether the "on" at `index` says what something is about rather than where or when: after a
 * noun of telling or effort ("news on moltbook", "progress on the launch") or an adjective
 * ("shaky on the metrics question", "less fine on the client"). Elsewhere it sets a scene ("a
 * bagel on the walk back", "the phone shop on the high street").
 */
function saysWhatAbout(words: readonly Word[], index: number): boolean {
  const before = words[index - 1];
  if (words[index]?.lower !== "on" || before === undefined) return false;
  return before.pos === "ADJ" || (NOUNS.has(before.pos) && ABOUT_NOUNS.has(before.lower));
}

/** Whether the noun phrase starting at `index` is the object of a scene-setting preposition. */
function isCircumstance(words: readonly Word[], index: number): boolean {
  const at = prepositionBefore(words, index, MODIFIERS);
  return at >= 0 && CIRCUMSTANCE.has((words[at] as Word).lower) && !saysWhatAbout(words, at);
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

function indexAt(words: readonly Word[], offset: number): number {
  return words.findIndex((w) => w.offset === offset);
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
  const { words, undetermined } = english;
  const tokens = tokenize(text);
  const consumed = tokens.map(() => false);
  const idiomatic = new Set<number>();
  const subjects = [...lexiconHits(text, tokens, consumed, idiomatic), ...emojiHits(text)];
  const claimed = (offset: number) =>
    tokens.some((t, i) => consumed[i] && t.offset <= offset && offset < t.end);
  const subjectAt = new Map(subjects.map((h) => [h.offset, h.topic]));
  const isPerson = (w: Word) =>
    PEOPLE.has(subjectAt.get(w.offset) ?? "") || (w.pos === "PROPN" && /^\p{Lu}/u.test(w.text));
  const addressed = addressedWords(words);
  const spokenTo = vocatives(words, isPerson);
  const comparing = comparisons(words);
  const describing = predicateNouns(words);
  const { phrases, all, overruled, scenes } = nounPhrases(words, {
    comparing,
    describing,
    subjectOffsets: subjects.map((h) => h.offset),
    claimed,
    isPerson,
    idiomatic,
    addressed,
    undetermined,
  });
  // A word compared once is compared wherever it comes back ("like a baby. a baby that sleeps").
  const stemAt = (offset: number) => tokens.find((t) => t.offset === offset)?.stem ?? String(offset);
  const compared = new Set(subjects.filter((h) => comparing.has(h.offset)).map((h) => stemAt(h.offset)));
  const said = subjects.filter(
    (hit) =>
      !overruled.has(hit.offset) &&
      !compared.has(stemAt(hit.offset)) &&
      !addressed.has(hit.offset) &&
      !notTheirs(words, hit, subjectAt),
  );
  const topicOffsets = [...said.map((h) => h.offset), ...all.map((p) => p.offset)];
  const placed = (hit: Hit) =>
    placeAfterTopic(
      words,
      prepositionBefore(words, indexAt(words, hit.offset), MODIFIERS_AND_NOUNS),
      topicOffsets,
    );
  const [scene, raised] = partition(
    said.filter((hit) => PEOPLE.has(hit.topic) || !placed(hit)),
    (hit) => !PEOPLE.has(hit.topic) && setsTheScene(words, hit.offset),
  );
  // The scene is the topic only when nothing else in the message is ("long day at work").
  const kept = raised.length + phrases.length > 0 ? raised : scene;
  const shown = (hits: readonly Hit[]) =>
    unique(
      hits
        .filter(
          (hit) => !spokenTo.has(hit.offset) && !describing.has(hit.offset) && !comparing.has(hit.offset),
        )
        .sort((a, b) => a.offset - b.offset)
        .map((h) => h.topic),
    );
  const topics = shown([...kept, ...phrases, ...eventsLeft(tokens, consumed, all)]);
  if (topics.length > 0) return topics;
  // How they feel is the subject when it is all the message tells ("pretty stressed out honestly"),
  // so an answer meets "how are you feeling?"; beside other news it is their mood, not the topic.
  if (detectMood(text, language) !== null) return ["mood"];
  // Where they were, or what with, is what they tell when nothing else is ("was on the tram",
  // "got it out with a drain rod").
  return shown(scenes);
}

/** What people call the companion when they do not name it. */
const COMPANION = new Set(["app", "bot", "chatbot", "ai", "robot"]);

/** "you're", "ur", "you are": what follows calls the companion something. */
const YOU = new Set(["you", "u", "ya"]);
const ARE = new Set(["'re", "are", "r", "re"]);
const YOU_ARE = new Set(["ur", "youre", "you're"]);

/**
 * The words that say what the companion is ("ur an app", "You're a good listener", "ur literally
 * my mum rn", "weird thing to say to an app"): said to it, not about anything the person talks
 * about. "ur mum" (your mum), with a noun right after "ur", is not one, nor "a loyalty app".
 */
function addressedWords(words: readonly Word[]): Set<number> {
  const found = new Set<number>();
  words.forEach((word, i) => {
    // "weird thing to say to an app": an app or a bot, unnamed, is the one they talk to.
    const some = words[i - 1]?.lower === "a" || words[i - 1]?.lower === "an";
    if (some && COMPANION.has(word.lower) && !NOUNS.has(words[i + 1]?.pos ?? "")) found.add(word.offset);
    let j = -1;
    if (YOU.has(word.lower) && ARE.has(words[i + 1]?.lower ?? "")) j = i + 2;
    else if (YOU_ARE.has(word.lower) && !NOUNS.has(words[i + 1]?.pos ?? "")) j = i + 1;
    if (j < 0) return;
    while (["ADV", "DET", "PRON", "ADJ", "PART"].includes(words[j]?.pos ?? "") || words[j]?.lower === "like")
      j += 1;
    for (let w = words[j]; w !== undefined && NOUNS.has(w.pos); w = words[++j]) found.add(w.offset);
  });
  return found;
}

/**
 * Whether a subject's word is not about the person's own subject: it only says which kind of
 * something else ("a chill one", "not a mum one"); a relative who is someone else's ("jas's mum")
 * or only described ("a family that screamed at me"); eating done by someone or something else
 * ("vending machine ate my dollar", "a man eating a kapsalon", "the finale ATE").
 */
function notTheirs(words: readonly Word[], hit: Hit, subjectAt: ReadonlyMap<number, string>): boolean {
  const index = indexAt(words, hit.offset);
  const word = words[index];
  if (word === undefined) return false;
  const next = words[index + 1];
  if (next?.lower === "one" || next?.lower === "ones") return true;
  if (hit.topic === "family") {
    const mark = words[index - 1];
    const owner = words[index - 2];
    const owned = isPossessiveMark(mark);
    if (owned && owner !== undefined && NOUNS.has(owner.pos) && subjectAt.get(owner.offset) !== "family")
      return true;
    let i = index - 1;
    while (words[i]?.pos === "ADJ") i -= 1;
    const some = words[i]?.lower === "a" || words[i]?.lower === "an";
    if (some && ["that", "who", "which", "whose"].includes(next?.lower ?? "")) return true;
  }
  if (!HABITS.has(hit.topic)) return false;
  if (["VERB", "ADJ", "AUX"].includes(word.pos)) return !ownClause(words, index);
  if (!NOUNS.has(word.pos)) return false;
  // A habit a noun names after a preposition or a copula is that of the clause's subject: "he's
  // begging for breakfast", "she's more chill than me". What someone makes or gives is still
  // the person's ("Dev made pancakes").
  let i = index - 1;
  let preposition = false;
  while (
    ["DET", "NUM", "ADJ", "ADV", "ADP"].includes(words[i]?.pos ?? "") ||
    POSSESSIVES.has(words[i]?.lower ?? "")
  ) {
    if (words[i]?.pos === "ADP") preposition = true;
    i -= 1;
  }
  const verb = words[i];
  if (verb === undefined || !(verb.pos === "AUX" || (verb.pos === "VERB" && preposition))) return false;
  // Someone named or pointed to ("he", "Dev"); "today is for pizza" is when, not who.
  const subject = clauseSubject(words, i);
  return (subject?.pos === "PRON" || subject?.pos === "PROPN") && !OWN_SUBJECTS.has(subject.lower);
}

/** Subjects a person keeps as their own habit: done or felt by someone else, they are not theirs. */
const HABITS = new Set(["sleep", "food", "hydration", "movement", "rest"]);
/** Subjects that make a habit the person's: themselves, or the companion asking after it ("did you sleep?"). */
const OWN_SUBJECTS = new Set("i we you u ya i'm im my our your ur".split(" "));

/**
 * Whether the verb or adjective at `index` is said of the person: its clause's subject is "I",
 * "we" or "you", or it has none ("slept badly", "tired."). A third person, a name or a thing as
 * the subject ("Pua's asleep", "she'll eat the malasadas", "the dog ate grass", "he was more
 * awake", "the math works out") makes the habit someone else's. A verb joined by "and" shares the
 * subject its clause began with ("He did four clues and slept").
 */
function ownClause(words: readonly Word[], index: number): boolean {
  const subject = clauseSubject(words, index);
  if (subject === undefined || !["NOUN", "PROPN", "PRON"].includes(subject.pos)) return true;
  return OWN_SUBJECTS.has(subject.lower);
}

/**
 * The word before the verb or adjective at `index` that may be its subject: back over adverbs and
 * auxiliaries, or to the start of the clause a verb after "and" shares. None for an infinitive
 * ("to bed", "wants to eat"), whose subject is not beside it.
 */
function clauseSubject(words: readonly Word[], index: number): Word | undefined {
  let i = index - 1;
  while (["ADV", "AUX", "PART"].includes(words[i]?.pos ?? "") && words[i]?.lower !== "to") i -= 1;
  if (words[i]?.lower === "to") return undefined;
  if (words[i]?.pos === "CCONJ") {
    i -= 1;
    while (i >= 0 && !endsSentence(words[i])) i -= 1;
    i += 1;
    while (["ADV", "DET", "ADJ", "INTJ", "CCONJ"].includes(words[i]?.pos ?? "")) i += 1;
  }
  return words[i];
}

/** Whether a word ends a sentence (or is where a new one starts after a comma splice). */
function endsSentence(word: Word | undefined): boolean {
  return word === undefined || word.pos === "PUNCT" || word.pos === "SYM";
}

/** Words besides answers and greetings that a person's name may follow without a comma ("ok Dana", "night mum"). */
const NAME_AFTER = new Set("ok okay night morning".split(" "));
/** Answers and thanks: the one noun right after one, closing the clause, is whom they answer ("yes madam 🫡"); after "ok" only a person is ("ok rankine." names the next thing). */
const ANSWERS = new Set("yes yeah yep yup no nope thanks thx ta".split(" "));
/** Greetings whose noun after them is whom they greet ("Good morning sugar!", "hey team"). */
const GREETINGS = new Set("hi hey hiya bye".split(" "));
/** Times of day that greet after "good" ("Good morning sugar!"); alone, "morning coffee" names a coffee. */
const GOOD_TIMES = new Set("morning night evening afternoon".split(" "));
/** Words that speak to the reader: a noun set off by a comma before one calls them something ("honey, you don't need to"). */
const SECOND_PERSON = new Set("you u ur your ya".split(" "));

/** Whether a word ends its sentence: nothing after it, a full stop, or an emoji in its place. */
function closesSentence(word: Word | undefined): boolean {
  return word === undefined || /^(?:[.!?\u2026]|\p{Extended_Pictographic})/u.test(word.text);
}

/** Whether a word closes what comes before it: the end of a clause (an emoji among them) or a kiss ("x"). */
function closesAddress(word: Word | undefined): boolean {
  return endsClause(word) || word?.lower === "x";
}

/**
 * Offsets of the words that call the reader something, or exclaim, rather than name what the
 * message is about: the one word after a comma that ends the sentence ("Goodnight, friend.",
 * "Thank you, pet ❤️"); a person named alone right after "ok" or "night" ("night mum"); any one
 * noun that closes its clause right after an answer word that is no determiner, thanks or a
 * greeting ("yes mum 🙄", "thank you Dana!", "yes madam 🫡", "Yes ma'am,", "Good morning sugar!";
 * "no milk 😭" says there is none); and a bare noun that opens a sentence, set off by a comma
 * before "you" ("Though honey, you don't need to ask"). An oath before "yes" ("Lord yes.") names
 * nothing through NOT_TOPICS, so a checklist's "Gym yes. Water no." keeps both.
 */
function vocatives(words: readonly Word[], isPerson: (word: Word) => boolean): Set<number> {
  const found = new Set<number>();
  words.forEach((word, i) => {
    const before = words[i - 1];
    if (before?.text === "," && /^[\p{L}']+$/u.test(word.text)) {
      let next = i + 1; // over the parts of a hyphenated word ("my scene-setting")
      while (words[next]?.text === "-" && words[next + 1] !== undefined) next += 2;
      if (closesSentence(words[next])) found.add(word.offset);
    }
    if (!NOUNS.has(word.pos)) return;
    const after = words[i + 1];
    const thanked = before?.lower === "you" && words[i - 2]?.lower === "thank";
    if (NAME_AFTER.has(before?.lower ?? "") && isPerson(word) && closesAddress(after)) found.add(word.offset);
    const answered = ANSWERS.has(before?.lower ?? "") && before?.pos !== "DET";
    const greeted =
      GREETINGS.has(before?.lower ?? "") ||
      (GOOD_TIMES.has(before?.lower ?? "") && words[i - 2]?.lower === "good");
    if ((answered || thanked || greeted) && closesAddress(after)) found.add(word.offset);
    const lead = ["INTJ", "CCONJ", "SCONJ"].includes(before?.pos ?? "") ? i - 2 : i - 1;
    if (endsSentence(words[lead]) && after?.text === "," && SECOND_PERSON.has(words[i + 2]?.lower ?? ""))
      found.add(word.offset);
  });
  return found;
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

/** Labels that name what a message does rather than what it is about: no topic, as "morning!" has none. */
const SPEECH_ACTS = new Set([
  "greeting",
  "greetings",
  "goodnight",
  "good night",
  "goodbye",
  "farewell",
  "sign-off",
  "thanks",
  "gratitude",
  "acknowledgement",
  "acknowledgment",
  "small talk",
  "pleasantries",
  "chitchat",
  "chit-chat",
]);

/** A label of only these words ("morning", "good morning", "friday night") says when, not what. */
const WHEN = new Set(
  `good early late morning mornings afternoon evening night nights day days week weekend today tonight
  tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday`.split(/\s+/),
);

/**
 * Maps any label (lexicon, noun phrase, or reflection's free text) onto the label the code
 * would give, so an annotated message and a read one meet. A label becomes a lexicon subject
 * only when it IS that subject ("Water intake" is hydration; "books" is not learning): every
 * word of it belongs to one subject, or only says which side of it. Anything else stays as
 * written, lowered, its last word singular. Null for what is no topic: an old stem label, a greeting, a time of day.
 */
export function canonicalTopic(label: string): string | null {
  const cleaned = label
    .trim()
    .toLowerCase()
    .replace(/^(?:the|a|an|my|your|our|their|his|her)\s+/, "");
  if (cleaned === "" || cleaned.startsWith(LEGACY_PREFIX) || SPEECH_ACTS.has(cleaned)) return null;
  if (domains.has(cleaned)) return cleaned;
  const tokens = tokenize(cleaned);
  if (tokens.every((t) => WHEN.has(t.surface))) return null;
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

/** How a topic reads in prose: lexicon subjects as they are, the person's own words in quotes. */
export function topicName(topic: string): string {
  return domains.has(topic) ? topic : `"${topic}"`;
}
