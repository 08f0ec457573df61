import { forgottenHash } from "../store/mind-schema.ts";

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
