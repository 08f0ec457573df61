import { readFileSync, unlinkSync } from "node:fs";
import { access, link, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { type Clock, systemClock } from "../core/clock.ts";
import {
  DataWriteError,
  ensurePrivateDir,
  isErrnoCode,
  parseJsonOrNull,
  readTextIfExists,
  unlinkIfExists,
  writePrivateTemp,
} from "./files.ts";
import { LOCK_FILE, removeDeadWritersTemps } from "./person-files.ts";

const lockInfoSchema = z.looseObject({
  pid: z.number().int().positive(),
  purpose: z.string(),
  /** From the injected clock: for people reading the file, never for deciding who is alive. */
  startedAt: z.string(),
  /**
   * The holder's start time in clock ticks since boot (Linux: field 22 of /proc/PID/stat) and
   * the boot it belongs to: with the PID they name one process, so a recycled PID is not taken
   * for the holder. Absent where there is no /proc, and in locks written by older versions.
   */
  processStart: z.number().int().nonnegative().optional(),
  bootId: z.string().optional(),
});
/** Who holds the data directory, as written in the lock file. */
export type LockInfo = z.infer<typeof lockInfoSchema>;

/**
 * Another live process owns the data directory. Two processes writing one log would
 * interleave and overwrite each other's turns, so the second one refuses to start.
 */
export class DataLockedError extends Error {
  override readonly name = "DataLockedError";
  constructor(
    readonly dataDir: string,
    readonly holder: LockInfo,
  ) {
    super(
      `presence is already running (pid ${holder.pid}, ${holder.purpose}) for data directory ${dataDir}; stop it first`,
    );
  }
}

/** Proof of owning a data directory; release it on the way out. */
export interface DataLock {
  readonly path: string;
  readonly info: LockInfo;
  /** Removes the lock if it is still this process's; calling it again does nothing. */
  release(): Promise<void>;
  /**
   * Keeps the lock until this process exits, then removes it (if it is still this process's).
   * For work that is abandoned but cannot be stopped at once (a start cancelled while its
   * recovery waits on the model): the directory stays ours while anything here may still
   * write to it, and the next process finds it free as soon as this one is gone.
   */
  releaseAtExit(): void;
}

const TAKEOVER_ATTEMPTS = 3;

/**
 * Claims the data directory for this process (`purpose` says which command: start, chat,
 * inject…). The lock file appears atomically with its contents, so nobody ever reads a
 * half-written one; a lock whose holder no longer runs (gone, a zombie, or its PID now
 * another program's) is taken over. Once the directory is ours, no other writer exists, so
 * temp files a dead writer left behind are removed before anything else reads or writes.
 */
export async function acquireDataLock(
  dataDir: string,
  purpose: string,
  clock: Clock = systemClock,
): Promise<DataLock> {
  await ensurePrivateDir(dataDir);
  const path = join(dataDir, LOCK_FILE);
  const info: LockInfo = {
    pid: process.pid,
    purpose,
    startedAt: clock.now().toISOString(),
    ...(await ownIdentity()),
  };
  for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
    if (await createExclusively(path, `${JSON.stringify(info)}\n`)) {
      const lock = heldLock(path, info);
      try {
        await removeDeadWritersTemps(dataDir);
      } catch (error) {
        await lock.release();
        throw error;
      }
      return lock;
    }
    const holderText = await readTextIfExists(path);
    if (holderText === null) continue;
    const holder = parseLockInfo(holderText);
    if (holder && (await isAlive(holder))) throw new DataLockedError(dataDir, holder);
    // Dead holder (or an unreadable lock): remove it only if it is still the same file contents.
    if ((await readTextIfExists(path)) === holderText) await unlinkIfExists(path);
  }
  const holder = parseLockInfo((await readTextIfExists(path)) ?? "");
  throw new DataLockedError(dataDir, holder ?? { pid: 0, purpose: "unknown", startedAt: "" });
}

