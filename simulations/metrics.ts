import { canonicalTopic } from "../src/conversation/awareness/topics.ts";
import type { QuietHours } from "../src/core/checkin-settings.ts";
import { usageDollars } from "../src/model/prices.ts";
import { type CostFigures, type CostOptions, costFigures } from "./cost.ts";
import type { CallRecord, SimEvent } from "./events.ts";
import type { Expectations } from "./scenario.ts";
import { inRange, readIn, type ZoneTimeline } from "./zones.ts";

/**
 * The figures of a run, computed from its event list alone, so they are the same whether
 * the run was offline or live and a hand-written list can check them. Topics come from
 * the events (what the companion decided to ask about; what the scenario says the person
 * answered), never from the code under test re-reading its own log; they are only mapped
 * onto the lexicon's labels, so a live model's "water" meets the scenario's "hydration".
 */

interface TokenFigures {
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Prompt tokens as the API counted them: input + cache read + cache write. */
  promptAvg: number;
  promptMax: number;
}

/** One local day of the person's, counted: how busy the conversation and the heartbeat were. */
interface DayFigures {
  date: string;
  personMessages: number;
  replies: number;
  checkinsSent: number;
  checkinsHeld: number;
}

/** One model call with its whole prompt size, for the prompt-size chart, and what it cost. */
export interface CallFigures extends CallRecord {
  prompt: number;
  /** Priced with the run's price table, from the usage the API reported. */
  dollars: number;
}

/** A check-in about a topic the person had already answered that local day. */
export interface Reask {
  /** The check-in (ISO UTC). */
  at: string;
  topic: string;
  /** The person's answer it repeats (ISO UTC). */
  answeredAt: string;
  /** Inside the answered-topic window, where the topic guard must hold it back: a failure. */
  withinWindow: boolean;
}

/** Every figure the issue asks a run to measure, in one place for the table, report and expectations. */
export interface Metrics {
  /** Heartbeat ticks: each one a chance to check in. */
  considered: number;
  fired: number;
  held: number;
  heldByReason: Record<string, number>;
  heldByStage: Record<string, number>;
  /** The most check-ins in a row without the person writing in between. */
  longestUnansweredRun: number;
  /** Check-ins on a topic already asked about since the person last wrote. */
  repeatedTopicAsks: number;
  /** The answered-topic window the topic guard had (hours): the line between the two re-ask counts. */
  answeredTopicHours: number;
  /** Check-ins on a topic the person answered less than the window ago: what must not happen. */
  reasksOfAnswered: number;
  /** Check-ins on a topic answered earlier that local day, longer ago than the window: allowed, shown. */
  reasksAfterWindow: number;
  /** Every re-ask of either kind, so the report can point at it. */
  reasks: Reask[];
  quietHourCheckins: number;
  /** Messages that reached the person carrying internal text (reasoning, tags, labels). */
  leaksDelivered: number;
  /** Check-ins whose model text carried internal text that the guard removed before sending. */
  leaksStripped: number;
  perDay: DayFigures[];
  tokens: { total: TokenFigures; byPurpose: Record<string, TokenFigures>; calls: CallFigures[] };
  /** The run in dollars, per day and purpose, beside the two baselines over the same timeline. */
  cost: CostFigures;
}

/** The settings a figure depends on: quiet hours and the topic guard's window are the run's, not fixed. */
export interface MetricsOptions {
  quietHours: QuietHours;
  /** How long an answer settles a topic for the topic guard (hours). */
  answeredTopicHours: number;
  /** How calls are priced and where the person's days begin. */
  cost: CostOptions;
}

const INTERNAL_TEXT: readonly RegExp[] = [
  /<\/?\s*(?:thinking|think|reasoning|scratchpad|analysis|reflection|decision)\b[^>]*>/i,
  /^\s*(?:reasoning|thinking|internal|analysis|decision)\s*:/im,
  /\b(?:send|should_send|topic)\s*[:=]\s*(?:true|false)\b/i,
  /\b(?:YES_MESSAGE|NO_MESSAGE|NO_REPLY|HEARTBEAT_OK)\b/,
];

