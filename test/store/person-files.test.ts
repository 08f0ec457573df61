import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquireDataLock } from "../../src/store/lock.ts";
import { keptCopies, removeKeptCopies } from "../../src/store/person-files.ts";
import { tempDataDir } from "./helpers.ts";

/** A data directory as a crash, a repair and an /export leave it, beside the stores' own files. */
async function crowdedDataDir(): Promise<string> {
  const dataDir = await tempDataDir();
  await mkdir(join(dataDir, "archive"), { recursive: true });
  await mkdir(join(dataDir, "notes"), { recursive: true });
  await mkdir(join(dataDir, "exports"), { recursive: true });
  await mkdir(join(dataDir, "files"), { recursive: true });
  const files: Record<string, string> = {
    "mind.json": "{}",
    ".mind.json.0123456789ab.tmp": "words",
    "trace.jsonl.damaged-20260207T080000Z": "words",
    "archive/2026-01.json": "{}",
    "archive/.2026-01.json.0123456789ab.tmp": "words",
    "notes/plan.md": "words",
    "notes/.plan.md.0123456789ab.tmp": "words",
    "exports/presence-export-2026-02-07.json": "words",
    "files/telegram-1001-7.txt": "words",
    "files/telegram-1001-9.ogg": "OggS!",
    "files/.telegram-1001-8.pdf.0123456789ab.tmp": "words",
    "telegram.json": "{}",
    // Another process taking the lock at this moment: not a copy, and not to be removed.
    ".presence.lock.0123456789ab.tmp": '{"pid":1,"purpose":"chat","startedAt":""}',
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dataDir, name), text);
  return dataDir;
}

describe("the person's files", () => {
  it("finds every copy no store reads: crash leftovers, damaged originals, exports, sent documents and sounds", async () => {
    const dataDir = await crowdedDataDir();
    const copies = await keptCopies(dataDir);
    expect(copies.map((c) => [c.path.slice(dataDir.length + 1), c.kind, c.bytes])).toEqual([
      [".mind.json.0123456789ab.tmp", "temp", 5],
      ["archive/.2026-01.json.0123456789ab.tmp", "temp", 5],
      ["exports/presence-export-2026-02-07.json", "export", 5],
      ["files/.telegram-1001-8.pdf.0123456789ab.tmp", "temp", 5],
      ["files/telegram-1001-7.txt", "document", 5],
      ["files/telegram-1001-9.ogg", "sound", 5],
      ["notes/.plan.md.0123456789ab.tmp", "temp", 5],
      ["trace.jsonl.damaged-20260207T080000Z", "damaged", 5],
    ]);
  });

  it("taking the data lock removes the temp files a dead writer left, and nothing else (not another taker's lock temp)", async () => {
    const dataDir = await crowdedDataDir();
    const lock = await acquireDataLock(dataDir, "start");
    expect((await readdir(dataDir, { recursive: true })).sort()).toEqual([
      ".presence.lock.0123456789ab.tmp",
      "archive",
      "archive/2026-01.json",
      "exports",
      "exports/presence-export-2026-02-07.json",
      "files",
      "files/telegram-1001-7.txt",
      "files/telegram-1001-9.ogg",
      "mind.json",
      "notes",
      "notes/plan.md",
      "presence.lock",
      "telegram.json",
      "trace.jsonl.damaged-20260207T080000Z",
    ]);
    await lock.release();
  });

  it("removeKeptCopies deletes every copy, the exports and sent documents' folders, and leaves the stores' files", async () => {
    const dataDir = await crowdedDataDir();
    await removeKeptCopies(dataDir);
    expect((await readdir(dataDir, { recursive: true })).sort()).toEqual([
      ".presence.lock.0123456789ab.tmp",
      "archive",
      "archive/2026-01.json",
      "mind.json",
      "notes",
      "notes/plan.md",
      "telegram.json",
    ]);
  });
});
