import { randomBytes } from "node:crypto";
import { z } from "zod";
import { sameWords } from "../core/text.ts";
import {
  ITEM_FIELDS,
  ITEM_TEXT_MAX_CHARS,
  type ItemFieldKey,
  itemPrefix,
  type Scratchpad,
  type UnderstandingItem,
} from "../store/mind-schema.ts";
import { refusalFor } from "./refusals.ts";

/**
 * UNDERSTANDING as items: each line of Known, Believed and Unknown is an item with an id, when
 * it was learned and the messages it came from, so the person can review and correct it line
 * by line (/memory, /forget N, /fix N) and reflection edits it by id (add, change, retire)
 * instead of rewriting a field. The model reads the fields as text rendered from the items.
 */

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
  /** Hashes of what the person had deleted or corrected (MindState.forgottenHashes). */
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
