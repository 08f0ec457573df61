import { isDeepStrictEqual } from "node:util";
import { defaultAwarenessSettings } from "../conversation/awareness/context.ts";
import { planCheckinNotice } from "../conversation/checkin-notices.ts";
import { heldWithoutAwareness, shouldFireHeartbeat, unlikelyMoment } from "../conversation/checkin-policy.ts";
import { pendingMessages } from "../conversation/pending-messages.ts";
import { learnTiming, timingLookbackStart } from "../conversation/timing.ts";
import { checkinAnnotations, guardTopic } from "../conversation/topic-guard.ts";
import { effectiveSettings } from "../core/checkin-settings.ts";
import type { Decision, DecisionReason, HeartbeatDecision } from "../core/decision.ts";
import { recordDecision } from "../core/decision.ts";
import type { Message } from "../core/message.ts";
import { tokensOnLocalDay } from "../core/usage.ts";
import { generateCheckin } from "../mind/generate.ts";
import { PRIOR_CONTEXT_TOKENS, priorMemoryFor } from "../mind/memory.ts";
import { prefixCacheFor, TURN_PREFIX_PURPOSES } from "../model/cache-plan.ts";
import { ModelRequestError, ModelUnavailableError, spentBefore } from "../model/llm.ts";
import type { MindStore } from "./mind-document.ts";
import { generateDepsOf, recordSpent, type TurnContext } from "./turn-context.ts";
import { awarenessFor, composeTurnPrompt, queryOf } from "./turn-prompt.ts";

/** What a heartbeat() decided; the decision is also recorded in the mind for /why and status. */
export type HeartbeatOutcome =
  | { status: "sent"; message: Message; decision: Decision }
  | { status: "held"; decision: Decision }
  | { status: "closed" };

/**
 * One check-in turn: the budget and the pre-check first (no model call when they say no),
 * then the model decides, the topic guard may hold it back, the message is written and sent
 * through the outbox. Every decision, sent or held, is recorded with its reason.
 */
export async function checkinTurn(context: TurnContext): Promise<HeartbeatOutcome> {
  if (context.isClosed()) return { status: "closed" };
  const { clock, core, model, mind: store } = context;
  const now = clock.now();
  const mind = store.read();
  const zone = effectiveSettings(core, mind.heartbeat, now).timezone;
  const spent = tokensOnLocalDay(mind, now, zone);
  const budgetExceeded = model.dailyTokenBudget > 0 && spent >= model.dailyTokenBudget;
  const held = (reason: DecisionReason, detail: string, extra: Partial<Decision> = {}) =>
    hold(store, { ts: now.toISOString(), fire: false, reason, detail, ...extra });

  if (pendingMessages(context.log.recent(), now).length > 0) {
    await context.trace.note({ kind: "heartbeat", stage: "reply-pending" });
    return held("reply-pending", "The person's messages are still waiting for a reply; that comes first.");
  }
  const state = { ...mind.heartbeat, budgetExceeded };
  const heldByPreCheck = async (preCheck: HeartbeatDecision) => {
    const outcome = await held(
      preCheck.reason,
      preCheck.detail,
      preCheck.moment === undefined ? {} : { moment: preCheck.moment },
    );
    await context.trace.note({ kind: "heartbeat", stage: "pre-check", preCheck, tokensToday: spent });
    return outcome;
  };
  // Paused, blocked and quiet hours read no awareness, so a night of ticks builds none.
  const early = heldWithoutAwareness(now, core, state);
  if (early !== undefined) return heldByPreCheck(early);
  const slice = await context.log.awarenessSlice(now, defaultAwarenessSettings.windowHours);
  const query = queryOf(slice.slice(-4));
  const prior = priorMemoryFor(mind, query, now, PRIOR_CONTEXT_TOKENS);
  const awareness = awarenessFor(slice, now, zone, "heartbeat", prior);
  let preCheck = shouldFireHeartbeat(awareness, now, core, state);
  if (preCheck.fire && core.learnTiming) {
    // The learned timing is the last rule, so it is read (weeks of log) only when every other
    // rule lets the check-in out: a night of quiet-hour ticks costs no archive read.
    const timing = learnTiming(await context.log.between(timingLookbackStart(now), now), now, zone);
    preCheck = unlikelyMoment(timing, mind.heartbeat, now) ?? preCheck;
  }
  if (!preCheck.fire) return heldByPreCheck(preCheck);

  const composed = await composeTurnPrompt(context, "heartbeat", now, mind, [], {
    slice,
    awareness,
    zone,
    query,
    prior,
  });
  let generation: Awaited<ReturnType<typeof generateCheckin>>;
  try {
    generation = await generateCheckin(
      composed.prompt.params,
      generateDepsOf(context),
      (topic) => guardTopic(topic, slice, awareness, now, model.answeredTopicHours),
      {
        model: model.decideModel,
        prefixCache: prefixCacheFor(mind.usage, TURN_PREFIX_PURPOSES, model.decideModel, model.prices),
      },
    );
  } catch (error) {
    await recordSpent(context, spentBefore(error));
    if (!(error instanceof ModelUnavailableError || error instanceof ModelRequestError)) throw error;
    const reason = error instanceof ModelUnavailableError ? "model-unavailable" : "model-error";
    await context.trace.note({
      kind: "heartbeat",
      stage: "model",
      preCheck,
      shown: composed.prompt.sections,
      error: error.message,
    });
    return held(reason, error.message);
  }
  await recordSpent(context, generation.usage);
  const base = {
    kind: "heartbeat" as const,
    preCheck,
    shown: composed.prompt.sections,
    usage: generation.usage,
  };
  switch (generation.stage) {
    case "invalid-decision":
      await context.trace.note({ ...base, stage: "decide", problem: generation.problem });
      return held("invalid-decision", generation.problem);
    case "declined":
      await context.trace.note({ ...base, stage: "decide", decision: generation.decision });
      return held("model-declined", generation.decision.why, topicOf(generation.decision.topic));
    case "held":
      await context.trace.note({
        ...base,
        stage: "topic-guard",
        decision: generation.decision,
        verdict: generation.verdict,
      });
      return held(generation.verdict.reason, generation.verdict.detail, {
        ...topicOf(generation.decision.topic),
        ...(generation.verdict.answerId ? { answerId: generation.verdict.answerId } : {}),
      });
    case "empty":
      await context.trace.note({
        ...base,
        stage: "leak-guard",
        decision: generation.decision,
        returned: { raw: generation.raw, removed: generation.removed },
        why: "the leak guard left nothing to send",
      });
      return held(
        "leak-guard-empty",
        "The written check-in was all reasoning or protocol; nothing was sent.",
      );
    case "write":
      break;
  }
  const newestUser = slice.findLast((m) => m.role === "user");
  const sentDecision: Decision = {
    ts: now.toISOString(),
    fire: true,
    reason: "sent",
    detail: generation.decision.why,
    ...topicOf(generation.decision.topic),
  };
  const delivered = await context.outbox.deliver(
    { text: generation.text, kind: "heartbeat" },
    {
      trigger: "heartbeat",
      channel: newestUser?.channel ?? context.defaultChannel,
      annotations: checkinAnnotations(generation.decision.topic, generation.text),
      decision: sentDecision,
      ...(newestUser ? { answeredThrough: newestUser.id } : {}),
    },
    context.reflection.afterSent((message) => ({
      messageIds: [message.id],
      trigger: "heartbeat",
      evicting: composed.prompt.evicting,
    })),
  );
  const returned = { decision: generation.decision, raw: generation.raw, removed: generation.removed };
  if (delivered.status !== "sent") {
    await context.trace.note({ ...base, stage: "send", returned, outcome: delivered.status });
    if (delivered.status === "blocked")
      return held("blocked", "The channel says the person blocked the bot.");
    return held("send-failed", delivered.error, topicOf(generation.decision.topic));
  }
  const decision: Decision = { ...sentDecision, messageId: delivered.message.id };
  await context.trace.note({
    ...base,
    stage: "sent",
    returned,
    sent: { id: delivered.message.id, text: generation.text },
    reflection: delivered.reflection,
  });
  return { status: "sent", message: delivered.message, decision };
}

