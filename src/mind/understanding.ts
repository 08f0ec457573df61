import { randomBytes } from "node:crypto";
import { z } from "zod";
import { isoUtc } from "../core/message.ts";
import { sameWords } from "../core/text.ts";
import { refusalFor } from "./refusals.ts";
import type { Scratchpad } from "./scratchpad.ts";

/**
 * UNDERSTANDING as items: each line of Known, Believed and Unknown is an item with an id, when
 * it was learned and the messages it came from, so the person can review and correct it line
 * by line (/memory, /forget N, /fix N) and reflection edits it by id (add, change, retire)
 * instead of rewriting a field. The model reads the fields as text rendered from the items.
 */

/**
 * The UNDERSTANDING fields, whose lines are items the person can review one by one (/memory),
 * each with where it came from; the other fields are the companion's own working text.
 */
export const ITEM_FIELDS = [
  "understanding_known",
  "understanding_believed",
  "understanding_unknown",
] as const;
export type ItemFieldKey = (typeof ITEM_FIELDS)[number];
/** The id prefix of a field's items: k, b, u (new ones add random hex; migrated ones "-1", "-2"…). */
export function itemPrefix(key: ItemFieldKey): string {
  return key.slice("understanding_".length, "understanding_".length + 1);
}

/** Longest text an item may have (a memory item, an UNDERSTANDING line written by reflection or /fix): one sentence, not a story. */
export const ITEM_TEXT_MAX_CHARS = 300;

/**
 * What the person can review about an item: when it was learned, from which messages, and
 * whether they corrected it themselves (/fix): reflection leaves a corrected item as it is.
 */
export const provenance = {
  /** The log entries it was learned from; empty when not known (learned before items kept their sources). */
  sourceMessageIds: z.array(z.string()),
  /** When the person corrected it (/fix). */
  correctedAt: isoUtc.optional(),
};

/** One line of an UNDERSTANDING field. */
export const understandingItemSchema = z.looseObject({
  id: z.string().min(1),
  text: z.string().min(1),
  /** Absent for lines written before the pad kept items (migrated from the text of version 1). */
  learnedAt: isoUtc.optional(),
  ...provenance,
});
export type UnderstandingItem = z.infer<typeof understandingItemSchema>;

/** The three lists by the names reflection uses. */
const UNDERSTANDING_LISTS = {
  known: "understanding_known",
  believed: "understanding_believed",
  unknown: "understanding_unknown",
} as const satisfies Record<string, ItemFieldKey>;

/** An edit of one UNDERSTANDING line, as reflection proposes it. */
export const understandingOpSchema = z.object({
  op: z
    .enum(["add", "change", "retire"])
    .describe("add a line; change a line's words (by id); retire a line that no longer holds (by id)"),
  list: z
    .enum(["known", "believed", "unknown"])
    .optional()
    .describe("add: which list it goes in; change: to move it (a belief confirmed → known)"),
  id: z.string().min(1).optional().describe("change/retire: the id shown in brackets"),
  text: z
    .string()
    .min(1)
    .max(ITEM_TEXT_MAX_CHARS)
    .optional()
    .describe("add/change: the line, e.g. (user) works nights"),
});
type UnderstandingOp = z.infer<typeof understandingOpSchema>;

/** What applying item edits needs besides the items. */
interface ItemOpContext {
  now: Date;
  /** The exchange the edits were learned from. */
  sourceMessageIds: readonly string[];
  /** A fresh id starting with `prefix`. */
  newId: (prefix: string) => string;
  /** Hashes of what the person had deleted or corrected (the forgotten hashes, refusals.ts). */
  forgotten: ReadonlySet<string>;
}

/**
 * The pad after the edits, what changed, and the edits refused one by one because the person
 * decided otherwise (words they had forgotten, an item they corrected): the rest still apply.
 * A malformed edit (no id, an id not shown) refuses the whole update, as every other part does.
 */
export type ItemOpsResult =
  | { ok: true; pad: Scratchpad; changes: string[]; refused: string[] }
  | { ok: false; reason: string };

/** A field's items as the model reads them: one line each. */
export function itemsText(items: readonly UnderstandingItem[]): string {
  return items.map((item) => item.text).join("\n");
}

