import type Anthropic from "@anthropic-ai/sdk";
import type { Message } from "../core/message.ts";
import type { IncomingInput } from "../core/port.ts";
import { type PrefixCache, withPrefixCache } from "../model/cache-plan.ts";
import type { StablePrefix } from "../model/prompts.ts";
import { estimateTokens } from "../model/tokens.ts";
import type { MemoryItem, ThreadNote, Threads } from "../store/mind-schema.ts";
import { memoryLineTokens } from "./memory.ts";
import type { FlushMark } from "./threads.ts";
import { workingMessages } from "./threads.ts";

/**
 * Assembles what the model sees, fresh every turn, in a fixed order: the cached prefix
 * (tools, protocol, persona), the scratchpad, the awareness block, episodic context, the
 * current thread's working messages, and the new input. Every part has its own token
 * budget, so a year of history costs what a week does and the whole stays under the
 * configured ceiling. Pure: the same inputs give the same request, byte for byte.
 */

/** An image the person sent, kept in memory until it has been answered. */
export type PendingImage = NonNullable<IncomingInput["image"]>;

/** Everything the prompt is made of, already read from the stores. */
export interface ComposeInput {
  kind: "reply" | "heartbeat";
  model: string;
  maxTokens: number;
  /** PRESENCE_PROMPT_CEILING: the whole prompt stays under it. */
  ceiling: number;
  prefix: StablePrefix;
  scratchpad: string;
  awareness: string;
  threadNotes: readonly ThreadNote[];
  /** Memory items, best first (rankMemory order). */
  memory: readonly MemoryItem[];
  /** Recent log, oldest first, enough to fill the working window; pending messages may be in it. */
  log: readonly Message[];
  threads: Threads;
  flushedThrough?: FlushMark | undefined;
  /** Reply: the person's messages being answered, oldest first. */
  pending?: readonly Message[];
  /** Images of pending messages, by message id. */
  images?: ReadonlyMap<string, PendingImage>;
  /** Reply: how long the oldest pending message waited, when the awareness block cannot say it. */
  waitedMinutes?: number | undefined;
  /** Heartbeat: the text of the check-in moment turn (with the person's local time). */
  checkinText?: string;
  /** How the stable prefix is marked for the cache (cache-plan.ts); the five-minute breakpoint unless given. */
  prefixCache?: PrefixCache;
}

/** Token sizes of each part, for the trace and the benchmarks. */
export interface SectionSizes {
  prefix: number;
  scratchpad: number;
  awareness: number;
  episodic: number;
  working: number;
  input: number;
  total: number;
  ceiling: number;
  workingMessages: number;
  memoryItems: number;
  threadNotes: number;
  /** Parts cut to fit their budget. */
  truncated: string[];
}

/** The request to send, its section sizes, and what the working window is about to let go of. */
export interface ComposedPrompt {
  params: Anthropic.MessageCreateParamsNonStreaming;
  sections: SectionSizes;
  /** Messages about to leave the working window (for reflection's pre-eviction flush). */
  evicting: Message[];
  /** Ids of the messages shown as working messages. */
  workingIds: string[];
}

/** The ceiling is too small to hold even the fixed parts: the setting must change. */
export class PromptCeilingError extends Error {
  override readonly name = "PromptCeilingError";
}

/**
 * Upper budgets of the variable parts (tokens). They are kept modest so the cached prefix
 * stays at least half of a reply prompt; a small ceiling scales them all down together.
 */
export const SECTION_BUDGETS = {
  scratchpad: 1_500,
  awareness: 700,
  episodic: 400,
  working: 1_200,
  input: 2_000,
} as const;

/** Room kept free for the turns a call adds later (heartbeat write step, one notes round). */
export const FOLLOW_UP_HEADROOM = 400;

/** What an image costs against the budget: about a megapixel picture. */
export const IMAGE_TOKENS = 1_600;

/** A reply this late says so in the input when the awareness block cannot. */
const LATE_MINUTES = 2;

/** Room an image must leave for the words around it. */
const MIN_TEXT_ROOM = 100;

const EARLIER_NOT_SHOWN = "(earlier messages are not shown; see your scratchpad and notes)";

