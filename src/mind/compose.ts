import type Anthropic from "@anthropic-ai/sdk";
import { type Message, messageTime } from "../core/message.ts";
import type { IncomingInput } from "../core/port.ts";
import { messageAsRead } from "../core/text.ts";
import { localDayNumber } from "../core/zones.ts";
import { type PrefixCache, withPrefixCache } from "../model/cache-plan.ts";
import type { StablePrefix } from "../model/prompts.ts";
import { sentTimeStamp } from "../model/sent-time.ts";
import { estimateTokens } from "../model/tokens.ts";
import { type MemoryItem, memoryLineTokens } from "./memory.ts";
import { type FlushMark, type ThreadNote, type Threads, workingMessages } from "./threads.ts";

/**
 * Assembles what the model sees, fresh every turn, in a fixed order: the cached prefix
 * (tools, protocol, persona), the scratchpad, the awareness block, episodic context, the
 * current thread's working messages, and the new input. Every part has its own token
 * budget, so a year of history costs what a week does and the whole stays under the
 * configured ceiling. Pure: the same inputs give the same request, byte for byte.
 */

/** An image the person sent, kept in memory until it has been answered. */
export type PendingImage = NonNullable<IncomingInput["image"]>;

/**
 * A document the person sent (media.stored), read from files/ for this turn: a PDF as base64 with
 * its page count when it can be read (core/pdf.ts), text as text, or `missing` when the file is
 * gone (/forget or /wipe deleted it), which the model is told rather than left to guess.
 */
export type ShownDocument =
  | { kind: "pdf"; base64: string; pages: number | null }
  | { kind: "text"; text: string }
  | { kind: "missing" };

/**
 * How long after it arrived a document is shown in full, while its message is among those the
 * prompt shows: long enough to talk it through, and no longer, because nothing after the
 * system prompt is cached, so every turn that shows a document pays for all of it again.
 * Afterwards the model sees its name and that it read it then; what mattered is in the
 * replies and in what reflection kept.
 */
export const DOCUMENT_SHOWN_MS = 30 * 60_000;

/**
 * What the documents shown in one turn may cost together (tokens), however many came at once:
 * as much as one PDF at the channel's page limit (50 pages at PDF_PAGE_TOKENS). They come on top
 * of PRESENCE_PROMPT_CEILING, so without a total two large PDFs would overflow the model's
 * context and the API would refuse the turn. The newest come first; the newest is always shown
 * (it passed the per-file limits); a waiting document that does not fit is not read, and the
 * model is told so (documentsThatFit). The README states this bound beside the per-file limits.
 */
export const DOCUMENT_TURN_TOKENS = 150_000;

/** A PDF page as the API reads it: its text and an image of it, 1,500–3,000 tokens; counted high. */
export const PDF_PAGE_TOKENS = 3_000;

/** A PDF whose pages cannot be counted (compressed objects) is counted a page per this many bytes. */
const UNCOUNTED_PDF_PAGE_BYTES = 50 * 1024;

/** Everything the prompt is made of, already read from the stores. */
export interface ComposeInput {
  kind: "reply" | "heartbeat";
  /** The moment of the turn: a shown message's time reads "today" or a day from it. */
  now: Date;
  /** The person's zone, in which shown messages' times are local. */
  zone: string;
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
  /** Whether `log` is the whole history (nothing archived before it), so its first message began the conversation. */
  logIsWhole?: boolean;
  threads: Threads;
  flushedThrough?: FlushMark | undefined;
  /** Reply: the person's messages being answered, oldest first. */
  pending?: readonly Message[];
  /** Images of pending messages, by message id. */
  images?: ReadonlyMap<string, PendingImage>;
  /**
   * Documents to show in full, by message id: those of pending messages and of shown messages
   * younger than DOCUMENT_SHOWN_MS. They come on top of the ceiling, which bounds the parts
   * around them; the person chose to send them, and the API's usage counts what they cost.
   */
  documents?: ReadonlyMap<string, ShownDocument>;
  /** Reply: how long the oldest pending message waited, when the awareness block cannot say it. */
  waitedMinutes?: number | undefined;
  /** Heartbeat: the text of the check-in moment turn (with the person's local time). */
  checkinText?: string;
  /** How the stable prefix is marked for the cache (cache-plan.ts); the five-minute breakpoint unless given. */
  prefixCache?: PrefixCache;
}

