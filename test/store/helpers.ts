import { mkdtemp, open, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished, vi } from "vitest";

/**
 * A fresh directory for one test, removed once the test has finished (its afterEach hooks too);
 * the data dir is a child so its creation is tested too.
 */
export async function tempDataDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "presence-store-"));
  // Per test rather than a top-level afterEach: on a worker shared by several files this module
  // is imported once, and a top-level hook would belong to the first file only.
  onTestFinished(async () => {
    // A companion closed with work still in flight (its close is bounded) may write a moment
    // after the test; rm retries a directory that was not empty yet instead of failing the test.
    await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });
  return join(root, "data");
}

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
