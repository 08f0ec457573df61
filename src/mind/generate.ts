import type Anthropic from "@anthropic-ai/sdk";
import type { TopicVerdict } from "../conversation/topic-guard.ts";
import type { CallPurpose, UsageRecord } from "../core/usage.ts";
import { type PrefixCache, withPrefixCache } from "../model/cache-plan.ts";
import { guardOutgoing } from "../model/leak-guard.ts";
import {
  type ModelAnswer,
  type ModelClient,
  ModelRequestError,
  ModelUnavailableError,
} from "../model/llm.ts";
import {
  CHECKIN_TOOL_IN_REPLY,
  CHECKIN_TOOL_NAMES,
  type CheckinDecision,
  checkinDecisionSchema,
  checkinMessageSchema,
  DECIDE_CHECKIN_TOOL,
  WRITE_MESSAGE_TOOL,
  writeCheckinText,
} from "../model/prompts.ts";
import { parseReaction, REACT_TOOL, REACTION_EMOJI, type ReactionEmoji } from "../model/reaction.ts";
import { estimateTokens } from "../model/tokens.ts";
import type { NotesStore } from "../store/notes.ts";
import { NOTES_TOOL_NAMES, runNotesTool } from "./notes-tools.ts";

/**
 * Turning a composed prompt into words that may reach the person. A reply is one call,
 * plus a few bounded rounds when the model uses its notes; instead of words it may choose a
 * reaction (one emoji on the person's message). A check-in is staged: a
 * forced, structured decision first (send or not, why, about what), a topic guard in code,
 * and only then a second call whose single output field is the message. Whatever comes
 * out passes the leak guard; what the model returned and what was removed are kept for
 * the trace.
 */

/** Most notes-tool rounds a reply may take before it must answer in text. */
export const MAX_TOOL_ROUNDS = 4;
/** Largest tool result shown to the model (tokens); a long note is cut with a marker. */
const TOOL_RESULT_MAX_TOKENS = 1_500;
/** Output allowance of each call. */
export const MAX_TOKENS = { reply: 1_500, decide: 300, write: 600 } as const;

/** What generation needs besides the prompt. */
export interface GenerateDeps {
  llm: ModelClient;
  notes: NotesStore;
}

/** A tool call the model made during a reply, as the trace records it. */
interface ToolCallRecord {
  name: string;
  input: unknown;
  isError: boolean;
  /** Tokens of the result returned to the model. */
  resultTokens: number;
}

/** The outcome of a reply generation. */
export interface ReplyGeneration {
  /** The text to send, after the leak guard; null when nothing is left to send. */
  text: string | null;
  /** The emoji to react with instead, when the model chose to react and wrote nothing to send (text is then null). */
  reaction?: ReactionEmoji;
  /** What the model wrote, before the guard. */
  raw: string;
  removed: string[];
  toolCalls: ToolCallRecord[];
  /** Single-phase reflection: the reflect tool's input, when the model called it. */
  reflection: unknown;
  usage: UsageRecord[];
  /** Set when the first answer was all leakage and the model was asked once more: what it first wrote. */
  nudged?: { raw: string };
}

/** Options of a reply generation. */
export interface ReplyOptions {
  /** The prompt's estimated size, so tool results never push it past the ceiling. */
  promptTokens: number;
  ceiling: number;
  /** The reflect tool's name in single-phase mode. */
  reflectToolName?: string;
  /**
   * How many of the person's messages the answer covers. A reaction answers one message: with
   * more waiting, a react call is refused and the model told to write.
   */
  waiting: number;
}

/**
 * Answers the person: one call plus bounded notes rounds, every tool_use paired with its
 * tool_result. An answer the leak guard empties gets one more call in the same turn, told
 * why (silence is the worse failure for a reply); what that one returns is final.
 *
 * A react call with an emoji Telegram accepts ends the answer like text does (it needs no
 * round of its own); one with another emoji is answered with the allowed list. When the model
 * both writes text and reacts, the text wins: words say more than an emoji, and the person
 * must never get both for one message. The reaction is used only when nothing sendable was
 * written (no text, or text the leak guard emptied), which also spares that nudge. A reaction
 * sits on one message, so it answers only when one message waits: with several (an earlier
 * question among them) a react call without words is answered with REACTION_ANSWERS_ONE and
 * the next call may not use tools, so the model writes.
 */