/** Builds the request and its section sizes. Throws PromptCeilingError when the ceiling cannot hold the fixed parts. */
export function composePrompt(input: ComposeInput): ComposedPrompt {
  const budgets = sectionBudgets(input.prefix.tokens, input.ceiling);
  const truncated: string[] = [];

  const scratchpad = fitText(input.scratchpad, budgets.scratchpad, "scratchpad", truncated);
  const awareness = fitText(input.awareness, budgets.awareness, "awareness", truncated);
  const episodic = episodicText(input.threadNotes, input.memory, budgets.episodic);
  if (episodic.truncated) truncated.push("episodic");

  const newInput =
    input.kind === "reply" ? replyInput(input, budgets.input, truncated) : heartbeatInput(input);
  const pendingIds = new Set((input.pending ?? []).map((m) => m.id));
  const history = input.log.filter((m) => !pendingIds.has(m.id));
  const window = workingMessages(
    history,
    { threads: input.threads, flushedThrough: input.flushedThrough },
    budgets.working,
  );

  const turns = toTurns(window.kept);
  turns.push({ role: "user", content: newInput.blocks });
  const messages = mergeSameRole(turns);
  if (messages[0]?.role === "assistant") messages.unshift({ role: "user", content: EARLIER_NOT_SHOWN });

  const parts: Anthropic.TextBlockParam[] = [...input.prefix.system];
  if (scratchpad.text) parts.push({ type: "text", text: `# Your scratchpad\n\n${scratchpad.text}` });
  if (awareness.text) parts.push({ type: "text", text: `# Awareness\n\n${awareness.text}` });
  if (episodic.text) parts.push({ type: "text", text: `# Episodic context\n\n${episodic.text}` });
  const system = withPrefixCache(parts, input.prefixCache ?? "5m");

  const workingTokens = messages
    .slice(0, -1)
    .reduce(
      (sum, m) => sum + estimateTokens(typeof m.content === "string" ? m.content : JSON.stringify(m.content)),
      0,
    );
  const sizes = {
    prefix: input.prefix.tokens,
    scratchpad: scratchpad.tokens,
    awareness: awareness.tokens,
    episodic: episodic.tokens,
    working: workingTokens,
    input: newInput.tokens,
  };
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  return {
    params: {
      model: input.model,
      max_tokens: input.maxTokens,
      system,
      tools: input.prefix.tools,
      messages,
    },
    sections: {
      ...sizes,
      total,
      ceiling: input.ceiling,
      workingMessages: window.kept.length,
      memoryItems: episodic.memoryItems,
      threadNotes: episodic.threadNotes,
      truncated,
    },
    evicting: window.evicting,
    workingIds: window.kept.map((m) => m.id),
  };
}

/** The budgets of the variable parts for a prefix and a ceiling; scaled down together when the ceiling is tight. */
export function sectionBudgets(
  prefixTokens: number,
  ceiling: number,
): Record<keyof typeof SECTION_BUDGETS, number> {
  const room = ceiling - prefixTokens - FOLLOW_UP_HEADROOM;
  const wanted = Object.values(SECTION_BUDGETS).reduce((a, b) => a + b, 0);
  if (room < wanted * 0.2) {
    throw new PromptCeilingError(
      `PRESENCE_PROMPT_CEILING=${ceiling} leaves only ${Math.max(0, room)} tokens beside the ${prefixTokens}-token protocol and persona; ` +
        `raise it to at least ${prefixTokens + FOLLOW_UP_HEADROOM + Math.ceil(wanted * 0.2)} (default 12000)`,
    );
  }
  const scale = Math.min(1, room / wanted);
  const scaled = (n: number) => Math.floor(n * scale);
  return {
    scratchpad: scaled(SECTION_BUDGETS.scratchpad),
    awareness: scaled(SECTION_BUDGETS.awareness),
    episodic: scaled(SECTION_BUDGETS.episodic),
    working: scaled(SECTION_BUDGETS.working),
    input: scaled(SECTION_BUDGETS.input),
  };
}

interface Fitted {
  text: string;
  tokens: number;
}

/** The text whole when it fits, else cut at a line (or word) boundary with a visible marker. */
function fitText(text: string, budget: number, name: string, truncated: string[]): Fitted {
  const trimmed = text.trim();
  const tokens = estimateTokens(trimmed);
  if (tokens <= budget) return { text: trimmed, tokens };
  truncated.push(name);
  const marker = "\n[… cut here to fit the prompt]";
  const room = budget - estimateTokens(marker);
  let lo = 0;
  let hi = trimmed.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimateTokens(trimmed.slice(0, mid)) <= room) lo = mid;
    else hi = mid - 1;
  }
  let cut = trimmed.slice(0, lo);
  const boundary = Math.max(cut.lastIndexOf("\n"), cut.lastIndexOf(" "));
  if (boundary > lo * 0.8) cut = cut.slice(0, boundary);
  const out = `${cut.trimEnd()}${marker}`;
  return { text: out, tokens: estimateTokens(out) };
}

