import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, readdir, readFile, rename, rm, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Adapter } from "lowdb";

/** Owner-only permissions: everything under the data directory is someone's private life. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * A data file that exists but cannot be used. Carries the file so the person knows which one
 * to look at; the file itself is never touched after this is thrown.
 */
export class DataFileError extends Error {
  override readonly name = "DataFileError";
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
}

/**
 * Creates a directory (and its parents) readable by its owner only, and tightens an existing
 * one, so a data directory made by hand or by an older version does not stay world-readable.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmod(dir, PRIVATE_DIR_MODE);
}

/**
 * Flushes a directory entry to disk, so a rename or unlink inside it survives a power cut.
 * Platforms that cannot open a directory for syncing are tolerated: there the rename is the
 * best guarantee available.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch (error) {
    if (!isErrnoCode(error, "EISDIR", "EPERM", "EINVAL", "EACCES")) throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * Replaces a file so that a crash at any moment leaves either the old contents or the new,
 * never a torn mix: write a private temp file beside it, flush it, rename it over the target,
 * flush the directory.
 */
export async function writeFileDurable(path: string, contents: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  const temp = await writePrivateTemp(
    join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`),
    contents,
  );
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await fsyncDir(dir);
}

/**
 * Creates `temp` (it must not exist) readable by its owner only, writes and flushes it:
 * the first half of every durable replacement, before it is renamed or linked into place.
 * On failure the partial file is removed.
 */
export async function writePrivateTemp(temp: string, contents: string | Uint8Array): Promise<string> {
  const handle = await open(temp, "wx", PRIVATE_FILE_MODE);
  try {
    try {
      await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return temp;
}

/**
 * Deletes a file or directory for real (the person asked to forget) and flushes the parent
 * directory so the deletion is not undone by a crash. A missing path is not an error.
 */
export async function removeDurable(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
  await fsyncDir(dirname(path));
}

/**
 * Deletes the temp files a crash in the middle of writeFileDurable left beside `path`: they
 * hold the same private data as the file itself.
 */
export async function removeLeftoverTemps(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return;
    throw error;
  }
  const leftovers = names.filter((name) => name.startsWith(prefix) && name.endsWith(".tmp"));
  await Promise.all(leftovers.map((name) => rm(join(dir, name), { force: true })));
}

/** Deletes one file; true when it existed. */
export async function unlinkIfExists(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return false;
    throw error;
  }
}

/** Reads a whole text file, or null when it does not exist; any other failure names the file. */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return null;
    throw new DataFileError(path, `cannot be read (${errorMessage(error)})`);
  }
}

export interface DurableJsonFileOptions<T> {
  /** Turns the parsed JSON into T, throwing a DataFileError when it is not acceptable. */
  parse?: (value: unknown) => T;
  /** Renders T as file contents; defaults to indented JSON so the file stays readable by a person. */
  serialize?: (data: T) => string;
}

/**
 * A lowdb adapter for private data that must survive crashes: reads refuse (rather than
 * reset) a file that is not valid JSON, and writes are atomic and flushed before they resolve.
 */
export class DurableJsonFile<T> implements Adapter<T> {
  readonly #parse: (value: unknown) => T;
  readonly #serialize: (data: T) => string;

  constructor(
    readonly path: string,
    options: DurableJsonFileOptions<T> = {},
  ) {
    this.#parse = options.parse ?? ((value) => value as T);
    this.#serialize = options.serialize ?? ((data) => `${JSON.stringify(data, null, 2)}\n`);
  }

  async read(): Promise<T | null> {
    const text = await readTextIfExists(this.path);
    if (text === null) return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new DataFileError(this.path, `is not valid JSON (${errorMessage(error)})`);
    }
    return this.#parse(value);
  }

  async write(data: T): Promise<void> {
    await writeFileDurable(this.path, this.#serialize(data));
  }
}

/** True when the error is a Node system error with one of these codes. */
export function isErrnoCode(error: unknown, ...codes: string[]): boolean {
  return (
    error instanceof Error && "code" in error && typeof error.code === "string" && codes.includes(error.code)
  );
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
