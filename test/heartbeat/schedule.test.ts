import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { CronError, fireTimes, nextFireTime } from "../../src/heartbeat/schedule.ts";
import { nodeCronNextRuns } from "./node-cron-oracle.ts";

/** Fire times as local wall readings with their offset, e.g. "2026-10-25 02:07 +01:00". */
function local(times: Date[], zone: string): string[] {
  return times.map((t) => DateTime.fromJSDate(t, { zone }).toFormat("yyyy-LL-dd HH:mm ZZ"));
}

/** Fire times over one local calendar day. */
function onLocalDay(cron: string, zone: string, isoDate: string): Date[] {
  const start = DateTime.fromISO(isoDate, { zone }).startOf("day");
  return fireTimes(
    cron,
    zone,
    new Date(start.toMillis() - 1),
    new Date(start.plus({ days: 1 }).toMillis() - 1),
  );
}

describe("fireTimes", () => {
  it('fires "7 * * * *" at seven past every hour, within (from, to]', () => {
    const times = fireTimes(
      "7 * * * *",
      "UTC",
      new Date("2026-02-07T00:07:00Z"),
      new Date("2026-02-07T03:07:00Z"),
    );
    expect(times.map((t) => t.toISOString())).toEqual([
      "2026-02-07T01:07:00.000Z",
      "2026-02-07T02:07:00.000Z",
      "2026-02-07T03:07:00.000Z",
    ]);
    expect(onLocalDay("7 * * * *", "Europe/Berlin", "2026-02-07")).toHaveLength(24);
  });

  it("gives nothing for an empty or reversed interval", () => {
    const at = new Date("2026-02-07T10:07:00Z");
    expect(fireTimes("7 * * * *", "UTC", at, at)).toEqual([]);
    expect(fireTimes("7 * * * *", "UTC", at, new Date("2026-02-07T09:00:00Z"))).toEqual([]);
  });

  describe("Europe/Berlin", () => {
    it("spring forward: 02:07 does not exist, so the day has 23 hourly ticks", () => {
      const day = local(onLocalDay("7 * * * *", "Europe/Berlin", "2026-03-29"), "Europe/Berlin");
      expect(day).toHaveLength(23);
      expect(day.slice(1, 3)).toEqual(["2026-03-29 01:07 +01:00", "2026-03-29 03:07 +02:00"]);
      expect(onLocalDay("30 2 * * *", "Europe/Berlin", "2026-03-29")).toEqual([]);
    });

    it("fall back: 02:07 happens twice and fires once, at the second occurrence (as node-cron does)", () => {
      const day = local(onLocalDay("7 * * * *", "Europe/Berlin", "2026-10-25"), "Europe/Berlin");
      expect(day).toHaveLength(24);
      expect(day.slice(1, 4)).toEqual([
        "2026-10-25 01:07 +02:00",
        "2026-10-25 02:07 +01:00",
        "2026-10-25 03:07 +01:00",
      ]);
      expect(local(onLocalDay("30 2 * * *", "Europe/Berlin", "2026-10-25"), "Europe/Berlin")).toEqual([
        "2026-10-25 02:30 +01:00",
      ]);
    });
  });

  describe("America/New_York", () => {
    it("spring forward: 02:30 does not exist and does not fire", () => {
      expect(onLocalDay("30 2 * * *", "America/New_York", "2026-03-08")).toEqual([]);
      expect(onLocalDay("7 * * * *", "America/New_York", "2026-03-08")).toHaveLength(23);
    });

    it("fall back: 01:30 happens twice and fires once, at the first occurrence (as node-cron does)", () => {
      expect(local(onLocalDay("30 1 * * *", "America/New_York", "2026-11-01"), "America/New_York")).toEqual([
        "2026-11-01 01:30 -04:00",
      ]);
      expect(onLocalDay("7 * * * *", "America/New_York", "2026-11-01")).toHaveLength(24);
    });
  });

  it("reads ranges, steps, lists, names and seconds", () => {
    const zone = "Europe/Berlin";
    const week = (cron: string) =>
      local(
        fireTimes(cron, zone, new Date("2026-02-08T23:00:00Z"), new Date("2026-02-15T23:00:00Z")), // Mon 9 – Sun 15 Feb
        zone,
      );
    const workdays = week("0 9-17/4 * * mon-fri");
    expect(workdays).toHaveLength(15);
    expect(workdays.slice(0, 4)).toEqual([
      "2026-02-09 09:00 +01:00",
      "2026-02-09 13:00 +01:00",
      "2026-02-09 17:00 +01:00",
      "2026-02-10 09:00 +01:00",
    ]);
    expect(week("0 22-1 * * sat")).toEqual([
      "2026-02-14 00:00 +01:00",
      "2026-02-14 01:00 +01:00",
      "2026-02-14 22:00 +01:00",
      "2026-02-14 23:00 +01:00",
    ]);
    expect(week("15,45 8 * * SUN,7")).toEqual(["2026-02-15 08:15 +01:00", "2026-02-15 08:45 +01:00"]);
    expect(onLocalDay("*/15 * * * *", zone, "2026-02-10")).toHaveLength(96);
    expect(
      fireTimes(
        "*/20 0 8 * * *",
        zone,
        new Date("2026-02-10T06:59:59Z"),
        new Date("2026-02-10T07:01:00Z"),
      ).map((t) => t.toISOString()),
    ).toEqual(["2026-02-10T07:00:00.000Z", "2026-02-10T07:00:20.000Z", "2026-02-10T07:00:40.000Z"]);
    expect(onLocalDay("@daily", zone, "2026-02-10")).toHaveLength(1);
  });

  it("needs the day of month AND the weekday to match, like node-cron", () => {
    const fridays13 = local(
      fireTimes("0 12 13 * fri", "UTC", new Date("2026-01-01T00:00:00Z"), new Date("2027-01-01T00:00:00Z")),
      "UTC",
    );
    expect(fridays13).toEqual([
      "2026-02-13 12:00 +00:00",
      "2026-03-13 12:00 +00:00",
      "2026-11-13 12:00 +00:00",
    ]);
  });

  it("refuses an unknown zone and an invalid expression", () => {
    const at = new Date("2026-02-07T00:00:00Z");
    expect(() => fireTimes("7 * * * *", "Mars/Olympus", at, at)).toThrow(/unknown time zone "Mars\/Olympus"/);
    expect(() => fireTimes("7 * * *", "UTC", at, at)).toThrow(CronError);
  });
});

