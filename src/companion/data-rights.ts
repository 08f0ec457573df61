import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";
import type { Clock } from "../core/clock.ts";
import type { Message } from "../core/message.ts";
import { soundFormatOfFile } from "../core/sound.ts";
import { mentionMatcher, sameWords } from "../core/text.ts";
import { type ForgetResult, fixItem, forget, forgetItem } from "../mind/forget.ts";
import {
  listed,
  listingIds,
  lookupListed,
  type NotListed,
  type ReviewGroup,
  reviewItems,
} from "../mind/review.ts";
import { parseJsonOrNull, readTextIfExists, removeDurable } from "../store/files.ts";
import type { MessageLog } from "../store/messages.ts";
import type { NotesStore } from "../store/notes.ts";
import { keptCopies, PERSON_FILES, removeKeptCopies } from "../store/person-files.ts";
import type { SentFiles } from "../store/sent-files.ts";
import type { Trace, TraceLine } from "../store/trace.ts";
import type { MindStore } from "./mind-document.ts";

export type { NotListed, ReviewGroup } from "../mind/review.ts";
/** The longest words /fix takes for one item: the channels refuse longer ones before asking. */
export { ITEM_TEXT_MAX_CHARS } from "../mind/understanding.ts";

/**
 * The person's rights over what is kept about them, in one place: to see it (/memory, /export),
 * to correct it (/fix) and to delete it (/forget, /wipe). Every right reads one list of what
 * holds their words (`HOLDERS_OF_WORDS`), so a place that keeps them cannot be missed by one
 * right and reached by another. The mind's own items are removed by mind/forget.ts; what is
 * kept beside the mind, and the order the rights run in, is here. Deleting and correcting run
 * with nothing else writing (Companion.exclusive), so no turn or reflection in flight writes
 * back what they change.
 */

/** Where an item came from, as /memory shows it. */
type ItemSource =
  /** The first message it was learned from (the person's, when one of them is). */
  | { kind: "message"; text: string; byPerson: boolean }
  /** Learned before items kept their sources. */
  | { kind: "unknown" }
  /** Its messages are no longer in the log. */
  | { kind: "gone" };

/** One line of /memory. */
export interface MemoryEntry {
  number: number;
  group: ReviewGroup;
  text: string;
  learnedAt: string | null;
  corrected: boolean;
  source: ItemSource;
}

/** How /forget N or /fix N went: done, or why the number names nothing now. */
export type ListedChange<T> = ({ status: "done" } & T) | NotListed;

/** How many copies of the words beside the mind /forget or /fix deleted. */
export interface ForgottenCopies {
  traceRecords: number;
  notes: number;
  /**
   * Damaged copies, crash leftovers, export files and sent documents deleted because they mention
   * the text, and sent sounds whose transcript (or caption) does.
   */
  otherFiles: number;
}

