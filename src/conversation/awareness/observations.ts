import { formatDuration, plural } from "../../core/text.ts";
import type { Shift } from "./build.ts";
import type { AwarenessContext } from "./context.ts";
import { localStamp } from "./time.ts";
import { messageIsQuestion, messageTopics, topicName } from "./topics.ts";

/** A reply later than this is worth stating: the person has been left waiting. */
const LATE_REPLY_MINUTES = 15;
/** Repeated topics beyond this many are left to the list of topics raised. */
const MAX_REPEATED_SHOWN = 3;
/** A silence this long is worth stating on its own. */
const NOTABLE_SILENCE_MINUTES = 120;

/** What the observations are drawn from: the context plus what the builder saw on the way. */
export interface Observed {
  readonly context: AwarenessContext;
  /** The person's latest change of subject, when it is one of the last exchanges. */
  readonly shift: Shift | null;
  readonly answeredBeforeAsked: readonly { topic: string; answeredMs: number }[];
  /** Whether the person sounded warm earlier in the window than their last message. */
  readonly warmBefore: boolean;
}

/**
 * The state in plain sentences, each one a fact the assistant can check against the log
 * ("You have sent 3 messages since they last spoke, 5h 43m ago"). None of them says what
 * to do: the model reads where it stands and decides for itself.
 */
export function observe({ context, shift, answeredBeforeAsked, warmBefore }: Observed): string[] {
  const { self, user, conversationState: state } = context;
  const nowMs = Date.parse(context.now);
  const lines: string[] = [];
  const sent = self.messagesSent.length;

  if (user.lastMessage === null && sent === 0) lines.push("There are no messages yet");
  if (user.lastMessage === null && sent > 0) {
    lines.push(`They have not written yet; you have sent ${plural(sent, "message")}`);
  }
  if (user.timeSinceLastMessage !== null && sent > 0) {
    lines.push(
      `You have sent ${plural(sent, "message")} since they last spoke, ${formatDuration(user.timeSinceLastMessage)} ago`,
    );
  }
  for (const { topic, count } of self.repeatedTopics.slice(0, MAX_REPEATED_SHOWN)) {
    const language = state.language;
    const raising = self.messagesSent.filter((m) => messageTopics(m, language).includes(topic));
    const verb = raising.every((m) => messageIsQuestion(m, language)) ? "asked about" : "brought up";
    lines.push(`You have ${verb} ${topicName(topic)} ${count} times without a response`);
  }
  const [single] = answeredBeforeAsked;
  if (answeredBeforeAsked.length === 1 && single !== undefined) {
    const when = localStamp(single.answeredMs, nowMs, context.timezone);
    lines.push(
      `They talked about ${topicName(single.topic)} at ${when}, before your check-in raised it again`,
    );
  } else if (answeredBeforeAsked.length > 1) {
    const topics = answeredBeforeAsked.map(
      ({ topic, answeredMs }) => `${topicName(topic)} (${localStamp(answeredMs, nowMs, context.timezone)})`,
    );
    lines.push(`They talked about ${topics.join(", ")} before your check-ins raised them again`);
  }
  if (state.waitingMinutes !== null && state.waitingMinutes >= LATE_REPLY_MINUTES) {
    lines.push(`Their message has waited ${formatDuration(state.waitingMinutes)} for your answer`);
  }
  if (shift !== null) {
    const when = localStamp(shift.ms, nowMs, context.timezone);
    lines.push(`At ${when} they moved from ${topicName(shift.from)} to ${topicName(shift.to)}`);
  }
  if (state.lastExchangeTone === "tense") {
    lines.push(
      warmBefore
        ? "Their earlier messages were warm; their last reply reads curt or irritated with you"
        : "Their last reply reads curt or irritated with you",
    );
  }
  if (state.silenceDuration !== null && state.silenceDuration >= NOTABLE_SILENCE_MINUTES) {
    lines.push(`No message from either side for ${formatDuration(state.silenceDuration)}`);
  }
  return lines;
}
