import { fireTimes } from "../src/conversation/schedule.ts";
import { type Reaction, type ReactionRule, type Scenario, ScenarioError } from "./scenario.ts";
import { inRange, type LocalReading, LocalTimeError, ZoneTimeline } from "./zones.ts";

/**
 * A scenario turned into instants: when the heartbeat ticks (the cron schedule in the
 * zone the person is in, stretch by stretch when they travel, DST included), when they
 * write, when they are unreachable. Every wall time is resolved here once, so a scenario
 * with an impossible or ambiguous time fails before anything runs.
 */
export interface Plan {
  scenario: Scenario;
  zones: ZoneTimeline;
  start: Date;
  end: Date;
  ticks: Date[];
  messages: { at: Date; text: string; answers: string[] }[];
  silences: { from: Date; to: Date }[];
  timezoneChanges: { at: Date; from: string; to: string }[];
}

/**
 * Each scenario's plan, worked out once: simulate plans every scenario before the first run,
 * to fail early on a bad time, and the run plans it again (0.1 s for the month, mostly its
 * heartbeat's fire times). A plan is only read.
 */
const plans = new WeakMap<Scenario, Plan>();

/** Resolves every wall time of a scenario; ScenarioError names the field and time that cannot be placed. */
export function planScenario(scenario: Scenario): Plan {
  let plan = plans.get(scenario);
  if (plan === undefined) {
    plan = resolvePlan(scenario);
    plans.set(scenario, plan);
  }
  return plan;
}

function resolvePlan(scenario: Scenario): Plan {
  const where = (field: string, local: string) => `${scenario.name}: ${field} "${local}"`;
  let zones: ZoneTimeline;
  try {
    zones = new ZoneTimeline(scenario.timezone, scenario.timezoneChanges);
  } catch (error) {
    throw new ScenarioError(`${scenario.name}: timezoneChanges: ${(error as Error).message}`);
  }
  const resolve = (field: string, local: string): Date => {
    try {
      return zones.instant(local);
    } catch (error) {
      if (error instanceof LocalTimeError)
        throw new ScenarioError(`${where(field, local)}: ${error.message}`);
      throw error;
    }
  };
  const start = resolve("start", scenario.start);
  const end = resolve("end", scenario.end);
  if (start >= end) throw new ScenarioError(`${scenario.name}: end must come after start`);
  const inside = (field: string, local: string): Date => {
    const at = resolve(field, local);
    if (at < start || at > end) throw new ScenarioError(`${where(field, local)} lies outside start…end`);
    return at;
  };

  const messages = scenario.messages
    .map((m, i) => ({ at: inside(`messages[${i}].at`, m.at), text: m.text, answers: m.answers }))
    .sort((a, b) => a.at.getTime() - b.at.getTime());
  const silences = scenario.silences.map((s, i) => {
    const from = resolve(`silences[${i}].from`, s.from);
    const to = resolve(`silences[${i}].to`, s.to);
    if (from >= to) throw new ScenarioError(`${where(`silences[${i}].to`, s.to)} must come after its from`);
    return { from, to };
  });
  const timezoneChanges = zones.changes();
  for (const change of timezoneChanges) {
    if (change.at < start || change.at > end) {
      throw new ScenarioError(`${scenario.name}: the /tz change to ${change.to} lies outside start…end`);
    }
  }
  // Each stretch ticks on its own zone's schedule, from its first instant up to (not at) the next stretch.
  const ticks = zones
    .stretches(start, end)
    .flatMap((s) =>
      fireTimes(scenario.heartbeatCron, s.zone, new Date(s.from.getTime() - 1), s.to).filter(
        (t) => t < s.to || t.getTime() === end.getTime(),
      ),
    );
  return { scenario, zones, start, end, ticks, messages, silences, timezoneChanges };
}

/** Whether the person is unreachable at an instant. */
export function isSilent(plan: Plan, at: Date): boolean {
  return plan.silences.some((s) => at >= s.from && at < s.to);
}

/** How the person treats a check-in that reaches them at a local moment: the first matching rule, else ignore. */
export function reactionTo(rules: readonly ReactionRule[], local: LocalReading): Reaction {
  const rule = rules.find(({ when }) => {
    if (when.between && !inRange(local.minutesOfDay, when.between)) return false;
    if (when.days && !when.days.includes(local.weekday)) return false;
    if (when.dates && !when.dates.includes(local.date)) return false;
    return true;
  });
  return rule?.react ?? { kind: "ignore" };
}

/** The words of a reaction to a check-in about `topic`. */
export function reactionText(reaction: Exclude<Reaction, { kind: "ignore" }>, topic: string | null): string {
  const specific = topic === null ? undefined : reaction.byTopic[topic];
  return specific ?? reaction.text.replaceAll("{topic}", topic ?? "that");
}
