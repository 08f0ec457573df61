import type { MindAccess, MindDocument } from "../core/mind-record.ts";
import { mentionMatcher } from "../core/text.ts";
import type { MemoryItem, memoryRecord } from "./memory.ts";
import { forgottenHash, type forgottenHashesRecord, rememberForgotten } from "./refusals.ts";
import { isItemField, SCRATCHPAD_FIELDS, type scratchpadRecord } from "./scratchpad.ts";
import type { threadsRecord } from "./threads.ts";
import { ITEM_FIELDS } from "./understanding.ts";

/**
 * /forget and /fix in the mind: the person's word on what it keeps. In mind.json the words go
 * for real and only their hashes stay, so reflection cannot write them back (refusals.ts). The
 * copies beside the mind (trace, notes, kept files) are deleted by the person's data rights
 * (companion/data-rights.ts), which run these with nothing else writing.
 */

/** What /forget and /fix change in mind.json: the pad, memory, thread notes, and the forgotten hashes. */
type ForgettableMind = MindDocument<
  typeof scratchpadRecord | typeof memoryRecord | typeof threadsRecord | typeof forgottenHashesRecord
>;

/** What /forget removed, so the person can be told exactly. */
export interface ForgetResult {
  memory: MemoryItem[];
  /** Scratchpad lines removed, as "UNDERSTANDING.Known: the line". */
  scratchpadLines: string[];
  threadNotes: string[];
}

/**
 * Deletes for real what mentions `text` (/forget), in one write: matching memory items
 * (retired ones too), scratchpad lines and thread notes. Returns what was removed.
 */
export function forget(mind: MindAccess<ForgettableMind>, text: string): Promise<ForgetResult> {
  const mentions = mentionMatcher(text);
  return mind.update((draft) => {
    const forgotten = draft.memory.filter((item) => mentions(item.text));
    draft.memory = draft.memory.filter((item) => !mentions(item.text));
    rememberForgotten(draft, forgotten);
    const scratchpadLines: string[] = [];
    const path = (field: (typeof SCRATCHPAD_FIELDS)[number]) =>
      field.label === null ? field.section : `${field.section}.${field.label}`;
    for (const field of SCRATCHPAD_FIELDS) {
      const key = field.key;
      if (isItemField(key)) {
        const removed = draft.scratchpad[key].filter((item) => mentions(item.text));
        scratchpadLines.push(...removed.map((item) => `${path(field)}: ${item.text}`));
        draft.scratchpad[key] = draft.scratchpad[key].filter((item) => !mentions(item.text));
        rememberForgotten(draft, removed);
        continue;
      }
      const lines = draft.scratchpad[key].split("\n");
      const removed = lines.filter(mentions);
      if (removed.length === 0) continue;
      scratchpadLines.push(...removed.map((line) => `${path(field)}: ${line.trim()}`));
      draft.scratchpad[key] = lines.filter((line) => !mentions(line)).join("\n");
    }
    const threadNotes: string[] = [];
    for (const thread of draft.threads.list) {
      threadNotes.push(...thread.notes.filter((n) => mentions(n.text)).map((n) => n.text));
      thread.notes = thread.notes.filter((n) => !mentions(n.text));
    }
    return { memory: forgotten, scratchpadLines, threadNotes };
  });
}

/**
 * Deletes one reviewable item for real (/forget N), by id: an UNDERSTANDING line or a memory
 * item (retired or not). A memory item goes with its earlier versions — the retired items it
 * superseded, directly or through others — whose words are mostly its own. Returns the words
 * deleted (the item's, then its earlier versions'), or null when no item has that id.
 */
export function forgetItem(
  mind: MindAccess<ForgettableMind>,
  id: string,
): Promise<{ text: string; earlier: string[] } | null> {
  return mind.update((draft) => {
    for (const key of ITEM_FIELDS) {
      const item = draft.scratchpad[key].find((i) => i.id === id);
      if (!item) continue;
      draft.scratchpad[key] = draft.scratchpad[key].filter((i) => i.id !== id);
      rememberForgotten(draft, [item]);
      return { text: item.text, earlier: [] };
    }
    const item = draft.memory.find((i) => i.id === id);
    if (!item) return null;
    const gone = new Set([id]);
    for (let size = 0; gone.size > size; ) {
      size = gone.size;
      for (const older of draft.memory) {
        if (older.supersededBy !== undefined && gone.has(older.supersededBy)) gone.add(older.id);
      }
    }
    const earlier = draft.memory.filter((i) => i.id !== id && gone.has(i.id));
    draft.memory = draft.memory.filter((i) => !gone.has(i.id));
    rememberForgotten(draft, [item, ...earlier]);
    return { text: item.text, earlier: earlier.map((i) => i.text) };
  });
}

/**
 * Replaces one item's words with the person's own (/fix N) and marks it corrected at `now`, so
 * reflection leaves it as they wrote it; the old words join the forgotten hashes, so they are
 * not written back. Returns the old words, or null when no item has that id.
 */
export function fixItem(
  mind: MindAccess<ForgettableMind>,
  id: string,
  text: string,
  now: Date,
): Promise<{ before: string } | null> {
  const at = now.toISOString();
  return mind.update((draft) => {
    const item =
      ITEM_FIELDS.flatMap((key) => draft.scratchpad[key]).find((i) => i.id === id) ??
      draft.memory.find((i) => i.id === id);
    if (!item) return null;
    const before = item.text;
    if (forgottenHash(before) !== forgottenHash(text)) rememberForgotten(draft, [{ text: before }]);
    draft.forgottenHashes = draft.forgottenHashes.filter((hash) => hash !== forgottenHash(text));
    item.text = text;
    item.correctedAt = at;
    return { before };
  });
}
