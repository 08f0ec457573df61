import { mkdtemp, open, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, vi } from "vitest";

const made: string[] = [];

/** A fresh directory for one test, removed afterwards; the data dir is a child so its creation is tested too. */
export async function tempDataDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "presence-store-"));
  made.push(root);
  return join(root, "data");
}

afterEach(async () => {
  // A companion closed with work still in flight (its close is bounded) may write a moment
  // after the test; rm retries a directory that was not empty yet instead of failing the test.
  await Promise.all(
    made.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })),
  );
});

/** Permission bits of a path, e.g. 0o600. */
export async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

/** How many times `work` flushed a file or a directory to disk (FileHandle.sync). */
export async function countSyncs(work: () => Promise<void>): Promise<number> {
  const probe = await open(tmpdir(), "r");
  const fileHandle = Object.getPrototypeOf(probe) as { sync(): Promise<void> };
  await probe.close();
  const sync = vi.spyOn(fileHandle, "sync");
  try {
    await work();
    return sync.mock.calls.length;
  } finally {
    sync.mockRestore();
  }
}
