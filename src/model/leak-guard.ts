/**
 * The last gate before words reach the person. Models sometimes show their work: a
 * <thinking> block, a "Decision: send" header, a protocol token like NO_MESSAGE, a paragraph
 * of reasoning set apart from the message with a `---` line. None of that may be sent.
 * The guard removes it and reports what it removed, so the trace can say why a message
 * was shortened or, when nothing is left, why nothing was sent. A message without any of
 * these comes out unchanged (only trimmed), horizontal rules and all.
 *
 * It errs towards keeping words: a person who loses a real sentence is worse off than one who
 * reads a stray label. Code (fenced or inline) is never touched; a protocol token goes only
 * where it stands apart; a decision label goes in a check-in, or in a reply only when the
 * block holds a line that is plainly the protocol ("Decision: send"); a paragraph or a `---`
 * block goes only when it reads as reasoning about the message rather than to the person.
 * A time stamp like those the prompt puts before messages (sent-time.ts) goes only at the
 * very head of the message, where a model imitating the turns it was shown writes one.
 */

import { SENT_TIME_AT_HEAD } from "./sent-time.ts";

/** Which path the text comes from: a check-in is written through a forced tool, a reply is free prose. */
export type GuardPath = "reply" | "checkin";

/** What is left to send (null when nothing is), and each removed piece labelled with its kind. */
export interface GuardResult {
  text: string | null;
  removed: string[];
}

/** Tags models use for hidden reasoning, with or without a namespace prefix. */
const REASONING_TAGS = [
  "thinking",
  "think",
  "thought",
  "thoughts",
  "reasoning",
  "reflection",
  "scratchpad",
  "internal",
  "analysis",
  "inner_monologue",
  "decision",
  "plan",
  "notes",
];
const TAG_NAME = `(?:[a-z_]+:)?(?:${REASONING_TAGS.join("|")})`;

/** Bracketed tokens of the protocol; prose may quote them, so they go only at the head of a line or alone. */
const BRACKET_TOKEN = String.raw`\[(?:SEND|NO[_ ]SEND|SILENT|SKIP|DONE|END|NO[_ ]MESSAGE|NO[_ ]REPLY|MESSAGE|REPLY|CHECK[_-]?IN)\]`;
/** Shouted underscore tokens no sentence uses; they go at either end of a line or alone. */
const WORD_TOKEN = String.raw`\b(?:YES_MESSAGE|NO_MESSAGE|HEARTBEAT_OK|HEARTBEAT_SKIP|NO_REPLY|NO_SEND|SEND_MESSAGE|DO_NOT_SEND)\b`;
const TOKEN_AT_HEAD = new RegExp(`^[ \t]*(?:${BRACKET_TOKEN}|${WORD_TOKEN})[ \t]*`, "gm");
const TOKEN_AT_FOOT = new RegExp(`[ \t]*${WORD_TOKEN}[ \t]*$`, "gm");

/** A line of markdown decoration a label may hide behind: "**Decision:**", "## Topic:", "- Why:". */
const DECOR = String.raw`[ \t]*(?:[#>*_-]+[ \t]*)*`;

/** Labels that open a paragraph of reasoning: the line and what follows until a blank line go. */
const REASONING_LABEL = new RegExp(
  `^${DECOR}(?:reasoning|thinking|thoughts?|internal(?: note)?|note to self|my reasoning|scratchpad)${DECOR}:`,
  "i",
);

/** Labels a real answer uses too ("**Analysis:**" of someone's code): the paragraph goes only when it reads as reasoning. */
const AMBIGUOUS_REASONING_LABEL = new RegExp(`^${DECOR}(?:analysis|rationale)${DECOR}:`, "i");

/** Labels of a structured decision; removed as whole lines at the head or foot of a check-in. */
const DECISION_LABEL = new RegExp(
  `^${DECOR}(?:decision|topic|send|should send|why|reason|confidence|tone|check-?in decision)${DECOR}:`,
  "i",
);

/** A line that is the protocol itself ("DECISION: SEND", "send: yes"): it lets a reply lose its decision block. */
const PROTOCOL_DECISION_LINE = new RegExp(
  `^${DECOR}(?:decision|send|should send|check-?in decision)${DECOR}:${DECOR}(?:send|yes|no|true|false|skip|don'?t send|do not send|no send|hold)[ \t.]*$`,
  "i",
);

/** Labels that introduce the real message: the label goes, the words after it stay. */
const OUTPUT_LABEL = new RegExp(
  `^${DECOR}(?:message|reply|response|final (?:message|reply|answer|response)|check-?in(?: message)?|draft)${DECOR}:[ \\t]*(?:[*_]+[ \\t]*)?`,
  "i",
);

