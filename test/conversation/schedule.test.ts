import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import {
  CronError,
  fireTimes as fireTimesOf,
  nextFireTime as nextFireTimeOf,
  parseCron,
} from "../../src/conversation/schedule.ts";

/** The functions under test, taking an expression as written; parseCron checks it as config does. */
const fireTimes = (cron: string, zone: string, from: Date, to: Date) =>
  fireTimesOf(parseCron(cron), zone, from, to);
const nextFireTime = (cron: string, zone: string, after: Date) =>
  nextFireTimeOf(parseCron(cron), zone, after);

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

describe("parseCron", () => {
  it("accepts what node-cron runs: 5 or 6 fields, names, ranges that wrap, steps, lists, nicknames", () => {
    for (const expression of [
      "7 * * * *",
      "30 */30 * * * *",
      "*/20 9-17/4 1,15 jan-mar mon-fri",
      "0 22-2 * * FRI-Mon",
      "0 0 * * 7",
      "0 0 ? * ?",
      "@hourly",
      "0 12 L * *",
      "0 9 * * mon#2",
    ]) {
      expect(parseCron(expression), expression).toBe(expression);
    }
  });

  it.each([
    ["7 * * *", /expected 5 or 6 fields but got 4/],
    ["61 * * * *", /"61" in the minute field is not valid \(use 0-59/],
    ["*/0 * * * *", /"\*\/0" in the minute field is not valid/],
    ["0 25 * * *", /"25" in the hour field is not valid \(use 0-23/],
    ["0 0 * foo *", /"foo" in the month field is not valid \(use 1-12 or jan-dec/],
    ["0 0 31 2 *", /day of month "31" never occurs in the months given/],
    ["0 0 30W 2 *", /it never fires/],
    ["0\t0 * * *", /illegal characters/],
  ])("refuses %j, naming the expression and the problem", (expression, problem) => {
    const error = (() => {
      try {
        parseCron(expression);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CronError);
    expect((error as CronError).expression).toBe(expression);
    expect((error as CronError).message).toContain(`cron expression "${expression}"`);
    expect((error as CronError).problem).toMatch(problem);
  });
});

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

  it("from inside the first pass of Berlin's repeated hour, the next tick is the second pass's, as a running schedule fires it", () => {
    const firstPass = new Date("2026-10-25T00:30:00Z"); // 02:30 +02:00
    expect(nextFireTime("7 * * * *", "Europe/Berlin", firstPass)?.toISOString()).toBe(
      "2026-10-25T01:07:00.000Z",
    );
    expect(
      local(
        fireTimes("7 * * * *", "Europe/Berlin", firstPass, new Date("2026-10-25T02:07:00Z")),
        "Europe/Berlin",
      ),
    ).toEqual(["2026-10-25 02:07 +01:00", "2026-10-25 03:07 +01:00"]);
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

  describe("Australia/Lord_Howe (half-hour changes)", () => {
    it("fall back by 30 minutes: 01:45 happens twice and fires once, at the second occurrence", () => {
      expect(
        local(onLocalDay("15,45 0-3 * * *", "Australia/Lord_Howe", "2026-04-05"), "Australia/Lord_Howe"),
      ).toEqual([
        "2026-04-05 00:15 +11:00",
        "2026-04-05 00:45 +11:00",
        "2026-04-05 01:15 +11:00",
        "2026-04-05 01:45 +10:30",
        "2026-04-05 02:15 +10:30",
        "2026-04-05 02:45 +10:30",
        "2026-04-05 03:15 +10:30",
        "2026-04-05 03:45 +10:30",
      ]);
    });

    it("spring forward by 30 minutes: 02:15 does not exist, 02:45 does", () => {
      expect(
        local(onLocalDay("15,45 2 * * *", "Australia/Lord_Howe", "2026-10-04"), "Australia/Lord_Howe"),
      ).toEqual(["2026-10-04 02:45 +11:00"]);
    });
  });

  describe("America/Santiago (changes at midnight)", () => {
    it("spring forward at midnight: a day without 00:00 has no midnight tick", () => {
      const sixthOfSeptember = fireTimes(
        "0 0 * * *",
        "America/Santiago",
        new Date("2026-09-05T12:00:00Z"),
        new Date("2026-09-06T12:00:00Z"),
      );
      expect(sixthOfSeptember).toEqual([]);
      expect(
        nextFireTime("0 0 * * *", "America/Santiago", new Date("2026-09-05T22:00:00Z"))?.toISOString(),
      ).toBe("2026-09-07T03:00:00.000Z");
    });

    it("fall back at midnight: 23:07 happens twice and fires once, at the first occurrence", () => {
      const evening = fireTimes(
        "7 * * * *",
        "America/Santiago",
        new Date("2026-04-05T00:00:00Z"),
        new Date("2026-04-05T05:00:00Z"),
      );
      expect(local(evening, "America/Santiago")).toEqual([
        "2026-04-04 21:07 -03:00",
        "2026-04-04 22:07 -03:00",
        "2026-04-04 23:07 -03:00",
        "2026-04-05 00:07 -04:00",
      ]);
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

  it("runs node-cron's extensions: the last day of the month, the second Monday", () => {
    const year = (cron: string) =>
      local(
        fireTimes(cron, "UTC", new Date("2026-01-01T00:00:00Z"), new Date("2026-04-01T00:00:00Z")),
        "UTC",
      );
    expect(year("0 12 L * *")).toEqual([
      "2026-01-31 12:00 +00:00",
      "2026-02-28 12:00 +00:00",
      "2026-03-31 12:00 +00:00",
    ]);
    expect(year("0 9 * * mon#2")).toEqual([
      "2026-01-12 09:00 +00:00",
      "2026-02-09 09:00 +00:00",
      "2026-03-09 09:00 +00:00",
    ]);
  });

  it("refuses an unknown zone and an invalid instant", () => {
    const at = new Date("2026-02-07T00:00:00Z");
    expect(() => fireTimes("7 * * * *", "Mars/Olympus", at, at)).toThrow(
      'unknown time zone "Mars/Olympus" (use an IANA name such as Europe/Berlin)',
    );
    expect(() => nextFireTime("7 * * * *", "UTC", new Date(Number.NaN))).toThrow(
      /after is not a valid instant/,
    );
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
