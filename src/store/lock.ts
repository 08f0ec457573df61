import { randomBytes } from "node:crypto";
import { link, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { type Clock, systemClock } from "../clock.ts";
import {
  ensurePrivateDir,
  isErrnoCode,
  readTextIfExists,
  unlinkIfExists,
  writePrivateTemp,
} from "./files.ts";

/** The lock's file name inside the data directory. */
export const LOCK_FILE = "presence.lock";

const lockInfoSchema = z.looseObject({
  pid: z.number().int().positive(),
  purpose: z.string(),
  startedAt: z.string(),
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
}

const TAKEOVER_ATTEMPTS = 3;

/**
 * Claims the data directory for this process (`purpose` says which command: start, chat,
 * inject…). The lock file appears atomically with its contents, so nobody ever reads a
 * half-written one; a lock left by a process that no longer exists is taken over.
 */
export async function acquireDataLock(
  dataDir: string,
  purpose: string,
  clock: Clock = systemClock,
): Promise<DataLock> {
  await ensurePrivateDir(dataDir);
  const path = join(dataDir, LOCK_FILE);
  const info: LockInfo = { pid: process.pid, purpose, startedAt: clock.now().toISOString() };
  for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
    if (await createExclusively(path, `${JSON.stringify(info)}\n`)) return heldLock(path, info);
    const holderText = await readTextIfExists(path);
    if (holderText === null) continue;
    const holder = parseLockInfo(holderText);
    if (holder && isAlive(holder.pid)) throw new DataLockedError(dataDir, holder);
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
  return holder && isAlive(holder.pid) ? holder : null;
}

function heldLock(path: string, info: LockInfo): DataLock {
  let released = false;
  return {
    path,
    info,
    async release() {
      if (released) return;
      released = true;
      const current = parseLockInfo((await readTextIfExists(path)) ?? "");
      if (current?.pid === info.pid && current.startedAt === info.startedAt) await unlinkIfExists(path);
    },
  };
}

/** Writes a private temp file, then hard-links it into place: link fails if the target exists. */
async function createExclusively(path: string, contents: string): Promise<boolean> {
  const temp = await writePrivateTemp(`${path}.${randomBytes(6).toString("hex")}.tmp`, contents);
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if (isErrnoCode(error, "EEXIST")) return false;
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
}

function parseLockInfo(text: string): LockInfo | null {
  try {
    const result = lockInfoSchema.safeParse(JSON.parse(text));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

/** Signal 0 checks for existence without touching the process; EPERM means it exists but is not ours. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isErrnoCode(error, "EPERM");
  }
}
