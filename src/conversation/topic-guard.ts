import { createRequire } from "node:module";
import type { Chrono } from "chrono-node";
import { DateTime } from "luxon";
import type { Annotations, Message } from "../core/message.ts";
import { formatDuration } from "../core/text.ts";
import { unansweredAskedTopics } from "./awareness/build.ts";
import type { AwarenessContext } from "./awareness/context.ts";
import { STOPWORDS } from "./awareness/lexicon.ts";
import { asksSomething, isQuestion, messageIsQuestion } from "./awareness/questions.ts";
import { readText } from "./awareness/reading.ts";
import { elapsedMinutes } from "./awareness/time.ts";
import { detectTone } from "./awareness/tone.ts";
import { canonicalTopic, detectTopics, knownTopics, messageTopics } from "./awareness/topics.ts";

/**
 * The check-in's topic, checked in code rather than hoped for in the prompt. A check-in is held
 * as already answered only when the person has answered what it would ask:
 *
 * - a daily habit (water, sleep, food, movement, meds) the person gave a status on today, within
 *   the answered window, volunteered or asked for ("hydration is sorted today" holds "had water
 *   yet?"); an intention ("will drink more later") is no status;
 * - anything else (an interview, a trip, the landlord): the person said how it stands after the
 *   companion last asked about it, or after its moment (read from their own words: "interview
 *   at 2"), or, with no moment known, told how it went. A mention before the moment never
 *   answers a follow-up after it; beyond that the model judges.
 *
 * It is also held as a repeat while the companion's own ask about it waits for an answer.
 * Pure: the same decision, log and moment always give the same verdict.
 */

/** Why a decided check-in was held back. */
type TopicGuardReason = "already-answered" | "repeated-topic";

/** The guard's verdict, with the canonical topics it judged (for the decision record). */
export type TopicVerdict =
  | { allow: true; topics: string[] }
  | {
      allow: false;
      reason: TopicGuardReason;
      detail: string;
      topics: string[];
      /** The log id of the person's message taken as the answer (already-answered only). */
      answerId?: string;
    };

/** The lexicon's own labels: a decided topic may name one directly ("movement"). */
const KNOWN_TOPICS: ReadonlySet<string> = new Set(knownTopics());

/**
 * The canonical labels of a decided topic, so "water", "hydration" and "drinking enough" meet:
 * the thing it names when it names one ("the job interview"), else the lexicon's subjects.
 */
export function canonicalTopicsOf(decidedTopic: string): string[] {
  const text = decidedTopic.trim();
  if (text === "") return [];
  const detected = detectTopics(text);
  const things = detected.filter((t) => !KNOWN_TOPICS.has(t));
  const lexicon = detected.filter((t) => KNOWN_TOPICS.has(t));
  if (things.length > 0 && lexicon.length > 0) return things;
  if (lexicon.length > 0) return lexicon;
  const label = canonicalTopic(text);
  if (label !== null && KNOWN_TOPICS.has(label)) return [label];
  if (detected.length > 0) return detected;
  return label === null ? [] : [label];
}

/**
 * What a sent check-in is about, stored on its log entry: the decided topic's labels as well
 * as the written text's, so a later check-in decided about "the move" meets one that was
 * worded "How's the packing going?" and is held back as a repeat while it waits for an answer.
 */
export function checkinAnnotations(decidedTopic: string, text: string): Annotations {
  const topics = [...new Set([...canonicalTopicsOf(decidedTopic), ...detectTopics(text)])];
  return { topics, question: isQuestion(text, "assistant"), tone: detectTone(text) };
}

/** Whether two labels name the same thing: equal, or the same head noun ("job interview", "interview"). */
function sameThing(a: string, b: string): boolean {
  if (a === b) return true;
  if (KNOWN_TOPICS.has(a) || KNOWN_TOPICS.has(b)) return false;
  return a.split(" ").at(-1) === b.split(" ").at(-1);
}