export async function generateReply(
  params: Anthropic.MessageCreateParamsNonStreaming,
  deps: GenerateDeps,
  options: ReplyOptions,
): Promise<ReplyGeneration> {
  const messages = [...params.messages];
  const toolCalls: ToolCallRecord[] = [];
  const usage: UsageRecord[] = [];
  let reflection: unknown;
  let reaction: ReactionEmoji | undefined;
  let room = options.ceiling - options.promptTokens;
  let raw = "";
  const reactionAnswers = options.waiting === 1;
  let mustWrite = false;

  for (let round = 0; ; round++) {
    const lastRound = round >= MAX_TOOL_ROUNDS || mustWrite;
    const response = await call(
      deps,
      usage,
      { ...params, messages, tool_choice: lastRound ? { type: "none" } : { type: "auto" } },
      "reply",
    );
    raw = textOf(response);
    const uses = toolUses(response);
    const reflectUse = uses.find((u) => u.name === options.reflectToolName);
    if (reflectUse) reflection = reflectUse.input;
    const reacted = uses
      .map((u) => (u.name === REACT_TOOL.name && reactionAnswers ? parseReaction(u.input) : null))
      .findLast(Boolean);
    if (reacted) reaction = reacted;
    // A react call ends the answer when its reaction answers; one refused (several messages wait)
    // ends it only when words were written too: they are the answer.
    const ends = (u: Anthropic.ToolUseBlock) =>
      u.name === options.reflectToolName ||
      (u.name === REACT_TOOL.name && (reactionAnswers ? parseReaction(u.input) !== null : raw.trim() !== ""));
    const needsRound = uses.some((u) => !ends(u)) || (raw.trim() === "" && reflectUse && !reaction);
    if (!needsRound || lastRound) break;

    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const use of uses) {
      const refused = use.name === REACT_TOOL.name && !reactionAnswers;
      if (refused) mustWrite = true;
      const result = refused
        ? { content: REACTION_ANSWERS_ONE, isError: true, tokens: estimateTokens(REACTION_ANSWERS_ONE) }
        : await runTool(use, deps.notes, options.reflectToolName, Math.min(TOOL_RESULT_MAX_TOKENS, room));
      room -= result.tokens;
      toolCalls.push({
        name: use.name,
        input: use.input,
        isError: result.isError,
        resultTokens: result.tokens,
      });
      results.push({
        type: "tool_result",
        tool_use_id: use.id,
        content: result.content,
        is_error: result.isError,
      });
    }
    room -= estimateTokens(JSON.stringify(response.content));
    messages.push(
      { role: "assistant", content: assistantContent(response) },
      { role: "user", content: results },
    );
  }

  const guarded = guardOutgoing(raw);
  if (guarded.text !== null) {
    return { text: guarded.text, raw, removed: guarded.removed, toolCalls, reflection, usage };
  }
  if (reaction) return { text: null, reaction, raw, removed: guarded.removed, toolCalls, reflection, usage };
  const nudged = await call(
    deps,
    usage,
    { ...params, messages: withNudge(messages, raw), tool_choice: { type: "none" } },
    "reply",
  );
  const retryRaw = textOf(nudged);
  const retried = guardOutgoing(retryRaw);
  return {
    text: retried.text,
    raw: retryRaw,
    removed: [...guarded.removed, ...retried.removed],
    toolCalls,
    reflection,
    usage,
    nudged: { raw },
  };
}

/** What a react call is told when several of the person's messages wait: one emoji cannot answer them all. */
export const REACTION_ANSWERS_ONE =
  "Not sent: a reaction answers one message, and several of theirs are waiting for you. Write your reply to them.";

/** What a reply whose answer the leak guard emptied is told before its one more try. */
export const EMPTY_REPLY_NUDGE =
  "That answer held only reasoning or protocol, and the person sees none of it. Write your reply to them now: only the words they should read.";

