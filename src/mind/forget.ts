import { mentionMatcher } from "../core/text.ts";
import { parseJsonOrNull, readTextIfExists, removeDurable } from "../store/files.ts";
import type { NotesStore } from "../store/notes.ts";
import { keptCopies } from "../store/person-files.ts";
import type { Trace, TraceLine } from "../store/trace.ts";

/**
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
