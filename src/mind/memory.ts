import { stemmer } from "stemmer";
import { z } from "zod";
import type { PriorMemory } from "../conversation/awareness/context.ts";
import { canonicalTopic } from "../conversation/awareness/topics.ts";
import { isoUtc } from "../core/message.ts";
import { mindRecord } from "../core/mind-record.ts";
import { STOP_WORDS, sameWords } from "../core/text.ts";
import { estimateTokens } from "../model/tokens.ts";
import { refusalFor } from "./refusals.ts";
import { ITEM_TEXT_MAX_CHARS, provenance } from "./understanding.ts";

/**
 * Episodic memory: what the companion learned over weeks that the scratchpad is too small
 * to hold — declared patterns ("weekends are loose"), open loops (things started and not
 * finished) and milestones. Nothing here is silently deleted: an item that stops being
 * true is retired with when and why, and only the person's /forget or /wipe removes one.
 * The items are kept in mind.json as the record `memory` (memoryRecord, below).
 */

/** The three things worth remembering: how they live, what is unfinished, what they reached. */
export const memoryKindSchema = z.enum(["pattern", "open_loop", "milestone"]);
export type MemoryKind = z.infer<typeof memoryKindSchema>;

/** One remembered item as mind.json keeps it. */
const memoryItemSchema = z.looseObject({
  id: z.string().min(1),
  kind: memoryKindSchema,
  text: z.string().min(1),
  learnedAt: isoUtc,
  ...provenance,
  /** 1 (passing) to 5 (central to the person). */
  importance: z.number().int().min(1).max(5),
  topics: z.array(z.string()),
  /** When the same thing was learned again; recency counts from here. */
  reinforcedAt: isoUtc.optional(),
  retiredAt: isoUtc.optional(),
  retiredWhy: z.enum(["superseded", "closed"]).optional(),
  /** The item that replaced this one. */
  supersededBy: z.string().optional(),
  /** How a loop was closed, in a few words. */
  retiredNote: z.string().optional(),
});
export type MemoryItem = z.infer<typeof memoryItemSchema>;

/** Episodic memory's record in mind.json: every item, retired ones too. */
export const memoryRecord = mindRecord({
  key: "memory",
  schema: z.array(memoryItemSchema),
  initial: () => [],
});

/** A memory operation as reflection proposes it. */
export const memoryOpSchema = z.object({
  op: z
    .enum(["add", "close", "supersede"])
    .describe("add a new item; close an open loop; supersede an item with a corrected one"),
  kind: memoryKindSchema
    .optional()
    .describe(
      "add: pattern (a habit or rule they declared themselves, not one you inferred), open_loop (started, not finished), milestone",
    ),
  text: z
    .string()
    .min(1)
    .max(ITEM_TEXT_MAX_CHARS)
    .optional()
    .describe("add/supersede: the item, one sentence"),
  id: z.string().min(1).optional().describe("close/supersede: the id of the existing item"),
  importance: z.number().int().min(1).max(5).optional().describe("1 passing … 5 central to them; default 3"),
  topics: z.array(z.string().min(1).max(40)).max(5).optional(),
  note: z.string().max(200).optional().describe("close: how the loop ended"),
});
export type MemoryOp = z.infer<typeof memoryOpSchema>;

/** What applying memory operations needs besides the items. */
export interface MemoryOpContext {
  now: Date;
  /** The exchange the operations were learned from. */
  sourceMessageIds: readonly string[];
  newId: () => string;
  /** Topic labels of a text, when the model gave none (labels it gives are made canonical). */
  topicsOf: (text: string) => string[];
  /** Hashes of what the person had deleted or corrected (the forgotten hashes, refusals.ts). */
  forgotten: ReadonlySet<string>;
}

/**
 * The items after the operations, with the operations refused one by one because the person
 * decided otherwise (adding words they had forgotten, retiring or replacing an item they
 * corrected); or why the whole batch was refused (a malformed operation).
 */
export type MemoryOpsResult =
  | { ok: true; items: MemoryItem[]; changes: string[]; refused: string[] }
  | { ok: false; reason: string };