/** The conversation with the emptied answer and the nudge after it, roles still alternating. */
function withNudge(messages: readonly Anthropic.MessageParam[], raw: string): Anthropic.MessageParam[] {
  if (raw.trim() !== "") {
    return [...messages, { role: "assistant", content: raw }, { role: "user", content: EMPTY_REPLY_NUDGE }];
  }
  const last = messages.at(-1);
  if (last?.role !== "user") return [...messages, { role: "user", content: EMPTY_REPLY_NUDGE }];
  const content: Anthropic.ContentBlockParam[] =
    typeof last.content === "string" ? [{ type: "text", text: last.content }] : [...last.content];
  return [
    ...messages.slice(0, -1),
    { role: "user", content: [...content, { type: "text", text: EMPTY_REPLY_NUDGE }] },
  ];
}

/** How a check-in generation ended. */
export type CheckinGeneration =
  | { stage: "declined"; decision: CheckinDecision; usage: UsageRecord[] }
  | { stage: "invalid-decision"; problem: string; usage: UsageRecord[] }
  | {
      stage: "held";
      decision: CheckinDecision;
      verdict: Extract<TopicVerdict, { allow: false }>;
      usage: UsageRecord[];
    }
  | { stage: "empty"; decision: CheckinDecision; raw: string; removed: string[]; usage: UsageRecord[] }
  | {
      stage: "write";
      decision: CheckinDecision;
      text: string;
      raw: string;
      removed: string[];
      usage: UsageRecord[];
    };

/** Which model decides a check-in (PRESENCE_DECIDE_MODEL) and how that call marks its prefix. */
export interface DecideStep {
  model: string;
  prefixCache: PrefixCache;
}

/**
 * Decides, guards the topic, then writes. `guard` is the topic guard bound to the log and
 * the moment; a held check-in costs exactly the one decision call. The decision may run on
 * a cheaper model than the message (`decide`); the message is written by `params.model`.
 */
export async function generateCheckin(
  params: Anthropic.MessageCreateParamsNonStreaming,
  deps: GenerateDeps,
  guard: (topic: string) => TopicVerdict,
  decide: DecideStep,
): Promise<CheckinGeneration> {
  const usage: UsageRecord[] = [];
  const decideParams: Anthropic.MessageCreateParamsNonStreaming = {
    ...params,
    model: decide.model,
    system: withPrefixCache(systemBlocks(params.system), decide.prefixCache),
    max_tokens: MAX_TOKENS.decide,
    tool_choice: { type: "tool", name: DECIDE_CHECKIN_TOOL.name, disable_parallel_tool_use: true },
  };
  const decided = await call(deps, usage, decideParams, "heartbeat-decide");
  const decideUse = toolUses(decided).find((u) => u.name === DECIDE_CHECKIN_TOOL.name);
  const parsed = checkinDecisionSchema.safeParse(decideUse?.input);
  if (!decideUse || !parsed.success) {
    const problem = decideUse
      ? `decide_checkin input invalid: ${parsed.error?.issues[0]?.message}`
      : "no decide_checkin call";
    return { stage: "invalid-decision", problem, usage };
  }
  const decision = parsed.data;
  if (!decision.send) return { stage: "declined", decision, usage };

  const verdict = guard(decision.topic);
  if (!verdict.allow) return { stage: "held", decision, verdict, usage };

  const writeParams: Anthropic.MessageCreateParamsNonStreaming = {
    ...params,
    max_tokens: MAX_TOKENS.write,
    tool_choice: { type: "tool", name: WRITE_MESSAGE_TOOL.name, disable_parallel_tool_use: true },
    messages: [
      ...params.messages,
      { role: "assistant", content: [toolUseParam(decideUse)] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: decideUse.id, content: writeCheckinText(decision.topic) },
        ],
      },
    ],
  };
  const written = await call(deps, usage, writeParams, "heartbeat-write");
  const writeUse = toolUses(written).find((u) => u.name === WRITE_MESSAGE_TOOL.name);
  const message = checkinMessageSchema.safeParse(writeUse?.input);
  const raw = message.success ? message.data.message : textOf(written);
  const guarded = guardOutgoing(raw, "checkin");
  if (guarded.text === null) return { stage: "empty", decision, raw, removed: guarded.removed, usage };
  return { stage: "write", decision, text: guarded.text, raw, removed: guarded.removed, usage };
}

