import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { CronError, parseCron } from "../src/conversation/schedule.ts";
import { parseQuietHours, type QuietHours } from "../src/core/checkin-settings.ts";
import { isKnownZone } from "../src/core/zones.ts";
import { memoryKindSchema } from "../src/mind/memory.ts";
import { ITEM_TEXT_MAX_CHARS } from "../src/mind/understanding.ts";

/**
 * A scenario is a day (or a week) of one person's life with the companion, written as
 * data: when they write, how they treat check-ins, when they go quiet or travel, and
 * what the run must show. Times are local wall times of the person ("2026-03-07T08:30"),
 * read in the zone in effect at that moment, so a trip's evening is written as the
 * person would say it.
 */

/**
 * A local wall time, minute precision, optionally followed by the zone it is read in
 * ("2026-03-06T18:30 Europe/Berlin") for the hours a trip makes ambiguous.
 */
const localDateTime = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?: [A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*)?$/,
    'a local date-time like "2026-03-07T08:30", optionally with a zone: "2026-03-07T08:30 Asia/Tokyo"',
  );

const zone = z.string().refine(isKnownZone, "an IANA time zone such as Europe/Berlin");

/** A cron expression, checked as PRESENCE_HEARTBEAT_CRON is. */
const cronExpression = z.string().transform((text, ctx) => {
  try {
    return parseCron(text);
  } catch (error) {
    if (!(error instanceof CronError)) throw error;
    ctx.addIssue({ code: "custom", message: `a cron expression like 7 * * * * (${error.problem})` });
    return z.NEVER;
  }
});

/** "HH:MM-HH:MM", possibly wrapping past midnight. */
const clockRange = z
  .string()
  .refine((text) => parseQuietHours(text) !== null, 'a time range like "22:00-08:00"')
  .transform((text) => parseQuietHours(text) as QuietHours);

const weekday = z.enum(["mon", "tue", "wed", "thu", "fri", "sat", "sun"]);
export type Weekday = z.infer<typeof weekday>;

const minutesAfter = z
  .number()
  .int()
  .min(0)
  .max(24 * 60);

/** Topics (lexicon labels such as "hydration") a message of the person really answers. */
const topics = z.array(z.string().min(1));

/** Something the person writes on their own, at a set time. */
const scriptedMessageSchema = z.strictObject({
  at: localDateTime,
  text: z.string().min(1),
  /** Ground truth for the re-ask metric: which topics this message settles. */
  answers: topics.default([]),
});

/** What every spoken reaction has: when it comes, its words, and more natural words per topic. */
const spoken = {
  afterMinutes: minutesAfter,
  text: z.string().min(1),
  byTopic: z.record(z.string(), z.string().min(1)).default({}),
};

/**
 * How the person treats a check-in. Texts may say `{topic}`, replaced by the check-in's
 * topic; `byTopic` gives a more natural answer for particular topics.
 */
const reactionSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("answer"), ...spoken, answersTopic: z.boolean().default(true) }),
  z.strictObject({ kind: z.literal("terse"), ...spoken, answersTopic: z.boolean().default(true) }),
  z.strictObject({
    kind: z.literal("change-subject"),
    ...spoken,
    answersTopic: z.boolean().default(false),
    /** Topics the new subject settles, if any. */
    answers: topics.default([]),
  }),
  z.strictObject({ kind: z.literal("ignore") }),
]);
export type Reaction = z.infer<typeof reactionSchema>;

/** When a reaction rule applies; every given condition must hold. */
const whenSchema = z.strictObject({
  /** Local time of the check-in, e.g. "09:00-12:00". */
  between: clockRange.optional(),
  days: z.array(weekday).min(1).optional(),
  /** Local dates, "2026-03-09". */
  dates: z
    .array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/))
    .min(1)
    .optional(),
});

/** The first rule whose `when` matches a check-in decides the reaction; none matching means ignore. */
const reactionRuleSchema = z.strictObject({
  when: whenSchema.default({}),
  react: reactionSchema,
});
export type ReactionRule = z.infer<typeof reactionRuleSchema>;

/** Something the companion already remembers when the scenario starts (a declared pattern, an open loop…). */
const priorMemorySchema = z.strictObject({
  kind: memoryKindSchema,
  text: z.string().min(1).max(ITEM_TEXT_MAX_CHARS),
  importance: z.number().int().min(1).max(5).default(3),
});

/** A stretch in which the person reads nothing and answers nothing (scripted messages excepted). */
const silenceSchema = z.strictObject({
  from: localDateTime,
  to: localDateTime,
  note: z.string().optional(),
});

