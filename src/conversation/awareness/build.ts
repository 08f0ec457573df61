import { type Message, messageText } from "../../core/message.ts";
import { formatDuration, plural } from "../../core/text.ts";
import { isKnownZone } from "../../core/zones.ts";
import { isAnswer, isMessageSent, OPEN_QUESTIONS_SHOWN } from "../pending-messages.ts";
import type { AwarenessContext, AwarenessSettings, PriorMemory } from "./context.ts";
import { asksSomething, isQuestion, messageIsQuestion } from "./questions.ts";
import { conversationLanguage, englishReading } from "./reading.ts";
import { elapsedMinutes, inZone, isWeekend, localStamp, timeOfDay } from "./time.ts";
import { exchangeTone, messageMood, messageTone } from "./tone.ts";
import { detectTopics, messageTopics, topicDomain, topicName, topicSubject } from "./topics.ts";

/** Silence longer than this leaves the assistant context-poor: it gets the full block. */
const LONG_SILENCE_MINUTES = 120;
/** How many of the latest messages count as "the last exchanges" for a change of domain. */
const LAST_EXCHANGES = 4;

/** A log entry with its instant parsed once. */
interface Entry {
  readonly message: Message;
  readonly ms: number;
}

/**
 * The log as the awareness engine reads it: oldest first, only what had happened by
 * `now`. The store hands over a sorted window, but nothing here relies on it: an unsorted
 * log is sorted (stably, so equal timestamps keep their order), and entries without a
 * readable time are left out rather than guessed at.
 */
function chronological(log: readonly Message[], nowMs: number): Entry[] {
  const entries: Entry[] = [];
  let sorted = true;
  for (const message of log) {
    const ms = Date.parse(message.ts);
    if (Number.isNaN(ms) || ms > nowMs) continue;
    const previous = entries[entries.length - 1];
    if (previous !== undefined && ms < previous.ms) sorted = false;
    entries.push({ message, ms });
  }
  return sorted ? entries : entries.sort((a, b) => a.ms - b.ms);
}

/** Index of the last entry by `role`, or -1. */
function lastIndexOfRole(entries: readonly Entry[], role: Message["role"]): number {
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    if (entries[i]?.message.role === role) return i;
  }
  return -1;
}

/** Where the turn holding `index` begins: consecutive messages by one side form one turn. */
function turnStart(entries: readonly Entry[], index: number): number {
  const role = entries[index]?.message.role;
  let start = index;
  while (start > 0 && entries[start - 1]?.message.role === role) start -= 1;
  return start;
}

const emptyMemory: PriorMemory = { declaredPatterns: [], openLoops: [], recentMilestones: [] };

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

/** Throws for settings the engine cannot work with, naming the setting and a good value. */
function checkInputs(now: Date, settings: AwarenessSettings): void {
  if (Number.isNaN(now.getTime())) throw new Error("now is not a valid instant");
  if (!isKnownZone(settings.timezone)) {
    throw new Error(
      `timezone "${settings.timezone}" is not a known IANA zone (for example "Europe/Madrid" or "UTC")`,
    );
  }
  const units = { activeMinutes: "minutes (default 30)", windowHours: "hours (default 48)" } as const;
  for (const key of ["activeMinutes", "windowHours"] as const) {
    const value = settings[key];
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`${key} must be a non-negative number of ${units[key]}, got ${value}`);
    }
  }
}

function repeatedTopics(
  messages: readonly Message[],
  language: string,
): AwarenessContext["self"]["repeatedTopics"] {
  const counts = new Map<string, number>();
  for (const message of messages) {
    for (const topic of messageTopics(message, language)) counts.set(topic, (counts.get(topic) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, count]) => count >= 2)
    .sort((a, b) => b[1] - a[1])
    .map(([topic, count]) => ({ topic, count }));
}

/**
 * Subjects too loose to call a change of subject on: a feeling word rides along with whatever
 * the message is about ("nervous about the interview").
 */