/** Items that still hold. */
export function activeMemory(items: readonly MemoryItem[]): MemoryItem[] {
  return items.filter((item) => item.retiredAt === undefined);
}

/**
 * Applies operations in order, all or nothing. Adding what is already remembered
 * reinforces the existing item instead of duplicating it.
 */
export function applyMemoryOps(
  items: readonly MemoryItem[],
  ops: readonly MemoryOp[],
  ctx: MemoryOpContext,
): MemoryOpsResult {
  const next = items.map((item) => ({ ...item }));
  const changes: string[] = [];
  const refused: string[] = [];
  const at = ctx.now.toISOString();
  const active = (id: string | undefined) =>
    next.find((item) => item.id === id && item.retiredAt === undefined);

  for (const [index, op] of ops.entries()) {
    const where = `memory op ${index + 1} (${op.op})`;
    if (op.op === "add") {
      if (!op.kind || !op.text) return { ok: false, reason: `${where}: needs kind and text` };
      const text = op.text.trim();
      const refusal = refusalFor(null, text, ctx.forgotten);
      if (refusal !== null) {
        refused.push(`${where}: ${refusal}`);
        continue;
      }
      const same = next.find(
        (item) =>
          item.retiredAt === undefined && item.kind === op.kind && sameWords(item.text) === sameWords(text),
      );
      if (same) {
        same.reinforcedAt = at;
        same.sourceMessageIds = [...new Set([...same.sourceMessageIds, ...ctx.sourceMessageIds])];
        changes.push(`reinforced ${same.id}`);
        continue;
      }
      const item = newItem(op.kind, text, op, ctx);
      next.push(item);
      changes.push(`added ${item.kind} ${item.id}`);
    } else if (op.op === "close") {
      const item = active(op.id);
      if (!item) return { ok: false, reason: `${where}: no open item with id "${op.id ?? ""}"` };
      const refusal = refusalFor(item, undefined, ctx.forgotten);
      if (refusal !== null) {
        refused.push(`${where} ${item.id}: ${refusal}`);
        continue;
      }
      if (item.kind !== "open_loop")
        return { ok: false, reason: `${where}: ${item.id} is a ${item.kind}, not an open loop` };
      Object.assign(
        item,
        { retiredAt: at, retiredWhy: "closed" as const },
        op.note ? { retiredNote: op.note } : {},
      );
      changes.push(`closed ${item.id}`);
    } else {
      const item = active(op.id);
      if (!item) return { ok: false, reason: `${where}: no current item with id "${op.id ?? ""}"` };
      if (!op.text) return { ok: false, reason: `${where}: needs the text that replaces ${item.id}` };
      const refusal = refusalFor(item, op.text, ctx.forgotten);
      if (refusal !== null) {
        refused.push(`${where} ${item.id}: ${refusal}`);
        continue;
      }
      const replacement = newItem(
        op.kind ?? item.kind,
        op.text.trim(),
        { importance: item.importance, ...op },
        ctx,
      );
      Object.assign(item, { retiredAt: at, retiredWhy: "superseded" as const, supersededBy: replacement.id });
      next.push(replacement);
      changes.push(`superseded ${item.id} by ${replacement.id}`);
    }
  }
  return { ok: true, items: next, changes, refused };
}

function newItem(
  kind: MemoryKind,
  text: string,
  op: Pick<MemoryOp, "importance" | "topics">,
  ctx: MemoryOpContext,
): MemoryItem {
  return {
    id: ctx.newId(),
    kind,
    text,
    learnedAt: ctx.now.toISOString(),
    sourceMessageIds: [...ctx.sourceMessageIds],
    importance: op.importance ?? 3,
    topics:
      op.topics && op.topics.length > 0
        ? [...new Set(op.topics.flatMap((t) => canonicalTopic(t) ?? []))]
        : ctx.topicsOf(text),
  };
}

/** What the current exchange is about, for ranking. */
export interface MemoryQuery {
  text: string;
  topics: readonly string[];
}

/**
 * The ranking's weights. An item's score is
 * `topic·sharedTopics + word·sharedWords + recency·decayPerHour^hours + importance·importance
 * + (open loop ? openLoopBonus : 0)`, hours counted from when it was learned or last reinforced.
 */
