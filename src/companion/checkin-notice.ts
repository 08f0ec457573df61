import { isDeepStrictEqual } from "node:util";
import { planCheckinNotice } from "../conversation/checkin-notices.ts";
import { heartbeatSettingsFromConfig } from "../conversation/checkin-policy.ts";
import type { Decision } from "../core/decision.ts";
import type { TurnContext } from "./turn-context.ts";

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
    { notices: mind.checkinNotices, heartbeat: mind.heartbeat },
    decision,
    new Date(decision.ts),
    heartbeatSettingsFromConfig(context.core),
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
  await context.trace({
    kind: "heartbeat",
    stage: "notice",
    why: `${plan.say.said.kind}: ${plan.say.said.causes.join(", ")}`,
    outcome: delivered.status,
    ...(delivered.status === "sent" ? { sent: { id: delivered.message.id, text: plan.say.text } } : {}),
    ...(delivered.status === "failed" ? { error: delivered.error } : {}),
  });
}
