import { z } from "zod";
import { type MindDocument, mindRecord } from "../core/mind-record.ts";
import { activeMemory, type MemoryKind, type memoryRecord } from "./memory.ts";
import type { scratchpadRecord } from "./scratchpad.ts";
import { ITEM_FIELDS, type ItemFieldKey } from "./understanding.ts";

/**
 * Memory the person can review: every UNDERSTANDING line and every current episodic item, in
 * one numbered list (/memory). The numbers are those of the person's last listing, kept in
 * mind.json (memoryListingRecord), so "/forget 3" means the item they saw as 3, even after a
 * restart or after reflection changed something in between.
 */

/**
 * The person's last /memory listing: the item id behind each number (index 0 is number 1);
 * absent until their first listing.
 */
export const memoryListingRecord = mindRecord({
  key: "memoryListing",
  schema: z.object({ ids: z.array(z.string()) }).optional(),
  initial: () => undefined,
});

/** What a listing reads: the items, and the last listing's numbers. */
type ReviewedMind = MindDocument<typeof scratchpadRecord | typeof memoryRecord | typeof memoryListingRecord>;

/** The groups a listing shows, in its order. */
export type ReviewGroup = ItemFieldKey | MemoryKind;

/** One item as the person reviews it, with its provenance. */
export interface ReviewItem {
  id: string;
  group: ReviewGroup;
  text: string;
  /** Null for lines kept before items had provenance. */
  learnedAt: string | null;
  sourceMessageIds: string[];
  /** When the person corrected it (/fix), or null. */
  correctedAt: string | null;
}

const MEMORY_ORDER: readonly MemoryKind[] = ["pattern", "open_loop", "milestone"];

/** Every item the person can review, in listing order: Known, Believed, Unknown, then patterns, open loops, milestones. */
export function reviewItems(mind: Pick<ReviewedMind, "scratchpad" | "memory">): ReviewItem[] {
  const lines = ITEM_FIELDS.flatMap((group) =>
    mind.scratchpad[group].map((item) => asReviewItem(item, group)),
  );
  const active = activeMemory(mind.memory);
  const memory = MEMORY_ORDER.flatMap((group) =>
    active.filter((item) => item.kind === group).map((item) => asReviewItem(item, group)),
  );
  return [...lines, ...memory];
}

function asReviewItem(
  item: {
    id: string;
    text: string;
    learnedAt?: string | undefined;
    sourceMessageIds: readonly string[];
    correctedAt?: string | undefined;
  },
  group: ReviewItem["group"],
): ReviewItem {
  return {
    id: item.id,
    group,
    text: item.text,
    learnedAt: item.learnedAt ?? null,
    sourceMessageIds: [...item.sourceMessageIds],
    correctedAt: item.correctedAt ?? null,
  };
}

/** An item with the number the person sees it under. */
interface ListedItem {
  number: number;
  item: ReviewItem;
}

/**
 * A listing's ids: a fresh one numbers every item now; a continued one (the next page) keeps
 * the last listing's numbers and gives items learned since then the numbers after them.
 */
export function listingIds(mind: ReviewedMind, fresh: boolean): string[] {
  const now = reviewItems(mind).map((item) => item.id);
  if (fresh || mind.memoryListing === undefined) return now;
  const saved = mind.memoryListing.ids;
  const known = new Set(saved);
  return [...saved, ...now.filter((id) => !known.has(id))];
}

/** The items behind a listing's ids, numbered; an item deleted since keeps its number, unshown. */
export function listed(mind: ReviewedMind, ids: readonly string[]): ListedItem[] {
  const byId = new Map(reviewItems(mind).map((item) => [item.id, item]));
  return ids.flatMap((id, index) => {
    const item = byId.get(id);
    return item ? [{ number: index + 1, item }] : [];
  });
}

/** Why a number names nothing now: what /forget N and /fix N answer with instead of an item. */
export type NotListed =
  /** No such number in the last listing (which had `count`), or no listing yet (count 0). */
  | { status: "not-listed"; count: number }
  /** The item was there and has since been deleted or retired. */
  | { status: "gone" };

/** What a number from the last listing names. */
type ListedLookup = { status: "found"; item: ReviewItem } | NotListed;

/** The item the person means by `number` in their last /memory listing. */
export function lookupListed(mind: ReviewedMind, number: number): ListedLookup {
  const ids = mind.memoryListing?.ids ?? [];
  const id = ids[number - 1];
  if (id === undefined || number < 1) return { status: "not-listed", count: ids.length };
  const item = reviewItems(mind).find((i) => i.id === id);
  return item ? { status: "found", item } : { status: "gone" };
}