/** A line that only announces the message ("Here's a gentle check-in:"): it goes, the message stays. */
const PREAMBLE =
  /^[ \t]*(?:here'?s|here is|below is)\b[^\n]{0,60}?\b(?:message|reply|response|check-?in|draft|text)\b[^\n]{0,30}:[ \t]*$/i;

/** A line that is only a `---` rule (three or more dashes). */
const RULE = /^[ \t]*-{3,}[ \t]*$/;

/**
 * Phrases that give a block away as reasoning about the message rather than words to the
 * person: the person in the third person, weighing whether or what to send, the protocol's
 * own words. Ordinary openings ("Let me think about that with you", "If you decide…") do not.
 */
const REASONING_MARKERS =
  /\b(?:the user|the person|user's|person's|should I (?:send|reply|respond|write|check|message)|whether to (?:send|reply|respond|write|check)|decid(?:e|ed|ing) (?:whether|to send|not to send|to check)|I should (?:keep|ask|send|reply|respond|mention|acknowledge|avoid|not|follow|check|say|write)|I'll (?:keep it|go with|send|acknowledge)|my (?:reply|response|message|answer) (?:should|will)|the (?:reply|response) should|check-?in|heartbeat|unanswered|awareness|scratchpad|keep it (?:short|brief|light|warm)|tone should|(?:he|she|they) (?:hasn't|haven't|has not|have not|didn't|did not) (?:replied|answered|responded)|YES_MESSAGE|NO_MESSAGE|NO_REPLY|HEARTBEAT_OK)\b/i;

/** Removes everything that must never reach the person; see the module comment. */
export function guardOutgoing(text: string, path: GuardPath = "reply"): GuardResult {
  const removed: string[] = [];
  let out = text.replace(/\r\n?/g, "\n");
  out = stripReasoningFences(out, removed);
  const code = maskCode(out);
  out = stripReasoningTags(code.masked, removed);
  out = stripReasoningParagraphs(out, removed);
  out = stripDecisionHeadAndFoot(out, removed, path);
  out = stripSentTime(out, removed);
  out = stripOutputLabel(out, removed);
  out = stripProtocolTokens(out, removed);
  out = stripLeadingReasoningBlock(out, removed);
  if (removed.length > 0) out = tidy(out);
  const final = code.restore(out).trim();
  return { text: final === "" ? null : final, removed };
}

/** Code the guard must not read: fenced blocks and inline spans, swapped for placeholders and put back after. */
function maskCode(text: string): { masked: string; restore: (text: string) => string } {
  const spans: string[] = [];
  const code =
    /(^|\n)([ \t]*)(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:\n[ \t]*\3[ \t]*(?=\n|$)|$)|(`+)[^`\n][\s\S]*?\4/g;
  const masked = text.replace(code, (match, newline: string | undefined) => {
    const lead = newline ?? "";
    spans.push(match.slice(lead.length));
    return `${lead}\uE000${spans.length - 1}\uE001`;
  });
  const restore = (out: string) =>
    out.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => spans[Number(i)] ?? "");
  return { masked, restore };
}

function stripReasoningTags(text: string, removed: string[]): string {
  let out = text;
  const pair = new RegExp(`<(${TAG_NAME})\\b[^>]*>[\\s\\S]*?</\\1\\s*>`, "gi");
  out = out.replace(pair, (m) => note(removed, "reasoning tag", m));
  const strayClose = new RegExp(`^[\\s\\S]*</${TAG_NAME}\\s*>`, "i");
  out = out.replace(strayClose, (m) => note(removed, "text before a closing reasoning tag", m));
  const unclosed = new RegExp(`<${TAG_NAME}\\b[^>]*>[\\s\\S]*$`, "i");
  out = out.replace(unclosed, (m) => note(removed, "unclosed reasoning tag", m));
  const selfClosing = new RegExp(`<${TAG_NAME}\\b[^>]*/>`, "gi");
  return out.replace(selfClosing, (m) => note(removed, "reasoning tag", m));
}

function stripReasoningFences(text: string, removed: string[]): string {
  const fence = /```[ \t]*(?:thinking|reasoning|analysis|internal|scratchpad)\b[\s\S]*?(?:```|$)/gi;
  return text.replace(fence, (m) => note(removed, "reasoning block", m));
}

function stripReasoningParagraphs(text: string, removed: string[]): string {
  const lines = text.split("\n");
  const kept: string[] = [];
  let inside = false;
  for (const [i, line] of lines.entries()) {
    if (REASONING_LABEL.test(line) || (AMBIGUOUS_REASONING_LABEL.test(line) && readsAsReasoning(lines, i))) {
      inside = true;
      note(removed, "reasoning paragraph", line);
      continue;
    }
    if (inside && line.trim() !== "" && !OUTPUT_LABEL.test(line) && !RULE.test(line)) {
      note(removed, "reasoning paragraph", line);
      continue;
    }
    inside = false;
    kept.push(line);
  }
  return kept.join("\n");
}

