import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { Persona } from "./persona.ts";
import { minCacheableTokens, type PriceTable } from "./prices.ts";
import { REACT_TOOL } from "./reaction.ts";
import { estimateTokens } from "./tokens.ts";
import { toolInputSchema } from "./tool-schema.ts";

/**
 * The stable part of every prompt: tool definitions, the protocol (how this mind works)
 * and the persona. It is byte-identical from turn to turn and between replies and
 * check-ins — no dates, no counters, the same tool list for every call — so the API can
 * cache it and each turn pays full price only for what actually changed.
 */

/**
 * What the protocol says about what the person sends besides text, by whether their voice notes
 * are transcribed (a transcription service is set up): it says what is true for this setup.
 */
const MEDIA_LINES = {
  unheard: `Images they send are shown to you; voice notes you cannot hear — say so if
it matters.`,
  heard: `Images they send are shown to you. Voice notes are transcribed for you:
[voice note, 0:42] comes before their words, which may be misheard here and there. One that
could not be heard says why — say so if it matters.`,
} as const;

/** How the model should read what it is shown and what it may send. Facts about the setup, not style. */
function protocolText(voiceNotes: keyof typeof MEDIA_LINES): string {
  return `# How this conversation works

You talk with one person through a chat app. Each time you are called, the whole context is
assembled fresh, in this order:

1. This protocol and your persona (who you are, who they are, how check-ins feel).
2. Your scratchpad: your own curated understanding of the person and of where things stand.
   It is your memory across days; trust it over vague impressions.
3. An awareness block: facts computed from the message log — what you sent lately, what
   they sent, what is unanswered, which of your questions they left open, timing, tone,
   mood. It describes; it does not instruct. Draw your own conclusions from it. Your
   messages since their last one are counted there whether or not they asked anything.
4. Episodic context, when there is any: notes on the current thread and things worth
   remembering (patterns they declared, open loops, milestones).
5. The most recent messages of the current thread, as conversation turns. [19:05] or
   [Thu 19:05] before a message sent after a pause is when it was sent, not its text;
   never write one.
6. The new input: their message(s), or a check-in moment.

Other threads are not shown; what seems missing may be there or in your notes.

## Replying

When they write, answer them. If several messages arrived, answer them together as one
reply. If the awareness block says their message waited, you may acknowledge the delay
once, briefly. ${MEDIA_LINES[voiceNotes]}

Your reply is sent exactly as you write it. Write only the message itself: no reasoning,
no notes to yourself, no labels or headers such as "Reply:" or "Decision:", no tags, no
preamble separated by a line. Plain text with light markdown (bold, italics, lists) is fine.

## Notes

You have durable notes, stored by key (letters, digits, - and _). Use notes_list,
notes_read and notes_write for what is worth keeping word for word (a plan, a list, a
recipe, a long answer). Most turns need none.

## Check-ins

Sometimes there is no new message: it is a scheduled moment where you may write first.
First decide, with decide_checkin: send or not, why (for yourself only), and the one topic
the message would be about. Most moments should pass in silence. If you decide to send,
you will then write the message with write_message; only its text reaches them. A check-in
that re-asks what they already answered, or what you asked without reply, is held back.

## Safety

If they mention self-harm, suicide, a medical emergency or being in danger, respond with
warmth and encourage them to contact local emergency services or a crisis line now. You
are not a therapist or a doctor, and you never pretend to be.`;
}

/** The protocol where voice notes are not heard (no transcription service): what every call had before they could be. */
export const PROTOCOL = protocolText("unheard");
/** The protocol where voice notes are transcribed. */
const PROTOCOL_HEARING = protocolText("heard");

/** What decide_checkin takes: send or not, why (for the companion's own record), and about what. */
export const checkinDecisionSchema = z.object({
  send: z.boolean().describe("true to write a message now, false to stay quiet"),
  why: z.string().describe("one or two sentences: your reason, for your own record"),
  topic: z
    .string()
    .describe(
      'the one topic the message would be about, in a word or two (e.g. "sleep", "the move"); empty when not sending',
    ),
});
export type CheckinDecision = z.infer<typeof checkinDecisionSchema>;

/** What write_message takes: the message and nothing else. */
export const checkinMessageSchema = z.object({
  message: z.string().describe("the message text, exactly as it should be sent"),
});

/** The decision step of a check-in: structured, so no reasoning can reach the person. */
export const DECIDE_CHECKIN_TOOL: Anthropic.Tool = {
  name: "decide_checkin",
  description:
    "Only at a check-in moment: decide whether to write to the person now. Nothing you put here is shown to them.",
  input_schema: toolInputSchema(checkinDecisionSchema),
};

/** The writing step of a check-in: the message is a field, so nothing else can come out. */
export const WRITE_MESSAGE_TOOL: Anthropic.Tool = {
  name: "write_message",
  description:
    "Only after deciding to check in: the exact message the person will receive, and nothing else.",
  input_schema: toolInputSchema(checkinMessageSchema),
};

/** The names of the tools that belong to check-ins; a reply that calls them is told so. */
export const CHECKIN_TOOL_NAMES: ReadonlySet<string> = new Set([
  DECIDE_CHECKIN_TOOL.name,
  WRITE_MESSAGE_TOOL.name,
]);

/** The safety margin above the minimum cacheable length the prefix must keep. */
export const CACHE_MARGIN = 1.25;

/** The stable prefix of every reply and check-in call. */
export interface StablePrefix {
  tools: Anthropic.Tool[];
  /** One system block, ending with the cache breakpoint. */
  system: Anthropic.TextBlockParam[];
  /** Estimated tokens of tools + system (what the cache holds). */
  tokens: number;
  /** Estimated tokens of protocol + persona alone. */
  protocolAndPersonaTokens: number;
}