const NOT_A_SHIFT = new Set(["mood"]);

/**
 * The lexicon subjects a message's words belong to (an interview is work's, a wedding social),
 * for judging a change of subject: read from English words only (emoji and other languages say
 * too little to call one on), or from reflection's labels.
 */
function subjectsOf(message: Message, language: string): Set<string> {
  const read = message.annotations !== undefined || englishReading(message.text, language) !== null;
  if (!read) return new Set();
  return new Set(
    messageTopics(message, language).flatMap((t) => {
      const subject = topicSubject(t);
      return subject === null || NOT_A_SHIFT.has(subject) ? [] : [subject];
    }),
  );
}

/** A change of subject the person made: from what, to what, and when. */
interface Shift {
  readonly from: string;
  readonly to: string;
  readonly ms: number;
}

/**
 * The topic now being talked about (the latest message in the window that has one, from
 * either side) and its domain; and the person's change of subject, when their latest message
 * with a subject is one of the last exchanges and shares no subject with their previous one.
 * Only subjects the lexicon vouches for count, a noun phrase alone being too uncertain, unless
 * the person announced the change in words (announcedShift); the companion's own words never
 * make one.
 */
function topicFlow(
  window: readonly Entry[],
  language: string,
): {
  topic: string | null;
  topics: readonly string[];
  at: { role: Message["role"]; ts: string } | null;
  current: AwarenessContext["conversationState"]["currentDomain"];
  shift: Shift | null;
} {
  const last = window.findLast((e) => messageTopics(e.message, language).length > 0);
  const at = last ? { role: last.message.role, ts: last.message.ts } : null;
  const topics = last ? messageTopics(last.message, language) : [];
  const topic = topics[0] ?? null;
  const current = topic === null ? null : topicDomain(topic);
  const theirs = window
    .map((e, i) => ({ e, i, subjects: subjectsOf(e.message, language) }))
    .filter((t) => t.e.message.role === "user" && t.subjects.size > 0);
  // A story told in its own words (a cat, a copy shop, the printouts) may wander across subjects
  // without the person changing what they talk about: a change is called only onto a message
  // wholly about lexicon subjects, and not when it answers the companion's question about it.
  const wholly = (m: Message) => messageTopics(m, language).every((t) => topicSubject(t) !== null);
  for (let k = theirs.length - 1; k >= 1; k -= 1) {
    const here = theirs[k];
    const before = theirs[k - 1];
    if (here === undefined || before === undefined || here.i < window.length - LAST_EXCHANGES) break;
    if ([...here.subjects].some((s) => before.subjects.has(s)) || !wholly(here.e.message)) continue;
    // An answer to the companion's question is no change of theirs when the question was about
    // the same subject, or about none ("Is anyone coming to help?" → "my mom lands thursday").
    const asked = window[here.i - 1]?.message;
    if (asked?.role === "assistant") {
      const askedAbout = subjectsOf(asked, language);
      if ([...askedAbout].some((s) => here.subjects.has(s))) continue;
      if (askedAbout.size === 0 && messageIsQuestion(asked, language)) continue;
    }
    const from = [...before.subjects][0];
    const to = [...here.subjects][0];
    if (from !== undefined && to !== undefined)
      return { topic, topics, at, current, shift: { from, to, ms: here.e.ms } };
  }
  return { topic, topics, at, current, shift: announcedShift(window, language) };
}

/** Words with which people say they are changing the subject themselves. */
const CHANGE_OF_SUBJECT =
  /(?:^|[.!?\n]\s*)(?:switching gears|changing (?:the )?subject|change of subject|on (?:an)?other note|on a different note|different topic|unrelated(?: but)?|in other news|anyway(?:s)?,)/i;

/**
 * A change the person announced ("Switching gears: deep work on the presence project"): their
 * latest message in the last exchanges says so in words, and shares no topic with their message
 * before it. Their own words say it, so noun phrases count here as well as subjects.
 */
