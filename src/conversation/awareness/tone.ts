import { createRequire } from "node:module";
import Sentiment from "sentiment";
import type { Message, Mood, Tone } from "../../core/message.ts";
import { DEFAULT_LANGUAGE, englishReading } from "./reading.ts";

const require = createRequire(import.meta.url);

/**
 * The AFINN-165 word list and emoji scores that ship with the `sentiment` package, read
 * once at load: the tone detector builds on one maintained list instead of a home-made one.
 */
const AFINN_WORDS: Readonly<Record<string, number>> = require("sentiment/languages/en/labels.json");

/** Emoji scores from the Emoji Sentiment Ranking, as shipped with `sentiment`. */
const AFINN_EMOJI: Readonly<Record<string, number>> = require("sentiment/build/emoji.json");

/** A tone, or `unknown` when the person has not spoken in the exchange. */
export type ExchangeTone = Tone | "unknown";

/** A sentence aimed at the companion scoring at or below this reads as friction; AFINN words score ±1 to ±5. */
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
const FLAT_ACKS = new Set([
  "ok",
  "okay",
  "sure",
  "yep",
  "yup",
  "noted",
  "mhm",
  "k",
  "kk",
  "alright",
  "yes",
  "no",
]);

/** Friction aimed at the companion or the conversation: being asked again, pestered, not listened to. */
const TENSE_PHRASES =
  /\b(?:stop (?:asking|texting|messaging|pinging|checking|nagging|it)|leave me alone|not now|i already (?:told|said|answered|did)|already told you|you already asked|you asked (?:that|this) already|enough with|back off|give me a break|get off my back|i said i'?m fine|quit (?:asking|it)|you keep (?:asking|saying|bugging|pinging|messaging)|why do you keep|do you ever stop|can you not|so many questions|(?:you'?re|you are|this is|that'?s|so) (?:annoying|useless|unhelpful|not helpful|pushy|nagging|creepy|exhausting)|you don'?t (?:listen|get it|understand)|you'?re not listening|that'?s not what i (?:said|asked)|i didn'?t ask|nobody asked|not helpful|not the point|chill with|relax with|jeez|ffs|stop with|let it go|drop it|mind your own|none of your business|not your business|again\?|seriously\?|can we not|do you have to|you sound like|i can manage|i'?m (?:an )?adult|(?:don'?t|no) need to (?:check|ask|remind)|stop doing|i know when|happy\?$|that'?s it\?|as i (?:already )?(?:mentioned|said)|per my (?:last|earlier|previous) message|before you ask|let me live|why do you (?:even )?care|you'?re (?:literally |basically |like )*my (?:mum|mom|mother|dad|parent)|not a (?:child|kid|baby)|i'?ll decide (?:that )?(?:myself|for myself)|i (?:do not|don'?t) appreciate)/i;
/**
 * Mock thanks or praise for a reminder: nobody needs reminding to eat or sleep "on my own", and
 * "circling back" is a nag's phrase. Only these shapes: thanks for a reminder "without which I'd
 * never have remembered lunch!!" is sincere as often as not, and a warm emoji makes it so.
 */
const SARCASM =
  /\b(?:(?:i'?d|i would|i) never (?:have |'ve )?(?:thought (?:of|to|about)|remembered)(?: to)? (?:eat(?:ing)?|dinner|lunch|breakfast|food|drink(?:ing)?|water|sleep(?:ing)?|bed|breath(?:e|ing))\b[^.!?]*\b(?:on my own|by myself)|(?:wonderful|lovely|great|nice|kind|thoughtful|sweet|good) of you to (?:circle back|bring (?:it|that|this) up again|remind me again)|thanks?(?: you)?,? captain obvious|(?:groundbreaking|revolutionary|life-?changing|mind-?blowing|earth-?shattering) (?:advice|tip|idea|suggestion|insight)|wow,? (?:groundbreaking|revolutionary|life-?changing|mind-?blowing|earth-?shattering)|oh great,? (?:the|this|that) [^.!?]*\b(?:bot|app|robot)\b)\b/i;
/**
 * Pointed repetition: this was answered before, and before that. Counting alone is no edge ("for
 * the 2nd time ever", "how many times do I water the basil?"): it must be the telling repeated.
 */
const POINTED_REPETITION =
  /\b(?:as (?:it was|i said|i did|i told you|you said|you asked|you reminded me) (?:yesterday|last (?:night|time|week)|this morning|earlier|before)|you (?:already )?asked(?: me)?(?: about \w+)? (?:this morning|yesterday|earlier|already|before)|i (?:said|told you)\b[^.!?]*,? didn'?t i|i (?:literally |just |already )?told you (?:this morning|yesterday|earlier|last night|at \w+|on \w+day)|for the (?:hundredth|millionth|umpteenth|nth) time|how many times (?:do|must|have|will) (?:i|you) (?:have to |need to |gotta )?(?:tell|say|explain|repeat|answer|ask|remind))\b/i;
/**
 * Retorts that answer back: a rebuff in one word, a lifetime's practice, the companion called a
 * parent, a person's age against the advice, a rhetorical tag, the companion's words quoted to
 * deny them.
 */
const RETORTS = [
  // "sleep? lol. don't.": "don't" as the whole last sentence.
  /(?:^|[.!?]\s*)(?:please |just )?don'?t(?: even| start)?[.!]*\s*$/i,
  // "I've been feeding myself for 66 years, you know": a lifetime's practice against the advice.
  /\bi(?:'ve| have)(?: been)? \w+(?:ed|ing) (?:myself|my own \w+) (?:for|since) (?:\d+|\w+) (?:years|decades)\b|\bi(?:'ve| have) been \w+ing\b[^.!?]* (?:years|decades),? you know\b/i,
  // Calling the companion a parent: "aye ok mum", "yes mother".
  /^(?:(?:yes|yeah|ok|okay|alright|aye|fine|sure)[,.]? )+(?:mum|mom|mam|mother|dad|father)\s*(?:[.!,\p{Extended_Pictographic}]|$)/iu,
  // "im 52 not 5", "I'm a grown adult, not a child".
  /\bi'?m (?:\d+|a grown(?:[- ]up| (?:wo)?man| adult)?),? not (?:\d+|a (?:child|kid|baby|toddler))\b/i,
  // "if i knew i wouldn't be stressed would i": a negative conditional with a tag thrown back.
  /^if i\b[^.!?]*\bi (?:wouldn'?t|would not|won'?t|couldn'?t|can'?t)\b[^.!?]*,?\s*(?:would|will|could|can) i\s*\?*\s*$/i,
  // "i wasnt 'out late'": their own doing denied in quotes, unless someone else is in it ("she said i was 'rude'").
  /^(?!.*\b(?:she|he|they|she'?s|he'?s|they'?re)\b).*\bi (?:wasn'?t|was not|am not|'m not|didn'?t|did not) (?:\w+ )?['"\u201c][^'"\u201d]+['"\u201d]/i,
];
/** Being asked the same thing over and over, said to the companion. */
const EVERY_TIME =
  /\b(?:every (?:single )?(?:day|morning|night|evening|time|hour|two hours|few hours)|all the time|same question|each (?:day|morning))\b/i;
/** Affection or enthusiasm toward the companion: thanks, love, laughing along. */
const WARM_PHRASES =
  /\b(?:thank you|thanks|thx|ty|tysm|love (?:it|that|you|this|u)|made my day|you'?re (?:the best|sweet|a star|lovely|amazing|so kind)|(?:so|very) (?:sweet|kind) of you|miss(?:ed)? you|means a lot|appreciate (?:it|you|that|this)|good to (?:talk|hear from) you|you always|haha|hahaha|hehe|lol)\b/i;
/** Emoji that carry affection toward whoever is read. */
const WARM_EMOJI =
  /(?:\u2764|\u{1F970}|\u{1F917}|\u{1FAF6}|\u{1F618}|\u{1F64F}|\u{1F495}|\u{1F496}|\u{1F60D}|\u{1F602}|\u{1F923})/u;
/** An eye-roll is pointed at whoever is read, unless its sentence is about someone else ("she acts like she pays rent 🙄"). */
const TENSE_EMOJI = /\u{1F644}/u;
const SOMEONE_ELSE = /\b(?:she|he|they|her|him|them|she'?s|he'?s|they'?re|shes|hes|theyre)\b/i;

function rollsEyesAtCompanion(text: string): boolean {
  return text
    .split(/[.!?\n]+/)
    .some((sentence) => TENSE_EMOJI.test(sentence) && !SOMEONE_ELSE.test(sentence));
}

/**
 * Telling the companion to hold off: "pls dont start with the water thing", "dont make a big deal
 * of it", "you don't need to manage me", "can you turn that off", "the app keeps buzzing me",
 * "before you start, … I don't need the lecture". Only what the companion does is named after
 * "don't": "Don't know yet", "don't worry" and "don't laugh" are no friction, nor is "you keep
 * making me laugh" or a real "can I eat now?".
 */
const HOLD_OFF = [
  /(?:^|[.!?,;]\s*)(?:(?:please|pls|plz|just|and|but|so|oh)\s+)*(?:don'?t|do not)\s+(?:start|make|fuss|nag|lecture|remind|bug|bother|pester|message|text|ping|comment|ask (?:me )?(?:again|about)|do (?:that|this|it) again)\b/i,
  /\byou (?:don'?t|do not) (?:have|need) to (?!worry|apologi[sz]e|be sorry|feel bad|thank|rush|reply|answer)\w+/i,
  /\b(?:can|could|would) you (?:please |pls )?(?:turn|switch|shut) (?:that|it|this|them|those)(?: \w+)? off\b/i,
  /\b(?:you|the app|this app) keeps? (?:buzz|ping|wak|bugg|nagg|messag|text|ask|remind|bother|pester)ing me\b/i,
  /\bi know (?:how to|what i'?m doing)\b[^.!?]*,\s*thanks?\b/i,
  /\bcan i (?:\w+ )?\w+ now\s*$/i,
  /\bread the room\b/i,
  /\b(?:i would|i'd|may i) ask (?:you )?(?:not to|to stop)\b/i,
  /\bcan you stop\b|\bbefore you start\b|\bdon'?t need (?:a|the|another) lecture\b/i,
];

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
  if (words.length <= 3 && /^no\./.test(trimmed)) return true;
  return words.length === 1 && FLAT_ACKS.has(phrase) && trimmed.endsWith(".");
}

/**
 * An apology mends friction; its negative words ("sorry I was a jerk", "I was rude to you") are not
 * aimed at the companion. Nor are a gratitude's ("lonely without you to talk to").
 */
const APOLOGY =
  /\b(?:sorry|apologi[sz]e)\b|\bwithout (?:you|u)\b|\bi was (?:rude|short|snippy|harsh|mean|sharp|grumpy) (?:to|with) (?:you|u)\b/i;

/**
 * A "you" after someone else is named in the sentence speaks to them, not the companion ("shes 19
 * get ur own clothes"), as does one after a name or title said to open it ("Madam, you told me size 12").
 */
const SPOKEN_TO_SOMEONE_ELSE =
  /\b(?:she|he|they|she'?s|he'?s|they'?re|shes|hes|theyre)\b[^.!?]*\b(?:you|your|you'?re|u|ur)\b|^\s*(?:madam|sir|ma'?am|mrs?\.? \w+|\p{Lu}\p{Ll}+),\s+(?:you|your)\b/iu;

/** Words that put the companion or the conversation itself in the sentence. */
const ADDRESSED =
  /\b(?:you|your|you'?re|u|ur|this app|this application|this program|these (?:messages|check-?ins|questions)|the check-?ins)\b/i;

/**
 * The tone of one message between the person and the companion. Tense is friction: a curt reply
 * ("fine.", "k"), a pointed phrase ("stop asking", "I already told you"), or a negative message
 * aimed at the companion; the person's own bad day is their mood, not tension. Warm is thanks,
 * affection or laughing along. A message not in English gets a tone only from its emoji.
 */
export function detectTone(text: string, language: string = DEFAULT_LANGUAGE): Tone {
  const english = englishReading(text, language) !== null;
  if (!english) return WARM_EMOJI.test(text) ? "warm" : "neutral";
  const spelled = spelledOut(text).replace(/[\u2018\u2019]/g, "'");
  if (isCurt(text) || TENSE_PHRASES.test(spelled) || rollsEyesAtCompanion(text)) return "tense";
  if (HOLD_OFF.some((r) => r.test(spelled))) return "tense";
  if (
    (SARCASM.test(spelled) && !WARM_EMOJI.test(text)) ||
    POINTED_REPETITION.test(spelled) ||
    RETORTS.some((r) => r.test(spelled.trim()))
  )
    return "tense";
  // "thanks for checking in every night this week" is gratitude for the same thing.
  if (
    EVERY_TIME.test(text) &&
    !/\bthank/i.test(text) &&
    (ADDRESSED.test(text) || /\b(?:ask|question|check)/i.test(text))
  )
    return "tense";
  const aimed = text
    .split(/[.!?\n]+/)
    .some(
      (sentence) =>
        ADDRESSED.test(sentence) &&
        !APOLOGY.test(sentence) &&
        !SPOKEN_TO_SOMEONE_ELSE.test(sentence) &&
        toneScore(sentence) <= TENSE_AT,
    );
  if (aimed) return "tense";
  if (WARM_PHRASES.test(text) || WARM_EMOJI.test(text)) return "warm";
  return "neutral";
}

/** Chat spellings of "you" and "your" written out, so "can u not" reads as "can you not". */
function spelledOut(text: string): string {
  return text
    .replace(/\b(?:u|ya)\b/gi, "you")
    .replace(/\bur\b/gi, "you're")
    .replace(/\bim\b/gi, "i'm");
}

/** A message's tone: reflection's annotation when present, else {@link detectTone}. */
export function messageTone(message: Message, language: string = DEFAULT_LANGUAGE): Tone {
  return message.annotations?.tone ?? detectTone(message.text, language);
}

/**
 * Words that show the person's own state, mood by mood, in the order they are tried. Plain
 * adjectives count only said of themselves ("I'm so tired", "feeling low", or opening the
 * message: "Exhausted."), since "a sad pretzel" or "people cried" is no mood of theirs; the
 * phrases and emoji count anywhere.
 */
const MOODS: readonly { mood: Mood; said: string; anywhere: RegExp }[] = [
  {
    mood: "sick",
    said: "sick|ill|feverish|nauseous|sick as a dog",
    anywhere:
      /\b(?:(?:got|getting|coming down with) (?:the |a )?(?:flu|cold)|have (?:a|the) (?:cold|flu|fever)|a fever|migraine|throwing up|under the weather)\b|\u{1F912}|\u{1F927}/iu,
  },
  {
    mood: "tired",
    said: "tired|exhausted|knackered|wiped(?: out)?|drained|sleepy|worn out|wrecked|shattered|zonked",
    anywhere: /\b(?:dead on my feet|running on (?:fumes|empty)|so tired|bone tired)\b|\u{1F971}/iu,
  },
  {
    mood: "stressed",
    said: "stressed(?: out)?|overwhelmed|swamped|slammed|frazzled|under pressure",
    // Their own stressing: "my mum is already stressing about samosas" is hers.
    anywhere:
      /\b(?:so stressed|too much on my plate|drowning in|(?:i'?m|i am) stressing (?:out|about))\b|^stressing (?:out|about)\b/i,
  },
  {
    mood: "nervous",
    said: "nervous|jittery|on edge|terrified",
    anywhere: /\b(?:wish me luck|butterflies|stomach in knots|so nervous)\b/i,
  },
  {
    mood: "worried",
    said: "worried|anxious|scared|afraid|concerned|freaking out|panicking",
    anywhere: /\b(?:i'?m worried|so worried|worried (?:about|that|sick))\b|\u{1F61F}|\u{1F630}/iu,
  },
  {
    mood: "sad",
    said: "sad|down|low|lonely|heartbroken|miserable|depressed|gutted|bummed|blue|crushed",
    anywhere:
      /\b(?:feel(?:ing)? (?:like )?crap|broke my heart|want to cry|been crying|i miss (?:her|him|them|my \w+) so much)\b|\u{1F622}|\u{1F494}/iu,
  },
  {
    mood: "angry",
    said: "angry|furious|pissed(?: off)?|livid|fuming|so mad|mad",
    anywhere:
      /\b(?:i could scream|so angry|makes me (?:so )?(?:mad|angry))\b|\u{1F620}|\u{1F621}|\u{1F92C}/iu,
  },
  {
    mood: "upbeat",
    said: "happy|excited|thrilled|stoked|proud|over the moon|on top of the world",
    anywhere:
      /\b(?:great news|so happy|so excited|best day|yay|woohoo|got the job|nailed it|unreasonably proud|so proud)\b|\u{1F389}|\u{1F973}|\u{1F929}/iu,
  },
  {
    mood: "calm",
    said: "relaxed|calm|peaceful|chilled|at peace|content",
    anywhere: /\u{1F60C}/u,
  },
];

/** Words that only say how much ("pretty stressed", "kind of anxious"). */
const DEGREE =
  "so|really|very|super|a bit|kinda|kind of|sort of|pretty|totally|completely|just|absolutely|a little|quite";

/** "I'm so tired", "feeling low", "am exhausted", or the word opening the message ("Exhausted.", "Pretty stressed out"). */
function saidOfThemselves(words: string): RegExp {
  return new RegExp(
    `(?:^|[.!?]\\s*)(?:(?:${DEGREE}) )*(?:${words})(?=\\s*(?:[.,!\u2026]|$|and\\b|after\\b|from\\b|with\\b|today\\b|again\\b|tonight\\b|honestly\\b|tbh\\b|rn\\b|lol\\b))|\\b(?:i'?m|i am|im|i feel|feeling|feel|am|got|getting|still) (?:(?:${DEGREE}) )*(?:${words})\\b`,
    "i",
  );
}
const MOOD_PATTERNS = MOODS.map((m) => ({
  mood: m.mood,
  said: saidOfThemselves(m.said),
  anywhere: m.anywhere,
}));
const MOOD_NEGATED = /\b(?:not|never|isn'?t|wasn'?t|no longer|less|don'?t|didn'?t|hardly)\s+(?:\w+\s+)?$/i;
/** Someone else as what comes just before a mood phrase: "she's so excited", "my mum is so worried". */
const SOMEONE_ELSES =
  /\b(?!(?:i|it|that|this|there|here|what)\b)[a-z]+(?:'s|'re| is| was| are| were| seems| looks)\s+(?:already\s+)?$/i;

/**
 * The person's mood as one of their messages shows it, or null when it shows none clearly
 * ("not tired at all" shows none). Only for English text; another language's mood comes from
 * reflection's annotation.
 */
export function detectMood(text: string, language: string = DEFAULT_LANGUAGE): Mood | null {
  if (englishReading(text, language) === null) return null;
  const normalized = text.replace(/[\u2018\u2019]/g, "'").trim();
  for (const { mood, said, anywhere } of MOOD_PATTERNS) {
    const saidMatch = said.exec(normalized);
    const match = saidMatch ?? anywhere.exec(normalized);
    if (match === null) continue;
    const before = normalized.slice(0, match.index);
    if (MOOD_NEGATED.test(before)) continue;
    // A phrase found anywhere may be said of someone else; `said` already names the person.
    if (saidMatch === null && SOMEONE_ELSES.test(before)) continue;
    return mood;
  }
  return null;
}

/** A message's mood: reflection's annotation when present, else {@link detectMood} (the person's messages only). */
export function messageMood(message: Message, language: string = DEFAULT_LANGUAGE): Mood | null {
  if (message.role !== "user") return null;
  return message.annotations?.mood ?? detectMood(message.text, language);
}

/**
 * The tone of an exchange is the person's: any tense message of theirs makes it tense
 * (one curt reply outweighs pleasantries), else any warm one makes it warm. The
 * assistant's own words do not colour it; with nothing from the person it is unknown.
 */
export function exchangeTone(
  exchange: readonly Message[],
  language: string = DEFAULT_LANGUAGE,
): ExchangeTone {
  const tones = exchange.filter((m) => m.role === "user").map((m) => messageTone(m, language));
  if (tones.length === 0) return "unknown";
  if (tones.includes("tense")) return "tense";
  if (tones.includes("warm")) return "warm";
  return "neutral";
}
