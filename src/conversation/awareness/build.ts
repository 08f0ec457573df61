import type { Message } from "../../core/message.ts";
import { isKnownZone } from "../../core/zones.ts";
import { isAnswer, isMessageSent } from "../pending-messages.ts";
import type { AwarenessContext, AwarenessSettings, Domain, PriorMemory } from "./context.ts";
import { type Observed, observe } from "./observations.ts";
import { elapsedMinutes, inZone, isWeekend, timeOfDay } from "./time.ts";
import { chronological, type Entry, lastIndexOfRole, turnStart } from "./timeline.ts";
import { exchangeTone, messageTone } from "./tone.ts";
import { messageIsQuestion, messageTopics, topicDomain } from "./topics.ts";

/** Silence longer than this leaves the assistant context-poor: it gets the full block. */
const LONG_SILENCE_MINUTES = 120;
/** How many of the latest messages count as "the last exchanges" for a change of domain. */
const LAST_EXCHANGES = 4;

/** Settings the engine cannot work with; the message names the setting and a good value. */
export class AwarenessSettingsError extends Error {
  override readonly name = "AwarenessSettingsError";
}

const emptyMemory: PriorMemory = { declaredPatterns: [], openLoops: [], recentMilestones: [] };

function unique(values: Iterable<string>): string[] {
  return [...new Set(values)];
}

function checkInputs(now: Date, settings: AwarenessSettings): void {
  if (Number.isNaN(now.getTime())) throw new AwarenessSettingsError("now is not a valid instant");
  if (!isKnownZone(settings.timezone)) {
    throw new AwarenessSettingsError(
      `timezone "${settings.timezone}" is not a known IANA zone (for example "Europe/Madrid" or "UTC")`,
    );
  }
  const units = { activeMinutes: "minutes (default 30)", windowHours: "hours (default 48)" } as const;
  for (const key of ["activeMinutes", "windowHours"] as const) {
    const value = settings[key];
    if (!Number.isFinite(value) || value < 0) {
      throw new AwarenessSettingsError(`${key} must be a non-negative number of ${units[key]}, got ${value}`);
    }
  }
}

function repeatedTopics(messages: readonly Message[]): AwarenessContext["self"]["repeatedTopics"] {
  const counts = new Map<string, number>();
  for (const message of messages) {
    for (const topic of messageTopics(message)) counts.set(topic, (counts.get(topic) ?? 0) + 1);
  }
  return [...counts]
    .filter(([, count]) => count >= 2)
    .sort((a, b) => b[1] - a[1])
    .map(([topic, count]) => ({ topic, count }));
}

function domainsOf(message: Message): Set<Domain> {
  return new Set(messageTopics(message).map(topicDomain));
}

/** Domains the lexicon vouches for: fallback subjects ("other") are too noisy to call a shift on. */
function knownDomains(domains: ReadonlySet<Domain>): Set<Domain> {
  return new Set([...domains].filter((d) => d !== "other"));
}

/**
 * The topic and domain now being talked about, and the domain it moved from when that
 * move happened within the last exchanges (a message whose known domains share nothing
 * with the previous such message's).
 */
