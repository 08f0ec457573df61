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

/** The zone's own spelling ("europe/lisbon" → "Europe/Lisbon"), or null when it is not a known zone. */
export function canonicalZone(zone: string): string | null {
  if (zone === "") return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
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
