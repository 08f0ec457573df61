import { IANAZone } from "luxon";
import { type CronSpec, parseCron } from "./cron.ts";

export { CronError } from "./cron.ts";

/**
 * When a cron schedule fires in a time zone: the one answer shared by the real scheduler
 * (the next check-in shown by /status) and the simulations, so a simulated day checks in
 * exactly when the bot would. Pure: no clock, no timers.
 *
 * Daylight-saving changes follow node-cron 4, which runs the heartbeat:
 * - spring forward: a wall time that does not exist that day (02:30 in Berlin on the last
 *   Sunday of March) does not fire;
 * - fall back: a wall time that occurs twice fires once, at the occurrence node-cron picks,
 *   which is the zone's offset at that wall reading taken as UTC: the second occurrence
 *   east of Greenwich (Europe/Berlin), the first west of it (America/New_York).
 * The fire times are a set of instants; node-cron walks wall times instead, so a scheduler
 * started inside Berlin's repeated hour may skip the rest of that hour where this keeps it.
 * Day of month and weekday must both match, as in node-cron (classic cron ORs them).
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** How far ahead nextFireTime looks, as node-cron does (an expression like Feb 29 on a Monday is rare). */
const SEARCH_DAYS = 366 * 100;

/** Every instant in (from, to] at which the expression fires in the zone, oldest first. */
export function fireTimes(cron: string, zone: string, from: Date, to: Date): Date[] {
  const spec = parseCron(cron);
  const tz = ianaZone(zone);
  const start = instant(from, "from");
  const end = instant(to, "to");
  const times: number[] = [];
  for (let day = localDay(tz, start) - DAY_MS; day <= localDay(tz, end) + DAY_MS; day += DAY_MS) {
    for (const t of fireTimesOnDay(spec, tz, day)) if (t > start && t <= end) times.push(t);
  }
  return times.sort((a, b) => a - b).map((t) => new Date(t));
}

/** The first instant strictly after `after` at which the expression fires, or null if none within 100 years. */
export function nextFireTime(cron: string, zone: string, after: Date): Date | null {
  const spec = parseCron(cron);
  const tz = ianaZone(zone);
  const start = instant(after, "after");
  let day = localDay(tz, start) - DAY_MS;
  for (let i = 0; i < SEARCH_DAYS; i++, day += DAY_MS) {
    const next = fireTimesOnDay(spec, tz, day).find((t) => t > start);
    if (next !== undefined) return new Date(next);
  }
  return null;
}

function ianaZone(zone: string): IANAZone {
  const tz = IANAZone.create(zone);
  if (!tz.isValid)
    throw new RangeError(`unknown time zone "${zone}" (use an IANA name such as Europe/Berlin)`);
  return tz;
}

function instant(date: Date, name: string): number {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`${name} is not a valid instant`);
  return ms;
}

/**
 * Wall times are carried as "UTC milliseconds of the wall reading": 02:30 local on a day is
 * Date.UTC(y, m, d, 2, 30). This is the local midnight, in that form, of the day holding `ms`.
 */
function localDay(tz: IANAZone, ms: number): number {
  const wall = ms + tz.offset(ms) * MINUTE_MS;
  return Math.floor(wall / DAY_MS) * DAY_MS;
}

/** The instants the expression fires on one local day, in order (wall order is instant order). */
function fireTimesOnDay(spec: CronSpec, tz: IANAZone, day: number): number[] {
  const date = new Date(day);
  if (
    !spec.months.has(date.getUTCMonth() + 1) ||
    !spec.daysOfMonth.has(date.getUTCDate()) ||
    !spec.weekdays.has(date.getUTCDay())
  ) {
    return [];
  }
  const steady = steadyOffset(tz, day);
  const times: number[] = [];
  for (const hour of spec.hours) {
    for (const minute of spec.minutes) {
      for (const second of spec.seconds) {
        const wall = day + hour * HOUR_MS + minute * MINUTE_MS + second * 1000;
        const t = steady === null ? wallToInstant(tz, wall) : wall - steady * MINUTE_MS;
        if (t !== null) times.push(t);
      }
    }
  }
  return times;
}

/**
 * The zone's offset when it does not change anywhere near the day (most days), so every
 * wall time converts with one subtraction; null on the days around a change. The margins
 * cover the widest offsets (±14 h); two changes that cancel out within them do not occur.
 */
function steadyOffset(tz: IANAZone, day: number): number | null {
  const before = tz.offset(day - 15 * HOUR_MS);
  const after = tz.offset(day + DAY_MS + 15 * HOUR_MS);
  return before === after ? before : null;
}

/**
 * The instant a wall reading names, resolved as node-cron resolves it: take the offset at
 * the wall reading as if it were UTC; if that lands in another offset, try that one.
 * Null when the wall time does not exist (skipped by a spring-forward change).
 */
function wallToInstant(tz: IANAZone, wall: number): number | null {
  const first = tz.offset(wall);
  const candidate = wall - first * MINUTE_MS;
  const second = tz.offset(candidate);
  if (second === first) return candidate;
  const retry = wall - second * MINUTE_MS;
  return tz.offset(retry) === second ? retry : null;
}
