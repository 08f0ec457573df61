import { z } from "zod";
import { isoUtc } from "./message.ts";
import { type MindAccess, type MindDocument, mindLogRecord } from "./mind-record.ts";

/**
 * A check-in decision as it is recorded (mind.json's `decisions`, a check-in's outbox entry)
 * and explained (/why, /status): the one list of reasons the pre-check, the companion's
 * check-in turn and the wording for the person share, and the record of the decisions kept.
 * At the core level, because the check-in rules, the companion and the channels all read it.
 */

/**
 * Why the pre-check held a check-in back, or `ok`; the first rule that holds wins, in this
 * order. `unlikely-moment` (an hour the person rarely answers at, learned from the log) comes
 * last: it is a preference, not a limit, so every hard rule (the budget included) names the
 * hold first, and it never hides one.
 */
export const heartbeatReasonSchema = z.enum([
  "paused",
  "blocked",
  "quiet-hours",
  "unanswered-limit",
  "weekend-limit",
  "recent-conversation",
  "too-soon",
  "daily-limit",
  "budget",
  "unlikely-moment",
  "ok",
]);
export type HeartbeatReason = z.infer<typeof heartbeatReasonSchema>;

/** A run of learned best hours [from, to), local, `to` possibly 24: kept in a decision, shown by /why and /status. */
export const hourRangeSchema = z.object({ from: z.number().int(), to: z.number().int() });

/**
 * For `unlikely-moment`: the moment's local time and kind of day and the learned best hours,
 * so /why can tell the person in their own terms.
 */
const momentSchema = z.object({
  local: z.string(),
  weekend: z.boolean(),
  bestHours: z.array(hourRangeSchema),
});
export type Moment = z.infer<typeof momentSchema>;

/** The pre-check's answer; `detail` is one sentence for /why and the decision record. */
export const heartbeatDecisionSchema = z.object({
  fire: z.boolean(),
  reason: heartbeatReasonSchema,
  detail: z.string(),
  moment: momentSchema.optional(),
});
export type HeartbeatDecision = z.infer<typeof heartbeatDecisionSchema>;

/**
 * The check-in turn's outcomes once the model has answered (the pre-check passed and the model
 * is reachable): what the notices about an outage count as the model being back.
 */
export const modelAnsweredReasonSchema = z.enum([
  "invalid-decision",
  "model-declined",
  "already-answered",
  "repeated-topic",
  "leak-guard-empty",
  "send-failed",
  "sent",
]);

/** The reasons the companion's check-in turn records beyond the pre-check's. */
const companionReasonSchema = z.enum([
  "reply-pending",
  "model-unavailable",
  "model-error",
  ...modelAnsweredReasonSchema.options,
]);

/** Every reason a recorded decision can carry. */
export const decisionReasonSchema = z.enum([
  ...heartbeatReasonSchema.options,
  ...companionReasonSchema.options,
]);
export type DecisionReason = z.infer<typeof decisionReasonSchema>;

/** One check-in decision: the pre-check's, the topic guard's or the model's. */
export const decisionSchema = z.looseObject({
  ts: isoUtc,
  fire: z.boolean(),
  reason: decisionReasonSchema,
  /** One sentence for /why and the trace. */
  detail: z.string(),
  topic: z.string().optional(),
  /** The check-in that was sent, when one was. */
  messageId: z.string().optional(),
  /** Held as already answered: the log id of the person's message taken as the answer. */
  answerId: z.string().optional(),
  moment: momentSchema.optional(),
});
export type Decision = z.infer<typeof decisionSchema>;

/** Heartbeat decisions kept for /why and status; older ones have been answered for. */
export const DECISIONS_KEPT = 500;

/** The decisions' record in mind.json, oldest first. */
export const decisionsRecord = mindLogRecord({ key: "decisions", entry: decisionSchema });

/** The decisions as mind.json holds them. */
type DecisionLog = MindDocument<typeof decisionsRecord>;

/**
 * Adds a decision to a mind being updated, keeping the last DECISIONS_KEPT: the one place
 * decisions are trimmed, for a decision recorded alone and for one that lands with the
 * check-in it sent.
 */
export function addDecision(mind: DecisionLog, decision: Decision): void {
  mind.decisions.push({ ...decision });
  if (mind.decisions.length > DECISIONS_KEPT)
    mind.decisions.splice(0, mind.decisions.length - DECISIONS_KEPT);
}

/** Records a decision on its own, in one write. */
export function recordDecision(mind: MindAccess<DecisionLog>, decision: Decision): Promise<void> {
  return mind.update((draft) => addDecision(draft, decision));
}

/** The most recent decision, for /why and status. */
export function lastDecision(mind: DecisionLog): Decision | null {
  return mind.decisions.at(-1) ?? null;
}
