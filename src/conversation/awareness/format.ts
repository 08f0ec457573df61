import type { Message } from "../../core/message.ts";
import { clip, formatDuration, messageAsRead, plural } from "../../core/text.ts";
import { isReaction } from "../pending-messages.ts";
import type { AwarenessContext, Trigger } from "./context.ts";
import { asksSomething, messageIsQuestion } from "./questions.ts";
import { inZone, localStamp } from "./time.ts";
import { topicName } from "./topics.ts";

/** Quotes are cut to these lengths: enough to recognise a message, short enough for every prompt. */
const QUOTE_OWN = 80;
const QUOTE_THEIR_LAST = 140;
const QUOTE_OTHER = 60;
/** At most this many of the assistant's unanswered messages are quoted; the rest are counted. */
const MAX_SENT_SHOWN = 3;
/** The person's messages quoted besides their last one. */
const MAX_THEIR_EARLIER = 2;
/** Messages shown in the slim block: about three exchanges. */
const SLIM_MESSAGES = 6;

/** A message in one line, in quotes, cut at a word boundary, with its media described. */
function quote(message: Message, max: number): string {
  return `"${clip(messageAsRead(message), max, { oneLine: true, atWord: true })}"`;
}

/**
 * The question a message asks, quoted: the whole message when it fits, else its last sentence
 * with a question mark ("What kind of tea is it?"). Sentences end at . ! ? before a space, so
 * "2.5 km" stays whole; "Dr. Lee" would not, which a short message never risks.
 */
function quoteQuestion(message: Message): string {
  const text = messageAsRead(message);
  if (text.length <= QUOTE_OWN) return quote(message, QUOTE_OWN);
  const asked = text
    .split(/(?<=[.!?])\s+|\n+/)
    .findLast((sentence) => sentence.includes("?"))
    ?.trim();
  return asked ? `"${clip(asked, QUOTE_OWN, { oneLine: true, atWord: true })}"` : quote(message, QUOTE_OWN);
}

function topicList(topics: readonly string[]): string {
  return topics.map(topicName).join(", ");
}

/**
 * "Latest topic: work", or every topic of the latest message when it had several ("Latest topics:
 * sleep, hydration"). When later messages had none, it says whose message it was and when: a model
 * by hand read a bare "Latest topic: hydration" as the topic of a newer "All fine".
 */
function latestTopic(ctx: AwarenessContext, newest: Message | undefined, nowMs: number): string | null {
  const { currentTopics: topics, currentTopicAt: at } = ctx.conversationState;
  if (topics.length === 0) return null;
  const label = `${topics.length > 1 ? "Latest topics" : "Latest topic"}: ${topicList(topics)}`;
  if (!at || newest === undefined || Date.parse(at.ts) >= Date.parse(newest.ts)) return label;
  const whose = at.role === "user" ? "their" : "your";
  return `${label} (${whose} message at ${localStamp(Date.parse(at.ts), nowMs, ctx.timezone)})`;
}

function header(ctx: AwarenessContext, nowMs: number): string {
  const local = inZone(nowMs, ctx.timezone);
  const { timeOfDay, dayType } = ctx.conversationState;
  return `Now: ${local.toFormat("cccc h:mm a")} (${timeOfDay}, ${dayType}), ${ctx.timezone}`;
}

