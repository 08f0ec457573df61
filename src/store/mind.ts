import { join } from "node:path";
import { Low } from "lowdb";
import { z } from "zod";
import type { Clock } from "../core/clock.ts";
import type { MindAccess, MindDocument, MindRecord } from "../core/mind-record.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import {
  DataFileError,
  DurableJsonFile,
  ensurePrivateDir,
  removeLeftoverTemps,
  type WriteOptions,
} from "./files.ts";
import { PERSON_FILES } from "./person-files.ts";

/**
 * data/mind.json: everything the companion keeps about the person besides the log, as one
 * document written atomically, so a change that touches several records (a reflection and
 * its usage, a check-in and its decision) lands together or not at all; updates go through
 * one queue, so none is lost. The records themselves (their keys, shapes, defaults and
 * migrations) belong to the rooms that own them (core/mind-record.ts) and are handed to
 * `open`; the store keeps the envelope: its version, the migration chain, the atomic write.
 */

/**
 * The format version this code writes. A change a schema default cannot express raises it,
 * and the record it changes gives the step to it in its `migrations` (2: the scratchpad's
 * UNDERSTANDING lines became items; 3: the outbox's channel ids became `external`).
 */
export const MIND_VERSION = 3;

/** The document as read and written: the envelope's version and the records. */
export type MindFile<R extends MindRecord> = { version: typeof MIND_VERSION } & MindDocument<R>;

/** A fresh document: each record as a new install holds it (a record that starts absent stays absent). */
export function freshMindFile<R extends MindRecord>(records: readonly R[], now: Date): MindFile<R> {
  return withRecords(records, (record) => record.initial(now));
}

/** The mind's file: one document, read once, written whole through one queue. */
export class MindStore<R extends MindRecord> implements MindAccess<MindFile<R>> {
  readonly file: string;
  /** The data directory mind.json is in, where the other copies of the person's words live too (/forget). */
  readonly dataDir: string;
  readonly #low: Low<MindFile<R>>;
  readonly #records: readonly R[];
  /** Each key's check: the version's, and each record's. */
  readonly #schemas: ReadonlyMap<string, z.ZodType>;
  /** The check of one entry of each log (MindRecord.entry), by key. */
  readonly #entrySchemas: ReadonlyMap<string, z.ZodType>;
  readonly #clock: Clock;
  readonly #readOnly: boolean;
  readonly #writeOnFlush: boolean;
  /** Writes in the order they were asked for, each on the state the one before left. */
  readonly #queue = new SerialQueue();
  /** With writeOnFlush: whether the document changed since the file was last written. */
  #unwritten = false;

