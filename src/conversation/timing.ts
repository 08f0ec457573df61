import { DateTime } from "luxon";
import type { z } from "zod";
import type { hourRangeSchema } from "../core/decision.ts";
import { type Message, messageTime } from "../core/message.ts";
import { localTime } from "../core/zones.ts";
import { isWeekend } from "./awareness/time.ts";
import { isMessageSent } from "./pending-messages.ts";

/**
 * When in the week the person tends to answer: learned from the message log alone (pure, no
 * clock, no I/O, no model call), so the pre-check can prefer the hours the person is around
 * and hold a check-in back at an hour they rarely answer (`unlikely-moment`).
 *
 * The week is cut into 48 buckets: the hour of the day in the person's zone, on a weekday or
 * on a weekend day (the zone they are in now: after a trip, past hours are read in it too,
 * which a few days at home set right). Each bucket counts observations, answered or not:
 * - every check-in sent at that hour, answered when the person wrote within
 *   {@link QUICK_ANSWER_MINUTES} of it;
 * - every further whole hour an unanswered check-in waited (until the person wrote, the next
 *   check-in took over, or 12 hours passed), not answered: the person could have answered
 *   then and did not, so a check-in ignored from 9:00 to 19:30 says something about each
 *   hour between, not only about 9:00;
 * - every time the person turned up on their own (a message with neither a message of theirs
 *   nor a check-in in the {@link QUICK_ANSWER_MINUTES} before it), answered: they were there
 *   at that hour. It also counts a late answer ("sorry, was out") at the hour it came, which
 *   is the hour the person could be reached.
 *
 * Counts are thin, so they are smoothed twice: each hour borrows half the counts of the
 * hours either side (answering at 19:00 says something about 18:00 and 20:00), and each
 * bucket's rate is a Beta posterior mean whose prior is the same hour on every day of the
 * week, whose own prior is the person's overall answer rate (a prior worth
 * {@link PRIOR_WEIGHT} observations each time). So a weekend with little data leans on the
 * weekdays, and an hour never tried leans on the person's usual rate.
 *
 * A floor keeps a new companion exactly as it was: nothing is unlikely until
 * {@link MIN_CHECKINS} check-ins have gone out in the look-back and at least
 * {@link MIN_EVIDENCE} observations (smoothed) lie around the hour in question. An hour is
 * unlikely only when there is somewhere better to wait for: its rate is under
 * {@link UNLIKELY_RATE} while the best hour of the same kind of day reaches {@link GOOD_RATE}.
 */

const HOUR_MS = 3_600_000;
/** How long an unanswered check-in keeps counting, hour by hour, as one the person left waiting. */
const MAX_WAIT_MS = 12 * HOUR_MS;

/** An answer within this many minutes of a check-in counts as answering it quickly. */
const QUICK_ANSWER_MINUTES = 120;
/** How far back the log is read: two months of habits, and a bounded read however long the log. */
export const LOOKBACK_DAYS = 56;
/** Check-ins in the look-back before any hour may be held: a new companion behaves as before. */
export const MIN_CHECKINS = 10;
/** Smoothed observations around an hour before it may be called unlikely. */
const MIN_EVIDENCE = 3;
/** Prior strength, in observations, of each level of the smoothing. */
const PRIOR_WEIGHT = 2;
/** Below this answer rate an hour is one the person rarely answers at. */
const UNLIKELY_RATE = 0.2;
/** An hour answered at least this often is a good one; without one, nothing is held. */
const GOOD_RATE = 0.5;
/** The best hours are the good ones within this much of the best rate. */
const BEST_MARGIN = 0.3;

/** Weekday (Monday to Friday) or weekend (Saturday, Sunday), in the person's zone. */
export type DayKind = "weekday" | "weekend";

/** What was counted at one hour of one kind of day. */
interface Counts {
  trials: number;
  answered: number;
}

/** The learned rates, per kind of day, 24 hours each (index = local hour). */
export interface LearnedTiming {
  /** The zone the hours are read in (the person's at learning time). */
  zone: string;
  /** Check-ins seen in the look-back; below MIN_CHECKINS nothing is unlikely. */
  checkins: number;
  /** Smoothed answer rate, 0..1, per hour. */
  rates: Record<DayKind, number[]>;
  /** Smoothed observations per hour (both kinds of day together): how much the rate rests on. */
  evidence: number[];
}

/** A run of hours [from, to), local, `to` possibly 24. */
export type HourRange = z.infer<typeof hourRangeSchema>;

/** What the learned timing says about one moment. */
export interface MomentOutlook {
  kind: DayKind;
  /** The smoothed answer rate at that hour. */
  rate: number;
  /** True when the person rarely answers at this hour and better hours exist. */
  unlikely: boolean;
  /** The best hours on this kind of day; empty when no hour is good yet. */
  bestHours: HourRange[];
}

/** A check-in for the learner: the companion's own heartbeat message, not a notice nor a reaction. */
export function isCheckin(message: Message): boolean {
  return isMessageSent(message) && message.trigger === "heartbeat";
}

/** The first instant the learner reads from, for a caller bounding its read of the log. */
export function timingLookbackStart(now: Date): Date {
  return new Date(now.getTime() - LOOKBACK_DAYS * 86_400_000);
}

/**
 * Learns the answer rates from `messages` (oldest first; anything before the look-back or
 * after `now` is ignored) in the person's `zone`. A check-in less than QUICK_ANSWER_MINUTES
 * old is left out: whether it is answered is not known yet.
 */