/** The stores the rights reach, and how they run. */
export interface DataRightsDeps {
  log: Pick<MessageLog, "getMany" | "all" | "deleteAll">;
  mind: MindStore;
  notes: NotesStore;
  trace: Trace;
  /** The documents and sounds the person sent: /export carries them, /forget deletes a sound whose transcript mentions the words. */
  files: SentFiles;
  /** When an export is made and a correction is made (/fix). */
  clock: Clock;
  /** Runs work with nothing else writing (Companion.exclusive; a test without turns passes `(work) => work()`). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

/** The rights as the channels call them (Companion.rights). */
export type DataRightsCommands = Pick<
  DataRights,
  "listMemory" | "forgetListed" | "forgetText" | "fixListed" | "exportAll" | "wipeAll"
>;

/** Where `chat` writes /export files: inside the data dir, so /wipe deletes them too. */
export function exportsDir(dataDir: string): string {
  return join(dataDir, PERSON_FILES.exports);
}

/**
 * How much of the trace an export carries: the newest records, within a byte budget, so the
 * file stays well under Telegram's 50 MB for documents; the export says what was left out.
 */
export const EXPORT_TRACE_LIMIT = { records: 5_000, bytes: 8 * 1024 * 1024 } as const;

/** How much of the damaged copies and crash leftovers an export carries as text; the rest it names. */
const EXPORT_COPIES_BYTES = 8 * 1024 * 1024;

/** What /memory's export says about each item's provenance. */
const MEMORY_NOTE =
  "memoryItems is what /memory lists, each with where it came from: learnedAt (null: learned before this was kept), sourceMessageIds (ids in messages; empty: not known) and corrected (you changed it with /fix).";

/**
 * The one list of what holds the person's words, in the order /export writes them and /wipe
 * deletes them; each right reads it (`rightsOverHolders` says what each does with each row),
 * and every file of PERSON_FILES belongs to exactly one row (data-rights.test.ts).
 * telegram.json (update and stranger ids) and presence.lock hold no words and are not here.
 */
export const HOLDERS_OF_WORDS = {
  /** The conversation log and its archive: the person's own record, which /forget keeps and says so. */
  log: { files: ["messages", "archive"] },
  /** mind.json: scratchpad, threads, memory, decisions, outbox, reflection queue. */
  mind: { files: ["mind"] },
  /** Keyed notes, an archived WORKSPACE among them. */
  notes: { files: ["notes"] },
  /** Turn records, and the rotated file of older ones. */
  trace: { files: ["trace", "rotatedTrace"] },
  /**
   * The files no store reads as data (person-files.ts keptCopies): the documents and sounds the
   * person sent, /export files, and in every folder a store writes, damaged originals kept
   * before a repair and temp files a crash left.
   */
  otherFiles: { files: ["files", "exports"] },
} as const satisfies Record<string, { files: readonly (keyof typeof PERSON_FILES)[] }>;

type Holder = keyof typeof HOLDERS_OF_WORDS;

/** What each right does with one holder of the person's words. */
interface HolderRights {
  /** Its part of the /export file, in the file's order. */
  export(): Promise<Record<string, unknown>>;
  /** Deletes all of it (/wipe). */
  wipe(): Promise<void>;
  /**
   * Deletes what mentions the words (/forget, /fix) and says how many; null where forgetting
   * goes another way, and the row says why.
   */
  forgetMentions: ((mentions: (candidate: string) => boolean) => Promise<number>) | null;
}

/** The rights over each holder of the list, over the stores. */
function rightsOverHolders(deps: DataRightsDeps) {
  const { log, mind, notes, trace, files } = deps;
  return {
    log: {
      export: async () => ({ messages: await log.all() }),
      wipe: () => log.deleteAll(),
      // The person's own record: only /wipe removes it.
      forgetMentions: null,
    },
    mind: {
      export: async () => ({
        memoryNote: MEMORY_NOTE,
        memoryItems: reviewItems(mind.read()).map((item) => ({
          ...item,
          corrected: item.correctedAt !== null,
        })),
        mind: mind.exportAll(),
      }),
      wipe: () => mind.deleteAll(),
      // Forgotten item by item (mind/forget.ts), its hashes kept so reflection cannot write the words back.
      forgetMentions: null,
    },
    notes: {
      export: async () => {
        const keys = await notes.list();
        return {
          notes: await Promise.all(keys.map(async (n) => ({ key: n.key, text: await notes.read(n.key) }))),
        };
      },
      wipe: () => notes.deleteAll(),
      forgetMentions: (mentions: (candidate: string) => boolean) => notes.deleteLines(mentions),
    },
    trace: {
      export: async () => {
        const turns = await traceForExport(trace);
        return { traceNote: turns.note, trace: turns.records };
      },
      wipe: () => trace.deleteAll(),
      // The records that quote the words: a reflection's answer, a reply's input.
      forgetMentions: (mentions: (candidate: string) => boolean) =>
        trace.deleteWhere((record) => quotes(record, mentions)),
    },
    otherFiles: {
      export: async () => ({ otherFiles: await copiesForExport(mind.dataDir, files) }),
      wipe: () => removeKeptCopies(mind.dataDir),
      forgetMentions: async (mentions: (candidate: string) => boolean) =>
        (await forgetHeardSounds(log, files, mentions)) + (await forgetInKeptCopies(mind.dataDir, mentions)),
    },
  } satisfies Record<Holder, HolderRights>;
}

/** The person's rights over the stores: /memory, /forget, /fix, /export and /wipe. */
export class DataRights {
  readonly #deps: DataRightsDeps;
  readonly #holders: ReturnType<typeof rightsOverHolders>;

  constructor(deps: DataRightsDeps) {
    this.#deps = deps;
    this.#holders = rightsOverHolders(deps);
  }