  private constructor(
    dataDir: string,
    file: string,
    low: Low<MindFile<R>>,
    records: readonly R[],
    clock: Clock,
    options: { readOnly?: boolean } & WriteOptions,
  ) {
    this.dataDir = dataDir;
    this.file = file;
    this.#low = low;
    this.#records = records;
    this.#schemas = new Map<string, z.ZodType>([
      ["version", z.literal(MIND_VERSION)],
      ...records.map((record): [string, z.ZodType] => [record.key, record.schema]),
    ]);
    this.#entrySchemas = new Map(
      records.flatMap((record): [string, z.ZodType][] => (record.entry ? [[record.key, record.entry]] : [])),
    );
    this.#clock = clock;
    this.#readOnly = options.readOnly ?? false;
    this.#writeOnFlush = options.writeOnFlush ?? false;
  }

  /**
   * Loads data/mind.json holding `records`, creating the private directory if needed; a
   * missing file is a fresh mind. A file that is not valid throws DataFileError naming the
   * file and the first problem, and is left exactly as it was. Opening never touches the
   * directory's other files: another process may be writing there. `readOnly` is for
   * commands that only look (status): such a store refuses to write. `fsync: false` and
   * `writeOnFlush` are for simulations only (WriteOptions).
   */
  static async open<R extends MindRecord>(
    dataDir: string,
    clock: Clock,
    records: readonly R[],
    options: { readOnly?: boolean } & WriteOptions = {},
  ): Promise<MindStore<R>> {
    await ensurePrivateDir(dataDir);
    const file = join(dataDir, PERSON_FILES.mind);
    const schema = documentSchema(records);
    const adapter = new DurableJsonFile<MindFile<R>>(file, {
      parse: (value) => parseMindFile(file, value, records, schema) as MindFile<R>,
      serialize: serializeMindFile,
      fsync: options.fsync ?? true,
    });
    const low = new Low(adapter, freshMindFile(records, clock.now()));
    await low.read();
    low.data = deepFreeze(low.data);
    return new MindStore(dataDir, file, low, records, clock, options);
  }

  /**
   * The current document, frozen: an update replaces it rather than changing it, so what a
   * caller holds stays as it was read, and changing it throws. Reads are many (a turn reads
   * several times) and the document grows for a month, so none of them copies it.
   */
  read(): MindFile<R> {
    return this.#low.data;
  }

  /**
   * Changes the document: `edit` changes a draft; once it returns, the records it changed are
   * validated (one it read and left equal keeps its checked value) and the document is written
   * durably before this resolves (with writeOnFlush, at
   * the next flush()). If `edit` throws or the draft is invalid, nothing changes. Updates run
   * one at a time, in call order.
   */
  update<T>(edit: (draft: MindFile<R>) => T | Promise<T>): Promise<T> {
    return this.#queue.run(async () => {
      const current = this.#low.data;
      const draft = draftOf(current, this.#entrySchemas);
      const result = await edit(draft);
      await this.#write(this.#checked(current, draft));
      return result;
    });
  }

  /**
   * The document an update leaves: each record the edit touched (or added, or deleted) as its
   * schema reads it, every other record as it was, in the order a whole-document check would
   * give (the version, the records as listed, any other key). Of a log, only the entries it did
   * not hold before are checked: the others were checked when they came in, and stay as they
   * are. A record the edit read but left as it was (equal, key order too) stays the one checked
   * before. Throws on the first invalid one.
   */
  #checked(current: MindFile<R>, draft: MindFile<R>): MindFile<R> {
    const before = current as Record<string, unknown>;
    const after = draft as Record<string, unknown>;
    const keys = new Set(["version", ...this.#records.map((record) => record.key)]);
    for (const key of [...Object.keys(before), ...Object.keys(after)]) keys.add(key);
    const next: Record<string, unknown> = {};
    for (const key of keys) {
      const descriptor = Object.getOwnPropertyDescriptor(after, key);
      let value = descriptor === undefined ? undefined : descriptor.get ? before[key] : descriptor.value;
      const schema = this.#schemas.get(key);
      if (schema !== undefined && !descriptor?.get && (descriptor !== undefined || key in before)) {
        const entry = this.#entrySchemas.get(key);
        if (isChecked(before[key]) && sameData(value, before[key])) value = before[key];
        else {
          value =
            entry !== undefined && Array.isArray(value)
              ? checkedLog(key, value, before[key], entry)
              : checkedValue([key], value, schema);
          markChecked(value);
        }
      }
      if (value !== undefined) next[key] = value;
    }
    return next as MindFile<R>;
  }

  /**
   * Forgets everything about the person (/wipe): the file is rewritten as a fresh mind, but
   * for what a record says outlives a wipe (the usage ledger: token counts, no words), so
   * nothing of the old contents remains in it, and temp files a crash left beside it are
   * deleted.
   */
  deleteAll(): Promise<void> {
    return this.#queue.run(async () => {
      const kept = this.#low.data as Record<string, unknown>;
      const now = this.#clock.now();
      await this.#write(
        withRecords(this.#records, (record) =>
          record.afterWipe ? record.afterWipe(kept[record.key], now) : record.initial(now),
        ),
      );
      await this.#writeFile();
      await removeLeftoverTemps(this.file);
    });
  }

  /**
   * Writes the document every update so far left, when the file does not hold it yet: only a
   * store opened with writeOnFlush (WriteOptions, simulations only) is ever behind.
   */
  flush(): Promise<void> {
    return this.#queue.run(() => this.#writeFile());
  }

  /** Everything the mind keeps, for /export. */
  exportAll(): MindFile<R> {
    return this.read();
  }

  async #write(data: MindFile<R>): Promise<void> {
    if (this.#readOnly) throw new Error(`${this.file} was opened read-only; it is not written`);
    if (this.#writeOnFlush) {
      this.#low.data = deepFreeze(data);
      this.#unwritten = true;
      return;
    }
    const previous = this.#low.data;
    this.#low.data = deepFreeze(data);
    try {
      await this.#low.write();
    } catch (error) {
      this.#low.data = previous;
      throw error;
    }
  }

  /** With writeOnFlush: writes the document if it changed since the file was last written. */
  async #writeFile(): Promise<void> {
    if (!this.#unwritten) return;
    await this.#low.write();
    this.#unwritten = false;
  }
}

