import { IANAZone } from "luxon";
import cron, { type CronFieldError } from "node-cron";
import { requireKnownZone } from "../core/zones.ts";

/**
 * The heartbeat's cron expression: checked once where it is read (config.ts, a scenario
 * file), and the times it fires in a zone, for /status's next check-in and the simulations.
 * Both come from node-cron, which runs the schedule (scheduler.ts), so the bot, /status and
 * a simulated day agree on every tick, daylight-saving changes included:
 * - spring forward: a wall time that does not exist that day (02:30 in Berlin on the last
 *   Sunday of March) does not fire;
 * - fall back: a wall time that occurs twice fires once, at the occurrence node-cron picks
 *   (the zone's offset at that wall reading taken as UTC): the second east of Greenwich
 *   (Europe/Berlin), the first west of it (America/New_York);
 * - day of month and weekday must both match (classic cron ORs them).
 * node-cron's scheduler finds each tick from the one before it, so that is how these times
 * are found too. Pure: no clock, no timers.
 */

declare const checked: unique symbol;
/** A cron expression node-cron accepts and that fires at least once; only parseCron makes one. */
export type HeartbeatCron = string & { readonly [checked]: true };

/** An expression the heartbeat cannot run; the message names it and what is wrong. */
export class CronError extends Error {
  override readonly name = "CronError";
  constructor(
    readonly expression: string,
    readonly problem: string,
  ) {
    super(`cron expression "${expression}": ${problem}`);
  }
}

/** How each field reads, for a message about a value it does not take. */
const FIELDS: Record<string, { label: string; values: string }> = {
  second: { label: "second", values: "0-59" },
  minute: { label: "minute", values: "0-59" },
  hour: { label: "hour", values: "0-23" },
  dayOfMonth: { label: "day of month", values: "1-31 or L" },
  month: { label: "month", values: "1-12 or jan-dec" },
  dayOfWeek: { label: "weekday", values: "0-7 or sun-sat" },
};

/** Where the "does it ever fire" check starts: a fixed instant, so the answer never depends on the clock. */
const NEVER_FIRES_CHECK_FROM = new Date(Date.UTC(2000, 0, 1));

/**
 * The one check of a cron expression: 5 fields (minute first) or 6 (seconds first), or a
 * nickname like @hourly, as node-cron reads it, and it must fire at least once (31 February
 * never comes). Throws CronError naming the problem.
 */
export function parseCron(expression: string): HeartbeatCron {
  const result = cron.validateDetailed(expression);
  if (!result.valid) {
    throw new CronError(expression, result.errors.map(describeFieldError).join("; "));
  }
  if (nextMatch(matcher(expression, "UTC"), NEVER_FIRES_CHECK_FROM) === null) {
    throw new CronError(expression, "it never fires");
  }
  return expression as HeartbeatCron;
}

function describeFieldError(error: CronFieldError): string {
  const field = FIELDS[error.field];
  if (field === undefined || error.value === undefined) return error.message;
  // node-cron reports a day that never occurs in the months given (31 in February) under
  // the day field too; the day field alone being valid tells the two apart.
  if (error.field === "dayOfMonth" && cron.validate(`0 0 ${error.value} * *`)) {
    return `day of month "${error.value}" never occurs in the months given`;
  }
  return `"${error.value}" in the ${field.label} field is not valid (use ${field.values}, *, a range a-b, a step */n or a list)`;
}

/** Every instant in (from, to] at which the expression fires in the zone, oldest first. */
export function fireTimes(expression: HeartbeatCron, zone: string, from: Date, to: Date): Date[] {
  const next = matcher(expression, zone);
  const end = instant(to, "to").getTime();
  const times: Date[] = [];
  for (let t = firstAfter(next, zone, instant(from, "from")); t !== null && t.getTime() <= end; ) {
    times.push(t);
    t = nextMatch(next, t);
  }
  return times;
}

/** The first instant strictly after `after` at which the expression fires in the zone, or null if none within 100 years. */
export function nextFireTime(expression: HeartbeatCron, zone: string, after: Date): Date | null {
  return firstAfter(matcher(expression, zone), zone, instant(after, "after"));
}

function instant(date: Date, name: string): Date {
  if (Number.isNaN(date.getTime())) throw new RangeError(`${name} is not a valid instant`);
  return date;
}

/** Wider than any hour a clock change repeats; two changes are never this close together. */
const AROUND_A_CHANGE_MS = 3 * 3_600_000;

/**
 * The tick a running schedule fires first after `after`. node-cron, asked from an instant,
 * looks only at wall times later than that instant's: from the first pass of an hour that
 * a fall-back change repeats, it would skip that hour's second pass, which a schedule already
 * running does fire. Near a change the ticks are therefore followed from a few hours before,
 * as the running schedule followed them.
 */
function firstAfter(next: NodeCronMatcher, zone: string, after: Date): Date | null {
  const at = after.getTime();
  const tz = IANAZone.create(zone);
  if (tz.offset(at - AROUND_A_CHANGE_MS) === tz.offset(at + AROUND_A_CHANGE_MS))
    return nextMatch(next, after);
  let t = nextMatch(next, new Date(at - AROUND_A_CHANGE_MS));
  while (t !== null && t.getTime() <= at) t = nextMatch(next, t);
  return t;
}

/** node-cron's matcher, the code its scheduler asks for the next fire time. */
interface NodeCronMatcher {
  getNextMatch(after: Date): Date;
}

/** Matchers are pure and reused: /status asks for hundreds of ticks in a row. A handful of zones is all a process sees. */
const matchers = new Map<string, NodeCronMatcher>();
const MATCHERS_KEPT = 16;

/**
 * node-cron computes fire times only from the wall clock (a task's getNextRuns); the matcher
 * every task carries takes any instant. It is taken from a task that is never started and is
 * destroyed at once (node-cron keeps a registry of its tasks).
 */
function matcher(expression: string, zone: string): NodeCronMatcher {
  const key = `${zone} ${expression}`;
  const kept = matchers.get(key);
  if (kept) return kept;
  requireKnownZone(zone);
  const task = cron.createTask(expression, () => undefined, { timezone: zone });
  let found: unknown;
  try {
    found = Reflect.get(task, "timeMatcher");
  } finally {
    void task.destroy();
  }
  if (!isMatcher(found)) {
    throw new Error(
      "node-cron's tasks no longer carry the timeMatcher this code reads; check the node-cron version against src/conversation/schedule.ts",
    );
  }
  if (matchers.size >= MATCHERS_KEPT) matchers.clear();
  matchers.set(key, found);
  return found;
}

function isMatcher(value: unknown): value is NodeCronMatcher {
  return (
    typeof value === "object" && value !== null && typeof Reflect.get(value, "getNextMatch") === "function"
  );
}

/** node-cron's next match, or null where it finds none within the 100 years it looks ahead. */
function nextMatch(next: NodeCronMatcher, after: Date): Date | null {
  try {
    return next.getNextMatch(after);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("Could not find next matching date")) return null;
    throw error;
  }
}