/** Token sizes of each part, for the trace and the benchmarks. */
interface SectionSizes {
  prefix: number;
  scratchpad: number;
  awareness: number;
  episodic: number;
  working: number;
  input: number;
  total: number;
  ceiling: number;
  workingMessages: number;
  /** Documents shown in full (their tokens are not in the sizes above: see ComposeInput.documents). */
  documents: number;
  /** What those documents cost by the estimate DOCUMENT_TURN_TOKENS bounds. */
  documentTokens: number;
  /** Documents of the messages being answered left unread because they did not fit that bound (documentsLeft). */
  documentsLeft: number;
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
  /**
   * Ids of the messages being answered whose documents were not read in this turn because the
   * documents shown together would exceed DOCUMENT_TURN_TOKENS: the caller marks them not read
   * (`together`), so later turns say the same.
   */
  documentsLeft: string[];
}

/**
 * Upper budgets of the variable parts (tokens). They are kept modest so the cached prefix
 * stays at least half of a reply prompt; a small ceiling scales them all down together.
 */
const SECTION_BUDGETS = {
  scratchpad: 1_500,
  awareness: 700,
  episodic: 400,
  working: 1_200,
  input: 2_000,
} as const;

/** Room kept free for the turns a call adds later (heartbeat write step, one notes round). */
const FOLLOW_UP_HEADROOM = 400;

/** What an image costs against the budget: about a megapixel picture. */
const IMAGE_TOKENS = 1_600;

/** A reply this late says so in the input when the awareness block cannot. */
const LATE_MINUTES = 2;

/**
 * A shown message after this long a silence carries its time (sent-time.ts), as one on a new
 * local day does: the gap after which awareness no longer counts a conversation as going on.
 */
const TURN_GAP_MINUTES = 30;

/** Room an image must leave for the words around it. */
const MIN_TEXT_ROOM = 100;

const EARLIER_NOT_SHOWN = "(earlier messages are not shown; see your scratchpad and notes)";
/** When the companion wrote first: the API wants a user turn first, and there is nothing earlier to point to. */
const CONVERSATION_BEGINS = "(the conversation begins with your message below)";

/** Builds the request and its section sizes. Throws when the ceiling cannot hold the fixed parts, naming the setting and the smallest value that works. */
export function composePrompt(input: ComposeInput): ComposedPrompt {
  const budgets = sectionBudgets(input.prefix.tokens, input.ceiling);
  const truncated: string[] = [];

  const scratchpad = fitText(input.scratchpad, budgets.scratchpad, "scratchpad", truncated);
  const awareness = fitText(input.awareness, budgets.awareness, "awareness", truncated);
  const episodic = episodicText(input.threadNotes, input.memory, budgets.episodic);
  if (episodic.truncated) truncated.push("episodic");

  const pendingIds = new Set((input.pending ?? []).map((m) => m.id));
  const history = input.log.filter((m) => !pendingIds.has(m.id));
  const window = workingMessages(
    history,
    { threads: input.threads, flushedThrough: input.flushedThrough },
    budgets.working,
  );
  const fitted = documentsThatFit(input.pending ?? [], window.kept, input.documents);
  const pending = (input.pending ?? []).map((m) =>
    fitted.left.includes(m.id) && m.media ? { ...m, media: { ...m.media, notRead: "together" as const } } : m,
  );
  const first = window.kept[0] ?? pending[0];
  const unshown = first === undefined ? undefined : history[history.findIndex((m) => m.id === first.id) - 1];
  const stamps = sentTimes([...window.kept, ...pending], input.now, input.zone, unshown);
  const newInput =
    input.kind === "reply"
      ? replyInput({ ...input, pending, documents: fitted.shown }, stamps, budgets.input, truncated)
      : heartbeatInput(input);

  const turns = toTurns(window.kept, stamps, fitted.shown);
  turns.push({ role: "user", content: newInput.blocks });
  const messages = mergeSameRole(turns);
  if (messages[0]?.role === "assistant") {
    const nothingBefore = input.logIsWhole === true && unshown === undefined;
    messages.unshift({ role: "user", content: nothingBefore ? CONVERSATION_BEGINS : EARLIER_NOT_SHOWN });
  }

  const parts: Anthropic.TextBlockParam[] = [...input.prefix.system];
  if (scratchpad.text) parts.push({ type: "text", text: `# Your scratchpad\n\n${scratchpad.text}` });
  if (awareness.text) parts.push({ type: "text", text: `# Awareness\n\n${awareness.text}` });
  if (episodic.text) parts.push({ type: "text", text: `# Episodic context\n\n${episodic.text}` });
  const system = withPrefixCache(parts, input.prefixCache ?? "5m");

  const workingTokens = messages
    .slice(0, -1)
    .reduce(
      (sum, m) =>
        sum +
        estimateTokens(
          typeof m.content === "string"
            ? m.content
            : JSON.stringify(m.content.filter((b) => b.type !== "document")),
        ),
      0,
    );
  const shownDocuments = messages
    .flatMap((m) => (typeof m.content === "string" ? [] : m.content))
    .filter((b) => b.type === "document").length;
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
      documents: shownDocuments,
      documentTokens: fitted.tokens,
      documentsLeft: fitted.left.length,
      memoryItems: episodic.memoryItems,
      threadNotes: episodic.threadNotes,
      truncated,
    },
    evicting: window.evicting,
    workingIds: window.kept.map((m) => m.id),
    documentsLeft: fitted.left,
  };
}