/**
 * Record values as their schema gave them, when the file was read or an update checked them.
 * An edit that reads a record (memory, the scratchpad) and leaves it equal is most updates'
 * case; checking such a record again gives what it already is, and was 0.1 s of a month.
 */
const checkedRecords = new WeakSet<object>();

function markChecked(value: unknown): void {
  if (typeof value === "object" && value !== null) checkedRecords.add(value);
}

function isChecked(value: unknown): boolean {
  return typeof value === "object" && value !== null && checkedRecords.has(value);
}

/** Whether two values of the document are the same data, their objects' keys in the same order (as the file writes them). */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameData(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== others[i]) return false;
    if (!sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** A value as `schema` reads it; throws naming the first problem, its path starting at `path`. */
function checkedValue(path: readonly PropertyKey[], value: unknown, schema: z.ZodType): unknown {
  const checked = schema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const problem = issue ? { path: [...path, ...issue.path], message: issue.message } : undefined;
    throw new Error(`mind update would write an invalid state: ${describeIssue(problem)}`);
  }
  return checked.data;
}

/**
 * A log's entries as an update leaves them: each entry the log held before kept as it is (it
 * was checked when it came in, and is frozen), each new one as `entry` reads it. A log keeps
 * its order, so each held entry is looked for after the one before it: a set of the held
 * entries, built on every update, was 0.08 s of a month. (One moved out of order is checked
 * again, which gives what it already is.)
 */
function checkedLog(key: string, entries: readonly unknown[], before: unknown, entry: z.ZodType): unknown[] {
  const held = Array.isArray(before) ? before : [];
  let from = 0;
  return entries.map((value, index) => {
    const at = held.indexOf(value, from);
    if (at === -1) return checkedValue([key, index], value, entry);
    from = at + 1;
    return value;
  });
}

/**
 * A draft of the document for one update. Each key is copied the first time the edit reads
 * or assigns it: an update pays, in copying, checking and freezing, only for what it touches,
 * not for the month of decisions and usage beside it. Of a log (a key in `logs`) only the
 * list is copied: its entries stay the frozen ones. A key still unread when the edit returns
 * (its accessor untouched) is unchanged.
 */
function draftOf<D extends object>(current: D, logs: ReadonlyMap<string, unknown>): D {
  const draft = {};
  const settle = (key: string, value: unknown) =>
    Object.defineProperty(draft, key, { value, writable: true, enumerable: true, configurable: true });
  for (const [key, value] of Object.entries(current)) {
    Object.defineProperty(draft, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const copy = logs.has(key) && Array.isArray(value) ? [...value] : copyOfData(value);
        settle(key, copy);
        return copy;
      },
      set: (next: unknown) => settle(key, next),
    });
  }
  return draft as D;
}

/**
 * A deep copy of what the document holds: JSON's kinds of value only (it is read from JSON and
 * checked before every write), each object a plain one as JSON.parse makes it. structuredClone
 * gives the same copy four times slower; a month of updates spent 0.18 s in it.
 */
function copyOfData<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(copyOfData) as T;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const inner = copyOfData((value as Record<string, unknown>)[key]);
    // An own "__proto__" key stays a key, as JSON.parse leaves it, not the copy's prototype.
    if (key === "__proto__")
      Object.defineProperty(copy, key, {
        value: inner,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else copy[key] = inner;
  }
  return copy as T;
}

/**
 * Each frozen record's text as it stands in the file, and each frozen entry's of a record that
 * is a list, kept as long as the record or entry is: every update writes the whole file, but
 * renders only what it replaced (a log's new entries; every entry of another list it changed,
 * since checking such a record copies its entries).
 */
const renderedRecords = new WeakMap<object, string>();
/** The same for entries, which stand a level further in. */
const renderedEntries = new WeakMap<object, string>();

/**
 * mind.json's text: exactly `JSON.stringify(document, null, 2)`, indented so a person can read
 * it, put together from each record's rendering, a list's from its entries' (renderedRecords,
 * renderedEntries).
 */
function serializeMindFile(document: object): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(document)) {
    if (value === undefined) continue;
    const text = Array.isArray(value)
      ? renderedOnce(renderedRecords, value, () => renderList(value))
      : renderedOnce(renderedRecords, value, () => indented(JSON.stringify(value, null, 2), 1));
    lines.push(`  ${JSON.stringify(key)}: ${text}`);
  }
  return lines.length === 0 ? "{}\n" : `{\n${lines.join(",\n")}\n}\n`;
}

