import { formatHourRanges } from "../conversation/timing.ts";
import type { Decision, DecisionReason, Moment } from "../core/decision.ts";

/**
 * What a check-in decision means, in words for the person: /why and /status speak to "you"
 * in plain sentences, never in the reason codes the decision record keeps (those stay in
 * `status --json` and the trace). The one place every reason is worded.
 */

/**
 * The sentence for one reason; `about` is the topic in the decision's own words, when it has
 * one, and `moment` the hour an `unlikely-moment` hold was about.
 */
type Wording = (about: string | null, moment: Moment | undefined) => string;

const WORDING: Record<DecisionReason, Wording> = {
  paused: () => "you had paused check-ins.",
  blocked: () => "you had blocked me, so I wait until you write again.",
  "quiet-hours": () => "it was inside your quiet hours.",
  "unanswered-limit": () => "you hadn't answered my last messages yet, and I don't pile more on.",
  "weekend-limit": () =>
    "it was the weekend and my last message was still unanswered; on weekends I wait for you.",
  "recent-conversation": () => "we had only just been talking.",
  "too-soon": () => "I had written to you only a little while before.",
  "daily-limit": () => "I had already checked in as often as I do in a day.",
  budget: () => "today's budget for the AI model was used up.",
  "unlikely-moment": (_, moment) =>
    moment === undefined
      ? "you've rarely answered at that hour lately, so I waited for a better one."
      : `it was ${moment.local} on a ${moment.weekend ? "weekend day" : "weekday"}, and you've rarely answered at this hour; your best hours lately are ${formatHourRanges(moment.bestHours)}.`,
  ok: () => "nothing held it back.",
  "reply-pending": () => "you had written to me, and answering you comes first.",
  "model-unavailable": () => "I couldn't reach the AI model.",
  "model-error": () => "the AI model answered with an error.",
  "invalid-decision": () => "the AI model's answer made no sense, so I sent nothing.",
  "model-declined": (about) =>
    `I thought about it${about ? ` (about ${about})` : ""} and decided it wasn't the right moment.`,
  "already-answered": (about) =>
    `I meant to ask about ${about ?? "something"}, but you had already talked about it recently.`,
  "repeated-topic": (about) =>
    `I had already asked you about ${about ?? "that"} and you hadn't answered yet.`,
  "leak-guard-empty": () => "what I wrote was only my own notes, not a message, so I sent nothing.",
  "send-failed": () => "the message didn't go through.",
  sent: () => "nothing held it back.",
};

/** A decision as words: whether a check-in went out, and why in a sentence addressed to the person. */
export interface DecisionWords {
  /** "I checked in about the move" or "I didn't check in". */
  headline: string;
  /** Why not, one sentence; null when the check-in went out. */
  because: string | null;
}

/** Words the person reads for a recorded decision. */
export function describeDecision(
  decision: Pick<Decision, "fire" | "reason" | "topic" | "moment">,
): DecisionWords {
  const about = topicWords(decision.topic);
  if (decision.fire) return { headline: `I checked in${about ? ` about ${about}` : ""}`, because: null };
  return { headline: "I didn't check in", because: WORDING[decision.reason](about, decision.moment) };
}

/** A decision on one line: "I didn't check in: it was inside your quiet hours." */
export function decisionSentence(decision: Pick<Decision, "fire" | "reason" | "topic" | "moment">): string {
  const { headline, because } = describeDecision(decision);
  return because === null ? `${headline}.` : `${headline}: ${because}`;
}

/**
 * A topic as the person would say it: the model's own words, without the topic lexicon's
 * `other:` label prefix that marks a topic it did not know.
 */
export function topicWords(topic: string | undefined): string | null {
  const words = topic?.replace(/^other:/, "").trim();
  return words ? words : null;
}