function announcedShift(window: readonly Entry[], language: string): Shift | null {
  const theirs = window
    .map((e, i) => ({ e, i, topics: messageTopics(e.message, language) }))
    .filter((t) => t.e.message.role === "user" && t.topics.length > 0);
  const here = theirs.at(-1);
  const before = theirs.at(-2);
  if (here === undefined || before === undefined || here.i < window.length - LAST_EXCHANGES) return null;
  if (!CHANGE_OF_SUBJECT.test(here.e.message.text)) return null;
  if (here.topics.some((t) => before.topics.includes(t))) return null;
  const [from] = before.topics;
  const [to] = here.topics;
  return from === undefined || to === undefined ? null : { from, to, ms: here.e.ms };
}

/**
 * Minutes since the current stretch of conversation began (messages no further apart
 * than `gapMinutes`), or null when the latest message is itself older than that: there is
 * no conversation going on.
 */
function conversationMinutes(entries: readonly Entry[], nowMs: number, gapMinutes: number): number | null {
  let start = entries.length - 1;
  const last = entries[start];
  if (last === undefined || elapsedMinutes(last.ms, nowMs) > gapMinutes) return null;
  while (start > 0) {
    const here = entries[start];
    const before = entries[start - 1];
    if (here === undefined || before === undefined || elapsedMinutes(before.ms, here.ms) > gapMinutes) break;
    start -= 1;
  }
  return elapsedMinutes(entries[start]?.ms ?? last.ms, nowMs);
}

/**
 * Whether the assistant is context-poor for this turn: a heartbeat, the person never
 * wrote, a silence over two hours (before their turn, within it, or since), their turn came
 * on another channel than the message before it, or it is their first of their local day.
 */
function needsFullBlock(
  entries: readonly Entry[],
  lastUser: number,
  nowMs: number,
  settings: AwarenessSettings,
): boolean {
  if (settings.trigger === "heartbeat" || lastUser === -1) return true;
  const last = entries[entries.length - 1];
  if (last === undefined || elapsedMinutes(last.ms, nowMs) > LONG_SILENCE_MINUTES) return true;
  const start = turnStart(entries, lastUser);
  const before = entries[start - 1];
  const person = entries[lastUser];
  if (before === undefined || person === undefined) return true;
  const turn = entries.slice(start - 1, lastUser + 1);
  if (turn.some((e, i) => i > 0 && elapsedMinutes(turn[i - 1]?.ms ?? e.ms, e.ms) > LONG_SILENCE_MINUTES))
    return true;
  if (before.message.channel !== person.message.channel) return true;
  const today = inZone(nowMs, settings.timezone).startOf("day").toMillis();
  return !entries.slice(0, start).some((e) => e.message.role === "user" && e.ms >= today);
}

/**
 * The companion's questions in the window, asked before the person's last message, that none of
 * their later messages answered as reflection read them: every later message of theirs carries
 * reflection's annotations and none names the question in `answers`. One later message not yet
 * read by reflection leaves every question before it out: whether it answers is not known. Only
 * the newest OPEN_QUESTIONS_SHOWN: reflection was never shown older ones, so could not name them.
 */
function questionsLeftOpen(entries: readonly Entry[], lastUser: number, windowStart: number): Message[] {
  const open: Message[] = [];
  const answered = new Set<string>();
  // Newest first, so that at each question every later message of theirs has been seen.
  for (let i = lastUser; i >= 0; i -= 1) {
    const entry = entries[i] as Entry;
    if (entry.ms < windowStart) break;
    const message = entry.message;
    if (message.role === "user") {
      if (message.annotations === undefined) break;
      for (const id of message.annotations.answers ?? []) answered.add(id);
    } else if (isMessageSent(message) && !answered.has(message.id) && messageIsQuestion(message)) {
      open.unshift(message);
    }
  }
  return open.slice(-OPEN_QUESTIONS_SHOWN);
}

