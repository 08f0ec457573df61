import { answeredBy, pendingMessages } from "../conversation/pending-messages.ts";
import { messageRef, replyAnchor } from "../conversation/reply-anchor.ts";
import type { Message } from "../core/message.ts";
import { generateReply } from "../mind/generate.ts";
import { REFLECT_TOOL } from "../mind/reflect.ts";
import { ModelRequestError, ModelUnavailableError, spentBefore } from "../model/llm.ts";
import type { OutboxIntent } from "../store/mind.ts";
import type { AfterSent } from "./outbox.ts";
import { FAILURE_NOTICE_TEXT } from "./reply-retry.ts";
import { generateDepsOf, recordSpent, type TurnContext } from "./turn-context.ts";
import { type Composed, composeTurnPrompt } from "./turn-prompt.ts";

/** What a reply() achieved. */
export type ReplyOutcome =
  | { status: "sent"; message: Message; answered: string[] }
  | { status: "nothing-pending" }
  /** The model was unavailable, or the channel failed (the written reply is held and resent as is): a background retry is scheduled. */
  | { status: "deferred"; answered: string[]; reason: string }
  /** The model's answer was all leakage, also when nudged once: nothing was sent, the messages count as handled (see the trace). */
  | { status: "empty"; answered: string[]; removed: string[] }
  | { status: "blocked"; answered: string[] }
  | { status: "failed"; answered: string[]; error: string }
  /** The model reacted and the channel refused the reaction for good: nothing was shown, the messages count as handled. */
  | { status: "refused"; answered: string[]; error: string }
  | { status: "closed" };

/**
 * One reply turn: a reply the channel refused earlier goes out first, as written (sendHeldReplies, below);
 * then everything the person said since the last answer is answered at once — compose,
 * generate, send through the outbox (which hands the exchange to reflection) — and when the model or the channel fails, the
 * reply is deferred to the retry instead of being dropped. The answer is text (anchored to the
 * newest message it answers when conversation/reply-anchor.ts says so) or, when the model chose
 * it, a reaction on that message.
 */
export async function replyTurn(context: TurnContext): Promise<ReplyOutcome> {
  if (context.isClosed()) return { status: "closed" };
  const held = await sendHeldReplies(context);
  if (held && held.status !== "sent" && held.status !== "refused") return held;
  const now = context.clock.now();
  const pending = pendingMessages(context.log.recent(), now);
  if (pending.length === 0) {
    context.retry.cancel();
    return held ?? { status: "nothing-pending" };
  }
  const answered = pending.map((m) => m.id);
  const mind = context.mind.read();
  const composed = await composeTurnPrompt(context, "reply", now, mind, pending);
  const stopWorking = context.port.showWorking?.();
  let generation: Awaited<ReturnType<typeof generateReply>>;
  try {
    generation = await generateReply(composed.prompt.params, generateDepsOf(context), {
      promptTokens: composed.prompt.sections.total,
      ceiling: context.model.promptCeiling,
      waiting: pending.length,
      ...(context.model.reflectMode === "single-phase" ? { reflectToolName: REFLECT_TOOL.name } : {}),
    });
  } catch (error) {
    stopWorking?.();
    await recordSpent(context, spentBefore(error));
    if (await droppedRejectedImages(context, error, pending)) return replyTurn(context);
    if (await markedRejectedDocuments(context, error, pending, composed)) return replyTurn(context);
    return replyFailed(context, error, pending, composed);
  }
  stopWorking?.();
  await recordSpent(context, generation.usage);

  const base = {
    kind: "reply" as const,
    input: pending.map((m) => ({ id: m.id, ts: m.ts, text: m.text })),
    shown: composed.prompt.sections,
    awareness: composed.awarenessFormat,
    returned: {
      raw: generation.raw,
      removed: generation.removed,
      toolCalls: generation.toolCalls,
      ...(generation.nudged ? { nudged: generation.nudged } : {}),
    },
    usage: generation.usage,
  };
  const last = pending[pending.length - 1] as Message;
  // The words when there are any (they win over a reaction), else the reaction, else nothing.
  const answer: Answer | undefined =
    generation.text !== null
      ? { kind: "text", text: generation.text }
      : generation.reaction !== undefined
        ? { kind: "reaction", emoji: generation.reaction }
        : undefined;
  if (answer === undefined) {
    await context.log.update(last.id, { handledWithoutReply: true });
    context.retry.cancel();
    await context.trace.note({
      ...base,
      outcome: "empty",
      why: "the leak guard left nothing to send, also after one nudge",
      handledWithoutReply: last.id,
    });
    return { status: "empty", answered, removed: generation.removed };
  }
  const meta = { trigger: "reply" as const, answeredThrough: last.id, channel: last.channel };
  const afterSent = context.reflection.afterSent(
    (message) => ({
      messageIds: [...answered, message.id],
      trigger: "reply",
      evicting: composed.prompt.evicting,
    }),
    generation.reflection,
  );
  const anchor =
    answer.kind === "text"
      ? replyAnchor({ answered: pending, sendAt: context.clock.now(), startedAt: context.startedAt })
      : undefined;
  const said =
    answer.kind === "text"
      ? { text: answer.text, ...(anchor ? { anchoredTo: anchor.id } : {}) }
      : { reaction: answer.emoji };
  const delivered =
    answer.kind === "text"
      ? await context.outbox.deliver(
          { text: answer.text, kind: "reply", replyTo: last.id, ...(anchor ? { anchor } : {}) },
          meta,
          afterSent,
        )
      : await context.outbox.react({ emoji: answer.emoji, to: messageRef(last) }, meta, afterSent);
  if (delivered.status !== "sent") {
    if (delivered.status === "refused") {
      context.retry.cancel();
      await context.trace.note({
        ...base,
        outcome: "refused",
        ...said,
        error: delivered.error,
        handledWithoutReply: last.id,
      });
      return { status: "refused", answered, error: delivered.error };
    }
    await context.trace.note({ ...base, outcome: delivered.status, ...said });
    if (delivered.status === "blocked") return { status: "blocked", answered };
    context.retry.schedule();
    return { status: "deferred", answered, reason: `the channel failed: ${delivered.error}` };
  }
  context.retry.cancel();
  for (const id of answered) context.images.delete(id);
  await context.trace.note({
    ...base,
    outcome: "sent",
    sent: { id: delivered.message.id, ...said },
    reflection: delivered.reflection,
  });
  return { status: "sent", message: delivered.message, answered };
}