/**
 * Items for a field given as text (inject, or a value typed by hand): a line that is already
 * an item keeps that item (its id and provenance); a new line is a new item learned now.
 */
export function itemsFromText(
  current: readonly UnderstandingItem[],
  text: string,
  key: ItemFieldKey,
  ctx: Pick<ItemOpContext, "now" | "newId"> & { sourceMessageIds?: readonly string[] },
): UnderstandingItem[] {
  const unused = [...current];
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const at = unused.findIndex((item) => sameWords(item.text) === sameWords(line));
      if (at >= 0) return unused.splice(at, 1)[0] as UnderstandingItem;
      return {
        id: ctx.newId(itemPrefix(key)),
        text: line,
        learnedAt: ctx.now.toISOString(),
        sourceMessageIds: [...(ctx.sourceMessageIds ?? [])],
      };
    });
}

/** Applies reflection's UNDERSTANDING edits in order (see ItemOpsResult). */
export function applyUnderstandingOps(
  pad: Scratchpad,
  ops: readonly UnderstandingOp[],
  ctx: ItemOpContext,
): ItemOpsResult {
  const next: Scratchpad = { ...pad };
  for (const key of ITEM_FIELDS) next[key] = pad[key].map((item) => ({ ...item }));
  const changes: string[] = [];
  const refused: string[] = [];
  const at = ctx.now.toISOString();
  const find = (id: string | undefined) => {
    for (const key of ITEM_FIELDS) {
      const item = next[key].find((i) => i.id === id);
      if (item) return { key, item };
    }
    return null;
  };

  for (const [index, op] of ops.entries()) {
    const where = `understanding op ${index + 1} (${op.op}${op.id ? ` ${op.id}` : ""})`;
    const text = op.text?.trim();
    if (op.op === "add") {
      if (!op.list || !text) return { ok: false, reason: `${where}: needs list and text` };
      const refusal = refusalFor(null, text, ctx.forgotten);
      if (refusal !== null) {
        refused.push(`${where}: ${refusal}`);
        continue;
      }
      const key = UNDERSTANDING_LISTS[op.list];
      if (next[key].some((item) => sameWords(item.text) === sameWords(text))) continue;
      const item = {
        id: ctx.newId(itemPrefix(key)),
        text,
        learnedAt: at,
        sourceMessageIds: [...ctx.sourceMessageIds],
      };
      next[key].push(item);
      changes.push(`added ${op.list} ${item.id}`);
      continue;
    }
    const found = find(op.id);
    if (!found) return { ok: false, reason: `${where}: no UNDERSTANDING line with id "${op.id ?? ""}"` };
    const { key, item } = found;
    const refusal = refusalFor(item, op.op === "retire" ? undefined : text, ctx.forgotten);
    if (refusal !== null) {
      refused.push(`${where}: ${refusal}`);
      continue;
    }
    if (op.op === "retire") {
      next[key] = next[key].filter((i) => i.id !== item.id);
      changes.push(`retired ${item.id}`);
      continue;
    }
    if (!text && !op.list) return { ok: false, reason: `${where}: needs text or list` };
    const changed: UnderstandingItem = {
      ...item,
      ...(text ? { text } : {}),
      learnedAt: at,
      sourceMessageIds: [...new Set([...item.sourceMessageIds, ...ctx.sourceMessageIds])],
    };
    const to = op.list ? UNDERSTANDING_LISTS[op.list] : key;
    const place = next[key].findIndex((i) => i.id === item.id);
    if (to === key) next[key].splice(place, 1, changed);
    else {
      next[key].splice(place, 1);
      next[to].push(changed);
    }
    changes.push(`changed ${item.id}`);
  }
  return { ok: true, pad: next, changes, refused };
}

/** A short id the model can copy ("k3fa2c1"), not in `taken`, which it joins. */
export function newItemId(taken: Set<string>, prefix: string): string {
  for (;;) {
    const id = `${prefix}${randomBytes(3).toString("hex")}`;
    if (taken.has(id)) continue;
    taken.add(id);
    return id;
  }
}