/**
 * Where the conversation stands at `now`, from the log alone: what the assistant said
 * since the person last spoke, what the person said lately, and how it is going. Pure:
 * the same log, moment and settings always give the same context. The log may be any
 * slice that holds the recent window, the person's last turn and the message before it,
 * and everything after (see awarenessSliceStart in store/messages.ts); it need not be sorted, and entries
 * later than `now` are not yet visible.
 */
export function buildAwarenessContext(
  log: readonly Message[],
  now: Date,
  settings: AwarenessSettings,
  memory: PriorMemory = emptyMemory,
): AwarenessContext {
  checkInputs(now, settings);
  const nowMs = now.getTime();
  const entries = chronological(log, nowMs);
  const windowStart = nowMs - settings.windowHours * 60 * 60_000;
  const window = entries.filter((e) => e.ms >= windowStart);

  const lastUser = lastIndexOfRole(entries, "user");
  // Fixed notices (the model was away, check-ins stopped) are said but are not the companion's
  // part of the conversation: they wait for no answer and start no gap. A reaction answers, but
  // is no message sent either: it is shown (recentMessages), not counted.
  const lastAssistant = entries.findLastIndex((e) => isMessageSent(e.message));
  const sent = entries.slice(lastUser + 1).filter((e) => isMessageSent(e.message));
  const messagesSent = sent.map((e) => e.message);
  const ownRecent = entries.filter((e, i) => isAnswer(e.message) && (e.ms >= windowStart || i > lastUser));
  const theirRecent = window.filter((e) => e.message.role === "user").map((e) => e.message);
  const language = conversationLanguage(theirRecent.map((m) => m.text));
  const topicsOf = (m: Message) => messageTopics(m, language);

  const personEntry = entries[lastUser];
  const ownEntry = entries[lastAssistant];
  const latest = entries[entries.length - 1];
  const personSilence = personEntry ? elapsedMinutes(personEntry.ms, nowMs) : null;

  let engagementLevel: AwarenessContext["user"]["engagementLevel"] = "silent";
  if (personSilence !== null && personSilence <= settings.activeMinutes) engagementLevel = "active";
  else if (personSilence !== null && personSilence <= 24 * 60) engagementLevel = "sporadic";

  const exchangeFrom =
    lastUser === -1 ? entries.length : turnStart(entries, Math.max(0, turnStart(entries, lastUser) - 1));
  const exchange = entries.slice(exchangeFrom, lastUser + 1).map((e) => e.message);
  const flow = topicFlow(window, language);
  const local = inZone(nowMs, settings.timezone);
  const waitingFrom =
    latest?.message.role === "user" ? entries[turnStart(entries, entries.length - 1)] : undefined;

  const context: AwarenessContext = {
    now: now.toISOString(),
    timezone: settings.timezone,
    self: {
      messagesSent,
      lastMessageTime: ownEntry ? new Date(ownEntry.ms).toISOString() : null,
      timeSinceLastMessage: ownEntry ? elapsedMinutes(ownEntry.ms, nowMs) : null,
      topicsMentioned: unique(ownRecent.flatMap((e) => topicsOf(e.message))),
      questionsLeftOpen: questionsLeftOpen(entries, lastUser, windowStart),
      repeatedTopics: repeatedTopics(messagesSent, language),
      recentMessages: ownRecent.map((e) => e.message),
    },
    user: {
      lastMessage: personEntry?.message ?? null,
      timeSinceLastMessage: personSilence,
      recentMessages: theirRecent,
      engagementLevel,
      topicsAddressed: unique(theirRecent.flatMap(topicsOf)),
      mood: personEntry ? messageMood(personEntry.message, language) : null,
    },
    conversationState: {
      unansweredCount: messagesSent.length,
      lastExchangeTone: exchangeTone(exchange, language),
      recentTopicShift: flow.shift !== null,
      currentDomain: flow.current,
      silenceDuration: latest ? elapsedMinutes(latest.ms, nowMs) : null,
      timeOfDay: timeOfDay(local),
      dayType: isWeekend(local) ? "weekend" : "weekday",
      waitingMinutes:
        settings.trigger === "reply" && waitingFrom !== undefined
          ? elapsedMinutes(waitingFrom.ms, nowMs)
          : null,
      currentTopic: flow.topic,
      currentTopics: [...flow.topics],
      currentTopicAt: flow.at,
      conversationMinutes: conversationMinutes(entries, nowMs, settings.activeMinutes),
      language,
    },
    priorContext: {
      declaredPatterns: [...memory.declaredPatterns],
      openLoops: [...memory.openLoops],
      recentMilestones: [...memory.recentMilestones],
    },
    observations: [],
    format: needsFullBlock(entries, lastUser, nowMs, settings) ? "full" : "slim",
  };

  const observed: Observed = {
    context,
    shift: flow.shift,
    answeredBeforeAsked: answeredBeforeAsked(window, lastUser, entries, language, settings.activeMinutes),
    warmBefore:
      context.conversationState.lastExchangeTone === "tense" &&
      theirRecent.slice(0, -1).some((m) => messageTone(m, language) === "warm"),
  };
  context.observations = observe(observed);
  return context;
}

