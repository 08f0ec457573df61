/**
 * Cron expressions as node-cron 4 reads them, parsed into the sets of values each field
 * allows. The heartbeat is scheduled by node-cron, but the times it fires are computed
 * here too (for /status and the simulations), so the two must read an expression alike.
 * Everything accepted here node-cron accepts and fires at the same wall times; a few of
 * node-cron's extensions (L, W, #) and quirks (out-of-range range ends that a step happens
 * to skip) are refused with a CronError instead.
 */

/** An expression that cannot be scheduled; the message names it and what is wrong. */
export class CronError extends Error {
  override readonly name = "CronError";
  constructor(
    readonly expression: string,
    readonly problem: string,
  ) {
    super(`cron expression "${expression}": ${problem}`);
  }
}

/** The values each field allows; lists are sorted ascending, weekday 0 is Sunday. */
export interface CronSpec {
  expression: string;
  seconds: readonly number[];
  minutes: readonly number[];
  hours: readonly number[];
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
}

interface FieldRule {
  label: string;
  min: number;
  max: number;
  /** The largest value the field means (weekday 7 is Sunday again, so it wraps at 6). */
  wrapMax: number;
  names?: readonly string[];
  /** Whether "?" may stand for "any" (the two day fields). */
  question?: boolean;
}

const MONTH_NAMES = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const WEEKDAY_NAMES = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

const SECOND: FieldRule = { label: "second", min: 0, max: 59, wrapMax: 59 };
const MINUTE: FieldRule = { label: "minute", min: 0, max: 59, wrapMax: 59 };
const HOUR: FieldRule = { label: "hour", min: 0, max: 23, wrapMax: 23 };
const DAY_OF_MONTH: FieldRule = { label: "day of month", min: 1, max: 31, wrapMax: 31, question: true };
const MONTH: FieldRule = { label: "month", min: 1, max: 12, wrapMax: 12, names: MONTH_NAMES };
const WEEKDAY: FieldRule = {
  label: "weekday",
  min: 0,
  max: 7,
  wrapMax: 6,
  names: WEEKDAY_NAMES,
  question: true,
};

const NICKNAMES = new Map([
  ["@yearly", "0 0 1 1 *"],
  ["@annually", "0 0 1 1 *"],
  ["@monthly", "0 0 1 * *"],
  ["@weekly", "0 0 * * 0"],
  ["@daily", "0 0 * * *"],
  ["@midnight", "0 0 * * *"],
  ["@hourly", "0 * * * *"],
]);

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const TOKEN = /^(?<from>\*|[a-z0-9]+)(?:-(?<to>[a-z0-9]+))?(?:\/(?<step>[0-9]+))?$/i;

/** Parses a 5-field (minute first) or 6-field (second first) expression, or a nickname like @hourly. */
export function parseCron(expression: string): CronSpec {
  const fail = (problem: string): never => {
    throw new CronError(expression, problem);
  };
  const resolved = NICKNAMES.get(expression.trim().toLowerCase()) ?? expression;
  if (/[^\S ]/.test(resolved)) fail("separate the fields with spaces only");
  const fields = resolved.trim().split(/ +/);
  if (fields.length !== 5 && fields.length !== 6) {
    fail(
      `expected 5 fields (minute hour day-of-month month weekday) or 6 (seconds first), got ${fields.length}`,
    );
  }
  const [second, minute, hour, dayOfMonth, month, weekday] = fields.length === 5 ? ["0", ...fields] : fields;
  const field = (text: string | undefined, rule: FieldRule) => parseField(text ?? "", rule, fail);
  const spec: CronSpec = {
    expression,
    seconds: field(second, SECOND),
    minutes: field(minute, MINUTE),
    hours: field(hour, HOUR),
    daysOfMonth: new Set(field(dayOfMonth, DAY_OF_MONTH)),
    months: new Set(field(month, MONTH)),
    weekdays: new Set(field(weekday, WEEKDAY).map((d) => d % 7)),
  };
  const possible = [...spec.months].some((m) =>
    [...spec.daysOfMonth].some((d) => d <= (DAYS_IN_MONTH[m - 1] ?? 0)),
  );
  if (!possible) fail(`day of month "${dayOfMonth}" never occurs in month "${month}"`);
  return spec;
}

function parseField(text: string, rule: FieldRule, fail: (problem: string) => never): number[] {
  if (text === "?" && rule.question) return range(rule.min, rule.wrapMax, 1);
  const values = new Set<number>();
  for (const token of text.split(",")) {
    for (const value of parseToken(token, rule, fail)) values.add(value);
  }
  return [...values].sort((a, b) => a - b);
}

function parseToken(token: string, rule: FieldRule, fail: (problem: string) => never): number[] {
  const where = `in the ${rule.label} field`;
  const match = TOKEN.exec(token);
  if (!match?.groups) {
    return fail(`"${token}" ${where} is not a number, a name, a range (a-b), * or a step (*/n, a-b/n)`);
  }
  const { from, to, step } = match.groups;
  if (from === "*" && to !== undefined) fail(`"${token}" ${where}: * cannot start a range`);
  if (step !== undefined && from !== "*" && to === undefined) {
    fail(`"${token}" ${where}: a step needs a range or * before it (e.g. */${step})`);
  }
  const stepBy = step === undefined ? 1 : Number(step);
  if (stepBy < 1) fail(`"${token}" ${where}: the step must be at least 1`);
  if (from === "*") return range(rule.min, rule.wrapMax, stepBy);
  const first = parseValue(from ?? "", rule, where, fail);
  if (to === undefined) return [first];
  const last = parseValue(to, rule, where, fail);
  if (first <= last) return range(first, last, stepBy);
  return wrappedRange(first, last, stepBy, rule);
}

function parseValue(text: string, rule: FieldRule, where: string, fail: (problem: string) => never): number {
  if (/^[0-9]+$/.test(text)) {
    const value = Number(text);
    if (value < rule.min || value > rule.max) fail(`${value} ${where} is outside ${rule.min}-${rule.max}`);
    return value;
  }
  const lower = text.toLowerCase();
  const index = rule.names?.findIndex((name) => name === lower || name.slice(0, 3) === lower) ?? -1;
  if (index < 0) {
    const hint = rule.names ? ` (use ${rule.names.map((n) => n.slice(0, 3)).join(", ")})` : "";
    fail(`"${text}" ${where} is not a value${hint}`);
  }
  return rule.min + index;
}

function range(first: number, last: number, step: number): number[] {
  const values: number[] = [];
  for (let v = first; v <= last; v += step) values.push(v);
  return values;
}

/** A range that runs past the field's end and starts again (hours 22-2, weekdays fri-mon), as node-cron reads it. */
function wrappedRange(first: number, last: number, step: number, rule: FieldRule): number[] {
  const size = rule.wrapMax - rule.min + 1;
  const span = (((last - first) % size) + size) % size;
  const values: number[] = [];
  for (let offset = 0; offset <= span; offset += step) {
    const value = first + offset;
    values.push(value > rule.wrapMax ? value - size : value);
  }
  return values;
}
