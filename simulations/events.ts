import { z } from "zod";

/**
 * What happened in a run, in time order: the one record the metrics, the transcript and
 * the report are all computed from. A schema, so a hand-written list (a test fixture)
 * is held to the same shape as a recorded one.
 */

const isoUtc = z.iso.datetime({ offset: false });
const tone = z.enum(["warm", "neutral", "tense", "unknown"]);

const base = {
  at: isoUtc,
  /** The person's zone at that moment (it changes when they travel). */
  zone: z.string().min(1),
};

/** The person writes: on their own (`script`) or in reaction to a check-in. */
const personEvent = z.strictObject({
  ...base,
  kind: z.literal("person"),
  text: z.string(),
  cause: z.enum(["script", "answer", "terse", "change-subject"]),
  /** Ground truth from the scenario: topics this message settles. */
  answers: z.array(z.string()).default([]),
});

/** The companion answers the person. */
const replyEvent = z.strictObject({
  ...base,
  kind: z.literal("reply"),
  text: z.string(),
});

/** A heartbeat tick ended with a check-in delivered to the person. */
const checkinSentEvent = z.strictObject({
  ...base,
  kind: z.literal("checkin-sent"),
  text: z.string(),
  topic: z.string().nullable(),
  tone,
  /** The model's text carried internal reasoning that the leak guard had to remove. */
  stripped: z.boolean().default(false),
});

/** A heartbeat tick ended without a message; `reason` says who held it back and why. */
const checkinHeldEvent = z.strictObject({
  ...base,
  kind: z.literal("checkin-held"),
  reason: z.string().min(1),
  /** One sentence on why, as the step that said no put it. */
  detail: z.string().default(""),
  /** Which step said no: the pre-check (no model call), the model's decision, or a guard in code. */
  stage: z.enum(["pre-check", "decision", "topic-guard", "leak-guard", "error"]),
  topic: z.string().nullable(),
  tone,
});

/** The person moved to another zone: they sent `/tz`, through the bot's own command handlers. */
const timezoneEvent = z.strictObject({
  ...base,
  kind: z.literal("tz-change"),
  from: z.string(),
  to: z.string(),
  /** What the command answered, as the person read it. */
  reply: z.string().default(""),
});

/**
 * An open loop in the companion's memory changed: `known` from before the run (seeded),
 * `opened` or `closed` by reflection during it. Its life shows what memory kept track of.
 */
const openLoopEvent = z.strictObject({
  ...base,
  kind: z.literal("open-loop"),
  change: z.enum(["known", "opened", "closed"]),
  id: z.string().min(1),
  text: z.string(),
  /** How it was closed, when reflection said. */
  note: z.string().default(""),
});

/** A fixed, non-generated message (e.g. the model is unavailable). */
const noticeEvent = z.strictObject({
  ...base,
  kind: z.literal("notice"),
  text: z.string(),
});

/** One thing that happened, told apart by `kind` (the report's `data-event` value). */
export const simEventSchema = z.discriminatedUnion("kind", [
  personEvent,
  replyEvent,
  checkinSentEvent,
  checkinHeldEvent,
  timezoneEvent,
  noticeEvent,
  openLoopEvent,
]);
export type SimEvent = z.infer<typeof simEventSchema>;
export type SimEventKind = SimEvent["kind"];

/** Every kind, in the order the report's legend lists them. */
export const EVENT_KINDS: readonly SimEventKind[] = [
  "person",
  "reply",
  "checkin-sent",
  "checkin-held",
  "tz-change",
  "notice",
  "open-loop",
];

/** One model call's cost, from the usage the API reported. */
export const callRecordSchema = z.strictObject({
  at: isoUtc,
  purpose: z.string(),
  model: z.string(),
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  cacheRead: z.number().int().nonnegative(),
  cacheWrite: z.number().int().nonnegative(),
  /** Of cacheWrite, the tokens written with the one-hour TTL. */
  cacheWrite1h: z.number().int().nonnegative().default(0),
});
export type CallRecord = z.infer<typeof callRecordSchema>;