/**
 * Topics the companion raised again on its own (a check-in) after the person had already
 * spoken about them in the window: the "answered, then re-asked" pattern, with when the person
 * spoke. A reply that talks about what they just said is answering, not raising it again.
 */
function answeredBeforeAsked(
  window: readonly Entry[],
  lastUser: number,
  entries: readonly Entry[],
  language: string,
  activeMinutes: number,
): { topic: string; answeredMs: number }[] {
  // A check-in raises a topic on its own; so does a message of unknown trigger (a log given on
  // the command line) sent well after the person's last word.
  const lastUserMs = entries[lastUser]?.ms ?? Number.NEGATIVE_INFINITY;
  const onItsOwn = (e: Entry) =>
    e.message.trigger === "heartbeat" ||
    (e.message.trigger === undefined && elapsedMinutes(lastUserMs, e.ms) > activeMinutes);
  const raised = unique(
    entries
      .slice(lastUser + 1)
      .flatMap((e) => (isMessageSent(e.message) && onItsOwn(e) ? messageTopics(e.message, language) : [])),
  );
  const found: { topic: string; answeredMs: number }[] = [];
  for (const topic of raised) {
    const answer = window.findLast(
      (e) => e.message.role === "user" && messageTopics(e.message, language).includes(topic),
    );
    if (answer !== undefined) found.push({ topic, answeredMs: answer.ms });
  }
  return found;
}

/**
 * Topics the assistant raised since the person last spoke and that still wait for an
 * answer: its check-ins and its questions. A reply that only answered ("Enjoy your
 * workout!") or a check-in that only wished well ("Good luck at physio!") asked nothing, so a
 * later check-in on that topic is a follow-up, not a repeat.
 */
export function unansweredAskedTopics(context: AwarenessContext): Set<string> {
  const language = context.conversationState.language ?? undefined;
  return new Set(
    context.self.messagesSent
      .filter((m) => asksSomething(m, language))
      .flatMap((m) => messageTopics(m, language)),
  );
}

/**
 * Whether a message of the companion's asks about `topic` itself, not only mentions it beside a
 * question: "You're an hour from your eating window—how's your water intake?" asks about water,
 * not food. Reflection's reading, when present, is taken whole; the code's, clause by clause.
 */
