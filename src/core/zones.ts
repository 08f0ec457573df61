import { DateTime } from "luxon";
import { z } from "zod";

/**
 * Time zones, checked one way everywhere: a zone is usable when this Node.js formats dates
 * in it (IANA names such as Europe/Berlin, and aliases such as UTC). luxon, node-cron and
 * the Intl formatting all read zones through the same Intl data, so a zone that passes here
 * works in each of them. Pure: no clock, no I/O.
 */

/** What every message about a zone offers as a good value. */
const ZONE_EXAMPLE = "Europe/Berlin";

/** True when the zone is one this Node.js knows. */
export function isKnownZone(zone: string): boolean {
  return canonicalZone(zone) !== null;
}

/**
 * Each known zone's own spelling, by the name it was asked for: zones are checked on every
 * data file write and every awareness build, and making a formatter each time is most of
 * the cost. Unknown names are not kept (a person may type any text after /tz).
 */
const knownZones = new Map<string, string>();

/** The zone's own spelling ("europe/lisbon" → "Europe/Lisbon"), or null when it is not a known zone. */
export function canonicalZone(zone: string): string | null {
  if (zone === "") return null;
  const known = knownZones.get(zone);
  if (known !== undefined) return known;
  try {
    const canonical = new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
    knownZones.set(zone, canonical);
    return canonical;
  } catch {
    return null;
  }
}

/** The machine's own zone: the default when the person names none. */
export function machineZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/**
 * The zone itself when it is known; throws a RangeError naming the zone and an example otherwise.
 * For code handed a zone it did not read itself (no caller tells this error apart from others).
 */
export function requireKnownZone(zone: string): string {
  if (!isKnownZone(zone)) {
    throw new RangeError(
      `unknown time zone ${JSON.stringify(zone)} (use an IANA name such as ${ZONE_EXAMPLE})`,
    );
  }
  return zone;
}

/** A zone field of a data file or scenario. */
export const zoneSchema = z
  .string()
  .refine(isKnownZone, { message: `must be an IANA time zone such as ${ZONE_EXAMPLE}` });

/**
 * Wall times already worked out, by zone and instant: a turn reads the times of the same
 * messages as the turn before it, and finding a zone's offset at an instant is most of what
 * luxon spends on one. A DateTime never changes, so one can be handed out many times. Each
 * zone keeps at most LOCAL_TIMES_KEPT instants (then starts over), and at most a few zones.
 */
const localTimes = new Map<string, Map<number, DateTime>>();
const LOCAL_TIMES_KEPT = 20_000;
const ZONES_KEPT = 8;

/** The instant `ms` as a wall time in `zone` (luxon, the default locale), as `DateTime.fromMillis(ms, { zone })` gives it. */
export function localTime(ms: number, zone: string): DateTime {
  let byInstant = localTimes.get(zone);
  if (byInstant === undefined) {
    if (localTimes.size >= ZONES_KEPT) localTimes.clear();
    byInstant = new Map();
    localTimes.set(zone, byInstant);
  }
  let local = byInstant.get(ms);
  if (local === undefined) {
    if (byInstant.size >= LOCAL_TIMES_KEPT) byInstant.clear();
    local = DateTime.fromMillis(ms, { zone });
    byInstant.set(ms, local);
  }
  return local;
}

/**
 * The local calendar day of the instant `ms` in `zone`, as days since 1970-01-01 on the wall
 * clock: two of them subtract to the calendar days between ("yesterday" is 1 even across a clock
 * change) and compare as numbers, without building a date text.
 */
export function localDayNumber(ms: number, zone: string): number {
  const local = localTime(ms, zone);
  return Date.UTC(local.year, local.month - 1, local.day) / 86_400_000;
}