/** Who holds the data directory right now, or null when nobody alive does (for `status`). */
export async function readDataLock(dataDir: string): Promise<LockInfo | null> {
  const text = await readTextIfExists(join(dataDir, LOCK_FILE));
  const holder = text === null ? null : parseLockInfo(text);
  return holder && (await isAlive(holder)) ? holder : null;
}

function heldLock(path: string, info: LockInfo): DataLock {
  let released = false;
  const isOurs = (text: string | null) => {
    const current = parseLockInfo(text ?? "");
    return current?.pid === info.pid && current.startedAt === info.startedAt;
  };
  // On "exit" only synchronous work runs: read and unlink without awaiting.
  const releaseNow = () => {
    if (released) return;
    released = true;
    let text: string | null = null;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return;
    }
    if (isOurs(text)) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone, or the disk refuses: the next start sees a dead holder and takes over.
      }
    }
  };
  return {
    path,
    info,
    async release() {
      if (released) return;
      released = true;
      if (isOurs(await readTextIfExists(path))) await unlinkIfExists(path);
    },
    releaseAtExit() {
      process.once("exit", releaseNow);
    },
  };
}

/** Writes a private temp file, then hard-links it into place: link fails if the target exists. */
async function createExclusively(path: string, contents: string): Promise<boolean> {
  const temp = await writePrivateTemp(path, contents);
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if (isErrnoCode(error, "EEXIST")) return false;
    throw new DataWriteError(path, error);
  } finally {
    await rm(temp, { force: true });
  }
}

function parseLockInfo(text: string): LockInfo | null {
  const result = lockInfoSchema.safeParse(parseJsonOrNull(text));
  return result.success ? result.data : null;
}

/**
 * Whether the lock's holder still runs. Where /proc tells (Linux), the PID must exist and
 * not be a zombie — a process killed with SIGKILL stays one until its parent reaps it, which
 * some container inits never do — and, when the lock recorded them, have the same start time
 * in the same boot: otherwise the PID was recycled for another program. Elsewhere signal 0
 * checks for existence (EPERM means it exists but is not ours).
 */
async function isAlive(holder: LockInfo): Promise<boolean> {
  const stat = await procStat(holder.pid);
  if (stat === undefined) {
    try {
      process.kill(holder.pid, 0);
      return true;
    } catch (error) {
      return isErrnoCode(error, "EPERM");
    }
  }
  if (stat === null || stat.state === "Z" || stat.state === "X") return false;
  if (holder.processStart !== undefined && holder.processStart !== stat.startTicks) return false;
  return holder.bootId === undefined || holder.bootId === (await readBootId());
}

/** This process's start time and boot, for the lock; nothing where /proc cannot tell. */
async function ownIdentity(): Promise<Pick<LockInfo, "processStart" | "bootId">> {
  const stat = await procStat(process.pid);
  const bootId = await readBootId();
  if (!stat) return {};
  return { processStart: stat.startTicks, ...(bootId ? { bootId } : {}) };
}

/**
 * A process's state (field 3 of /proc/PID/stat) and start time in clock ticks since boot
 * (field 22); null when /proc has no such process, undefined when there is no /proc (not
 * Linux) or it says nothing usable. Fields are counted after the last ")", since the command
 * name before it may hold spaces and parentheses.
 */
async function procStat(pid: number): Promise<{ state: string; startTicks: number } | null | undefined> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    if (!isErrnoCode(error, "ENOENT", "ESRCH")) return undefined;
    return (await hasProcfs()) ? null : undefined;
  }
  const fields = text
    .slice(text.lastIndexOf(")") + 1)
    .trim()
    .split(/\s+/);
  const state = fields[0];
  const startTicks = Number(fields[22 - 3]);
  if (!state || !Number.isSafeInteger(startTicks)) return undefined;
  return { state, startTicks };
}

async function hasProcfs(): Promise<boolean> {
  try {
    await access("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
}

/** Changes at every boot, so a lock from before a reboot never names a live process. */
async function readBootId(): Promise<string | undefined> {
  try {
    return (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim() || undefined;
  } catch {
    return undefined;
  }
}