function ownActivity(ctx: AwarenessContext, nowMs: number): string[] {
  const stamp = (m: Message) => localStamp(Date.parse(m.ts), nowMs, ctx.timezone);
  const { self, user } = ctx;
  const lines = ["### Your recent activity"];
  const sent = self.messagesSent;
  if (sent.length > 0) {
    const since =
      user.lastMessage && user.timeSinceLastMessage !== null
        ? `Since their last message (${stamp(user.lastMessage)}, ${formatDuration(user.timeSinceLastMessage)} ago)`
        : "Since the conversation began (they have not written yet)";
    lines.push(`${since}, you sent ${plural(sent.length, "message")}:`);
    const hidden = Math.max(0, sent.length - MAX_SENT_SHOWN);
    if (hidden > 0) lines.push(`- (${plural(hidden, "earlier message")} not shown)`);
    // A question waiting for its answer is quoted as the question: cut to its opening, "Morning!
    // That "for once" says a lot…" hid from a model by hand that it had asked anything.
    for (const m of sent.slice(hidden))
      lines.push(
        messageIsQuestion(m, ctx.conversationState.language)
          ? `- ${stamp(m)}, asking: ${quoteQuestion(m)}`
          : `- ${stamp(m)}: ${quote(m, QUOTE_OWN)}`,
      );
  } else {
    const last = user.lastMessage;
    const reacted = (self.recentMessages ?? []).findLast(
      (m) => isReaction(m) && last !== null && Date.parse(m.ts) >= Date.parse(last.ts),
    );
    lines.push(
      // "Yet" only when nobody has written: a log slice (store/messages.ts awarenessSliceStart)
      // may begin after the companion's last message, so its absence there proves nothing.
      last === null
        ? "You have not written yet."
        : reacted
          ? `You have not written since their last message; you reacted ${reacted.reaction} to it (${stamp(reacted)}).`
          : "You have not written since their last message.",
    );
  }
  if (self.questionsLeftOpen.length > 0) {
    const count = self.questionsLeftOpen.length;
    lines.push(
      `Your ${count === 1 ? "question" : `${count} questions`} their later messages did not answer:`,
    );
    for (const m of self.questionsLeftOpen) lines.push(`- ${stamp(m)}: ${quoteQuestion(m)}`);
  }
  if (self.lastMessageTime !== null && self.timeSinceLastMessage !== null) {
    const lastMs = Date.parse(self.lastMessageTime);
    const when = localStamp(lastMs, nowMs, ctx.timezone);
    // A reaction since is no message, but "Your last message: 8:20" beside "you reacted 👍 (1:40 PM)"
    // read as hours of silence to a model by hand.
    const reactedSince = (self.recentMessages ?? []).some((m) => isReaction(m) && Date.parse(m.ts) > lastMs);
    const label = reactedSince ? "Your last written message" : "Your last message";
    lines.push(`${label}: ${when} (${formatDuration(self.timeSinceLastMessage)} ago)`);
  }
  if (self.topicsMentioned.length > 0)
    lines.push(`Topics of your recent messages: ${topicList(self.topicsMentioned)}`);
  return lines;
}

function theirActivity(ctx: AwarenessContext, nowMs: number): string[] {
  const stamp = (m: Message) => localStamp(Date.parse(m.ts), nowMs, ctx.timezone);
  const { user, self } = ctx;
  const lines = ["### Their recent activity"];
  const last = user.lastMessage;
  if (last === null || user.timeSinceLastMessage === null) {
    lines.push("- They have not written yet");
    return lines;
  }
  const ago = formatDuration(user.timeSinceLastMessage);
  // Oldest first, like every list in the block: the earlier messages, then the last one.
  const earlier = user.recentMessages.filter((m) => m.id !== last.id);
  for (const m of earlier.slice(-MAX_THEIR_EARLIER))
    lines.push(`- Earlier (${stamp(m)}): ${quote(m, QUOTE_OTHER)}`);
  lines.push(`- Last message (${stamp(last)}, ${ago} ago): ${quote(last, QUOTE_THEIR_LAST)}`);
  if (user.mood) lines.push(`- Their mood in it: ${user.mood}`);
  const today = inZone(nowMs, ctx.timezone).startOf("day").toMillis();
  const todayCount = user.recentMessages.filter((m) => Date.parse(m.ts) >= today).length;
  lines.push(`- Messages today: ${todayCount}`);
  if (self.messagesSent.length > 0) {
    // "none" alone read as an answer owed after a message that asked nothing. Whether one waits
    // for an answer is the topic guard's test too: a hope ("Hope the interview went well!") does.
    const sent = self.messagesSent;
    const owed = sent.some((m) => asksSomething(m, ctx.conversationState.language))
      ? ""
      : sent.length === 1
        ? " (it asked nothing)"
        : " (they asked nothing)";
    lines.push(`- Replies to your ${plural(sent.length, "message")} since: none${owed}`);
  }
  // The latest topic may be the companion's own ping, so it has no place under their activity;
  // their topics are listed just above.
  if (user.topicsAddressed.length > 0)
    lines.push(`- Topics they addressed recently: ${topicList(user.topicsAddressed)}`);
  return lines;
}