export function learnTiming(messages: readonly Message[], now: Date, zone: string): LearnedTiming {
  const nowMs = now.getTime();
  const fromMs = timingLookbackStart(now).getTime();
  const quickMs = QUICK_ANSWER_MINUTES * 60_000;
  const counts: Record<DayKind, Counts[]> = { weekday: emptyDay(), weekend: emptyDay() };
  const observe = (ms: number, answered: boolean) => {
    const local = localTime(ms, zone);
    const bucket = (counts[kindOf(local)] as Counts[])[local.hour] as Counts;
    bucket.trials += 1;
    if (answered) bucket.answered += 1;
  };

  const inView = messages.filter((m) => {
    const ms = messageTime(m);
    return ms >= fromMs && ms <= nowMs;
  });
  const userTimes = inView.filter((m) => m.role === "user").map(messageTime);
  const checkinTimes = inView.filter(isCheckin).map(messageTime);

  let lastUserMs = Number.NEGATIVE_INFINITY;
  let sent = 0;
  for (const ms of userTimes) {
    while (sent < checkinTimes.length && (checkinTimes[sent] as number) < ms) sent += 1;
    const lastCheckinMs = sent === 0 ? Number.NEGATIVE_INFINITY : (checkinTimes[sent - 1] as number);
    if (ms - lastUserMs > quickMs && ms - lastCheckinMs > quickMs) observe(ms, true);
    lastUserMs = ms;
  }

  let checkins = 0;
  let nextUser = 0;
  checkinTimes.forEach((ms, i) => {
    if (nowMs - ms < quickMs) return;
    checkins += 1;
    while (nextUser < userTimes.length && (userTimes[nextUser] as number) <= ms) nextUser += 1;
    const reply = userTimes[nextUser] ?? Number.POSITIVE_INFINITY;
    const answered = reply - ms <= quickMs;
    observe(ms, answered);
    if (answered) return;
    const waitedUntil = Math.min(
      reply,
      checkinTimes[i + 1] ?? Number.POSITIVE_INFINITY,
      ms + MAX_WAIT_MS,
      nowMs,
    );
    for (let at = ms + HOUR_MS; at + HOUR_MS <= waitedUntil; at += HOUR_MS) observe(at, false);
  });

  const pooled = emptyDay().map((_, hour) =>
    sum(counts.weekday[hour] as Counts, counts.weekend[hour] as Counts),
  );
  const total = pooled.reduce(sum, { trials: 0, answered: 0 });
  const overall = (total.answered + 1) / (total.trials + 2);
  const hourPrior = pooled.map((_, hour) => posterior(neighbourhood(pooled, hour), overall));
  const ratesOf = (day: Counts[]) =>
    day.map((_, hour) => posterior(neighbourhood(day, hour), hourPrior[hour] as number));
  return {
    zone,
    checkins,
    rates: { weekday: ratesOf(counts.weekday), weekend: ratesOf(counts.weekend) },
    evidence: pooled.map((_, hour) => neighbourhood(pooled, hour).trials),
  };
}

/** What the learned timing says about `now`: its kind of day, its rate, whether it is unlikely, the best hours. */
export function momentOutlook(timing: LearnedTiming, now: Date): MomentOutlook {
  const local = DateTime.fromJSDate(now, { zone: timing.zone });
  const kind = kindOf(local);
  const rate = (timing.rates[kind] as number[])[local.hour] as number;
  const best = bestHours(timing, kind);
  const trusted = timing.checkins >= MIN_CHECKINS && (timing.evidence[local.hour] as number) >= MIN_EVIDENCE;
  return {
    kind,
    rate,
    unlikely: trusted && rate < UNLIKELY_RATE && best.length > 0,
    bestHours: best,
  };
}

/**
 * The hours the person answers best on this kind of day: those with enough evidence whose
 * rate reaches GOOD_RATE and comes within BEST_MARGIN of the best; empty before the floor is reached.
 */
export function bestHours(timing: LearnedTiming, kind: DayKind): HourRange[] {
  if (timing.checkins < MIN_CHECKINS) return [];
  const rates = timing.rates[kind];
  const known = rates.map((rate, hour) => ((timing.evidence[hour] as number) >= MIN_EVIDENCE ? rate : 0));
  const top = Math.max(...known);
  if (top < GOOD_RATE) return [];
  const good = known.map((rate) => rate >= GOOD_RATE && rate >= top - BEST_MARGIN);
  const ranges: HourRange[] = [];
  good.forEach((isGood, hour) => {
    if (!isGood) return;
    const last = ranges.at(-1);
    if (last !== undefined && last.to === hour) last.to = hour + 1;
    else ranges.push({ from: hour, to: hour + 1 });
  });
  return ranges;
}

/** Hour ranges as a person reads them: "19–22", "8–10 and 19–22". */
export function formatHourRanges(ranges: readonly HourRange[]): string {
  const words = ranges.map((r) => `${r.from}–${r.to}`);
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

function kindOf(local: DateTime): DayKind {
  return isWeekend(local) ? "weekend" : "weekday";
}

function emptyDay(): Counts[] {
  return Array.from({ length: 24 }, () => ({ trials: 0, answered: 0 }));
}

function sum(a: Counts, b: Counts): Counts {
  return { trials: a.trials + b.trials, answered: a.answered + b.answered };
}

/** An hour's counts plus half of each neighbour's, wrapping past midnight. */
function neighbourhood(day: readonly Counts[], hour: number): Counts {
  const at = (h: number) => day[(h + 24) % 24] as Counts;
  const own = at(hour);
  const sides = sum(at(hour - 1), at(hour + 1));
  return { trials: own.trials + sides.trials / 2, answered: own.answered + sides.answered / 2 };
}

/** The Beta posterior mean of `counts` under a prior with mean `prior` worth PRIOR_WEIGHT observations. */
function posterior(counts: Counts, prior: number): number {
  return (counts.answered + PRIOR_WEIGHT * prior) / (counts.trials + PRIOR_WEIGHT);
}
