import fc from "fast-check";
import { IANAZone } from "luxon";
import cron from "node-cron";
import { describe, expect, it } from "vitest";
import { CronError, parseCron } from "../../src/heartbeat/cron.ts";
import { fireTimes } from "../../src/heartbeat/schedule.ts";
import { nodeCronNextRuns } from "./node-cron-oracle.ts";

describe("parseCron", () => {
  it("expands each field into the values it allows", () => {
    const spec = parseCron("*/20 9-17/4 1,15 jan-mar mon-fri");
    expect(spec.seconds).toEqual([0]);
    expect(spec.minutes).toEqual([0, 20, 40]);
    expect(spec.hours).toEqual([9, 13, 17]);
    expect([...spec.daysOfMonth]).toEqual([1, 15]);
    expect([...spec.months]).toEqual([1, 2, 3]);
    expect([...spec.weekdays]).toEqual([1, 2, 3, 4, 5]);
  });

  it("reads seconds first when there are six fields, 7 as Sunday, wrapping ranges and nicknames", () => {
    expect(parseCron("30 */30 * * * *").seconds).toEqual([30]);
    expect([...parseCron("0 0 * * 7").weekdays]).toEqual([0]);
    expect([...parseCron("0 0 * * FRI-Mon").weekdays]).toEqual([0, 1, 5, 6]);
    expect(parseCron("0 22-2 * * *").hours).toEqual([0, 1, 2, 22, 23]);
    expect(parseCron("@hourly").minutes).toEqual([0]);
    expect(parseCron("0 0 ? * ?").hours).toEqual([0]);
  });

  it.each([
    ["7 * * *", /expected 5 fields .* got 4/],
    ["61 * * * *", /61 in the minute field is outside 0-59/],
    ["*/0 * * * *", /step must be at least 1/],
    ["5/10 * * * *", /a step needs a range or \*/],
    ["0 0 31 2 *", /day of month "31" never occurs in month "2"/],
    ["0 0 L * *", /"L" in the day of month field is not a value/],
    ["0 0 * * mon#2", /"mon#2" in the weekday field/],
    ["0 0 * foo *", /"foo" in the month field is not a value \(use jan, feb/],
    ["0\t0 * * *", /spaces only/],
  ])("refuses %j, naming the expression and the problem", (expression, problem) => {
    const error = (() => {
      try {
        parseCron(expression);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(CronError);
    expect((error as CronError).message).toContain(`cron expression "${expression}"`);
    expect((error as CronError).message).toMatch(problem);
  });
});

/** Well-formed fields: every number inside the field's range, steps of at least 1. */
function field(min: number, max: number, names: string[] = []): fc.Arbitrary<string> {
  const value = fc.oneof(
    fc.integer({ min, max }).map(String),
    ...(names.length > 0 ? [fc.constantFrom(...names)] : []),
  );
  const step = fc.integer({ min: 1, max: max + 2 });
  const token = fc.oneof(
    value,
    fc.constant("*"),
    step.map((s) => `*/${s}`),
    fc.tuple(value, value).map(([a, b]) => `${a}-${b}`),
    fc.tuple(value, value, step).map(([a, b, s]) => `${a}-${b}/${s}`),
  );
  return fc.array(token, { minLength: 1, maxLength: 3 }).map((tokens) => tokens.join(","));
}

const dayAndMonth = fc.oneof(
  fc.tuple(field(1, 31), field(1, 12, ["jan", "Feb", "DEC", "june"])),
  fc.tuple(fc.constantFrom("30", "31", "30-31", "30,31"), fc.constantFrom("2", "feb", "2,4", "apr-jun/2")),
);

/** Well-formed expressions, some of which name a day that never comes (31 February). */
const wellFormed = fc
  .tuple(
    fc.option(field(0, 59), { nil: undefined }),
    field(0, 59),
    field(0, 23),
    dayAndMonth,
    field(0, 7, ["mon", "SAT", "sun", "friday"]),
  )
  .map(([second, minute, hour, [day, month], weekday]) =>
    [...(second === undefined ? [] : [second]), minute, hour, day, month, weekday].join(" "),
  );

/** Broken variants: a token out of range or malformed, a zero step, a wrong number of fields. */
const broken = fc.oneof(
  fc
    .tuple(wellFormed, fc.nat(), fc.constantFrom("60", "99", "*/0", "1-2/0", "1-2-3", "x", "5/5", "*-3"))
    .map(([expr, index, bad]) => {
      const fields = expr.split(" ");
      fields[index % fields.length] = bad;
      return fields.join(" ");
    }),
  wellFormed.map((expr) => `${expr} 0 0`.split(" ").slice(0, 7).join(" ")),
  wellFormed.map((expr) => expr.split(" ").slice(-4).join(" ")),
);

const accepts = (expression: string) => {
  try {
    parseCron(expression);
    return true;
  } catch (error) {
    if (error instanceof CronError) return false;
    throw error;
  }
};

describe("parseCron against node-cron's validate", () => {
  it("accepts a well-formed expression exactly when node-cron does", () => {
    fc.assert(
      fc.property(wellFormed, (expression) => {
        expect(accepts(expression)).toBe(cron.validate(expression));
      }),
      { numRuns: 400 },
    );
  });

  it("refuses broken expressions, as node-cron does", () => {
    fc.assert(
      fc.property(broken, (expression) => {
        expect(accepts(expression)).toBe(false);
        expect(cron.validate(expression)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it("never accepts what node-cron refuses, whatever the text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 24 }), (expression) => {
        if (accepts(expression)) expect(cron.validate(expression)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("fires when node-cron fires, away from daylight-saving changes", () => {
    const zones = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Pacific/Chatham"];
    const day = 86_400_000;
    const instant = fc
      .integer({ min: Date.UTC(2025, 0, 1) / 1000, max: Date.UTC(2030, 0, 1) / 1000 })
      .map((s) => new Date(s * 1000));
    fc.assert(
      fc.property(
        wellFormed.filter(accepts),
        fc.constantFrom(...zones),
        instant,
        (expression, zone, from) => {
          const tz = IANAZone.create(zone);
          fc.pre(tz.offset(from.getTime() - 2 * day) === tz.offset(from.getTime() + 40 * day));
          const expected = nodeCronNextRuns(expression, zone, from, 3).map((t) => t.toISOString());
          const last = new Date(expected.at(-1) ?? from);
          expect(fireTimes(expression, zone, from, last).map((t) => t.toISOString())).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
