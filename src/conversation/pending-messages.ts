import { type Message, messageTime } from "../core/message.ts";
import { messageIsQuestion } from "./awareness/questions.ts";

/** Fixed words the companion said from code (the model was away, check-ins stopped): said, but not an answer. */
export function isNotice(message: Message): boolean {
  return message.role === "assistant" && message.notice === true;
}

/**
 * A reaction the companion gave instead of writing: an answer (the message it is on stops
 * waiting), but not a message sent: it raises no unanswered count and starts no minimum gap.
 */
export function isReaction(message: Message): boolean {
  return message.role === "assistant" && message.reaction !== undefined;
}

/** An assistant message after which earlier messages count as seen: a reply, a check-in or a reaction, not a notice. */
export function isAnswer(message: Message): boolean {
  return message.role === "assistant" && !isNotice(message);
}

/**
 * The companion's own message that counts as sent: a reply or a check-in, not a notice nor a
 * reaction. What the unanswered count counts and the minimum gap runs from, wherever they are
 * worked out (awareness, /status, the timing learner).
 */
export function isMessageSent(message: Message): boolean {
  return isAnswer(message) && !isReaction(message);
}

/**
 * The person's messages not answered yet, oldest first. The companion's last message (a
 * reply or a check-in; a notice does not count) covers the person's messages up to the one
 * it names in `answeredThrough` — messages that arrived while it was being written come
 * after that, even if they were logged before it — or, for entries without the field,
 * everything before it. A check-in that went out while a message waited has moved on from
 * it: a restart does not answer a morning greeting in the afternoon. A message marked as
 * handled without a reply covers itself and everything before it the same way.
 */
export function pendingMessages(recent: readonly Message[], now: Date): Message[] {
  const nowMs = now.getTime();
  const visible = recent.filter((m) => messageTime(m) <= nowMs);
  const from = Math.max(answeredFrom(visible), visible.findLastIndex(isHandledWithoutReply) + 1);
  return visible.filter((m, i) => m.role === "user" && i >= from);
}

/**
 * A message of the person's that was dealt with although nothing was said (the reply turn's
 * answer was all leakage twice): it and the messages before it stop waiting.
 */
function isHandledWithoutReply(message: Message): boolean {
  return message.role === "user" && message.handledWithoutReply === true;
}

/** Where the person's unanswered messages start, counting only the companion's answers. */
function answeredFrom(visible: readonly Message[]): number {
  const lastAnswer = visible.findLastIndex(isAnswer);
  if (lastAnswer < 0) return 0;
  const through = visible[lastAnswer]?.answeredThrough;
  const coveredUpTo = through === undefined ? -1 : visible.findIndex((m) => m.id === through);
  return coveredUpTo >= 0 ? coveredUpTo + 1 : lastAnswer + 1;
}

/**
 * The person's messages a resent reply answers: the pending ones up to the one it names,
 * so the reflection of a reply finished after a crash covers what that reply answered.
 */
export function answeredBy(recent: readonly Message[], now: Date, through: string | undefined): Message[] {
  const pending = pendingMessages(recent, now);
  const last = through === undefined ? -1 : pending.findIndex((m) => m.id === through);
  return last < 0 ? pending : pending.slice(0, last + 1);
}

/**
 * At most this many of the companion's open questions are shown to reflection, the newest: enough
 * to link an answer, few tokens. An older one it was never shown cannot be named as answered, so
 * awareness states no more than these as left open either.
 */
export const OPEN_QUESTIONS_SHOWN = 5;

/**
 * The companion's questions still waiting for an answer at `now`, oldest first: its messages
 * sent (not notices nor reactions) within the `windowHours` before `now` that ask something
 * (reflection's annotation, else the lexicon), which no later message of the person's names in
 * its `answers`. Reflection is shown them with their ids so it can say which one an answer
 * answers, and once it has, the question is no longer open. Messages after `now` are not read.
 */
export function openQuestions(messages: readonly Message[], now: Date, windowHours: number): Message[] {
  const nowMs = now.getTime();
  const from = nowMs - windowHours * 3_600_000;
  const answered = new Set<string>();
  const open: Message[] = [];
  // Newest first, so the answers named by the person's later messages are known at each question.
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Message;
    const at = messageTime(message);
    if (at > nowMs) continue;
    if (message.role === "user") {
      for (const id of message.annotations?.answers ?? []) answered.add(id);
    } else if (
      at > from &&
      isMessageSent(message) &&
      !answered.has(message.id) &&
      messageIsQuestion(message)
    ) {
      open.push(message);
    }
  }
  return open.reverse();
}
