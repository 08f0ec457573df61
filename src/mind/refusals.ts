import { createHash } from "node:crypto";
import { z } from "zod";
import { mindRecord } from "../core/mind-record.ts";
import { sameWords } from "../core/text.ts";

/**
 * What reflection may not do because the person decided otherwise: write again words they had
 * deleted (/forget) or corrected away (/fix), or change an item they corrected. One check and
 * one wording for UNDERSTANDING lines, memory items and the text fields alike, so the person's
 * word holds the same everywhere and reflection is told the same reason each time.
 */

/** Why an edit of a corrected item is refused; said to reflection so it learns. */
const CORRECTED_REFUSAL = "the person corrected it themselves (/fix): leave it as they wrote it";
/** Why writing forgotten words is refused; says nothing of the words. */
export const FORGOTTEN_REFUSAL = "the person asked me to forget those words: they stay forgotten";
/** How reflection sees an item the person corrected, after its words. */
export const CORRECTED_MARK = " (corrected by the person: keep as is)";

/** Whether these words are ones the person had deleted or corrected (compared as sameWords, by hash). */
export function isForgotten(text: string, forgotten: ReadonlySet<string>): boolean {
  return forgotten.has(forgottenHash(text));
}

/**
 * Why an edit is refused, or null when it may go ahead: `item` is what it changes or retires
 * (null for an addition), `text` the words it would write (undefined when it writes none).
 */
export function refusalFor(
  item: { correctedAt?: string | undefined } | null,
  text: string | undefined,
  forgotten: ReadonlySet<string>,
): string | null {
  if (item?.correctedAt !== undefined) return CORRECTED_REFUSAL;
  if (text !== undefined && isForgotten(text, forgotten)) return FORGOTTEN_REFUSAL;
  return null;
}

/**
 * What is kept of an item the person had deleted (/forget) or corrected (/fix, its old words):
 * a SHA-256 of its normalised text, so reflection can refuse to add the same words again while
 * nothing readable remains.
 */
export function forgottenHash(text: string): string {
  return createHash("sha256").update(sameWords(text)).digest("hex");
}

/** The forgotten hashes' record in mind.json (hashes only, never the words). */
export const forgottenHashesRecord = mindRecord({
  key: "forgottenHashes",
  schema: z.array(z.string()).default([]),
  initial: () => [],
});

/** Adds the hashes of deleted items' words (never the words), so reflection cannot add them back verbatim. */
export function rememberForgotten(
  mind: { forgottenHashes: string[] },
  items: readonly { text: string }[],
): void {
  const hashes = new Set(mind.forgottenHashes);
  for (const item of items) hashes.add(forgottenHash(item.text));
  mind.forgottenHashes = [...hashes];
}

/**
 * Why parts of the last reflection were refused (the reasons above, no words): the next
 * reflection is told, so it learns rather than tries again.
 */
export const refusedLastTimeRecord = mindRecord({
  key: "refusedLastTime",
  schema: z.array(z.string()).default([]),
  initial: () => [],
});