const RANKING = {
  topic: 2,
  word: 0.5,
  recency: 2,
  decayPerHour: 0.99,
  importance: 0.5,
  openLoopBonus: 1,
} as const;

/** One item with its score and the parts it is made of, so a trace can say why it was chosen. */
export interface RankedMemory {
  item: MemoryItem;
  score: number;
  sharedTopics: number;
  sharedWords: number;
  hours: number;
}

/** Active items, best first (ties: the more recently learned first). */
export function rankMemory(items: readonly MemoryItem[], query: MemoryQuery, now: Date): RankedMemory[] {
  const queryTopics = new Set(query.topics.map((t) => t.toLowerCase()));
  const queryWords = contentWords(query.text);
  return activeMemory(items)
    .map((item) => {
      const sharedTopics = item.topics.filter((t) => queryTopics.has(t.toLowerCase())).length;
      const sharedWords = [...contentWords(item.text)].filter((w) => queryWords.has(w)).length;
      const since = Date.parse(item.reinforcedAt ?? item.learnedAt);
      const hours = Math.max(0, (now.getTime() - since) / 3_600_000);
      const score =
        RANKING.topic * sharedTopics +
        RANKING.word * sharedWords +
        RANKING.recency * RANKING.decayPerHour ** hours +
        RANKING.importance * item.importance +
        (item.kind === "open_loop" ? RANKING.openLoopBonus : 0);
      return { item, score, sharedTopics, sharedWords, hours };
    })
    .sort((a, b) => b.score - a.score || Date.parse(b.item.learnedAt) - Date.parse(a.item.learnedAt));
}

/** Tokens one item costs in the prompt: its text plus the bullet around it. */
export function memoryLineTokens(item: MemoryItem): number {
  return estimateTokens(item.text) + 2;
}

/** The best-ranked items whose lines fit the budget (an item too big is skipped, smaller ones still fit). */
export function selectMemory(ranked: readonly RankedMemory[], budgetTokens: number): MemoryItem[] {
  const chosen: MemoryItem[] = [];
  let used = 0;
  for (const { item } of ranked) {
    const cost = memoryLineTokens(item);
    if (used + cost > budgetTokens) continue;
    chosen.push(item);
    used += cost;
  }
  return chosen;
}

/** The episodic context for the awareness block: the best items within the budget, by kind, best first. */
export function priorMemoryFor(
  mind: { memory: readonly MemoryItem[] },
  query: MemoryQuery,
  now: Date,
  budgetTokens: number,
): PriorMemory {
  const chosen = selectMemory(rankMemory(mind.memory, query, now), budgetTokens);
  const of = (kind: MemoryKind) => chosen.filter((item) => item.kind === kind).map((item) => item.text);
  return { declaredPatterns: of("pattern"), openLoops: of("open_loop"), recentMilestones: of("milestone") };
}

/**
 * Tokens of memory the awareness block's "prior context" carries (declared patterns, open
 * loops, milestones: the best few). The episodic section shows the ranked items after them.
 */
export const PRIOR_CONTEXT_TOKENS = 120;

/** The items the awareness block does not already show, so no item is in the prompt twice. */
export function withoutPriorContext(items: readonly MemoryItem[], prior: PriorMemory): MemoryItem[] {
  const shown = new Set([...prior.declaredPatterns, ...prior.openLoops, ...prior.recentMilestones]);
  return items.filter((item) => !shown.has(item.text));
}

/** Stemmed content words (three letters or more, stop words left out). */
function contentWords(text: string): ReadonlySet<string> {
  let words = wordsOfText.get(text);
  if (words === undefined) {
    const all = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
    words = new Set(all.filter((w) => w.length >= 3 && !STOP_WORDS.has(w)).map((w) => stemmer(w)));
    if (wordsOfText.size >= TEXTS_KEPT) wordsOfText.clear();
    wordsOfText.set(text, words);
  }
  return words;
}

/**
 * The content words of texts already read: every turn ranks every memory item against its
 * query, so the same few hundred texts were stemmed again and again (0.09 s of a simulated month).
 */
const wordsOfText = new Map<string, ReadonlySet<string>>();
const TEXTS_KEPT = 4_096;
