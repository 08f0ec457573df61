import type { Message, MessageRef } from "../core/message.ts";

/**
 * When a reply is shown as answering a particular message (on Telegram, a quoted reply). An
 * immediate answer to the one message the person just sent is obviously its answer, and a
 * quote would only clutter the chat; a reply that covers several messages, comes late, or comes
 * from a process that started after the person wrote is anchored to the newest message it
 * answers, so the person sees what it is about.
 */

/** A reply this much later than the message it answers is anchored to it. */
export const ANCHOR_AFTER_MS = 2 * 60_000;

/** What the decision looks at: the person's messages a reply answers, when it goes out, and when this process started. */
interface AnchorInput {
  /** The person's messages the reply answers, oldest first. */
  answered: readonly Message[];
  /** When the reply is handed to the channel. */
  sendAt: Date;
  /** When this process started: a message logged before it was answered after a restart. */
  startedAt: Date;
}

/**
 * The message a reply is anchored to (the newest it answers), or undefined when it is an
 * immediate answer to one message. Anchored when it answers more than one message, when the
 * newest waited more than ANCHOR_AFTER_MS by `sendAt`, or when the newest was written before this
 * process started (the reply is sent after a restart). A message's wait starts when it was
 * written: the earlier of when it was logged and when its channel says it was sent (`sentAt`), so a
 * message sent while presence was down and logged only after the restart has waited all along.
 */
export function replyAnchor(input: AnchorInput): MessageRef | undefined {
  const newest = input.answered.at(-1);
  if (newest === undefined) return undefined;
  const loggedAt = Date.parse(newest.ts);
  const sentAt = newest.external?.sentAt === undefined ? loggedAt : Date.parse(newest.external.sentAt);
  const anchored =
    input.answered.length > 1 ||
    input.sendAt.getTime() - Math.min(loggedAt, sentAt) > ANCHOR_AFTER_MS ||
    loggedAt < input.startedAt.getTime() ||
    // A channel's time may be whole seconds (Telegram's is): only one a full second before the start surely was.
    sentAt + 1_000 <= input.startedAt.getTime();
  return anchored ? messageRef(newest) : undefined;
}

/** A logged message as a channel points at it. */
export function messageRef(message: Message): MessageRef {
  return {
    id: message.id,
    ...(message.external
      ? { external: { chatId: message.external.chatId, messageId: message.external.messageId } }
      : {}),
  };
}