/** What a reply says: words, or a reaction on the person's newest message. */
type Answer = { kind: "text"; text: string } | { kind: "reaction"; emoji: string };

/** An unavailable model defers the reply (with the notice when it is due); a request the API refuses fails it. */
async function replyFailed(
  context: TurnContext,
  error: unknown,
  pending: readonly Message[],
  composed: Composed,
): Promise<ReplyOutcome> {
  const answered = pending.map((m) => m.id);
  const base = {
    kind: "reply" as const,
    input: pending.map((m) => ({ id: m.id, ts: m.ts, text: m.text })),
    shown: composed.prompt.sections,
  };
  if (error instanceof ModelUnavailableError) {
    const notice = await context.retry.noticeIfOverdue(pending);
    const retryInMs = context.retry.schedule();
    context.logger.warn({ status: error.status, retryInMs, notice }, "model unavailable; reply deferred");
    await context.trace.note({ ...base, outcome: "deferred", error: error.message, retryInMs, notice });
    return { status: "deferred", answered, reason: error.message };
  }
  if (error instanceof ModelRequestError) {
    const notice = await context.retry.noticeOnce(pending, FAILURE_NOTICE_TEXT);
    context.logger.error({ status: error.status, setting: error.setting, notice }, error.message);
    await context.trace.note({ ...base, outcome: "failed", error: error.message, notice });
    return { status: "failed", answered, error: error.message };
  }
  throw error;
}

/**
 * A 400 while documents ride along (and no photo) is most likely the API refusing a document (a
 * password-protected PDF, say). The waiting messages' documents are marked as not read (their
 * files stay, the person's own) and the caller tries once more without them, the model told it
 * could not open them: otherwise the document would fail every reply that shows it.
 */
async function markedRejectedDocuments(
  context: TurnContext,
  error: unknown,
  pending: readonly Message[],
  composed: Composed,
): Promise<boolean> {
  if (!(error instanceof ModelRequestError && error.status === 400)) return false;
  if (composed.prompt.sections.documents === 0) return false;
  const refused = pending.filter((m) => m.media?.stored && !m.media.notRead);
  if (refused.length === 0) return false;
  for (const message of refused) {
    await context.log.update(message.id, {
      media: { ...message.media, kind: "document", notRead: "content" },
    });
  }
  context.logger.warn(
    { messages: refused.length },
    "the model refused the request with documents; retrying without them",
  );
  await context.trace.note({
    kind: "reply",
    outcome: "documents-dropped",
    messages: refused.map((m) => m.id),
    error: error.message,
  });
  return true;
}

/**
 * A 400 while photos ride along is most likely the API refusing a photo. The photos of the
 * waiting messages are dropped (their captions stay in the log) and the caller tries once
 * more as text: otherwise the photo would go with every later reply and fail each one.
 */
async function droppedRejectedImages(
  context: TurnContext,
  error: unknown,
  pending: readonly Message[],
): Promise<boolean> {
  if (!(error instanceof ModelRequestError && error.status === 400)) return false;
  const withImages = pending.filter((m) => context.images.has(m.id)).map((m) => m.id);
  if (withImages.length === 0) return false;
  for (const id of withImages) context.images.delete(id);
  context.logger.warn(
    { messages: withImages.length },
    "the model refused the request with photos; retrying as text",
  );
  await context.trace.note({
    kind: "reply",
    outcome: "images-dropped",
    messages: withImages,
    error: error.message,
  });
  return true;
}

/**
 * Delivers the replies the channel refused earlier (or a crash interrupted), before anything
 * new is written: their words were generated and passed the leak guard once, so the person
 * reads exactly them, from the part that did not get through, at no further model call. The
 * rule for what the person wrote meanwhile is the simplest one that stays correct: the held
 * reply answers what it answered (its `answeredThrough`), and the newer messages stay pending
 * for a fresh reply right after it, in the same turn.
 *
 * Returns the outcome of the last held reply, or undefined when none was held. A failure or a
 * block ends the turn (a failure schedules the background retry, a block drops the reply); a
 * reaction refused for good does not: nothing more can be done with it.
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
      await context.trace.note(base);
      return { status: "blocked", answered };
    }
    if (delivered.status === "failed") {
      const retryInMs = context.retry.schedule();
      await context.trace.note({ ...base, error: delivered.error, retryInMs });
      return { status: "deferred", answered, reason: `the channel failed: ${delivered.error}` };
    }
    if (delivered.status === "refused") {
      // A held reaction Telegram will never show: its messages stop waiting, and the turn goes on.
      await context.trace.note({ ...base, error: delivered.error });
      outcome = { status: "refused", answered, error: delivered.error };
      continue;
    }
    for (const id of answered) context.images.delete(id);
    await context.trace.note({
      ...base,
      sent: { id: delivered.message.id },
      reflection: delivered.reflection,
    });
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