/** The person types `/tz Area/City` (travel); `at` is read in the zone they are leaving. */
const timezoneChangeSchema = z.strictObject({ at: localDateTime, timezone: zone });

const countRange = z
  .strictObject({ min: z.number().int().min(0).optional(), max: z.number().int().min(0).optional() })
  .refine((r) => r.min === undefined || r.max === undefined || r.min <= r.max, "min must not exceed max");

/**
 * What the run must show. The guarantees every scenario shares have defaults (at most 3
 * unanswered in a row, none in quiet hours, no re-asks, no repeated asks while unanswered,
 * no leaks); a scenario loosens or adds to them.
 */
export const expectationsSchema = z.strictObject({
  maxUnansweredRun: z.number().int().min(0).default(3),
  maxQuietHourCheckins: z.number().int().min(0).default(0),
  /** Re-asks of a topic the person answered less than the answered-topic window ago. */
  maxReasks: z.number().int().min(0).default(0),
  maxRepeatedTopicAsks: z.number().int().min(0).default(0),
  maxLeaksDelivered: z.number().int().min(0).default(0),
  maxCheckinsPerDay: z.number().int().min(0).optional(),
  /** Heartbeat ticks seen: pins the schedule (e.g. 23 on a spring-forward day). */
  considered: countRange.optional(),
  fired: countRange.optional(),
  /** Check-ins sent in a local window, e.g. none while the person is on a plane. */
  firedBetween: z
    .array(z.strictObject({ from: localDateTime, to: localDateTime }).and(countRange))
    .default([]),
  /** Held back at least `min` times for this reason (a pre-check or topic-guard reason). */
  heldBack: z.array(z.strictObject({ reason: z.string().min(1), min: z.number().int().min(1) })).default([]),
  /** The leak guard had something to strip at least this often (shows the guard worked, not luck). */
  minLeaksStripped: z.number().int().min(0).optional(),
});
export type Expectations = z.infer<typeof expectationsSchema>;

/** Check-in rules of this scenario where they differ from the defaults of the configuration. */
const scenarioSettingsSchema = z.strictObject({
  maxUnanswered: z.number().int().min(1).optional(),
  recentMinutes: z.number().int().min(0).optional(),
  weekendMaxUnanswered: z.number().int().min(0).optional(),
  minGapMinutes: z.number().int().min(0).optional(),
  maxCheckinsPerDay: z.number().int().min(0).optional(),
  answeredTopicHours: z.number().int().min(0).optional(),
  /** PRESENCE_LEARN_TIMING: false lives the scenario as a companion that does not learn when the person answers. */
  learnTiming: z.boolean().optional(),
});

/** One scenario file; every field but name, description, zone and span has a default. */
const scenarioSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "kebab-case, like saturday-good-morning"),
  description: z.string().min(1),
  timezone: zone,
  start: localDateTime,
  end: localDateTime,
  heartbeatCron: cronExpression.prefault("7 * * * *"),
  quietHours: clockRange.prefault("22:00-08:00"),
  settings: scenarioSettingsSchema.default({}),
  memory: z.array(priorMemorySchema).default([]),
  messages: z.array(scriptedMessageSchema).default([]),
  reactions: z.array(reactionRuleSchema).default([]),
  silences: z.array(silenceSchema).default([]),
  timezoneChanges: z.array(timezoneChangeSchema).default([]),
  expect: expectationsSchema.default(expectationsSchema.parse({})),
});
export type Scenario = z.infer<typeof scenarioSchema>;
/** A scenario as written in its file, before defaults are filled in. */
export type ScenarioInput = z.input<typeof scenarioSchema>;

/** A scenario file that cannot be used; the message names the file and each problem. */
export class ScenarioError extends Error {
  override readonly name = "ScenarioError";
}

/** Validates a parsed scenario; `source` names where it came from in error messages. */
export function parseScenario(data: unknown, source: string): Scenario {
  const parsed = scenarioSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  - ${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new ScenarioError(`${source} is not a valid scenario:\n${problems.join("\n")}`);
  }
  return parsed.data;
}

/** Reads and validates one scenario file; its name must match the file name, so runs are findable. */
export async function loadScenarioFile(path: string): Promise<Scenario> {
  let data: unknown;
  try {
    data = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new ScenarioError(`${path}: cannot read the scenario (${(error as Error).message})`);
  }
  const scenario = parseScenario(data, path);
  const expected = basename(path, ".json");
  if (scenario.name !== expected) {
    throw new ScenarioError(`${path}: "name" is "${scenario.name}" but the file is named ${expected}.json`);
  }
  return scenario;
}
