import { describe, expect, it } from "vitest";
import {
  canonicalZone,
  isKnownZone,
  localDayNumber,
  localTime,
  requireKnownZone,
  zoneSchema,
} from "../../src/core/zones.ts";

describe("zones", () => {
  it("knows IANA names and aliases, in any letter case, and nothing else", () => {
    for (const zone of ["Europe/Berlin", "europe/berlin", "UTC", "utc", "America/New_York", "Etc/GMT+1"]) {
      expect(isKnownZone(zone), zone).toBe(true);
    }
    for (const zone of ["", "Mars/Olympus", "Europe/Atlantis", "+01:00", "Z", " Europe/Berlin"]) {
      expect(isKnownZone(zone), zone).toBe(false);
    }
  });

  it("spells a zone the way the zone database does", () => {
    expect(canonicalZone("europe/lisbon")).toBe("Europe/Lisbon");
    expect(canonicalZone("utc")).toBe("UTC");
    expect(canonicalZone("Mars/Olympus")).toBeNull();
  });

  it("gives an instant's wall time across a clock change, the same one when asked again", () => {
    // Berlin's clocks go forward at 01:00 UTC on 29 March 2026 and back at 01:00 UTC on 25 October.
    const walls: [string, string, string][] = [
      ["2026-03-29T00:59:59.999Z", "2026-03-29T01:59:59.999+01:00", "2026-03-29T06:44:59.999+05:45"],
      ["2026-03-29T01:00:00.000Z", "2026-03-29T03:00:00.000+02:00", "2026-03-29T06:45:00.000+05:45"],
      ["2026-10-25T00:30:00.000Z", "2026-10-25T02:30:00.000+02:00", "2026-10-25T06:15:00.000+05:45"],
    ];
    for (const [iso, berlin, kathmandu] of walls) {
      const ms = Date.parse(iso);
      expect(localTime(ms, "Europe/Berlin").toISO()).toBe(berlin);
      expect(localTime(ms, "Asia/Kathmandu").toISO()).toBe(kathmandu);
      expect(localTime(ms, "Europe/Berlin")).toBe(localTime(ms, "Europe/Berlin"));
    }
    expect(localTime(0, "Mars/Olympus").isValid).toBe(false);
  });

  it("refuses an unknown zone with an error naming it and a good value", () => {
    expect(requireKnownZone("Asia/Tokyo")).toBe("Asia/Tokyo");
    const error = (() => {
      try {
        requireKnownZone("Mars/Olympus");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toBe(
      'unknown time zone "Mars/Olympus" (use an IANA name such as Europe/Berlin)',
    );
  });

  it("checks a zone field of a data file", () => {
    expect(zoneSchema.safeParse("Europe/Berlin").success).toBe(true);
    const result = zoneSchema.safeParse("Mars/Olympus");
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe("must be an IANA time zone such as Europe/Berlin");
  });
});

describe("localDayNumber", () => {
  it("counts calendar days on the wall clock of the zone, across a clock change and a +05:45 offset", () => {
    const berlin = (iso: string) => localDayNumber(Date.parse(iso), "Europe/Berlin");
    // 23:30 on Saturday and 00:30 on Sunday in Berlin: one day apart, though 1 h apart in time.
    expect(berlin("2026-03-28T23:30:00+01:00") - berlin("2026-03-28T00:10:00+01:00")).toBe(0);
    expect(berlin("2026-03-29T00:30:00+01:00") - berlin("2026-03-28T23:30:00+01:00")).toBe(1);
    // The night the clocks go forward (29 March 2026) is still one calendar day to the next.
    expect(berlin("2026-03-30T00:15:00+02:00") - berlin("2026-03-29T23:45:00+02:00")).toBe(1);
    expect(berlin("2026-03-29T23:45:00+02:00")).toBe(Date.UTC(2026, 2, 29) / 86_400_000);
    // 23:50 UTC is already the next day in Kathmandu.
    expect(localDayNumber(Date.parse("2026-03-28T23:50:00Z"), "Asia/Kathmandu")).toBe(
      Date.UTC(2026, 2, 29) / 86_400_000,
    );
  });
});