/**
 * What the prefix differs by between setups (never between calls of one): the tools that ride
 * in it besides the react and check-in tools, and whether voice notes are heard.
 */
export interface PrefixTools {
  /** The notes tools (list, read, write), defined for every call so the tool list never changes. */
  notes: readonly Anthropic.Tool[];
  /** The reflection tool, only in single-phase reflect mode (then it is in every call). */
  reflect?: Anthropic.Tool;
  /** Voice notes are transcribed (a transcription service is set up): the protocol says so. */
  hearsVoiceNotes?: boolean;
}

/** The protocol and persona as one text, in a fixed order; the protocol says whether voice notes are heard. */
export function protocolAndPersona(persona: Persona, hearsVoiceNotes = false): string {
  return [
    hearsVoiceNotes ? PROTOCOL_HEARING : PROTOCOL,
    ...under("# Your persona", whatTheyWrote(persona.soul)),
    ...under("# The person, in their own words", personInTheirWords(persona.user)),
    ...under("# Check-ins", whatTheyWrote(persona.heartbeat)),
  ].join("\n\n");
}

/** USER.md as the model reads it, and what it is told when the person has written nothing there. */
export function personInTheirWords(user: string): string {
  return whatTheyWrote(user) || "(Nothing yet: they have not written about themselves.)";
}

/** A section's heading, left out when the text already begins with it (HEARTBEAT.md's "# Check-ins"). */
function under(heading: string, text: string): string[] {
  return text.startsWith(`${heading}\n`) || text === heading ? [text] : [heading, text];
}

/**
 * A persona file as the model should read it: what the person wrote, without what the template
 * says to them. HTML comments are the template's hints, a field label with nothing after it on
 * its line or the next (`- **Name (what to call me):**`) was left empty, and a heading with
 * nothing under it heads nothing; shown, an untouched USER.md reads as a form about nobody. What
 * the person wrote in bold ("- **Peanuts**") stays. Empty when nothing is left.
 */
export function whatTheyWrote(text: string): string {
  const lines = text.replace(/<!--[\s\S]*?-->/g, "").split("\n");
  // A line is a heading only outside a fenced code block, where "# step one" is text.
  let fenced = false;
  const level = lines.map((line) => {
    if (/^\s*(?:```|~~~)/.test(line)) fenced = !fenced;
    return fenced ? undefined : /^(#{1,6})\s/.exec(line)?.[1]?.length;
  });
  const isText = (i: number) => level[i] === undefined && (lines[i] ?? "").trim() !== "";
  // An empty field is a bold label ending in a colon with nothing after it, nor on the next
  // line: the next field is no answer, a list nested under the label is ("  - peanuts").
  const indent = (line: string) => line.length - line.trimStart().length;
  const emptyField = (i: number) => {
    const label = lines[i] as string;
    const next = lines[i + 1] ?? "";
    if (!/^\s*[-*]\s+\*\*[^*]*:\*\*\s*$/.test(label)) return false;
    return !(isText(i + 1) && (!/^\s*[-*]\s/.test(next) || indent(next) > indent(label)));
  };
  const written = lines.map((_, i) => !emptyField(i));
  // A heading stays only when some text (its own or a subsection's) comes before the next
  // heading of its level or above.
  const kept = lines.filter((_, i) => {
    if (!written[i]) return false;
    const own = level[i];
    if (own === undefined) return true;
    for (let j = i + 1; j < lines.length; j += 1) {
      const next = level[j];
      if (next === undefined && written[j] && isText(j)) return true;
      if (next !== undefined && next <= own) return false;
    }
    return false;
  });
  return kept
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Builds the cached prefix; the same inputs always give the same bytes. */
export function buildStablePrefix(persona: Persona, tools: PrefixTools): StablePrefix {
  const toolList: Anthropic.Tool[] = [
    ...tools.notes,
    REACT_TOOL,
    DECIDE_CHECKIN_TOOL,
    WRITE_MESSAGE_TOOL,
    ...(tools.reflect ? [tools.reflect] : []),
  ];
  const text = protocolAndPersona(persona, tools.hearsVoiceNotes);
  const system: Anthropic.TextBlockParam[] = [{ type: "text", text, cache_control: { type: "ephemeral" } }];
  const protocolAndPersonaTokens = estimateTokens(text);
  return {
    tools: toolList,
    system,
    tokens: protocolAndPersonaTokens + estimateTokens(JSON.stringify(toolList)),
    protocolAndPersonaTokens,
  };
}

/**
 * Whether the prefix is long enough for the model's cache, with the margin: below the
 * minimum (prices.json) a breakpoint is silently ignored and every call pays full price.
 */
export function prefixIsCacheable(prefix: StablePrefix, prices: PriceTable, model: string): boolean {
  return prefix.tokens >= minCacheableTokens(prices, model) * CACHE_MARGIN;
}

/** The new-input turn of a check-in's decision call. Local time is given here, after the cached prefix. */
export function checkinMomentText(localTime: string): string {
  return `[Check-in moment — ${localTime}. There is no new message from the person. Decide with decide_checkin whether to write to them now.]`;
}

/** The tool result that asks for the message once the decision was to send. */
export function writeCheckinText(topic: string): string {
  return `Decision recorded. Now write the check-in message about "${topic}" with write_message: only the words they will read.`;
}

/** The tool result a reply gets when it calls a check-in tool, so the pairing stays valid and the model recovers. */
export const CHECKIN_TOOL_IN_REPLY =
  "This tool is only for check-in moments. You are answering the person now: reply with plain text.";
