import { DateTime } from "luxon";
import { localTime } from "../src/core/zones.ts";
import type { Weekday } from "./scenario.ts";

/**
 * Which zone the person lives in at each instant of a scenario, and the conversion
 * between their wall times and instants. A trip is a `/tz` change: before it, wall
 * times are read in the old zone, after it in the new one.
 */

/** A wall time of the person: what their phone shows. */
export interface LocalReading {
  zone: string;
  /** "2026-03-07" */
  date: string;
  /** "08:30" */
  time: string;
  minutesOfDay: number;
  weekday: Weekday;
}

const WEEKDAYS: readonly Weekday[] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/** A wall time that cannot be placed: the message says which and why. */
export class LocalTimeError extends Error {
  override readonly name = "LocalTimeError";
}

interface Segment {
  zone: string;
  /** Instant the zone takes effect (ms); -Infinity for the first. */
  from: number;
}

/** The person's zone over the scenario: the home zone, then each /tz change in turn. */
export class ZoneTimeline {
  readonly #segments: Segment[];

  /** `changes` in the order the person makes them; each `at` is read in the zone being left. */
  constructor(initialZone: string, changes: readonly { at: string; timezone: string }[] = []) {
    this.#segments = [{ zone: initialZone, from: Number.NEGATIVE_INFINITY }];
    for (const change of changes) {
      const previous = this.#segments[this.#segments.length - 1] as Segment;
      const [reading, explicitZone] = change.at.split(" ");
      const at = toInstant(reading as string, explicitZone ?? previous.zone).getTime();
      if (at <= previous.from) {
        throw new LocalTimeError(`the /tz change at ${change.at} comes before the previous change`);
      }
      this.#segments.push({ zone: change.timezone, from: at });
    }
  }

  /** The instants at which the zone changes, with the zones on either side. */
  changes(): { at: Date; from: string; to: string }[] {
    return this.#segments.slice(1).map((s, i) => ({
      at: new Date(s.from),
      from: (this.#segments[i] as Segment).zone,
      to: s.zone,
    }));
  }

  /** The zone the person is in at an instant. */
  zoneAt(at: Date): string {
    const ms = at.getTime();
    let zone = (this.#segments[0] as Segment).zone;
    for (const s of this.#segments) if (s.from <= ms) zone = s.zone;
    return zone;
  }

  /**
   * The instant of a wall time ("2026-03-06T18:30", or with its zone: "… Europe/Berlin"),
   * read in the zone in effect then. After a /tz change some wall times are lived in
   * both zones and some in neither: those need their zone written out.
   */
  instant(local: string): Date {
    const [reading, explicitZone] = local.split(" ");
    if (explicitZone !== undefined) return toInstant(reading as string, explicitZone);
    const fits = this.#segments.flatMap((s, i) => {
      const candidate = toInstant(local, s.zone).getTime();
      const until = this.#segments[i + 1]?.from ?? Number.POSITIVE_INFINITY;
      return candidate >= s.from && candidate < until ? [{ zone: s.zone, at: candidate }] : [];
    });
    const [first, second] = fits;
    if (first === undefined) {
      throw new LocalTimeError(
        `"${local}" is not a time the person lives through (a /tz change skips it); write its zone, e.g. "${local} ${this.#segments[0]?.zone}"`,
      );
    }
    if (second !== undefined && second.at !== first.at) {
      throw new LocalTimeError(
        `"${local}" happens both in ${first.zone} and in ${second.zone} around a /tz change; write which, e.g. "${local} ${second.zone}"`,
      );
    }
    return new Date(first.at);
  }

  /** The person's wall reading of an instant. */
  reading(at: Date): LocalReading {
    return readIn(at, this.zoneAt(at));
  }

  /** Stretches of the scenario with one zone each, clipped to [from, to]. */
  stretches(from: Date, to: Date): { zone: string; from: Date; to: Date }[] {
    const out: { zone: string; from: Date; to: Date }[] = [];
    for (const [i, s] of this.#segments.entries()) {
      const start = Math.max(s.from, from.getTime());
      const end = Math.min(this.#segments[i + 1]?.from ?? Number.POSITIVE_INFINITY, to.getTime());
      if (start < end) out.push({ zone: s.zone, from: new Date(start), to: new Date(end) });
    }
    return out;
  }
}

/** A wall reading in a given zone. */
export function readIn(at: Date, zone: string): LocalReading {
  const dt = localTime(at.getTime(), zone);
  return {
    zone,
    date: `${String(dt.year).padStart(4, "0")}-${twoDigits(dt.month)}-${twoDigits(dt.day)}`,
    time: clockTime(dt),
    minutesOfDay: dt.hour * 60 + dt.minute,
    weekday: WEEKDAYS[dt.weekday - 1] as Weekday,
  };
}

/**
 * A wall time as "HH:mm". Written out rather than with toFormat, which reads its pattern
 * again on every call: the figures, transcript and report of a month read about 15,000.
 */
export function clockTime(dt: DateTime): string {
  return `${twoDigits(dt.hour)}:${twoDigits(dt.minute)}`;
}

function twoDigits(n: number): string {
  return String(n).padStart(2, "0");
}

/** A wall time in a zone as an instant; a time skipped by a clock change moves forward, as clocks do. */
function toInstant(local: string, zone: string): Date {
  const dt = DateTime.fromISO(local, { zone });
  if (!dt.isValid) throw new LocalTimeError(`"${local}" in ${zone}: ${dt.invalidExplanation ?? "invalid"}`);
  return dt.toJSDate();
}

/** Whether a minute of the day lies in a range that may wrap past midnight; equal ends mean never. */
export function inRange(minutesOfDay: number, range: { start: number; end: number }): boolean {
  if (range.start === range.end) return false;
  if (range.start < range.end) return minutesOfDay >= range.start && minutesOfDay < range.end;
  return minutesOfDay >= range.start || minutesOfDay < range.end;
}