/** Content words, accents kept, elisions dropped ("l'entretien" → "entretien"): to meet in any language. */
function contentWords(text: string): Set<string> {
  const words =
    text
      .toLowerCase()
      .replace(/\b[ldjmnst]'/gu, "")
      .match(/\p{L}{4,}/gu) ?? [];
  return new Set(words.filter((w) => !STOPWORDS.has(w)));
}

/**
 * Whether a message is about any of the labels: they share a label, or, for what code reads
 * no topics from (another language), a word of the decided topic itself.
 */
function isAbout(message: Message, topics: readonly string[], decided?: string): boolean {
  if (messageTopics(message).some((t) => topics.some((topic) => sameThing(t, topic)))) return true;
  if (decided === undefined) return false;
  const wanted = contentWords(decided);
  return [...contentWords(message.text)].some((w) => wanted.has(w));
}

/**
 * The daily habits in the languages people write to presence in, for the guard alone: whether a
 * check-in would re-ask a habit is judged in any language, although awareness shows no topics
 * code read from a message not in English. Medication is a habit although the lexicon files it
 * under health, and how the person feels is asked and answered like one.
 */
const HABIT_WORDS: Readonly<Record<string, RegExp>> = {
  hydration:
    /\b(?:water|hydrat\w*|drank|agua|água|wasser|eau|acqua|botella|bouteille|flasche|bottiglia|garrafa|bebido|getrunken|bu|bois|bevuto)\b/iu,
  sleep:
    /\b(?:sleep\w*|slept|good ?night|bed|dorm\w*|sueño|schlaf\w*|geschlafen|sommeil|sonno|sono|buenas noches|gute nacht|bonne nuit)\b/iu,
  food: /\b(?:lunch|breakfast|dinner|ate|eaten|comido|comí|comer|almuerzo|desayuno|cena|gegessen|essen|mittag\w*|frühstück|abendessen|mangé|manger|repas|déjeuner|dîner|pranzo|colazione|mangiare|mangiato|almoço|jantar)\b/iu,
  movement:
    /\b(?:gym|walk\w*|run|ran|workout|steps|caminar|camin\w+|paseo|gimnasio|correr|spazier\w*|gelaufen|joggen|training|promenade|marche|couru|palestra|corsa|caminhada|academia)\b/iu,
  medication:
    /\b(?:meds|medication|medicine|pills?|tablets?|vitamins?|supplements?|insulin|inhaler|médocs?|médicaments?|comprimés?|medicamentos?|pastillas?|tabletten|medikamente?|remédios?)\b/iu,
  // How they feel is asked like a habit ("how's your mood today?"), and answered by any feeling.
  mood: /\b(?:mood|feel(?:ing|s)?|scared|excited|anxious|nervous|stressed|happy|sad|worried|upset|angry|frustrated|overwhelmed|calm|relieved|proud|lonely|down|low|ánimo|estado de ánimo|stimmung|humeur|umore|humor)\b/iu,
};

/** The habit a decided topic or a message names, in any of those languages, or null. */
function habitOf(text: string): string | null {
  for (const [habit, words] of Object.entries(HABIT_WORDS)) if (words.test(text)) return habit;
  return null;
}

/**
 * Whether the check-in asks how something ongoing stands (a habit, or a whole subject such as
 * work or family: "how's work going?"), which a status the person gave today answers; otherwise
 * it follows up one thing (an interview, the landlord), which only how it went answers.
 */
function asksStatus(decidedTopic: string, topics: readonly string[]): boolean {
  if (habitOf(decidedTopic) !== null) return true;
  // "the dentist", "your exam": one thing to follow up, even when its word is a subject's.
  return !ONE_THING.test(decidedTopic) && topics.every((t) => KNOWN_TOPICS.has(t));
}

/** A topic named with a definite article or a possessive points at one thing, not an ongoing subject. */
const ONE_THING = /^\s*(?:the|your|that|this|his|her|their|my)\s/i;

/** Words of intention without a report: "will drink more later" ("mangio dopo le 3") says nothing about today yet. */
const INTENTION =
  /\b(?:will|'ll|gonna|going to|plan(?:ning)? to|need to|have to|should|must|want to|wanna|later|más tarde|luego|después|später|nachher|plus tard|tout à l'heure|più tardi|dopo|mais tarde|depois)\b/iu;
const REPORT =
  /\b(?:did|done|had|have had|already|finished|sorted|drank|ate|slept|went|walked|ran|took|taken|got|been|was|were|skipped|missed|forgot|nailed|passed|over)\b/i;

/** An intention ("will drink more later") holds the subject this long: asking right after it is nagging. */
const INTENTION_HOLDS_MS = 2 * 3_600_000;

/** Whether a message of the person's says how something stands at `nowMs`, rather than only planning it. */
function reportsStatus(message: Message, nowMs: number): boolean {
  if (REPORT.test(message.text) || !INTENTION.test(message.text)) return true;
  return nowMs - Date.parse(message.ts) < INTENTION_HOLDS_MS;
}

/** How it went, not only that it happened: "went great", "doc says it's a sprain", "got the job". */
const OUTCOME =
  /\b(?:went|was|were|nailed|passed|failed|survived|bombed|turned out|says|said|told me|got (?:the|an|a) \w+|good news|bad news|agreed|accepted|rejected|declined|approved|offered|(?:really|so|actually|pretty) (?:lovely|great|good|bad|fun|nice|awful|amazing|terrible)|dit|dice|dijo|sagt|meinte|disse|salió|s'est bien passé|lief)\b/iu;

/**
 * Each language's parser on its own (the package's main entry loads all sixteen), from its
 * CommonJS build: under tsx on Node 20 each ES module is a round trip to the loader's thread,
 * which made these six cost every start twice as long.
 */
const LOCALE_PARSERS: Record<string, Chrono> = Object.fromEntries(
  (["en", "es", "de", "fr", "pt", "nl"] as const).map((language) => [
    language,
    (createRequire(import.meta.url)(`chrono-node/${language}`) as typeof import("chrono-node/en")).casual,
  ]),
);

/** Waking hours, when "at 2" means two in the afternoon. */
const DAY_STARTS = 7;
const DAY_ENDS = 22;

/**
 * The moments a message names for what it talks about ("interview at 2" sent at 09:00 is 14:00
 * that day), read with chrono in the person's zone at the message's own instant; only moments
 * after the message count (it announces them). An hour without am/pm is read in waking hours.
 */
function momentsNamed(message: Message, zone: string): number[] {
  const sentMs = Date.parse(message.ts);
  const sent = DateTime.fromMillis(sentMs, { zone });
  const language = readText(message.text).language ?? "en";
  const parser = LOCALE_PARSERS[language] ?? (LOCALE_PARSERS.en as Chrono);
  const found = parser.parse(message.text, { instant: new Date(sentMs), timezone: sent.offset });
  const moments: number[] = [];
  for (const result of found) {
    let at = DateTime.fromJSDate(result.start.date(), { zone });
    if (result.start.isCertain("hour") && !result.start.isCertain("meridiem")) {
      const hour = at.hour % 12;
      const candidates = [hour, hour + 12]
        .filter((h) => h >= DAY_STARTS && h <= DAY_ENDS)
        .map((h) => at.set({ hour: h }))
        .filter((c) => c.toMillis() > sentMs);
      if (candidates[0] !== undefined) at = candidates[0];
    }
    if (at.toMillis() > sentMs) moments.push(at.toMillis());
  }
  return moments;
}

interface Answer {
  readonly message: Message;
  /** What the person did, said of the decided topic. */
  readonly why: (topic: string) => string;
}

/** A status question is answered by a status the person gave today, within the window, or by their answer when asked. */
function statusAnswer(
  log: readonly Message[],
  decidedTopic: string,
  topics: readonly string[],
  sinceMs: number,
  zone: string,
  nowMs: number,
): Answer | null {
  const habit = habitOf(decidedTopic) ?? topics.map((t) => habitOf(t)).find((h) => h !== null) ?? null;
  const about = (m: Message) =>
    isAbout(m, topics) || (habit !== null && HABIT_WORDS[habit]?.test(m.text) === true);
  const today = DateTime.fromMillis(nowMs, { zone }).startOf("day").toMillis();
  const from = Math.max(sinceMs, today);
  for (let i = log.length - 1; i >= 0; i -= 1) {
    const m = log[i];
    if (m === undefined || Date.parse(m.ts) < from) break;
    if (m.role !== "user") continue;
    if (statesAbout(m, about) && reportsStatus(m, nowMs))
      return { message: m, why: (topic) => `said how ${topic} stands today` };
    const asked = log.slice(0, i).findLast((e) => e.role === "assistant");
    // "naw. will drink some after school" answers the ask with a plan: it holds only as a plan does.
    if (
      asked !== undefined &&
      about(asked) &&
      messageIsQuestion(asked) &&
      answers(m, asked, log) &&
      reportsStatus(m, nowMs)
    )
      return { message: m, why: (topic) => `answered about ${topic} when asked` };
  }
  return null;
}

/**
 * Whether a message of the person's states something about the subject, in a clause that asks
 * nothing: "already on my second bottle of water today, proud of me?" states; "should I drink
 * more water?" does not.
 */
function statesAbout(message: Message, about: (m: Message) => boolean): boolean {
  if (!about(message)) return false;
  if (!isQuestion(message.text, message.role)) return true;
  const clauses = message.text.match(/[^.!?\n,;]+[.!?\n,;]*/g) ?? [];
  return clauses.some((sentence) => {
    const part: Message = { ...message, text: sentence, annotations: undefined };
    return !isQuestion(sentence, message.role) && about(part);
  });
}

/**
 * Whether the person's message answers the companion's ask: reflection says so, or, before
 * reflection has read it, it is the first thing the person said after the ask.
 */
function answers(message: Message, ask: Message, log: readonly Message[]): boolean {
  const named = message.annotations?.answers;
  if (named !== undefined) return named.includes(ask.id);
  const after = log.filter((m) => m.role === "user" && Date.parse(m.ts) > Date.parse(ask.ts));
  return after[0]?.id === message.id;
}

/** A follow-up is answered by how it stands, said after the last ask about it or after its moment. */
function followUpAnswer(
  log: readonly Message[],
  theirs: readonly Message[],
  decidedTopic: string,
  topics: readonly string[],
  sinceMs: number,
  zone: string,
): Answer | null {
  const about = (m: Message) => isAbout(m, topics, decidedTopic);
  const lastAsk = log.findLast((m) => m.role === "assistant" && about(m) && messageIsQuestion(m));
  const moments = theirs.filter(about).flatMap((m) => momentsNamed(m, zone));
  const moment = moments.length > 0 ? Math.max(...moments) : null;
  for (const m of [...theirs].reverse()) {
    const ms = Date.parse(m.ts);
    if (ms < sinceMs) break;
    const answersTheAsk = lastAsk !== undefined && ms > Date.parse(lastAsk.ts) && answers(m, lastAsk, log);
    if (moment !== null && ms < moment) continue;
    if (answersTheAsk) return { message: m, why: (topic) => `answered about ${topic} when asked` };
    // After its moment, what the person says next with a verdict in it is how it went.
    const firstAfter = moment !== null && theirs.find((t) => Date.parse(t.ts) >= moment)?.id === m.id;
    if ((about(m) || firstAfter) && OUTCOME.test(m.text) && !isQuestion(m.text, m.role))
      return { message: m, why: (topic) => `said how ${topic} went` };
  }
  return null;
}

/** Whether a check-in about `decidedTopic` may be sent at `now`; `hours` is the already-answered window. */
export function guardTopic(
  decidedTopic: string,
  log: readonly Message[],
  awareness: AwarenessContext,
  now: Date,
  hours: number,
): TopicVerdict {
  const topics = canonicalTopicsOf(decidedTopic);
  if (topics.length === 0) return { allow: true, topics };
  const named = decidedTopic.trim();
  const nowMs = now.getTime();
  const visible = log
    .filter((m) => Date.parse(m.ts) <= nowMs)
    .sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
  const theirs = visible.filter((m) => m.role === "user");
  const sinceMs = nowMs - hours * 3_600_000;
  const zone = awareness.timezone;

  const answer = asksStatus(named, topics)
    ? statusAnswer(visible, named, topics, sinceMs, zone, nowMs)
    : followUpAnswer(visible, theirs, named, topics, sinceMs, zone);
  if (answer !== null) {
    const ago = formatDuration(elapsedMinutes(Date.parse(answer.message.ts), nowMs));
    return {
      allow: false,
      reason: "already-answered",
      detail: `the person already ${answer.why(named)}, ${ago} ago`,
      topics,
      answerId: answer.message.id,
    };
  }

  const waiting = [...unansweredAskedTopics(awareness)];
  const language = awareness.conversationState.language ?? undefined;
  const asks = awareness.self.messagesSent.filter((m) => asksSomething(m, language));
  const repeated =
    topics.find((t) => waiting.some((w) => sameThing(w, t))) ??
    (asks.some((m) => isAbout(m, [], named)) ? named : undefined);
  if (repeated !== undefined) {
    const count = asks.filter((m) => isAbout(m, [repeated], named)).length;
    return {
      allow: false,
      reason: "repeated-topic",
      detail: `already asked about ${named} ${count === 1 ? "once" : `${count} times`} since the person last wrote, still unanswered`,
      topics,
    };
  }
  return { allow: true, topics };
}
