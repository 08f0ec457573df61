import { isUtf8 } from "node:buffer";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  ensurePrivateDir,
  fsyncDir,
  isErrnoCode,
  namesInDir,
  readTextIfExists,
  removeDurable,
  removeLeftoverTemps,
  unlinkIfExists,
  writeFileDurable,
} from "./files.ts";
import { PERSON_FILES } from "./person-files.ts";

/** The only keys a note may have: they are file names, so nothing that could leave the directory. */
const NOTE_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Largest note accepted by default: a note is something to look up, not a second log. */
const DEFAULT_MAX_NOTE_BYTES = 64 * 1024;

/**
 * A key outside [A-Za-z0-9_-]{1,64}. The message is written for the model that asked, so it
 * can choose a valid key; the key is never rewritten into a valid one behind its back.
 */
export class InvalidNoteKeyError extends Error {
  override readonly name = "InvalidNoteKeyError";
  constructor(readonly key: string) {
    const shown = key.length > 80 ? `${JSON.stringify(key.slice(0, 80))}…` : JSON.stringify(key);
    super(
      `invalid note key ${shown}: a key is 1 to 64 characters, each a letter A-Z or a-z, a digit, "_" or "-" (no slashes, dots, spaces or other characters)`,
    );
  }
}

/** A note larger than the store accepts; the model is told the limit so it can shorten it. */
export class NoteTooLargeError extends Error {
  override readonly name = "NoteTooLargeError";
  constructor(
    readonly key: string,
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`note ${JSON.stringify(key)} is ${bytes} bytes; notes are limited to ${maxBytes} bytes`);
  }
}

/** What `list` shows for each note: enough for the model to decide what to read. */
export interface NoteSummary {
  key: string;
  bytes: number;
}

export interface NotesStoreOptions {
  dataDir: string;
  maxNoteBytes?: number;
}

/**
 * Durable keyed notes in data/notes/<key>.md: things the companion decided to keep verbatim
 * (a plan, a list, an archived WORKSPACE) and reads back only when it needs them, so they cost
 * nothing in the prompt the rest of the time.
 */
export class NotesStore {
  readonly dir: string;
  readonly #maxNoteBytes: number;

  constructor(options: NotesStoreOptions) {
    this.dir = join(options.dataDir, PERSON_FILES.notes);
    this.#maxNoteBytes = options.maxNoteBytes ?? DEFAULT_MAX_NOTE_BYTES;
  }

  /** Every note, sorted by key. */
  async list(): Promise<NoteSummary[]> {
    const keys = (await namesInDir(this.dir))
      .filter((name) => name.endsWith(".md"))
      .map((name) => name.slice(0, -3))
      .filter((key) => NOTE_KEY_PATTERN.test(key))
      .sort();
    const notes: NoteSummary[] = [];
    for (const key of keys) {
      try {
        const info = await stat(this.#path(key));
        if (info.isFile()) notes.push({ key, bytes: info.size });
      } catch (error) {
        if (!isErrnoCode(error, "ENOENT")) throw error;
      }
    }
    return notes;
  }

  /** The note's text, or null when there is no note with this key. */
  async read(key: string): Promise<string | null> {
    return readTextIfExists(this.#path(assertNoteKey(key)));
  }

  /** Creates or replaces a note, durably and readable by the owner only. */
  async write(key: string, text: string): Promise<void> {
    const path = this.#path(assertNoteKey(key));
    const bytes = Buffer.byteLength(text);
    if (bytes > this.#maxNoteBytes) throw new NoteTooLargeError(key, bytes, this.#maxNoteBytes);
    await ensurePrivateDir(this.dir);
    await writeFileDurable(path, text);
  }

  /** Deletes a note for real; true when it existed. */
  async delete(key: string): Promise<boolean> {
    const path = this.#path(assertNoteKey(key));
    const existed = await unlinkIfExists(path);
    await removeLeftoverTemps(path);
    if (existed) await fsyncDir(this.dir);
    return existed;
  }

  /**
   * Deletes for real the lines of every note that `mentions` picks (/forget); a note left
   * with nothing else is deleted. A note that is not UTF-8 text (damaged, or edited in another
   * encoding) is never rewritten, since that would change the bytes presence cannot read: if
   * it mentions the text it is deleted whole, otherwise left as it is. Returns how many notes
   * changed.
   */
  async deleteLines(mentions: (text: string) => boolean): Promise<number> {
    let changed = 0;
    for (const { key } of await this.list()) {
      const path = this.#path(key);
      let bytes: Buffer;
      try {
        bytes = await readFile(path);
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) continue;
        throw error;
      }
      const text = bytes.toString("utf8");
      if (!mentions(text)) continue;
      changed++;
      const lines = text.split("\n");
      const kept = lines.filter((line) => !mentions(line));
      const whole = !isUtf8(bytes) || kept.length === lines.length || kept.join("").trim() === "";
      if (whole) await this.delete(key);
      else await writeFileDurable(path, kept.join("\n"));
    }
    return changed;
  }

  /** Deletes every note (/wipe). */
  async deleteAll(): Promise<void> {
    await removeDurable(this.dir);
  }

  #path(key: string): string {
    return join(this.dir, `${key}.md`);
  }
}

/** Returns the key when it is valid, so callers can validate and use it in one step. */
function assertNoteKey(key: string): string {
  if (typeof key !== "string" || !NOTE_KEY_PATTERN.test(key)) throw new InvalidNoteKeyError(String(key));
  return key;
}