/**
 * Decision lines at the head or foot go in a check-in; in a reply a block of them goes only
 * when one of its lines is plainly the protocol, so "Topic: sleep hygiene" or a last bullet
 * "- Why: mornings are calmer" stays.
 */
function stripDecisionHeadAndFoot(text: string, removed: string[], path: GuardPath): string {
  const lines = text.split("\n");
  const isLabel = (line: string | undefined) => DECISION_LABEL.test(line ?? "");
  let start = 0;
  while (start < lines.length && (isBlank(lines[start]) || isLabel(lines[start]))) start += 1;
  let end = lines.length;
  while (end > start && (isBlank(lines[end - 1]) || isLabel(lines[end - 1]))) end -= 1;
  const strips = (block: string[]) =>
    path === "checkin" || block.some((line) => PROTOCOL_DECISION_LINE.test(line));
  const head = lines.slice(0, start);
  const foot = lines.slice(end);
  const from = strips(head) ? start : 0;
  const to = strips(foot) ? end : lines.length;
  for (const line of [...lines.slice(0, from), ...lines.slice(to)]) {
    if (!isBlank(line)) note(removed, "decision label", line);
  }
  return lines.slice(from, Math.max(from, to)).join("\n");
}

/** The shown messages' time stamp, copied to the head of the message: it is not the model's words. */
function stripSentTime(text: string, removed: string[]): string {
  return text.replace(SENT_TIME_AT_HEAD, (m) => note(removed, "time stamp", m));
}

function stripOutputLabel(text: string, removed: string[]): string {
  const lines = text.split("\n");
  const first = lines.findIndex((l) => !isBlank(l));
  const line = lines[first];
  if (line === undefined) return text;
  if (PREAMBLE.test(line)) {
    note(removed, "message preamble", line);
    return lines.slice(first + 1).join("\n");
  }
  const match = OUTPUT_LABEL.exec(line);
  if (!match) return text;
  note(removed, "message label", match[0]);
  const rest = line.slice(match[0].length).trim();
  lines[first] = rest;
  return lines.slice(rest === "" ? first + 1 : first).join("\n");
}

function stripProtocolTokens(text: string, removed: string[]): string {
  return text
    .replace(TOKEN_AT_HEAD, (m) => note(removed, "protocol token", m))
    .replace(TOKEN_AT_FOOT, (m) => note(removed, "protocol token", m));
}

/** Whether the paragraph starting at line `from` reads as reasoning about the message. */
function readsAsReasoning(lines: readonly string[], from: number): boolean {
  const end = lines.findIndex((l, i) => i > from && isBlank(l));
  return REASONING_MARKERS.test(lines.slice(from, end < 0 ? lines.length : end).join("\n"));
}

/**
 * A block before the first `---` line goes when it reads as reasoning (or sits between two
 * rules at the very start, front-matter style). A rule after a real opening stays.
 */
function stripLeadingReasoningBlock(text: string, removed: string[]): string {
  const lines = text.split("\n");
  const firstContent = lines.findIndex((l) => !isBlank(l));
  if (firstContent < 0) return text;
  if (RULE.test(lines[firstContent] ?? "")) {
    const close = lines.findIndex((l, i) => i > firstContent && RULE.test(l));
    if (close < 0) {
      note(removed, "leading rule", lines[firstContent] ?? "");
      return lines.slice(firstContent + 1).join("\n");
    }
    const block = lines.slice(firstContent + 1, close).join("\n");
    if (close === lines.length - 1 || !REASONING_MARKERS.test(block)) return text;
    note(removed, "leading reasoning block", lines.slice(firstContent, close + 1).join("\n"));
    return lines.slice(close + 1).join("\n");
  }
  const rule = lines.findIndex((l) => RULE.test(l));
  if (rule < 0) return text;
  const block = lines.slice(0, rule).join("\n");
  if (!REASONING_MARKERS.test(block)) return text;
  note(removed, "leading reasoning block", lines.slice(0, rule + 1).join("\n"));
  return lines.slice(rule + 1).join("\n");
}

/** Collapses the gaps removals leave behind. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .replace(/(\S)[ \t]{2,}/g, "$1 ");
}

function note(removed: string[], kind: string, snippet: string): string {
  removed.push(`${kind}: ${snippet.trim()}`);
  return "";
}

function isBlank(line: string | undefined): boolean {
  return line === undefined || line.trim() === "";
}