/**
 * Records a check-in held back. A block was already marked by the outbox when the channel
 * refused the message (heartbeat.blocked), for replies and check-ins alike.
 */
async function hold(store: MindStore, decision: Decision): Promise<HeartbeatOutcome> {
  await recordDecision(store, decision);
  return { status: "held", decision };
}

function topicOf(topic: string): { topic?: string } {
  return topic.trim() ? { topic: topic.trim() } : {};
}

/**
 * After a check-in turn: tells the person, in fixed words, when check-ins stopped for a reason
 * they cannot see (the budget, the model) and when they are back, by the pure rule in
 * conversation/checkin-notices.ts. The words go through the outbox as a notice — logged, but
 * not a message of the conversation, so they neither wait for an answer nor start the
 * too-soon gap — and are recorded as told in the write that logs them, so a crash neither
 * repeats one (recovery finishes that write) nor loses one (a notice that never went out is
 * planned again at the next tick while its cause still holds).
 */
export async function noticeAfterCheckin(context: TurnContext, decision: Decision): Promise<void> {
  const mind = context.mind.read();
  const plan = planCheckinNotice(
    { notices: mind.checkinNotices, heartbeat: mind.heartbeat, decisions: mind.decisions },
    decision,
    new Date(decision.ts),
    context.core,
  );
  if (!isDeepStrictEqual(plan.state, mind.checkinNotices)) {
    await context.mind.update((draft) => {
      draft.checkinNotices = plan.state;
    });
  }
  if (!plan.say || context.isClosed()) return;
  const newestUser = context.log.recent().findLast((m) => m.role === "user");
  const delivered = await context.outbox.deliver(
    { text: plan.say.text, kind: "notice" },
    {
      trigger: "heartbeat",
      channel: newestUser?.channel ?? context.defaultChannel,
      said: plan.say.said,
    },
  );
  await context.trace.note({
    kind: "heartbeat",
    stage: "notice",
    why: `${plan.say.said.kind}: ${plan.say.said.causes.join(", ")}`,
    outcome: delivered.status,
    ...(delivered.status === "sent" ? { sent: { id: delivered.message.id, text: plan.say.text } } : {}),
    ...(delivered.status === "failed" ? { error: delivered.error } : {}),
  });
}
