import { readFile, stat, utimes } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { DocumentKind } from "../core/port.ts";
import { SOUND_FORMATS, type SoundFormat, soundFormatOfFile } from "../core/sound.ts";
import {
  DataFileError,
  ensurePrivateDir,
  fsyncDir,
  isErrnoCode,
  namesInDir,
  removeDurable,
  unlinkIfExists,
  writeFileDurable,
} from "./files.ts";
import { PERSON_FILES } from "./person-files.ts";

/** A name the store accepts: one plain file name, nothing that could point outside files/. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** What a kept file is: a document the model reads, or a sound to be transcribed, by its format. */
export type KeptKind = DocumentKind | SoundFormat;

/** The ending a kept document's file has, by kind: how its kind is known again when it is read. */
const DOCUMENT_ENDINGS: Record<DocumentKind, string> = { pdf: ".pdf", text: ".txt" };

function endingOf(kind: KeptKind): string {
  return kind === "pdf" || kind === "text" ? DOCUMENT_ENDINGS[kind] : SOUND_FORMATS[kind].ending;
}

/** A kept file as read back: its kind (from the ending keep gave it) and its bytes. */
export interface KeptFile {
  kind: KeptKind;
  bytes: Buffer;
}

/**
 * Files the person sent, kept owner-only in files/ under the data directory: documents for the
 * model to read, and sounds (voice notes, audio, video notes) for the reply turn to transcribe.
 * The log holds only where a file is (a message's `media.stored`), never its bytes: a PDF in
 * base64 would make every write of messages.json megabytes long. A sound is kept for its
 * keeping time only (removeSoundsKeptBefore), since its transcript is in the log. /wipe deletes
 * the folder, /forget a file that mentions the words or a sound whose transcript does, /export
 * carries them (person-files.ts lists them as kept copies).
 */
export class SentFiles {
  readonly #dataDir: string;

  constructor(options: { dataDir: string }) {
    this.#dataDir = options.dataDir;
  }

  /**
   * Keeps `bytes` as files/<name> with the ending of its kind (0600, in a 0700 folder), durably:
   * the message that points at it is logged after this resolves. Writing the same name again
   * replaces the file, so a message Telegram delivers again after a crash leaves one copy.
   * `keptAt` (the injected clock's now) becomes the file's modification time, which a sound's
   * keeping time counts from. Returns the path for `media.stored`. A name that is not one plain
   * file name is refused: a bug in the caller.
   */
  async keep(name: string, kind: KeptKind, bytes: Uint8Array, keptAt?: Date): Promise<string> {
    const stored = this.storedPath(name, kind);
    const dir = join(this.#dataDir, PERSON_FILES.files);
    await ensurePrivateDir(dir);
    await writeFileDurable(join(this.#dataDir, stored), bytes);
    if (keptAt) await utimes(join(this.#dataDir, stored), keptAt, keptAt);
    return stored;
  }

  /**
   * The path keep will return for `name` and `kind`, before anything is written: a voice note is
   * logged first, naming where its sound will be kept, and downloaded after.
   */
  storedPath(name: string, kind: KeptKind): string {
    if (!SAFE_NAME.test(name)) throw new Error(`not a plain file name for files/: ${name}`);
    return `${PERSON_FILES.files}/${name}${endingOf(kind)}`;
  }

  /**
   * A kept file, its kind and bytes, or null when there is none to read: it is gone (/forget,
   * /wipe or its keeping time deleted it) or the path is not one of this store's (a log edited
   * by hand). Any other failure names the file.
   */
  async read(stored: string): Promise<KeptFile | null> {
    const path = this.#pathOf(stored);
    if (path === null) return null;
    try {
      const bytes = await readFile(path);
      return { kind: kindOfFile(stored), bytes };
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return null;
      throw new DataFileError(
        path,
        `cannot be read (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }

  /** Deletes a kept file for real (/forget of a sound's transcript); false when there was none. */
  async remove(stored: string): Promise<boolean> {
    const path = this.#pathOf(stored);
    if (path === null || !(await unlinkIfExists(path))) return false;
    await fsyncDir(dirname(path));
    return true;
  }

  /**
   * Deletes for real every kept sound kept before `cutoff` (its modification time, which keep
   * set from the clock): a sound's keeping time is over. Documents stay, and so do the sounds
   * `spared` names (their `media.stored`: messages still waiting to be heard). Returns how many.
   */
  async removeSoundsKeptBefore(cutoff: Date, spared: ReadonlySet<string> = new Set()): Promise<number> {
    const dir = join(this.#dataDir, PERSON_FILES.files);
    let removed = 0;
    for (const name of await namesInDir(dir)) {
      if (!SAFE_NAME.test(name) || soundFormatOfFile(name) === null) continue;
      if (spared.has(`${PERSON_FILES.files}/${name}`)) continue;
      const path = join(dir, name);
      try {
        if ((await stat(path)).mtimeMs >= cutoff.getTime()) continue;
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) continue;
        throw error;
      }
      await removeDurable(path);
      removed += 1;
    }
    return removed;
  }

  /** The file a stored path names, or null when it is not one of this store's. */
  #pathOf(stored: string): string | null {
    const [dir, name, ...rest] = stored.split("/");
    if (dir !== PERSON_FILES.files || name === undefined || rest.length > 0 || !SAFE_NAME.test(name))
      return null;
    return join(this.#dataDir, stored);
  }
}

/** A kept file's kind by its ending: a sound's format, a PDF, else text. */
function kindOfFile(stored: string): KeptKind {
  return soundFormatOfFile(stored) ?? (stored.endsWith(DOCUMENT_ENDINGS.pdf) ? "pdf" : "text");
}