/**
 * The documents shown in this turn, newest first within DOCUMENT_TURN_TOKENS: those of the
 * messages being answered before those of the messages shown around them. The first is always
 * shown; one that would pass the bound is left out, and an older, smaller one may still fit.
 * A waiting message's document left out is named in `left` (not read: `together`); a shown
 * message's was read when it arrived, which the model is told as it is for any older document.
 */
function documentsThatFit(
  pending: readonly Message[],
  shown: readonly Message[],
  documents: ReadonlyMap<string, ShownDocument> | undefined,
): { shown: Map<string, ShownDocument>; left: string[]; tokens: number } {
  const fitting = new Map<string, ShownDocument>();
  const left: string[] = [];
  let tokens = 0;
  const waiting = new Set(pending.map((m) => m.id));
  for (const message of [...[...pending].reverse(), ...[...shown].reverse()]) {
    const document = message.media?.stored && !message.media.notRead ? documents?.get(message.id) : undefined;
    if (!document) continue;
    const cost = documentTokens(document);
    if (fitting.size > 0 && tokens + cost > DOCUMENT_TURN_TOKENS) {
      if (waiting.has(message.id)) left.push(message.id);
      continue;
    }
    fitting.set(message.id, document);
    tokens += cost;
  }
  return { shown: fitting, left, tokens };
}

/** What a document costs the model, estimated: a PDF by its pages (by its size when they cannot be counted), text by its words. */
function documentTokens(document: ShownDocument): number {
  if (document.kind === "missing") return 0;
  if (document.kind === "text") return estimateTokens(document.text);
  const bytes = Math.floor((document.base64.length * 3) / 4);
  const pages = document.pages ?? Math.max(1, Math.ceil(bytes / UNCOUNTED_PDF_PAGE_BYTES));
  return pages * PDF_PAGE_TOKENS;
}