describe("nextFireTime", () => {
  it("is strictly after the given instant", () => {
    const at = new Date("2026-02-07T10:07:00Z");
    expect(nextFireTime("7 * * * *", "UTC", at)?.toISOString()).toBe("2026-02-07T11:07:00.000Z");
    expect(nextFireTime("7 * * * *", "UTC", new Date(at.getTime() - 1))?.toISOString()).toBe(
      "2026-02-07T10:07:00.000Z",
    );
  });

  it("finds rare dates years ahead (29 February on a Monday)", () => {
    const next = nextFireTime("0 0 29 2 mon", "Europe/Berlin", new Date("2026-01-01T00:00:00Z"));
    expect(next && local([next], "Europe/Berlin")).toEqual(["2044-02-29 00:00 +01:00"]);
  });
});

describe("agreement with node-cron around daylight-saving changes", () => {
  const expressions = [
    "7 * * * *",
    "*/20 * * * *",
    "30 2 * * *",
    "30 1 * * *",
    "0 0 * * *",
    "15,45 0-3 * * *",
  ];
  /** Six hours before each 2026 change, in zones east and west of Greenwich, with 30-min shifts and midnight changes. */
  const changes: [string, string][] = [
    ["Europe/Berlin", "2026-03-28T19:00:00Z"],
    ["Europe/Berlin", "2026-10-24T19:00:00Z"],
    ["America/New_York", "2026-03-08T01:00:00Z"],
    ["America/New_York", "2026-11-01T00:00:00Z"],
    ["Australia/Lord_Howe", "2026-04-04T09:00:00Z"],
    ["Australia/Lord_Howe", "2026-10-03T09:30:00Z"],
    ["America/Santiago", "2026-04-04T21:00:00Z"],
    ["America/Santiago", "2026-09-05T22:00:00Z"],
  ];

  for (const [zone, start] of changes) {
    it(`${zone} from ${start}`, () => {
      const from = new Date(start);
      for (const expression of expressions) {
        const expected = nodeCronNextRuns(expression, zone, from, 8).map((t) => t.toISOString());
        const actual = fireTimes(expression, zone, from, new Date(expected.at(-1) ?? from)).map((t) =>
          t.toISOString(),
        );
        expect(actual, expression).toEqual(expected);
      }
    });
  }
});
