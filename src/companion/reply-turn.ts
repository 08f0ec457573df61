import { answeredBy } from "../conversation/pending-messages.ts";
import { messageRef, replyAnchor } from "../conversation/reply-anchor.ts";
import type { Message } from "../core/message.ts";
import { generateReply } from "../mind/generate.ts";
import { REFLECT_TOOL } from "../mind/reflect.ts";
import { ModelRequestError, ModelUnavailableError, spentBefore } from "../model/llm.ts";
import type { AfterSent, OutboxIntent } from "./outbox.ts";
import { FAILURE_NOTICE_TEXT } from "./reply-retry.ts";
import { generateDepsOf, recordSpent, type TurnContext } from "./turn-context.ts";
import { type Composed, composeTurnPrompt } from "./turn-prompt.ts";
import { hearPending, onlyUnheard, unheardReply } from "./voice-notes.ts";

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
  /** Everything waiting was sound that could not be heard: fixed words asked to type it, no model call (voice-notes.ts). */
  | { status: "unheard"; message: Message; answered: string[] }
  | { status: "closed" };

/**
 * One reply turn: a reply the channel refused earlier goes out first, as written (sendHeldReplies, below);
 * then the voice notes waiting are heard (voice-notes.ts: their transcripts become their text);
 * then everything the person said since the last answer is answered at once — compose,
 * generate, send through the outbox (which hands the exchange to reflection) — and when the model or the channel fails, the
 * reply is deferred to the retry instead of being dropped. The answer is text (anchored to the
 * newest message it answers when conversation/reply-anchor.ts says so) or, when the model chose
 * it, a reaction on that message. When all that waits is sound that could not be heard, fixed
 * words answer it instead of the model.
 */
export async function replyTurn(context: TurnContext): Promise<ReplyOutcome> {
  if (context.isClosed()) return { status: "closed" };
  const held = await sendHeldReplies(context);
  if (held && held.status !== "sent" && held.status !== "refused") return held;
  const pending = await hearPending(context);
  const now = context.clock.now();
  if (pending.length === 0) {
    context.retry.cancel();
    return held ?? { status: "nothing-pending" };
  }
  if (onlyUnheard(pending)) return answerUnheard(context, pending);
  const answered = pending.map((m) => m.id);
  const mind = context.mind.read();
  const composed = await composeTurnPrompt(context, "reply", now, mind, pending);
  await markDocumentsLeft(context, pending, composed);
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
    if (await droppedRejectedAttachments(context, error, pending, composed)) return replyTurn(context);
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

/**
 * Fixed words, through the outbox, for sounds on their own that could not be heard: they answer
 * them (so no model ever does, not even after a restart) and ask to type them instead. A channel
 * that fails defers them to the retry, which says them then.
 */
async function answerUnheard(context: TurnContext, pending: readonly Message[]): Promise<ReplyOutcome> {
  const answered = pending.map((m) => m.id);
  const last = pending[pending.length - 1] as Message;
  const text = unheardReply(pending, context.log.recent(), context.clock.now());
  const delivered = await context.outbox.deliver(
    { text, kind: "notice", replyTo: last.id },
    { trigger: "reply", channel: last.channel, answeredThrough: last.id },
  );
  const base = { kind: "reply" as const, input: pending.map((m) => ({ id: m.id, ts: m.ts, text: m.text })) };
  if (delivered.status === "sent") {
    context.retry.cancel();
    await context.trace.note({ ...base, outcome: "unheard", sent: { id: delivered.message.id, text } });
    return { status: "unheard", message: delivered.message, answered };
  }
  await context.trace.note({ ...base, outcome: delivered.status, text });
  if (delivered.status === "blocked") return { status: "blocked", answered };
  if (delivered.status === "refused") return { status: "refused", answered, error: delivered.error };
  context.retry.schedule();
  return { status: "deferred", answered, reason: `the channel failed: ${delivered.error}` };
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
 * The waiting documents the turn left out because those shown together would be too large
 * (compose.ts, DOCUMENT_TURN_TOKENS) are marked not read (`together`) in the log, so every later
 * turn tells the model the same as this one: it did not read them, and the person can send them
 * again on their own. Their files stay, the person's own.
 */
async function markDocumentsLeft(
  context: TurnContext,
  pending: readonly Message[],
  composed: Composed,
): Promise<void> {
  const left = pending.filter((m) => composed.prompt.documentsLeft.includes(m.id));
  if (left.length === 0) return;
  for (const message of left) {
    await context.log.update(message.id, {
      media: { ...message.media, kind: "document", notRead: "together" },
    });
  }
  context.logger.warn(
    { messages: left.length, shownTokens: composed.prompt.sections.documentTokens },
    "documents too large to read together; the newest are read, the rest marked not read",
  );
}

/**
 * A 400 while attachments ride along is most likely the API refusing one of them; the caller
 * tries once more without them, so the attachment does not fail every later reply that shows it.
 * Photos go first (a photo rides along with every reply until it is answered): the waiting
 * messages' photos are dropped, their captions stay in the log. With no photo, the waiting
 * messages' documents (a password-protected PDF, say) are marked not read, their files kept (the
 * person's own), and the model is told it could not open them. A second 400 with documents
 * still shown comes back here and drops those.
 */
async function droppedRejectedAttachments(
  context: TurnContext,
  error: unknown,
  pending: readonly Message[],
  composed: Composed,
): Promise<boolean> {
  if (!(error instanceof ModelRequestError && error.status === 400)) return false;
  const dropped = await dropAttachments(context, pending, composed);
  if (dropped === undefined) return false;
  context.logger.warn(
    { messages: dropped.messages.length },
    `the model refused the request with ${dropped.what}; retrying without them`,
  );
  await context.trace.note({
    kind: "reply",
    outcome: dropped.outcome,
    messages: dropped.messages,
    error: error.message,
  });
  return true;
}

/** Drops the waiting photos, or else marks the waiting documents not read; undefined when neither rode along. */
async function dropAttachments(
  context: TurnContext,
  pending: readonly Message[],
  composed: Composed,
): Promise<
  | { what: "photos" | "documents"; outcome: "images-dropped" | "documents-dropped"; messages: string[] }
  | undefined
> {
  const withImages = pending.filter((m) => context.images.has(m.id)).map((m) => m.id);
  if (withImages.length > 0) {
    for (const id of withImages) context.images.delete(id);
    return { what: "photos", outcome: "images-dropped", messages: withImages };
  }
  if (composed.prompt.sections.documents === 0) return undefined;
  const refused = pending.filter((m) => m.media?.kind === "document" && m.media.stored && !m.media.notRead);
  if (refused.length === 0) return undefined;
  for (const message of refused) {
    await context.log.update(message.id, {
      media: { ...message.media, kind: "document", notRead: "content" },
    });
  }
  return { what: "documents", outcome: "documents-dropped", messages: refused.map((m) => m.id) };
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
async function sendHeldReplies(context: TurnContext): Promise<ReplyOutcome | undefined> {
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
