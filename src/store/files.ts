import { randomBytes } from "node:crypto";
import {
  appendFile,
  chmod,
  constants,
  copyFile,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  unlink,
} from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Adapter } from "lowdb";

/** Owner-only permissions: everything under the data directory is someone's private life. */
export const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_DIR_MODE = 0o700;

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
 * Writing a data file or directory failed. Node's own message for a failed write does not
 * say which file ("ENOSPC: no space left on device, write"), so this one names it, says what
 * the error means and what the person can do about it. The file is left as it was.
 */
export class DataWriteError extends Error {
  override readonly name = "DataWriteError";
  /** The errno code (ENOSPC, EACCES…), when the system gave one. */
  readonly code: string | undefined;
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const code = errnoCode(cause);
    super(`cannot write ${file}: ${whatToDo(code, file, cause)}`, { cause });
    this.code = code;
  }
}

/** The meaning of a write error in words, and the person's next step. */
function whatToDo(code: string | undefined, file: string, cause: unknown): string {
  switch (code) {
    case "ENOSPC":
      return `the disk is full (ENOSPC). Free some space on the disk that holds ${dirname(file)}.`;
    case "EDQUOT":
      return "the disk quota of this user is used up (EDQUOT). Free some space or raise the quota.";
    case "EACCES":
    case "EPERM":
      return `permission denied (${code}). Check that the user running presence owns ${dirname(file)} and may write to it.`;
    case "EROFS":
      return `the file system is read-only (EROFS). Put PRESENCE_DATA_DIR on a writable disk.`;
    case "EFBIG":
      return "the file is larger than this process may write (EFBIG: the file size limit, `ulimit -f`). Raise the limit.";
    default:
      return `${errorMessage(cause)}.`;
  }
}

function errnoCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

/** Runs one write step, turning a system error into a DataWriteError naming `file`. */
async function writing<T>(file: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof DataWriteError || errnoCode(error) === undefined) throw error;
    throw new DataWriteError(file, error);
  }
}

/**
 * Creates a directory (and its parents) readable by its owner only, and tightens an existing
 * one, so a data directory made by hand or by an older version does not stay world-readable.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await writing(dir, async () => {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await chmod(dir, PRIVATE_DIR_MODE);
  });
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
 * Whether a write waits for the disk. Every store flushes by default, and the bot never
 * changes that: a power cut must not undo what the person was told was kept. A simulation
 * lives a month in seconds in a temp directory that is deleted afterwards, and the flushes
 * would be most of its time; it turns them off (`fsync: false`), and its writes stay atomic.
 */
export interface WriteOptions {
  /** Flush each file and its directory to disk before the write resolves; true unless said otherwise. */
  fsync?: boolean;
  /**
   * For simulations only, whose data directory is a temp one deleted after the run: a store
   * that rewrites a whole document on every change (mind.json, the message log's window)
   * changes it in memory, and writes it when flushed (its `flush()`, before the directory
   * goes), once for every change since; the trace appends its waiting records together. A
   * month makes some five thousand changes of a mind that grows to 170 KB. Each write stays
   * atomic, but a crash loses what was not flushed: the bot never sets it.
   */
  writeOnFlush?: boolean;
}

/**
 * Replaces a file so that a crash at any moment leaves either the old contents or the new,
 * never a torn mix: write a private temp file beside it, flush it, rename it over the target,
 * flush the directory (`fsync: false` skips both flushes, not the rename).
 */