function domainFlow(window: readonly Entry[]): {
  topic: string | null;
  current: Domain | null;
  shiftedFrom: Domain | null;
} {
  const topical = window
    .map((e, i) => ({ i, topics: messageTopics(e.message), domains: domainsOf(e.message) }))
    .filter((t) => t.domains.size > 0);
  const last = topical[topical.length - 1];
  if (last === undefined) return { topic: null, current: null, shiftedFrom: null };
  const topic = last.topics[0] ?? null;
  const current = [...last.domains][0] ?? null;
  const recentFrom = window.length - LAST_EXCHANGES;
  const known = topical
    .map((t) => ({ i: t.i, domains: knownDomains(t.domains) }))
    .filter((t) => t.domains.size > 0);
  for (let k = known.length - 1; k >= 1; k -= 1) {
    const here = known[k];
    const before = known[k - 1];
    if (here === undefined || before === undefined || here.i < recentFrom) break;
    if (![...here.domains].some((d) => before.domains.has(d))) {
      return { topic, current, shiftedFrom: [...before.domains][0] ?? null };
    }
  }
  return { topic, current, shiftedFrom: null };
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
 * Where the conversation stands at `now`, from the log alone: what the assistant said
 * since the person last spoke, what the person said lately, and how it is going. Pure:
 * the same log, moment and settings always give the same context. The log may be any
 * slice that holds the recent window, the person's last turn and the message before it,
 * and everything after (see store/awareness-slice.ts); it need not be sorted, and entries
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
  const flow = domainFlow(window);
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
      topicsMentioned: unique(ownRecent.flatMap((e) => messageTopics(e.message))),
      repeatedTopics: repeatedTopics(messagesSent),
      recentMessages: ownRecent.map((e) => e.message),
    },
    user: {
      lastMessage: personEntry?.message ?? null,
      timeSinceLastMessage: personSilence,
      recentMessages: theirRecent,
      engagementLevel,
      topicsAddressed: unique(theirRecent.flatMap(messageTopics)),
    },
    conversationState: {
      unansweredCount: messagesSent.length,
      lastExchangeTone: exchangeTone(exchange),
      recentTopicShift: flow.shiftedFrom !== null,
      currentDomain: flow.current,
      silenceDuration: latest ? elapsedMinutes(latest.ms, nowMs) : null,
      timeOfDay: timeOfDay(local),
      dayType: isWeekend(local) ? "weekend" : "weekday",
      waitingMinutes:
        settings.trigger === "reply" && waitingFrom !== undefined
          ? elapsedMinutes(waitingFrom.ms, nowMs)
          : null,
      currentTopic: flow.topic,
      conversationMinutes: conversationMinutes(entries, nowMs, settings.activeMinutes),
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
    shiftedFrom: flow.shiftedFrom,
    answeredBeforeAsked: answeredBeforeAsked(window, lastUser, entries),
    warmBefore:
      context.conversationState.lastExchangeTone === "tense" &&
      theirRecent.slice(0, -1).some((m) => messageTone(m) === "warm"),
  };
  context.observations = observe(observed);
  return context;
}

/**
 * Topics the assistant raised again after the person had already spoken about them in
 * the window: the "answered, then re-asked" pattern, with when the person spoke.
 */
function answeredBeforeAsked(
  window: readonly Entry[],
  lastUser: number,
  entries: readonly Entry[],
): { topic: string; answeredMs: number }[] {
  const sentTopics = unique(
    entries.slice(lastUser + 1).flatMap((e) => (isMessageSent(e.message) ? messageTopics(e.message) : [])),
  );
  const found: { topic: string; answeredMs: number }[] = [];
  for (const topic of sentTopics) {
    const answer = window.findLast(
      (e) => e.message.role === "user" && messageTopics(e.message).includes(topic),
    );
    if (answer !== undefined) found.push({ topic, answeredMs: answer.ms });
  }
  return found;
}

/** Topics the person spoke about at or after `since`: what no longer needs asking. */
export function answeredTopicsSince(log: readonly Message[], since: Date): Set<string> {
  const sinceMs = since.getTime();
  return new Set(
    log.filter((m) => m.role === "user" && Date.parse(m.ts) >= sinceMs).flatMap((m) => messageTopics(m)),
  );
}

/**
 * Topics the assistant raised since the person last spoke and that still wait for an
 * answer: its check-ins and its questions. A reply that only answered ("Enjoy your
 * workout!") asked nothing, so a later check-in on that topic is a follow-up, not a repeat.
 */
export function unansweredAskedTopics(context: AwarenessContext): Set<string> {
  return new Set(
    context.self.messagesSent
      .filter((m) => m.trigger === "heartbeat" || messageIsQuestion(m))
      .flatMap((m) => messageTopics(m)),
  );
}
