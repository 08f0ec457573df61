/**
 * The last gate before words reach the person. Models sometimes show their work: a
 * <thinking> block, a "Decision: send" header, a protocol token like NO_MESSAGE, a paragraph
 * of reasoning set apart from the message with a `---` line. None of that may be sent.
 * The guard removes it and reports what it removed, so the trace can say why a message
 * was shortened or, when nothing is left, why nothing was sent. A message without any of
 * these comes out unchanged (only trimmed), horizontal rules and all.
 */

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

/** Tokens that belong to the protocol between code and model, never to a message. */
const PROTOCOL_TOKENS =
  /\[(?:SEND|NO[_ ]SEND|SILENT|SKIP|DONE|END|NO[_ ]MESSAGE|NO[_ ]REPLY|MESSAGE|REPLY|CHECK[_-]?IN)\]|\b(?:YES_MESSAGE|NO_MESSAGE|HEARTBEAT_OK|HEARTBEAT_SKIP|NO_REPLY|NO_SEND|SEND_MESSAGE|DO_NOT_SEND)\b/g;

/** A line of markdown decoration a label may hide behind: "**Decision:**", "## Topic:", "- Why:". */
const DECOR = String.raw`[ \t]*(?:[#>*_-]+[ \t]*)*`;

/** Labels that open a paragraph of reasoning: the line and what follows until a blank line go. */
const REASONING_LABEL = new RegExp(
  `^${DECOR}(?:reasoning|thinking|thoughts?|analysis|internal(?: note)?|note to self|my reasoning|rationale|scratchpad)${DECOR}:`,
  "i",
);

/** Labels of a structured decision; removed as whole lines at the head or foot of the text. */
const DECISION_LABEL = new RegExp(
  `^${DECOR}(?:decision|topic|send|should send|why|reason|confidence|tone|check-?in decision)${DECOR}:`,
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

/** Phrases that give a leading block away as reasoning about the conversation rather than to the person. */
const REASONING_MARKERS =
  /\b(?:the user|the person|user's|person's|I should|I shouldn't|I need to|I want to (?:keep|avoid|acknowledge|check)|let me|I'll (?:keep|go with|write|send|ask|mention|acknowledge|avoid)|should I|my (?:reply|response|message|answer) (?:should|will)|(?:a|the|this) (?:reply|response|message) (?:should|that)|check-?in|heartbeat|unanswered|awareness|scratchpad|decid(?:e|ed|ing)|reasoning|draft|tone (?:should|is)|keep it (?:short|brief|light|warm)|(?:he|she|they) (?:hasn't|haven't|has not|have not|didn't|did not) (?:replied|answered|responded))\b/i;

/** Removes everything that must never reach the person; see the module comment. */
export function guardOutgoing(text: string): GuardResult {
  const removed: string[] = [];
  let out = text.replace(/\r\n?/g, "\n");
  out = stripReasoningTags(out, removed);
  out = stripReasoningFences(out, removed);
  out = stripReasoningParagraphs(out, removed);
  out = stripDecisionHeadAndFoot(out, removed);
  out = stripOutputLabel(out, removed);
  out = stripProtocolTokens(out, removed);
  out = stripLeadingReasoningBlock(out, removed);
  if (removed.length > 0) out = tidy(out);
  const final = out.trim();
  return { text: final === "" ? null : final, removed };
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
  for (const line of lines) {
    if (REASONING_LABEL.test(line)) {
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

function stripDecisionHeadAndFoot(text: string, removed: string[]): string {
  const lines = text.split("\n");
  let start = 0;
  while (start < lines.length && (isBlank(lines[start]) || DECISION_LABEL.test(lines[start] ?? ""))) {
    if (!isBlank(lines[start])) note(removed, "decision label", lines[start] ?? "");
    start += 1;
  }
  let end = lines.length;
  while (end > start && (isBlank(lines[end - 1]) || DECISION_LABEL.test(lines[end - 1] ?? ""))) {
    if (!isBlank(lines[end - 1])) note(removed, "decision label", lines[end - 1] ?? "");
    end -= 1;
  }
  return lines.slice(start, end).join("\n");
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
  return text.replace(PROTOCOL_TOKENS, (m) => note(removed, "protocol token", m));
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