/** The current thread's last notes, then the best memory items that still fit. */
function episodicText(
  notes: readonly ThreadNote[],
  memory: readonly MemoryItem[],
  budget: number,
): Fitted & { memoryItems: number; threadNotes: number; truncated: boolean } {
  const lines: string[] = [];
  let used = 0;
  let threadNotes = 0;
  let memoryItems = 0;
  let truncated = false;
  const noteLines = notes.map((n) => `- ${n.ts.slice(0, 10)}: ${n.text}`);
  if (noteLines.length > 0) {
    lines.push("Notes on this thread:");
    used += 5;
    for (const line of noteLines) {
      const cost = estimateTokens(line) + 1;
      if (used + cost > budget) {
        truncated = true;
        continue;
      }
      lines.push(line);
      used += cost;
      threadNotes += 1;
    }
  }
  const kinds: Record<MemoryItem["kind"], string> = {
    pattern: "pattern",
    open_loop: "open loop",
    milestone: "milestone",
  };
  const memoryLines: string[] = [];
  for (const item of memory) {
    const cost = memoryLineTokens(item) + 4;
    if (used + cost > budget) {
      truncated = true;
      continue;
    }
    memoryLines.push(`- (${kinds[item.kind]}, since ${item.learnedAt.slice(0, 10)}) ${item.text}`);
    used += cost;
    memoryItems += 1;
  }
  if (memoryLines.length > 0) lines.push("From memory:", ...memoryLines);
  const text = lines.join("\n");
  return { text, tokens: estimateTokens(text), memoryItems, threadNotes, truncated };
}

/** The pending messages as one user turn: text blocks, images as image blocks, within budget. */
function replyInput(
  input: ComposeInput,
  budget: number,
  truncated: string[],
): { blocks: Anthropic.ContentBlockParam[]; tokens: number } {
  const pending = input.pending ?? [];
  const blocks: Anthropic.ContentBlockParam[] = [];
  let remaining = budget;
  let tokens = 0;
  for (const message of [...pending].reverse()) {
    const image = input.images?.get(message.id);
    const withImage = image !== undefined && remaining >= IMAGE_TOKENS + MIN_TEXT_ROOM;
    if (withImage) remaining -= IMAGE_TOKENS;
    const fitted = fitText(
      describeMessage(message, message.media?.kind === "photo" && !withImage),
      Math.max(remaining, 20),
      "input",
      truncated,
    );
    remaining -= fitted.tokens;
    tokens += fitted.tokens + (withImage ? IMAGE_TOKENS : 0);
    const textBlock: Anthropic.TextBlockParam = { type: "text", text: fitted.text };
    if (withImage) {
      blocks.unshift(
        { type: "image", source: { type: "base64", media_type: image.mediaType, data: image.base64 } },
        textBlock,
      );
    } else blocks.unshift(textBlock);
  }
  if (blocks.length === 0) blocks.push({ type: "text", text: "(no new message)" });
  if (input.waitedMinutes !== undefined && input.waitedMinutes >= LATE_MINUTES) {
    const note = `[Their oldest message here waited ${input.waitedMinutes} min for your answer.]`;
    blocks.push({ type: "text", text: note });
    tokens += estimateTokens(note);
  }
  return { blocks, tokens };
}

function heartbeatInput(input: ComposeInput): { blocks: Anthropic.ContentBlockParam[]; tokens: number } {
  const text = input.checkinText ?? "[Check-in moment]";
  return { blocks: [{ type: "text", text }], tokens: estimateTokens(text) };
}

/** A log message as the model reads it: its text, media described, a reaction as one, never an empty block. */
export function describeMessage(message: Message, imageNotShown = false): string {
  if (message.reaction !== undefined) return `[you reacted ${message.reaction}]`;
  const media = message.media;
  const caption = media?.caption && media.caption !== message.text ? `: ${media.caption}` : "";
  const label = media ? `[${media.kind}${caption}${imageNotShown ? " (image not shown)" : ""}]` : "";
  const text = [label, message.text.trim()].filter((s) => s !== "").join(" ");
  return text === "" ? "(empty message)" : text;
}

type Turn = { role: "user" | "assistant"; content: string | Anthropic.ContentBlockParam[] };

function toTurns(messages: readonly Message[]): Turn[] {
  return messages.map((m) => ({ role: m.role, content: describeMessage(m) }));
}

/** Consecutive turns of one role become one turn, as the API requires alternation. */
function mergeSameRole(turns: readonly Turn[]): Anthropic.MessageParam[] {
  const merged: Anthropic.MessageParam[] = [];
  for (const turn of turns) {
    const previous = merged.at(-1);
    if (previous && previous.role === turn.role) {
      previous.content = [...asBlocks(previous.content), ...asBlocks(turn.content)];
    } else {
      merged.push({ role: turn.role, content: turn.content });
    }
  }
  return merged;
}

function asBlocks(content: string | Anthropic.ContentBlockParam[]): Anthropic.ContentBlockParam[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}