function priorContext(ctx: AwarenessContext): string[] {
  const { declaredPatterns, openLoops, recentMilestones } = ctx.priorContext;
  const items = [
    ...declaredPatterns.map((p) => `- Declared pattern: ${p}`),
    ...openLoops.map((l) => `- Open loop: ${l}`),
    ...recentMilestones.map((m) => `- Recent milestone: ${m}`),
  ];
  return items.length > 0 ? ["### Notable prior context", ...items] : [];
}

function observations(ctx: AwarenessContext): string[] {
  return ctx.observations.length > 0 ? ["### Observations", ...ctx.observations.map((o) => `- ${o}`)] : [];
}

function fullBlock(ctx: AwarenessContext, nowMs: number): string[] {
  return [
    "## Conversational awareness",
    header(ctx, nowMs),
    "",
    ...ownActivity(ctx, nowMs),
    "",
    ...theirActivity(ctx, nowMs),
    ...(ctx.observations.length > 0 ? ["", ...observations(ctx)] : []),
    ...(priorContext(ctx).length > 0 ? ["", ...priorContext(ctx)] : []),
  ];
}

function slimBlock(ctx: AwarenessContext, nowMs: number): string[] {
  const stamp = (m: Message) => localStamp(Date.parse(m.ts), nowMs, ctx.timezone);
  const mine = ctx.self.recentMessages ?? ctx.self.messagesSent;
  // Time order; within one minute the person's message comes first, as a reply follows it.
  const recent = [...mine, ...ctx.user.recentMessages]
    .sort(
      (a, b) =>
        Date.parse(a.ts) - Date.parse(b.ts) || (a.role === "user" ? -1 : 0) - (b.role === "user" ? -1 : 0),
    )
    .slice(-SLIM_MESSAGES);
  const { conversationMinutes } = ctx.conversationState;
  const lines = ["## Recent context (active conversation)", header(ctx, nowMs), "Last exchanges:"];
  for (const m of recent) {
    if (isReaction(m)) lines.push(`- ${stamp(m)} you reacted ${m.reaction}`);
    else lines.push(`- ${stamp(m)} ${m.role === "user" ? "them" : "you"}: ${quote(m, QUOTE_OTHER)}`);
  }
  if (conversationMinutes !== null && conversationMinutes !== undefined) {
    lines.push(`Time in conversation: ${formatDuration(conversationMinutes)}`);
  }
  const latest = latestTopic(ctx, recent.at(-1), nowMs);
  if (latest) lines.push(latest);
  if (ctx.user.mood) lines.push(`Their mood in their last message: ${ctx.user.mood}`);
  return ctx.observations.length > 0 ? [...lines, ...observations(ctx)] : lines;
}

/**
 * The awareness context as markdown for the system prompt: facts only, never advice.
 * The full block (own activity with local times, theirs, observations, prior context)
 * when the context says the assistant is context-poor or a heartbeat asks; the slim one
 * (last exchanges, time in conversation, latest topic) in an active conversation.
 */
export function formatAwarenessForPrompt(ctx: AwarenessContext, trigger?: Trigger): string {
  const nowMs = Date.parse(ctx.now);
  const full = trigger === "heartbeat" || ctx.format === "full";
  return `${(full ? fullBlock(ctx, nowMs) : slimBlock(ctx, nowMs)).join("\n")}\n`;
}
