import type { UnderstandingItem } from "../../src/mind/understanding.ts";

/** UNDERSTANDING items for a field's text, one per line, as a migrated file has them (no provenance). */
export function lines(text: string, prefix = "k"): UnderstandingItem[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => ({ id: `${prefix}-${i + 1}`, text: line.trim(), sourceMessageIds: [] }));
}