/** Whether a text that reached the person carries what must never reach them. */
export function carriesInternalText(text: string): boolean {
  return INTERNAL_TEXT.some((pattern) => pattern.test(text));
}

const HOUR_MS = 3_600_000;

/** Computes every figure of a run from its events and model calls. */
export function computeMetrics(
  events: readonly SimEvent[],
  calls: readonly CallRecord[],
  options: MetricsOptions,
): Metrics {
  const heldByReason: Record<string, number> = {};
  const heldByStage: Record<string, number> = {};
  const days = new Map<string, DayFigures>();
  const answered = new Map<string, { at: string; date: string }>();
  const reasks: Reask[] = [];
  let askedSinceLastWord = new Set<string>();
  let run = 0;
  const m = {
    considered: 0,
    fired: 0,
    held: 0,
    longestUnansweredRun: 0,
    repeatedTopicAsks: 0,
    reasksOfAnswered: 0,
    reasksAfterWindow: 0,
    quietHourCheckins: 0,
    leaksDelivered: 0,
    leaksStripped: 0,
  };

  for (const event of events) {
    const local = readIn(new Date(event.at), event.zone);
    const day = dayFigures(days, local.date);
    switch (event.kind) {
      case "person":
        day.personMessages += 1;
        run = 0;
        askedSinceLastWord = new Set();
        for (const topic of event.answers)
          answered.set(canonicalTopic(topic) ?? topic, { at: event.at, date: local.date });
        break;
      case "reply":
      case "notice":
        if (event.kind === "reply") day.replies += 1;
        if (carriesInternalText(event.text)) m.leaksDelivered += 1;
        break;
      case "checkin-held":
        m.considered += 1;
        m.held += 1;
        day.checkinsHeld += 1;
        heldByReason[event.reason] = (heldByReason[event.reason] ?? 0) + 1;
        heldByStage[event.stage] = (heldByStage[event.stage] ?? 0) + 1;
        if (event.stage === "leak-guard") m.leaksStripped += 1;
        break;
      case "checkin-sent": {
        m.considered += 1;
        m.fired += 1;
        day.checkinsSent += 1;
        run += 1;
        m.longestUnansweredRun = Math.max(m.longestUnansweredRun, run);
        if (inRange(local.minutesOfDay, options.quietHours)) m.quietHourCheckins += 1;
        const leaked = carriesInternalText(event.text);
        if (leaked) m.leaksDelivered += 1;
        if (event.stripped && !leaked) m.leaksStripped += 1;
        if (event.topic !== null) {
          const topic = canonicalTopic(event.topic) ?? event.topic;
          if (askedSinceLastWord.has(topic)) m.repeatedTopicAsks += 1;
          askedSinceLastWord.add(topic);
          const answer = answered.get(topic);
          const ago = answer ? Date.parse(event.at) - Date.parse(answer.at) : Number.POSITIVE_INFINITY;
          const withinWindow = ago < options.answeredTopicHours * HOUR_MS;
          if (answer && (withinWindow || answer.date === local.date)) {
            if (withinWindow) m.reasksOfAnswered += 1;
            else m.reasksAfterWindow += 1;
            reasks.push({ at: event.at, topic, answeredAt: answer.at, withinWindow });
          }
        }
        break;
      }
      case "tz-change":
      case "open-loop":
        break;
    }
  }

  const tokens = tokenFigures(calls, options.cost);
  return {
    ...m,
    answeredTopicHours: options.answeredTopicHours,
    reasks,
    heldByReason,
    heldByStage,
    perDay: [...days.values()],
    tokens,
    cost: costFigures(events, tokens.calls, options.cost),
  };
}

function dayFigures(days: Map<string, DayFigures>, date: string): DayFigures {
  let day = days.get(date);
  if (!day) {
    day = { date, personMessages: 0, replies: 0, checkinsSent: 0, checkinsHeld: 0 };
    days.set(date, day);
  }
  return day;
}