/** A list record's text, one level in: as JSON.stringify would indent it there, entry by entry. */
function renderList(list: readonly unknown[]): string {
  if (list.length === 0) return "[]";
  // JSON.stringify writes null for an entry it cannot render (undefined, a function).
  const entries = list.map((entry) =>
    renderedOnce(renderedEntries, entry, () => indented(JSON.stringify(entry, null, 2) ?? "null", 2)),
  );
  return `[\n    ${entries.join(",\n    ")}\n  ]`;
}

/** `render()`, kept in `cache` for a frozen object; anything else is rendered each time. */
function renderedOnce(cache: WeakMap<object, string>, value: unknown, render: () => string): string {
  const cacheable = typeof value === "object" && value !== null && Object.isFrozen(value);
  let text = cacheable ? cache.get(value) : undefined;
  if (text === undefined) {
    text = render();
    if (cacheable) cache.set(value, text);
  }
  return text;
}

/** JSON text moved `levels` levels of two spaces in (a string value holds no raw line break). */
function indented(text: string, levels: number): string {
  return text.replaceAll("\n", `\n${"  ".repeat(levels)}`);
}

/** Freezes a value and everything in it (read() hands out the document itself). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  for (const inner of Array.isArray(value) ? value : Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

/** A document of the current version with each record's value, leaving out those that are undefined. */
function withRecords<R extends MindRecord>(
  records: readonly R[],
  value: (record: R) => unknown,
): MindFile<R> {
  const document: Record<string, unknown> = { version: MIND_VERSION };
  for (const record of records) {
    const held = value(record);
    if (held !== undefined) document[record.key] = held;
  }
  return document as MindFile<R>;
}

/** The whole document's check: the version, each record's schema, and any other key kept as it is. */
function documentSchema(records: readonly MindRecord[]): z.ZodType {
  return z.looseObject({
    version: z.literal(MIND_VERSION),
    ...Object.fromEntries(records.map((record) => [record.key, record.schema])),
  });
}

/**
 * Reads mind.json into today's shape, or says what is wrong with it. A file of an older
 * version goes through each record's migration steps, version by version, then every record
 * is checked; a newer version is refused, naming it.
 */
function parseMindFile(
  file: string,
  value: unknown,
  records: readonly MindRecord[],
  schema: z.ZodType,
): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new DataFileError(file, `expected an object with "version": ${MIND_VERSION}`);
  }
  const data = value as Record<string, unknown>;
  const version = data.version;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 1) {
    throw new DataFileError(
      file,
      `"version" must be a whole number from 1, found ${JSON.stringify(version)}`,
    );
  }
  if (version > MIND_VERSION) {
    throw new DataFileError(
      file,
      `was written by a newer presence (format version ${version}; this one reads up to ${MIND_VERSION})`,
    );
  }
  let current = data;
  for (let to = version + 1; to <= MIND_VERSION; to++) {
    const next: Record<string, unknown> = { ...current, version: to };
    for (const record of records) {
      const step = record.migrations?.[to];
      if (step && record.key in current) next[record.key] = step(current[record.key]);
    }
    current = next;
  }
  const parsed = schema.safeParse(current);
  if (!parsed.success) {
    throw new DataFileError(
      file,
      `${describeIssue(parsed.error.issues[0], data)} (the file was left as it is; fix or remove that entry by hand, or restore a backup)`,
    );
  }
  for (const record of Object.values(parsed.data as object)) markChecked(record);
  return parsed.data;
}

/**
 * The first problem, with the entry it is in named the way a person finds it in the file:
 * `outbox entry 1 (index 0, id "o-…"): kind: …`.
 */
function describeIssue(
  issue: { path: readonly PropertyKey[]; message: string } | undefined,
  data?: Record<string, unknown>,
): string {
  if (!issue) return "invalid contents";
  const [field, index, ...rest] = issue.path;
  const list = typeof field === "string" ? data?.[field] : undefined;
  if (Array.isArray(list) && typeof index === "number") {
    const entry: unknown = list[index];
    const id =
      typeof entry === "object" && entry !== null && typeof (entry as { id?: unknown }).id === "string"
        ? `, id ${JSON.stringify((entry as { id: string }).id)}`
        : "";
    const inner = rest.length > 0 ? `${rest.map(String).join(".")}: ` : "";
    return `${String(field)} entry ${index + 1} (index ${index}${id}): ${inner}${issue.message}`;
  }
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return `${where}${issue.message}`;
}
