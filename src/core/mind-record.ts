import { z } from "zod";

/**
 * The contract between mind.json and the rooms that keep something in it. The file is one
 * document so that a change touching several records (a check-in's outbox entry and its
 * decision, a reflection and its usage) is one atomic write; but each record belongs to the
 * room that reads and changes it, which declares its key, its shape, what a fresh install
 * holds, and how an older file's record is brought up to date. The store (store/mind.ts)
 * keeps the document and knows none of these shapes: the records reach it from above, listed
 * once (companion/mind-document.ts). It sits here, at the bottom, because rooms on every
 * floor own a record, the check-in rules' state in core and conversation among them.
 */

/** One top-level key of mind.json, declared by the room that owns it. */
export interface MindRecord<K extends string = string, T = unknown> {
  readonly key: K;
  /**
   * Checks the record when the file is read and before each write. A field added within a
   * version carries a default here, so a file written before it still loads.
   */
  readonly schema: z.ZodType<T>;
  /** What a fresh install holds; undefined for a record absent until first set. */
  readonly initial: (now: Date) => T;
  /**
   * Steps that bring the record of a file written at an older format version to the next,
   * keyed by the version each leads to; a step leaves what it does not understand for the
   * schema to name.
   */
  readonly migrations?: Readonly<Record<number, (stored: unknown) => unknown>>;
  /**
   * What of the record outlives /wipe, given what it held and the moment of the wipe; without
   * it the record starts over from `initial`.
   */
  afterWipe?(kept: T, now: Date): T;
  /**
   * Set when the record is a log (mindLogRecord): a list whose entries, once in it, are never
   * changed in place, only added, dropped or replaced whole. The store then hands an update the
   * entries themselves, frozen, and checks and renders only those it has not seen, so appending
   * to a month of usage or decisions does not copy the month.
   */
  readonly entry?: z.ZodType;
}

/** Declares a record, its value's type taken from its schema. */
export function mindRecord<K extends string, S extends z.ZodType>(record: {
  key: K;
  schema: S;
  initial: (now: Date) => z.output<S>;
  migrations?: Readonly<Record<number, (stored: unknown) => unknown>>;
  afterWipe?: (kept: z.output<S>, now: Date) => z.output<S>;
}): MindRecord<K, z.output<S>> {
  return record as MindRecord<K, z.output<S>>;
}

/**
 * Declares a log: a record that is a list of `entry`, oldest first, whose entries are never
 * changed in place (MindRecord.entry). Changing one throws, since it is frozen: replace it whole.
 */
export function mindLogRecord<K extends string, S extends z.ZodType>(record: {
  key: K;
  entry: S;
  migrations?: Readonly<Record<number, (stored: unknown) => unknown>>;
  afterWipe?: (kept: z.output<S>[], now: Date) => z.output<S>[];
}): MindRecord<K, z.output<S>[]> {
  return { ...record, schema: z.array(record.entry).default([]), initial: () => [] } as MindRecord<
    K,
    z.output<S>[]
  >;
}

/** The value a record holds. */
type RecordValue<R> = R extends MindRecord<string, infer T> ? T : never;

/**
 * The document these records make, as the rooms that read them see it: a record that may be
 * absent is an optional key. A room names only the records it touches, so an operation says
 * in its type what it reads and writes.
 */
export type MindDocument<R extends MindRecord> = {
  -readonly [K in R as undefined extends RecordValue<K> ? never : K["key"]]: RecordValue<K>;
} & {
  -readonly [K in R as undefined extends RecordValue<K> ? K["key"] : never]?: RecordValue<K>;
};

/**
 * What an operation needs of the mind's store: a copy of the document, and one update that
 * edits a draft and writes it once (validated whole), after every update asked for before it.
 */
export interface MindAccess<S> {
  read(): S;
  update<R>(edit: (draft: S) => R | Promise<R>): Promise<R>;
}
