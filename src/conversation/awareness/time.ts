import type { DateTime } from "luxon";
import { localDayNumber, localTime } from "../../core/zones.ts";

const MS_PER_MINUTE = 60_000;

/** Part of the person's day, by their local hour. */
export type TimeOfDay = "morning" | "afternoon" | "evening" | "night";

/**
 * Whole minutes of real time between two instants, never negative. Computed on the UTC
 * timeline, so the night the clocks change neither adds nor loses an hour.
 */
export function elapsedMinutes(fromMs: number, toMs: number): number {
  return Math.max(0, Math.floor((toMs - fromMs) / MS_PER_MINUTE));
}

/** The instant as the person's wall clock shows it, in English (its zone offset worked out once: localTime). */
export function inZone(ms: number, zone: string): DateTime {
  return localTime(ms, zone).setLocale("en-US");
}

/** Morning 05–12, afternoon 12–17, evening 17–22, night 22–05, by the local hour. */
export function timeOfDay(local: DateTime): TimeOfDay {
  const { hour } = local;
  if (hour >= 5 && hour < 12) return "morning";
  if (hour >= 12 && hour < 17) return "afternoon";
  if (hour >= 17 && hour < 22) return "evening";
  return "night";
}

/** Saturday and Sunday. */
export function isWeekend(local: DateTime): boolean {
  return local.weekday >= 6;
}

/**
 * A message time as the person would read it beside "now": "2:22 PM" today,
 * "yesterday 9:14 PM", "Thu 9:14 PM" within the week, "Feb 5, 9:14 PM" before that.
 */
export function localStamp(ms: number, nowMs: number, zone: string): string {
  const local = inZone(ms, zone);
  const clock = local.toFormat("h:mm a");
  const daysAgo = localDayNumber(nowMs, zone) - localDayNumber(ms, zone);
  if (daysAgo === 0) return clock;
  if (daysAgo === 1) return `yesterday ${clock}`;
  if (daysAgo < 6) return `${local.toFormat("ccc")} ${clock}`;
  return `${local.toFormat("LLL d")}, ${clock}`;
}