export async function writeFileDurable(
  path: string,
  contents: string | Uint8Array,
  options: WriteOptions = {},
): Promise<void> {
  const temp = await writePrivateTemp(path, contents, options);
  try {
    await writing(path, () => rename(temp, path));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  if (options.fsync ?? true) await fsyncDir(dirname(path));
}

/**
 * Writes `contents` to a new private temp file beside `target` and flushes it: the first half
 * of every durable replacement, before it is renamed or linked into place. Returns the temp
 * file's path; on failure the partial file is removed and the error names `target`. Temp
 * files are named `.<target's name>.<12 hex digits>.tmp` (isTempFileName): one a dead writer
 * left behind is found and removed by that name.
 */
export async function writePrivateTemp(
  target: string,
  contents: string | Uint8Array,
  options: WriteOptions = {},
): Promise<string> {
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await writing(target, () => open(temp, "wx", PRIVATE_FILE_MODE));
  try {
    await writing(target, async () => {
      try {
        await handle.writeFile(contents);
        if (options.fsync ?? true) await handle.sync();
      } finally {
        await handle.close();
      }
    });
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return temp;
}

/** Whether a file name is a temp file of writePrivateTemp's (a hidden name ending in .tmp). */
export function isTempFileName(name: string): boolean {
  return name.startsWith(".") && name.endsWith(".tmp");
}

/** Appends to a private file (created owner-only), naming the file if it fails. */
export async function appendPrivate(path: string, contents: string): Promise<void> {
  await writing(path, () => appendFile(path, contents, { mode: PRIVATE_FILE_MODE }));
}

/** What a damaged copy's name adds to the original's: `<name>.damaged-<UTC time>`. */
const DAMAGED_INFIX = ".damaged-";
const DAMAGED_STAMP = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z(?:-\d+)?$/;

/**
 * Keeps a damaged file's original contents beside it as `<name>.damaged-<UTC time>`
 * (owner-only, never overwritten: a second copy in the same second gets `-2`, `-3`…) before
 * the caller repairs the file. Only for files safe to repair, such as the trace; `now` comes
 * from the caller's clock. Returns the copy's path.
 */
export async function keepDamagedCopy(file: string, now: Date): Promise<string> {
  const stamp = now
    .toISOString()
    .replace(/\.\d{3}/, "")
    .replace(/[-:]/g, "");
  for (let n = 1; ; n++) {
    const copy = `${file}${DAMAGED_INFIX}${stamp}${n === 1 ? "" : `-${n}`}`;
    try {
      await writing(copy, () => copyFile(file, copy, constants.COPYFILE_EXCL));
    } catch (error) {
      if (error instanceof DataWriteError && error.code === "EEXIST") continue;
      throw error;
    }
    await writing(copy, () => chmod(copy, PRIVATE_FILE_MODE));
    await fsyncDir(dirname(file));
    return copy;
  }
}

/**
 * When a damaged copy was made, from its name (`trace.jsonl.damaged-20260207T080000Z`), or
 * null when the name is not one of keepDamagedCopy's. `of` limits it to copies of that file name.
 */
export function damagedCopyTime(name: string, of?: string): Date | null {
  const at = name.indexOf(DAMAGED_INFIX);
  if (at <= 0 || (of !== undefined && name.slice(0, at) !== of)) return null;
  const match = DAMAGED_STAMP.exec(name.slice(at + DAMAGED_INFIX.length));
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match;
  return new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}Z`);
}

/**
 * Deletes a file or directory for real (the person asked to forget) and flushes the parent
 * directory so the deletion is not undone by a crash. A missing path is not an error.
 */
export async function removeDurable(path: string): Promise<void> {
  await writing(path, () => rm(path, { recursive: true, force: true }));
  await fsyncDir(dirname(path));
}

/**
 * Deletes the temp files a crash in the middle of writeFileDurable left beside `path`: they
 * hold the same private data as the file itself.
 */
export async function removeLeftoverTemps(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  const names = await namesInDir(dir);
  const leftovers = names.filter((name) => name.startsWith(prefix) && isTempFileName(name));
  await Promise.all(leftovers.map((name) => rm(join(dir, name), { force: true })));
}

/** Deletes one file; true when it existed. */
export async function unlinkIfExists(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return false;
    throw new DataWriteError(path, error);
  }
}

/**
 * The names in a directory, or none when there is no such directory (nothing there, or a file
 * where it would be): a store's folder that was never written holds nothing to list.
 */
export async function namesInDir(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isErrnoCode(error, "ENOENT", "ENOTDIR")) return [];
    throw error;
  }
}

/** The JSON value a text holds, or null when it is not JSON (a torn or foreign line, a damaged file). */
export function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
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

export interface DurableJsonFileOptions<T> extends WriteOptions {
  /** Turns the parsed JSON into T, throwing a DataFileError when it is not acceptable. */
  parse?: (value: unknown) => T;
  /** Renders T as file contents; defaults to indented JSON so the file stays readable by a person. */
  serialize?: (data: T) => string;
}

/**
 * A lowdb adapter for private data that must survive crashes: reads refuse (rather than
 * reset) a file that is not valid JSON, and writes are atomic and (unless `fsync: false`)
 * flushed before they resolve.
 */
export class DurableJsonFile<T> implements Adapter<T> {
  readonly #parse: (value: unknown) => T;
  readonly #serialize: (data: T) => string;
  readonly #write: WriteOptions;

  constructor(
    readonly path: string,
    options: DurableJsonFileOptions<T> = {},
  ) {
    this.#parse = options.parse ?? ((value) => value as T);
    this.#serialize = options.serialize ?? ((data) => `${JSON.stringify(data, null, 2)}\n`);
    this.#write = { fsync: options.fsync ?? true };
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
    await writeFileDurable(this.path, this.#serialize(data), this.#write);
  }
}

/** True when the error is a Node system error with one of these codes. */
export function isErrnoCode(error: unknown, ...codes: string[]): boolean {
  const code = errnoCode(error);
  return code !== undefined && codes.includes(code);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
