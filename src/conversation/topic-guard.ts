import type { Annotations, Message } from "../core/message.ts";
import { formatDuration } from "../core/text.ts";
import { answeredTopicsSince, unansweredAskedTopics } from "./awareness/build.ts";
import type { AwarenessContext } from "./awareness/context.ts";
import { elapsedMinutes } from "./awareness/time.ts";
import { detectTone } from "./awareness/tone.ts";
import { canonicalTopic, detectTopics, isQuestion, knownTopics, messageTopics } from "./awareness/topics.ts";

/**
 * The check-in's topic, checked in code rather than hoped for in the prompt: a model that
 * decided to ask about water is held back when the person already talked about water in
 * the last hours, or when it already asked about water and is still waiting for an answer.
 * Pure: the same decision, log and moment always give the same verdict.
 */

/** Why a decided check-in was held back. */
export type TopicGuardReason = "already-answered" | "repeated-topic";

/** The guard's verdict, with the canonical topics it judged (for the decision record). */
export type TopicVerdict =
  | { allow: true; topics: string[] }
  | { allow: false; reason: TopicGuardReason; detail: string; topics: string[] };

/** The canonical labels of a decided topic, so "water", "hydration" and "drinking enough" meet. */
export function canonicalTopicsOf(decidedTopic: string): string[] {
  const text = decidedTopic.trim();
  if (text === "") return [];
  const detected = detectTopics(text);
  const lexicon = detected.filter((t) => KNOWN_TOPICS.has(t));
  if (lexicon.length > 0) return lexicon;
  const label = canonicalTopic(text);
  if (KNOWN_TOPICS.has(label)) return [label];
  return detected.length > 0 ? detected : [label];
}

/**
 * What a sent check-in is about, stored on its log entry: the decided topic's labels as well
 * as the written text's, so a later check-in decided about "the move" meets one that was
 * worded "How's the packing going?" and is held back as a repeat while it waits for an answer.
 */
export function checkinAnnotations(decidedTopic: string, text: string): Annotations {
  const topics = [...new Set([...canonicalTopicsOf(decidedTopic), ...detectTopics(text)])];
  return { topics, question: isQuestion(text), tone: detectTone(text) };
}

/** The lexicon's own labels: a decided topic may name one directly ("movement"). */
const KNOWN_TOPICS: ReadonlySet<string> = new Set(knownTopics());

/** Whether a check-in about `decidedTopic` may be sent at `now`; `hours` is the already-answered window. */
export function guardTopic(
  decidedTopic: string,
  log: readonly Message[],
  awareness: AwarenessContext,
  now: Date,
  hours: number,
): TopicVerdict {
  const topics = canonicalTopicsOf(decidedTopic);
  if (topics.length === 0) return { allow: true, topics };
  const named = decidedTopic.trim();
  const visible = log.filter((m) => Date.parse(m.ts) <= now.getTime());

  const answered = answeredTopicsSince(visible, new Date(now.getTime() - hours * 3_600_000));
  const answeredTopic = topics.find((t) => answered.has(t));
  if (answeredTopic !== undefined) {
    const when = visible.findLast((m) => m.role === "user" && messageTopics(m).includes(answeredTopic));
    const ago = when ? ` ${formatDuration(elapsedMinutes(Date.parse(when.ts), now.getTime()))} ago` : "";
    return {
      allow: false,
      reason: "already-answered",
      detail: `the person already talked about ${named}${ago} (within ${formatDuration(hours * 60)})`,
      topics,
    };
  }

  const waiting = unansweredAskedTopics(awareness);
  const repeated = topics.find((t) => waiting.has(t));
  if (repeated !== undefined) {
    const count = awareness.self.messagesSent.filter((m) => messageTopics(m).includes(repeated)).length;
    return {
      allow: false,
      reason: "repeated-topic",
      detail: `already asked about ${named} ${count === 1 ? "once" : `${count} times`} since the person last wrote, still unanswered`,
      topics,
    };
  }
  return { allow: true, topics };
}