function tokenFigures(calls: readonly CallRecord[], cost: CostOptions): Metrics["tokens"] {
  const withPrompt = calls.map((c) => ({
    ...c,
    prompt: c.input + c.cacheRead + c.cacheWrite,
    dollars: usageDollars(c, cost.prices),
  }));
  const purposes = [...new Set(withPrompt.map((c) => c.purpose))];
  return {
    total: sum(withPrompt),
    byPurpose: Object.fromEntries(purposes.map((p) => [p, sum(withPrompt.filter((c) => c.purpose === p))])),
    calls: withPrompt,
  };
}

function sum(calls: readonly CallFigures[]): TokenFigures {
  const total = (pick: (c: CallFigures) => number) => calls.reduce((acc, c) => acc + pick(c), 0);
  const prompt = total((c) => c.prompt);
  return {
    calls: calls.length,
    input: total((c) => c.input),
    output: total((c) => c.output),
    cacheRead: total((c) => c.cacheRead),
    cacheWrite: total((c) => c.cacheWrite),
    promptAvg: calls.length === 0 ? 0 : Math.round(prompt / calls.length),
    promptMax: calls.reduce((max, c) => Math.max(max, c.prompt), 0),
  };
}

/** One expectation of a scenario, checked. */
export interface ExpectationResult {
  name: string;
  ok: boolean;
  wanted: string;
  got: string;
}

/** Checks a scenario's expectations against a run's figures and events. */
export function checkExpectations(
  expect: Expectations,
  metrics: Metrics,
  events: readonly SimEvent[],
  zones: ZoneTimeline,
): ExpectationResult[] {
  const results: ExpectationResult[] = [];
  const atMost = (name: string, max: number, got: number) =>
    results.push({ name, ok: got <= max, wanted: `≤ ${max}`, got: String(got) });
  const within = (name: string, range: { min?: number; max?: number }, got: number) =>
    results.push({
      name,
      ok: (range.min === undefined || got >= range.min) && (range.max === undefined || got <= range.max),
      wanted: describeRange(range),
      got: String(got),
    });

  atMost("longest unanswered run", expect.maxUnansweredRun, metrics.longestUnansweredRun);
  atMost("check-ins in quiet hours", expect.maxQuietHourCheckins, metrics.quietHourCheckins);
  atMost(
    `re-asks of answered topics within ${metrics.answeredTopicHours} h`,
    expect.maxReasks,
    metrics.reasksOfAnswered,
  );
  atMost("repeated-topic asks while unanswered", expect.maxRepeatedTopicAsks, metrics.repeatedTopicAsks);
  atMost("leaks delivered", expect.maxLeaksDelivered, metrics.leaksDelivered);
  if (expect.maxCheckinsPerDay !== undefined) {
    const busiest = metrics.perDay.reduce((max, d) => Math.max(max, d.checkinsSent), 0);
    atMost("check-ins on the busiest day", expect.maxCheckinsPerDay, busiest);
  }
  if (expect.considered) within("heartbeat ticks considered", expect.considered, metrics.considered);
  if (expect.fired) within("check-ins fired", expect.fired, metrics.fired);
  for (const window of expect.firedBetween) {
    const from = zones.instant(window.from).getTime();
    const to = zones.instant(window.to).getTime();
    const got = events.filter(
      (e) => e.kind === "checkin-sent" && Date.parse(e.at) >= from && Date.parse(e.at) < to,
    ).length;
    within(`check-ins ${window.from} → ${window.to}`, window, got);
  }
  for (const held of expect.heldBack) {
    const got = metrics.heldByReason[held.reason] ?? 0;
    results.push({
      name: `held back for ${held.reason}`,
      ok: got >= held.min,
      wanted: `≥ ${held.min}`,
      got: String(got),
    });
  }
  if (expect.minLeaksStripped !== undefined) {
    const got = metrics.leaksStripped;
    results.push({
      name: "leaks stripped by the guard",
      ok: got >= expect.minLeaksStripped,
      wanted: `≥ ${expect.minLeaksStripped}`,
      got: String(got),
    });
  }
  return results;
}

function describeRange(range: { min?: number; max?: number }): string {
  if (range.min !== undefined && range.max !== undefined) return `${range.min}–${range.max}`;
  if (range.min !== undefined) return `≥ ${range.min}`;
  if (range.max !== undefined) return `≤ ${range.max}`;
  return "any";
}
