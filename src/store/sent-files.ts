import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { DocumentKind } from "../core/port.ts";
import { DataFileError, ensurePrivateDir, isErrnoCode, writeFileDurable } from "./files.ts";
import { PERSON_FILES } from "./person-files.ts";

/** A name the store accepts: one plain file name, nothing that could point outside files/. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** The ending a kept document's file has, by kind: how its kind is known again when it is read. */
const EXTENSIONS: Record<DocumentKind, string> = { pdf: ".pdf", text: ".txt" };

/** A kept document as read back: its kind (from the ending keep gave it) and its bytes. */
export interface KeptDocument {
  kind: DocumentKind;
  bytes: Buffer;
}

/**
 * Documents the person sent for the model to read, kept owner-only in files/ under the data
 * directory. The log holds only where a document is (a message's `media.stored`), never its
 * bytes: a PDF in base64 would make every write of messages.json megabytes long. /wipe deletes
 * the folder, /forget a document that mentions the words, /export carries them
 * (person-files.ts lists them as kept copies).
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
   * Returns the path for `media.stored`. A name that is not one plain file name is refused: a
   * bug in the caller.
   */
  async keep(name: string, kind: DocumentKind, bytes: Uint8Array): Promise<string> {
    if (!SAFE_NAME.test(name)) throw new Error(`not a plain file name for files/: ${name}`);
    const file = `${name}${EXTENSIONS[kind]}`;
    const dir = join(this.#dataDir, PERSON_FILES.files);
    await ensurePrivateDir(dir);
    await writeFileDurable(join(dir, file), bytes);
    return `${PERSON_FILES.files}/${file}`;
  }

  /**
   * A kept document, its kind and bytes, or null when there is none to read: it is gone (/forget
   * or /wipe deleted it) or the path is not one of this store's (a log edited by hand). Any other
   * failure names the file.
   */
  async read(stored: string): Promise<KeptDocument | null> {
    const [dir, name, ...rest] = stored.split("/");
    if (dir !== PERSON_FILES.files || name === undefined || rest.length > 0 || !SAFE_NAME.test(name))
      return null;
    const path = join(this.#dataDir, stored);
    try {
      const bytes = await readFile(path);
      return { kind: name.endsWith(EXTENSIONS.pdf) ? "pdf" : "text", bytes };
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return null;
      throw new DataFileError(
        path,
        `cannot be read (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }
}
