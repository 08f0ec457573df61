import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Low } from "lowdb";
import { describe, expect, it } from "vitest";
import {
  DataFileError,
  DataWriteError,
  DurableJsonFile,
  damagedCopyTime,
  ensurePrivateDir,
  removeDurable,
  writeFileDurable,
} from "../../src/store/files.ts";
import { modeOf, tempDataDir } from "./helpers.ts";

describe("ensurePrivateDir", () => {
  it("creates missing directories owner-only and tightens an existing one", async () => {
    const dir = await tempDataDir();
    await ensurePrivateDir(join(dir, "nested"));
    expect(await modeOf(join(dir, "nested"))).toBe(0o700);
    const open = join(dir, "open");
    await mkdir(open, { mode: 0o777 });
    await ensurePrivateDir(open);
    expect(await modeOf(open)).toBe(0o700);
  });
});

describe("writeFileDurable", () => {
  it("creates an owner-only file, replaces its contents whole and leaves no temp file", async () => {
    const dir = await tempDataDir();
    await ensurePrivateDir(dir);
    const file = join(dir, "state.json");
    await writeFileDurable(file, "first");
    await writeFileDurable(file, "second");
    expect(await readFile(file, "utf8")).toBe("second");
    expect(await modeOf(file)).toBe(0o600);
    expect(await readdir(dir)).toEqual(["state.json"]);
  });

  it("leaves the target and the directory as they were when the rename fails", async () => {
    const dir = await tempDataDir();
    const target = join(dir, "taken");
    await mkdir(join(target, "child"), { recursive: true });
    await expect(writeFileDurable(target, "x")).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["taken"]);
    expect(await readdir(target)).toEqual(["child"]);
  });
});

describe("write errors", () => {
  it("name the file being written and say what the system said, leaving nothing behind", async () => {
    const dir = await tempDataDir();
    await ensurePrivateDir(dir);
    await writeFile(join(dir, "not-a-dir"), "");
    const target = join(dir, "not-a-dir", "mind.json");
    const error = await writeFileDurable(target, "x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataWriteError);
    expect(error).toMatchObject({ file: target, code: "ENOTDIR" });
    expect((error as Error).message).toMatch(new RegExp(`^cannot write ${target}: ENOTDIR`));
    expect(await readdir(dir)).toEqual(["not-a-dir"]);

    const nested = join(dir, "not-a-dir", "data");
    await expect(ensurePrivateDir(nested)).rejects.toMatchObject({ name: "DataWriteError", file: nested });
  });
});

describe("damagedCopyTime", () => {
  it("reads the time from a damaged copy's name, and nothing else", () => {
    expect(damagedCopyTime("trace.jsonl.damaged-20260207T080000Z")).toEqual(new Date("2026-02-07T08:00:00Z"));
    expect(damagedCopyTime("trace.jsonl.damaged-20260207T080000Z-2", "trace.jsonl")).toEqual(
      new Date("2026-02-07T08:00:00Z"),
    );
    expect(damagedCopyTime("trace.1.jsonl.damaged-20260207T080000Z", "trace.jsonl")).toBeNull();
    expect(damagedCopyTime("notes.damaged-soon")).toBeNull();
    expect(damagedCopyTime("trace.jsonl")).toBeNull();
  });
});

describe("DurableJsonFile", () => {
  it("reads a missing file as null, so lowdb starts from its defaults", async () => {
    const dir = await tempDataDir();
    const db = new Low(new DurableJsonFile<{ n: number }>(join(dir, "missing.json")), { n: 1 });
    await db.read();
    expect(db.data).toEqual({ n: 1 });
  });

  it("round-trips through lowdb with a private file", async () => {
    const dir = await tempDataDir();
    await ensurePrivateDir(dir);
    const file = join(dir, "db.json");
    const db = new Low(new DurableJsonFile<{ items: string[] }>(file), { items: [] });
    await db.update((data) => data.items.push("a"));
    const again = new Low(new DurableJsonFile<{ items: string[] }>(file), { items: [] });
    await again.read();
    expect(again.data.items).toEqual(["a"]);
    expect(await modeOf(file)).toBe(0o600);
  });

  it("refuses invalid JSON with an error naming the file, instead of starting over", async () => {
    const dir = await tempDataDir();
    await ensurePrivateDir(dir);
    const file = join(dir, "broken.json");
    await writeFile(file, '{"items": [');
    const error = await new DurableJsonFile(file).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect((error as DataFileError).file).toBe(file);
    expect((error as Error).message).toContain(`${file}: is not valid JSON`);
  });

  it("passes parsed JSON through the parse option", async () => {
    const dir = await tempDataDir();
    await ensurePrivateDir(dir);
    const file = join(dir, "n.json");
    await writeFile(file, "41");
    const adapter = new DurableJsonFile<number>(file, { parse: (value) => Number(value) + 1 });
    expect(await adapter.read()).toBe(42);
  });
});

describe("removeDurable", () => {
  it("removes files and whole directories, and ignores what is already gone", async () => {
    const dir = await tempDataDir();
    await mkdir(join(dir, "archive"), { recursive: true });
    await writeFile(join(dir, "archive", "2026-01.json"), "[]");
    await removeDurable(join(dir, "archive"));
    await removeDurable(join(dir, "archive"));
    expect(await readdir(dir)).toEqual([]);
  });
});