  /**
   * The listing the person asked for: fresh (/memory) or continued (/memory 2, same numbers),
   * saved in mind.json before it is shown so later numbers mean what the person saw.
   */
  async listMemory(options: { fresh: boolean }): Promise<MemoryEntry[]> {
    const { mind, log } = this.#deps;
    const state = mind.read();
    const ids = listingIds(state, options.fresh);
    if (!isDeepStrictEqual(ids, state.memoryListing?.ids)) {
      await mind.update((draft) => {
        draft.memoryListing = { ids };
      });
    }
    const shown = listed(state, ids);
    const sources = await log.getMany(shown.flatMap(({ item }) => item.sourceMessageIds));
    return shown.map(({ number, item }) => ({
      number,
      group: item.group,
      text: item.text,
      learnedAt: item.learnedAt,
      corrected: item.correctedAt !== null,
      source: sourceOf(sources, item.sourceMessageIds),
    }));
  }

  /**
   * Deletes the item numbered `number` in the last listing with its earlier versions
   * (mind/forget.ts forgetItem), and every copy of their words beside the mind. `earlierVersions`
   * counts the versions; their words are not repeated back.
   */
  forgetListed(
    number: number,
  ): Promise<ListedChange<{ text: string; earlierVersions: number; copies: ForgottenCopies }>> {
    return this.#deps.exclusive(async () => {
      const found = lookupListed(this.#deps.mind.read(), number);
      if (found.status !== "found") return found;
      const removed = await forgetItem(this.#deps.mind, found.item.id);
      if (!removed) return { status: "gone" };
      return {
        status: "done",
        text: removed.text,
        earlierVersions: removed.earlier.length,
        copies: await this.#forgetCopies([removed.text, ...removed.earlier]),
      };
    });
  }

  /** Deletes everything that mentions `text` in the mind and beside it (/forget TEXT). */
  forgetText(text: string): Promise<{ removed: ForgetResult; copies: ForgottenCopies }> {
    return this.#deps.exclusive(async () => ({
      removed: await forget(this.#deps.mind, text),
      copies: await this.#forgetCopies([text]),
    }));
  }

  /**
   * Replaces the words of the item numbered `number` in the last listing with the person's own,
   * and deletes the copies of the old words beside the mind, as /forget does: the person said
   * they were wrong, so no trace record, note or kept file goes on holding them.
   */
  fixListed(
    number: number,
    text: string,
  ): Promise<ListedChange<{ before: string; after: string; copies: ForgottenCopies }>> {
    return this.#deps.exclusive(async () => {
      const found = lookupListed(this.#deps.mind.read(), number);
      if (found.status !== "found") return found;
      const fixed = await fixItem(this.#deps.mind, found.item.id, text, this.#deps.clock.now());
      if (!fixed) return { status: "gone" };
      // Only punctuation or case changed: the old words are the ones kept, nothing to delete.
      const copies =
        sameWords(fixed.before) === sameWords(text) ? NO_COPIES : await this.#forgetCopies([fixed.before]);
      return { status: "done", before: fixed.before, after: text, copies };
    });
  }

  /** Everything kept about the person, as one JSON-able object (/export): each holder's part, in the list's order. */
  async exportAll(): Promise<Record<string, unknown>> {
    let exported: Record<string, unknown> = { exportedAt: this.#deps.clock.now().toISOString() };
    for (const holder of holders()) exported = { ...exported, ...(await this.#holders[holder].export()) };
    return exported;
  }

  /**
   * Deletes everything kept about the person (/wipe), holder by holder in the list's order, with
   * nothing else writing meanwhile; what outlives it is declared by mind.json's records.
   */
  wipeAll(): Promise<void> {
    return this.#deps.exclusive(async () => {
      for (const holder of holders()) await this.#holders[holder].wipe();
    });
  }

  /**
   * /forget promises the words are gone, so the copies kept beside the mind go too: every
   * holder that forgets by mention, in one pass each however many texts (an item and its
   * earlier versions are forgotten together); case- and spacing-insensitive.
   */
  async #forgetCopies(texts: readonly string[]): Promise<ForgottenCopies> {
    const matchers = texts.map(mentionMatcher);
    const mentions = (candidate: string) => matchers.some((matches) => matches(candidate));
    const { trace, notes, otherFiles } = this.#holders;
    return {
      traceRecords: await trace.forgetMentions(mentions),
      notes: await notes.forgetMentions(mentions),
      otherFiles: await otherFiles.forgetMentions(mentions),
    };
  }
}

