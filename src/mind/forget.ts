import type { MindAccess, MindDocument } from "../core/mind-record.ts";
import { mentionMatcher } from "../core/text.ts";
import { parseJsonOrNull, readTextIfExists, removeDurable } from "../store/files.ts";
import type { NotesStore } from "../store/notes.ts";
import { keptCopies } from "../store/person-files.ts";
import type { Trace, TraceLine } from "../store/trace.ts";
import type { MemoryItem, memoryRecord } from "./memory.ts";
import { forgottenHash, type forgottenHashesRecord, rememberForgotten } from "./refusals.ts";
import { isItemField, SCRATCHPAD_FIELDS, type scratchpadRecord } from "./scratchpad.ts";
import type { threadsRecord } from "./threads.ts";
import { ITEM_FIELDS } from "./understanding.ts";

/**
 * /forget and /fix: the person's word on what the mind keeps. In mind.json, the words go for
 * real and only their hashes stay, so reflection cannot write them back (refusals.ts).
 *
 * /forget promises the words are gone, so the copies kept beside the mind go too: trace
 * records that quote the text (a reflection's answer, a reply's input), the lines of notes
 * (an archived WORKSPACE included) that mention it, and every other file in the data
 * directory that mentions it (person-files.ts): a damaged original kept before a repair, a
 * temp file a crash left, an /export file, a document the person sent (a PDF only where its
 * bytes show the words uncompressed). Those are deleted whole: no store reads them, so
 * nothing could say which part of them is safe to keep. The conversation log is the person's
 * own record and stays; the reply says so. Run it with nothing else writing
 * (Companion.exclusive).
 */

/** How many copies were deleted. */
export interface ForgottenCopies {
  traceRecords: number;
  notes: number;
  /** Damaged copies, crash leftovers and export files deleted because they mention the text. */
  otherFiles: number;
}

/**
 * Deletes trace records, note lines and kept copies that mention any of `texts` (case- and
 * spacing-insensitive): one pass over each store, however many texts (an item and its earlier
 * versions are forgotten together).
 */
export async function forgetCopies(
  texts: readonly string[],
  stores: {
    trace: Pick<Trace, "deleteWhere">;
    notes: Pick<NotesStore, "deleteLines">;
    dataDir: string;
  },
): Promise<ForgottenCopies> {
  const matchers = texts.map(mentionMatcher);
  const mentions = (candidate: string) => matchers.some((matches) => matches(candidate));
  return {
    traceRecords: await stores.trace.deleteWhere((record) => quotes(record, mentions)),
    notes: await stores.notes.deleteLines(mentions),
    otherFiles: await forgetInKeptCopies(stores.dataDir, mentions),
  };
}

/** Whether any string inside the record (at any depth) mentions the text. */
function quotes(value: TraceLine | unknown, mentions: (candidate: string) => boolean): boolean {
  if (typeof value === "string") return mentions(value);
  if (Array.isArray(value)) return value.some((item) => quotes(item, mentions));
  if (value !== null && typeof value === "object") {
    return Object.values(value).some((item) => quotes(item, mentions));
  }
  return false;
}

/**
 * A kept copy mentions the text when its raw contents do, or when it or a line of it, read as
 * JSON, quotes it once unescaped (a quote or a line break inside a JSON string is escaped on disk).
 */
async function forgetInKeptCopies(
  dataDir: string,
  mentions: (candidate: string) => boolean,
): Promise<number> {
  let deleted = 0;
  for (const copy of await keptCopies(dataDir)) {
    const text = await readTextIfExists(copy.path);
    if (text === null) continue;
    const quoted =
      mentions(text) ||
      quotes(parseJsonOrNull(text), mentions) ||
      text.split("\n").some((line) => quotes(parseJsonOrNull(line), mentions));
    if (quoted) {
      await removeDurable(copy.path);
      deleted++;
    }
  }
  return deleted;
}

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
