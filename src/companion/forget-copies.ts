import type { NotesStore } from "../store/notes.ts";
import type { Trace, TraceRecord } from "../store/trace.ts";

/**
 * /forget promises the words are gone, so the copies kept beside the mind go too: trace
 * records that quote the text (a reflection's answer, a reply's input) and the lines of notes
 * (an archived WORKSPACE included) that mention it. The conversation log is the person's own
 * record and stays; the reply says so. Run it with nothing else writing (Companion.exclusive):
 * the trace is rewritten as a whole.
 */

/** How many copies were deleted. */
export interface ForgottenCopies {
  traceRecords: number;
  notes: number;
}

/** The trace is read whole to be rewritten; far above what its size bound lets it hold. */
const WHOLE_TRACE = Number.MAX_SAFE_INTEGER;

/** Deletes trace records and note lines that mention `text` (case- and spacing-insensitive). */
export async function forgetCopies(
  text: string,
  stores: {
    trace: Pick<Trace, "last" | "append" | "deleteAll">;
    notes: Pick<NotesStore, "list" | "read" | "write" | "delete">;
  },
): Promise<ForgottenCopies> {
  const mentions = mentionMatcher(text);
  return {
    traceRecords: await forgetInTrace(stores.trace, mentions),
    notes: await forgetInNotes(stores.notes, mentions),
  };
}

/** Whether a piece of text mentions `text`, ignoring case and runs of whitespace. */
export function mentionMatcher(text: string): (candidate: string) => boolean {
  const needle = normalize(text);
  return (candidate) => needle !== "" && normalize(candidate).includes(needle);
}

function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

async function forgetInTrace(
  trace: Pick<Trace, "last" | "append" | "deleteAll">,
  mentions: (candidate: string) => boolean,
): Promise<number> {
  const records = await trace.last(WHOLE_TRACE);
  const kept = records.filter((record) => !quotes(record, mentions));
  if (kept.length === records.length) return 0;
  await trace.deleteAll();
  for (const record of kept) await trace.append(record);
  return records.length - kept.length;
}

/** Whether any string inside the record (at any depth) mentions the text. */
function quotes(value: TraceRecord | unknown, mentions: (candidate: string) => boolean): boolean {
  if (typeof value === "string") return mentions(value);
  if (Array.isArray(value)) return value.some((item) => quotes(item, mentions));
  if (value !== null && typeof value === "object") {
    return Object.values(value).some((item) => quotes(item, mentions));
  }
  return false;
}

async function forgetInNotes(
  notes: Pick<NotesStore, "list" | "read" | "write" | "delete">,
  mentions: (candidate: string) => boolean,
): Promise<number> {
  let changed = 0;
  for (const { key } of await notes.list()) {
    const text = await notes.read(key);
    if (text === null || !mentions(text)) continue;
    const lines = text.split("\n");
    const kept = lines.filter((line) => !mentions(line));
    changed += 1;
    if (kept.length === lines.length || kept.join("").trim() === "") await notes.delete(key);
    else await notes.write(key, kept.join("\n"));
  }
  return changed;
}