/** The holders in the list's order. */
function holders(): Holder[] {
  return Object.keys(HOLDERS_OF_WORDS) as Holder[];
}

const NO_COPIES: ForgottenCopies = { traceRecords: 0, notes: 0, otherFiles: 0 };

/** The first message an item was learned from, the person's when one of them is. */
function sourceOf(messages: ReadonlyMap<string, Message>, ids: readonly string[]): ItemSource {
  if (ids.length === 0) return { kind: "unknown" };
  const found = ids.flatMap((id) => messages.get(id) ?? []);
  const chosen = found.find((m) => m.role === "user") ?? found[0];
  if (!chosen) return { kind: "gone" };
  return { kind: "message", text: chosen.text, byPerson: chosen.role === "user" };
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
 * Deletes the kept sounds whose message mentions the text (its transcript, or its caption): a
 * sound holds the words spoken, which no byte of it shows. The message stays, as the log does.
 */
async function forgetHeardSounds(
  log: DataRightsDeps["log"],
  files: SentFiles,
  mentions: (candidate: string) => boolean,
): Promise<number> {
  let deleted = 0;
  for (const message of await log.all()) {
    const stored = message.media?.stored;
    if (stored === undefined || soundFormatOfFile(stored) === null) continue;
    if (!mentions(message.text) && !mentions(message.media?.caption ?? "")) continue;
    if (await files.remove(stored)) deleted++;
  }
  return deleted;
}

/**
 * Deletes the kept copies that mention the text, whole: no store reads them, so nothing could
 * say which part of them is safe to keep (a PDF the person sent matches only where its bytes
 * show the words uncompressed). A copy mentions the text when its raw contents do, or when it
 * or a line of it, read as JSON, quotes it once unescaped (a quote or a line break inside a
 * JSON string is escaped on disk).
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

/** The newest trace records that fit the export's budget, oldest first, and a note of what was left out. */
async function traceForExport(trace: Trace): Promise<{ records: TraceLine[]; note: string }> {
  const newest = await trace.last(EXPORT_TRACE_LIMIT.records + 1);
  const records: TraceLine[] = [];
  let bytes = 0;
  for (const record of newest.slice(-EXPORT_TRACE_LIMIT.records).reverse()) {
    bytes += Buffer.byteLength(JSON.stringify(record));
    if (bytes > EXPORT_TRACE_LIMIT.bytes) break;
    records.unshift(record);
  }
  const complete = records.length === newest.length;
  return {
    records,
    note: complete
      ? "All turn records are included (they are deleted after 30 days)."
      : `Only the newest ${records.length} turn records are included; older ones are kept on the computer for up to 30 days and are not in this file.`,
  };
}

/**
 * The files beside the stores that hold the person's words (damaged originals, temp files a
 * crash left, the documents and sounds they sent), with their contents while they fit the
 * budget: text as text, a PDF or a sound as base64; the rest named, with where they are.
 * Earlier /export files are not repeated.
 */
async function copiesForExport(dataDir: string, files: SentFiles): Promise<unknown[]> {
  let bytes = 0;
  const copies: unknown[] = [];
  for (const copy of await keptCopies(dataDir)) {
    if (copy.kind === "export") continue;
    const file = relative(dataDir, copy.path);
    bytes += copy.bytes;
    const fits = bytes <= EXPORT_COPIES_BYTES;
    const sent = copy.kind === "document" || copy.kind === "sound";
    const kept = fits && sent ? await files.read(file) : null;
    const binary = kept !== null && kept.kind !== "text" ? kept.bytes : null;
    const text =
      kept?.kind === "text"
        ? kept.bytes.toString("utf8")
        : fits && kept === null
          ? await readTextIfExists(copy.path)
          : null;
    copies.push(
      binary !== null
        ? { file, kind: copy.kind, base64: binary.toString("base64") }
        : text !== null
          ? { file, kind: copy.kind, text }
          : {
              file,
              kind: copy.kind,
              bytes: copy.bytes,
              omitted: `too large for this export; it is at ${copy.path}`,
            },
    );
  }
  return copies;
}