function asksAbout(message: Message, topic: string, language: string | undefined): boolean {
  if (!messageIsQuestion(message, language)) return false;
  if (message.annotations !== undefined) return true;
  return messageText(message)
    .split(/(?<=[.!?])\s+|[\n;\u2013\u2014]+/)
    .some(
      (clause) =>
        isQuestion(clause, message.role, language) && detectTopics(clause, language).includes(topic),
    );
}

/** A reply later than this is worth stating: the person has been left waiting. */
const LATE_REPLY_MINUTES = 15;
/** Repeated topics beyond this many are left to the list of topics raised. */
const MAX_REPEATED_SHOWN = 3;
/** A silence this long is worth stating on its own. */
const NOTABLE_SILENCE_MINUTES = 120;

/** What the observations are drawn from: the context plus what the builder saw on the way. */
interface Observed {
  readonly context: AwarenessContext;
  /** The person's latest change of subject, when it is one of the last exchanges. */
  readonly shift: Shift | null;
  readonly answeredBeforeAsked: readonly { topic: string; answeredMs: number }[];
  /** Whether the person sounded warm earlier in the window than their last message. */
  readonly warmBefore: boolean;
}

/**
 * The state in plain sentences, each one a fact the assistant can check against the log
 * ("You have sent 3 messages since they last spoke, 5h 43m ago"). None of them says what
 * to do: the model reads where it stands and decides for itself.
 */
function observe({ context, shift, answeredBeforeAsked, warmBefore }: Observed): string[] {
  const { self, user, conversationState: state } = context;
  const nowMs = Date.parse(context.now);
  const lines: string[] = [];
  const sent = self.messagesSent.length;

  if (user.lastMessage === null && sent === 0) lines.push("There are no messages yet");
  if (user.lastMessage === null && sent > 0) {
    lines.push(`They have not written yet; you have sent ${plural(sent, "message")}`);
  }
  if (user.timeSinceLastMessage !== null && sent > 0) {
    lines.push(
      `You have sent ${plural(sent, "message")} since they last spoke, ${formatDuration(user.timeSinceLastMessage)} ago`,
    );
  }
  for (const { topic, count } of self.repeatedTopics.slice(0, MAX_REPEATED_SHOWN)) {
    const language = state.language;
    const raising = self.messagesSent.filter((m) => messageTopics(m, language).includes(topic));
    const verb = raising.every((m) => asksAbout(m, topic, language)) ? "asked about" : "brought up";
    lines.push(`You have ${verb} ${topicName(topic)} ${count} times without a response`);
  }
  const [single] = answeredBeforeAsked;
  if (answeredBeforeAsked.length === 1 && single !== undefined) {
    const when = localStamp(single.answeredMs, nowMs, context.timezone);
    lines.push(
      `They talked about ${topicName(single.topic)} at ${when}, before your check-in raised it again`,
    );
  } else if (answeredBeforeAsked.length > 1) {
    const topics = answeredBeforeAsked.map(
      ({ topic, answeredMs }) => `${topicName(topic)} (${localStamp(answeredMs, nowMs, context.timezone)})`,
    );
    lines.push(`They talked about ${topics.join(", ")} before your check-ins raised them again`);
  }
  if (state.waitingMinutes !== null && state.waitingMinutes >= LATE_REPLY_MINUTES) {
    lines.push(`Their message has waited ${formatDuration(state.waitingMinutes)} for your answer`);
  }
  if (shift !== null) {
    const when = localStamp(shift.ms, nowMs, context.timezone);
    lines.push(`At ${when} they moved from ${topicName(shift.from)} to ${topicName(shift.to)}`);
  }
  if (state.lastExchangeTone === "tense") {
    lines.push(
      warmBefore
        ? "Their earlier messages were warm; their last reply reads curt or irritated with you"
        : "Their last reply reads curt or irritated with you",
    );
  }
  if (state.silenceDuration !== null && state.silenceDuration >= NOTABLE_SILENCE_MINUTES) {
    lines.push(`No message from either side for ${formatDuration(state.silenceDuration)}`);
  }
  return lines;
}
