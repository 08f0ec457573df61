import { answeredBy } from "../conversation/pending-messages.ts";
import type { OutboxIntent } from "../store/mind.ts";
import type { AfterSent } from "./outbox.ts";
import type { ReplyOutcome } from "./reply-turn.ts";
import type { TurnContext } from "./turn-context.ts";

/**
 * Delivers the replies the channel refused earlier (or a crash interrupted), before anything
 * new is written: their words were generated and passed the leak guard once, so the person
 * reads exactly them, from the part that did not get through, at no further model call. The
 * rule for what the person wrote meanwhile is the simplest one that stays correct: the held
 * reply answers what it answered (its `answeredThrough`), and the newer messages stay pending
 * for a fresh reply right after it, in the same turn.
 *
 * Returns the outcome of the last held reply, or undefined when none was held. Anything but
 * "sent" ends the turn: a failure schedules the background retry, a block drops the reply.
 */
export async function sendHeldReplies(context: TurnContext): Promise<ReplyOutcome | undefined> {
  let outcome: ReplyOutcome | undefined;
  for (const intent of context.outbox.heldReplies()) {
    const answered = answeredBy(context.log.recent(), context.clock.now(), intent.answeredThrough).map(
      (m) => m.id,
    );
    const delivered = await context.outbox.resend(intent, reflectOnRecovered(context)(intent));
    const base = {
      kind: "reply" as const,
      held: { outbox: intent.id, partsDelivered: intent.partsDelivered ?? 0 },
      outcome: delivered.status,
    };
    if (delivered.status === "blocked") {
      await context.trace(base);
      return { status: "blocked", answered };
    }
    if (delivered.status === "failed") {
      const retryInMs = context.retry.schedule();
      await context.trace({ ...base, error: delivered.error, retryInMs });
      return { status: "deferred", answered, reason: `the channel failed: ${delivered.error}` };
    }
    for (const id of answered) context.images.delete(id);
    await context.trace({ ...base, sent: { id: delivered.message.id }, reflection: delivered.reflection });
    outcome = { status: "sent", message: delivered.message, answered };
  }
  return outcome;
}

/**
 * The follow-up for a message finished after a crash or resent as written: its exchange,
 * worked out from the intent alone, goes to reflection (a notice has none).
 */
export function reflectOnRecovered(
  context: Pick<TurnContext, "outbox" | "reflection">,
): (intent: OutboxIntent) => AfterSent | undefined {
  return (intent) => {
    if (intent.kind === "notice") return undefined;
    return context.reflection.afterSent((message) => context.outbox.recoveredExchange(intent, message));
  };
}