/** The budgets of the variable parts for a prefix and a ceiling; scaled down together when the ceiling is tight. */
function sectionBudgets(prefixTokens: number, ceiling: number): Record<keyof typeof SECTION_BUDGETS, number> {
  const room = ceiling - prefixTokens - FOLLOW_UP_HEADROOM;
  const wanted = Object.values(SECTION_BUDGETS).reduce((a, b) => a + b, 0);
  if (room < wanted * 0.2) {
    throw new Error(
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
  stamps: ReadonlyMap<string, string>,
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
      stamped(
        describeMessage(
          message,
          message.media?.kind === "photo" && !withImage ? "image not shown" : documentNote(message),
        ),
        stamps.get(message.id),
      ),
      Math.max(remaining, 20),
      "input",
      truncated,
    );
    remaining -= fitted.tokens;
    tokens += fitted.tokens + (withImage ? IMAGE_TOKENS : 0);
    const textBlock: Anthropic.TextBlockParam = { type: "text", text: fitted.text };
    const document = documentBlock(message, input.documents, stamps.get(message.id));
    if (withImage) {
      blocks.unshift(
        { type: "image", source: { type: "base64", media_type: image.mediaType, data: image.base64 } },
        textBlock,
      );
    } else if (document) blocks.unshift(...document);
    else blocks.unshift(textBlock);
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

/**
 * A log message as the model reads it (messageAsRead: media labelled, the caption once; a
 * reaction of the companion's as one), never an empty block; `note` is said inside its label.
 */
export function describeMessage(message: Message, note?: string): string {
  const text = messageAsRead(message, note);
  return text === "" ? "(empty message)" : text;
}

const DOCUMENT_READ_EARLIER = "you read it when it arrived; it is not shown again";
const DOCUMENT_REFUSED = "you could not open this file: the model's API refused it";
const DOCUMENT_TOO_MUCH =
  "you did not read this file: it came with other documents, too large to read together; they can send it again on its own";
const DOCUMENT_GONE = "the file is no longer kept (deleted), so you cannot read it now";

/** What a message with a stored document says when the document itself is not shown. */
function documentNote(message: Message): string | undefined {
  if (message.media?.kind !== "document" || !message.media.stored) return undefined;
  if (message.media.notRead === "together") return DOCUMENT_TOO_MUCH;
  return message.media.notRead ? DOCUMENT_REFUSED : DOCUMENT_READ_EARLIER;
}

/**
 * A message with a stored document as blocks: the document (titled with its file name), then the
 * message's words; or, when its file is gone, the words with that said. Null when the message has
 * no document to show in this turn.
 */
function documentBlock(
  message: Message,
  documents: ReadonlyMap<string, ShownDocument> | undefined,
  stamp: string | undefined,
): Anthropic.ContentBlockParam[] | null {
  const document = message.media?.stored && !message.media.notRead ? documents?.get(message.id) : undefined;
  if (!document) return null;
  if (document.kind === "missing") {
    return [{ type: "text", text: stamped(describeMessage(message, DOCUMENT_GONE), stamp) }];
  }
  const title = message.media?.fileName ?? null;
  const source: Anthropic.DocumentBlockParam["source"] =
    document.kind === "pdf"
      ? { type: "base64", media_type: "application/pdf", data: document.base64 }
      : { type: "text", media_type: "text/plain", data: document.text };
  return [
    { type: "document", source, ...(title ? { title } : {}) },
    { type: "text", text: stamped(describeMessage(message), stamp) },
  ];
}

/** A message's text as shown, after its time when it carries one. */
function stamped(text: string, stamp: string | undefined): string {
  return stamp === undefined ? text : `${stamp} ${text}`;
}

/**
 * The times the shown messages carry, by id (the working messages, then the ones being
 * answered, oldest first). A message that follows the one before it after TURN_GAP_MINUTES or
 * on another local day carries its time; one without is read as following on from the one
 * before. So that messages of one side are never joined without their times, the first of a
 * turn whose later part carries a time carries its own too, unless its time can already be
 * read (it follows on from a message that shows one): a repeated time would cost tokens and
 * say nothing. The person's time is when they sent it (the channel's `sentAt`: a message can
 * wait there while presence is down), else when it was logged. In a flowing conversation
 * nothing carries a time, and the prompt does not grow. The first shown message is measured
 * against the one before it in the log (`unshown`), which the model does not see: after a pause
 * it carries its time, so the window's opening turn is never read as following on from nothing.
 */
function sentTimes(
  messages: readonly Message[],
  now: Date,
  zone: string,
  unshown?: Message,
): Map<string, string> {
  const timeOf = (m: Message) => {
    const sentAt = m.external?.sentAt;
    return sentAt === undefined ? messageTime(m) : Date.parse(sentAt);
  };
  const at = messages.map(timeOf);
  // The local date as a number, only ever compared: its ISO text was 36 MB of a month's garbage.
  const day = (ms: number) => localDayNumber(ms, zone);
  const before = (i: number) => (i > 0 ? at[i - 1] : unshown === undefined ? undefined : timeOf(unshown));
  const paused = (i: number) => {
    const previous = before(i);
    return (
      previous !== undefined &&
      ((at[i] as number) - previous >= TURN_GAP_MINUTES * 60_000 || day(at[i] as number) !== day(previous))
    );
  };
  const marked = new Set<number>();
  // Whether the time of the message at each index can be read: its own, or the one before it.
  const known: boolean[] = [];
  let turnStart = 0;
  for (let i = 0; i < messages.length; i++) {
    if (i > 0 && messages[i]?.role !== messages[i - 1]?.role) turnStart = i;
    if (paused(i)) {
      marked.add(i);
      if (turnStart < i && !known[turnStart]) {
        marked.add(turnStart);
        for (let j = turnStart; j < i; j++) known[j] = true;
      }
    }
    known[i] = marked.has(i) || (known[i - 1] ?? false);
  }
  return new Map(
    [...marked].map((i) => [
      (messages[i] as Message).id,
      sentTimeStamp(new Date(at[i] as number), now, zone),
    ]),
  );
}

type Turn = { role: "user" | "assistant"; content: string | Anthropic.ContentBlockParam[] };

function toTurns(
  messages: readonly Message[],
  stamps: ReadonlyMap<string, string>,
  documents?: ReadonlyMap<string, ShownDocument>,
): Turn[] {
  return messages.map((m) => {
    const stamp = stamps.get(m.id);
    const blocks = m.role === "user" ? documentBlock(m, documents, stamp) : null;
    if (blocks) return { role: m.role, content: blocks };
    return { role: m.role, content: stamped(describeMessage(m, documentNote(m)), stamp) };
  });
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