/**
 * One call of a generation: its usage joins `usage`, and a model error leaves carrying what the
 * earlier calls spent, so the caller's ledger counts them although the generation failed.
 */
async function call(
  deps: GenerateDeps,
  usage: UsageRecord[],
  params: Anthropic.MessageCreateParamsNonStreaming,
  purpose: CallPurpose,
): Promise<Anthropic.Message> {
  let answer: ModelAnswer;
  try {
    answer = await deps.llm.create(params, purpose);
  } catch (error) {
    if (error instanceof ModelUnavailableError || error instanceof ModelRequestError)
      error.spentBefore = [...usage];
    throw error;
  }
  usage.push(answer.usage);
  return answer.message;
}

interface ToolRun {
  content: string;
  isError: boolean;
  tokens: number;
}

async function runTool(
  use: Anthropic.ToolUseBlock,
  notes: NotesStore,
  reflectToolName: string | undefined,
  maxTokens: number,
): Promise<ToolRun> {
  let content: string;
  let isError = false;
  if (NOTES_TOOL_NAMES.has(use.name)) {
    const result = await runNotesTool(notes, use.name, use.input);
    content = result.content;
    isError = result.isError;
  } else if (use.name === reflectToolName) {
    content = "Recorded. Now reply to the person.";
  } else if (use.name === REACT_TOOL.name) {
    const emoji = parseReaction(use.input);
    content = emoji
      ? `Noted: you react ${emoji} to their message, unless you write a reply now (then only the reply is sent).`
      : `That is not a reaction Telegram allows. Use one of: ${REACTION_EMOJI.join(" ")}; or write a reply.`;
    isError = emoji === null;
  } else if (CHECKIN_TOOL_NAMES.has(use.name)) {
    content = CHECKIN_TOOL_IN_REPLY;
    isError = true;
  } else {
    content = `There is no tool named "${use.name}".`;
    isError = true;
  }
  const capped = capResult(content, maxTokens);
  return { content: capped, isError, tokens: estimateTokens(capped) };
}

/** Cuts a tool result to the room left under the ceiling, saying how much was left out. */
function capResult(content: string, maxTokens: number): string {
  if (estimateTokens(content) <= maxTokens) return content === "" ? "(empty)" : content;
  if (maxTokens < 40) return `(too long to show now: ${content.length} characters)`;
  let end = Math.floor(maxTokens * 3);
  while (end > 0 && estimateTokens(content.slice(0, end)) > maxTokens - 25) end = Math.floor(end * 0.9);
  return `${content.slice(0, end)}\n[… ${content.length - end} more characters not shown]`;
}

/** A request's system prompt as blocks (composed prompts always use blocks). */
function systemBlocks(
  system: Anthropic.MessageCreateParamsNonStreaming["system"],
): Anthropic.TextBlockParam[] {
  if (system === undefined) return [];
  return typeof system === "string" ? [{ type: "text", text: system }] : system;
}

function textOf(message: Anthropic.Message): string {
  return message.content
    .filter((b): b is Anthropic.TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("\n\n");
}

function toolUses(message: Anthropic.Message): Anthropic.ToolUseBlock[] {
  return message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
}

function toolUseParam(block: Anthropic.ToolUseBlock): Anthropic.ToolUseBlockParam {
  return { type: "tool_use", id: block.id, name: block.name, input: block.input };
}

/** The model's turn as it goes back into the conversation: text (non-empty) and tool calls. */
function assistantContent(message: Anthropic.Message): Anthropic.ContentBlockParam[] {
  const blocks: Anthropic.ContentBlockParam[] = [];
  for (const block of message.content) {
    if (block.type === "text" && block.text.trim() !== "") blocks.push({ type: "text", text: block.text });
    else if (block.type === "tool_use") blocks.push(toolUseParam(block));
  }
  return blocks;
}
