import { readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { InvalidNoteKeyError, NotesStore, NoteTooLargeError } from "../../src/store/notes.ts";
import { modeOf, tempDataDir } from "./helpers.ts";

describe("NotesStore", () => {
  it("writes, lists, reads and deletes notes as private markdown files", async () => {
    const dataDir = await tempDataDir();
    const notes = new NotesStore({ dataDir });
    expect(await notes.list()).toEqual([]);
    await notes.write("plan", "# Plan\n- walk daily\n");
    await notes.write("Reading_list-2026", "Dune");
    await notes.write("plan", "# Plan\n- walk daily\n- drink water\n");

    expect(await notes.read("plan")).toBe("# Plan\n- walk daily\n- drink water\n");
    expect(await notes.read("absent")).toBeNull();
    const listed = await notes.list();
    expect(listed.map((note) => [note.key, note.bytes])).toEqual([
      ["Reading_list-2026", 4],
      ["plan", 34],
    ]);
    expect(await modeOf(join(dataDir, "notes"))).toBe(0o700);
    expect(await modeOf(join(dataDir, "notes", "plan.md"))).toBe(0o600);
    expect(await readdir(join(dataDir, "notes"))).toEqual(["Reading_list-2026.md", "plan.md"]);

    expect(await notes.delete("plan")).toBe(true);
    expect(await notes.delete("plan")).toBe(false);
    expect((await notes.list()).map((note) => note.key)).toEqual(["Reading_list-2026"]);
    await notes.deleteAll();
    expect(await readdir(dataDir)).toEqual([]);
  });

  it("ignores files in the notes directory whose names are not note keys", async () => {
    const dataDir = await tempDataDir();
    const notes = new NotesStore({ dataDir });
    await notes.write("kept", "x");
    await writeFile(join(notes.dir, "stray.txt"), "x");
    await writeFile(join(notes.dir, "has.dot.md"), "x");
    expect((await notes.list()).map((note) => note.key)).toEqual(["kept"]);
  });

  it.each([
    ["empty", ""],
    ["a slash", "a/b"],
    ["a backslash", "a\\b"],
    ["a parent traversal", "../secrets"],
    ["a deep traversal", "../../etc/passwd"],
    ["dot-dot alone", ".."],
    ["a dot", "notes.md"],
    ["a leading dot", ".hidden"],
    ["a space", "my note"],
    ["a newline at the end", "plan\n"],
    ["a NUL byte", "plan\u0000"],
    ["unicode letters", "café"],
    ["a look-alike letter", "plаn"],
    ["65 characters", "a".repeat(65)],
    ["an absolute path", "/tmp/x"],
  ])("refuses a key with %s, readably, without touching the disk", async (_case, key) => {
    const dataDir = await tempDataDir();
    const notes = new NotesStore({ dataDir });
    for (const attempt of [() => notes.write(key, "x"), () => notes.read(key), () => notes.delete(key)]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidNoteKeyError);
      expect((error as Error).message).toContain("A-Z or a-z, a digit");
    }
    expect(await readdir(dirname(dataDir))).toEqual([]);
  });

  it("accepts a key of exactly 64 characters", async () => {
    const notes = new NotesStore({ dataDir: await tempDataDir() });
    await notes.write("k".repeat(64), "ok");
    expect(await notes.read("k".repeat(64))).toBe("ok");
  });

  it("refuses a note over the size limit, saying the limit", async () => {
    const notes = new NotesStore({ dataDir: await tempDataDir(), maxNoteBytes: 10 });
    await expect(notes.write("big", "x".repeat(11))).rejects.toThrow(NoteTooLargeError);
    await expect(notes.write("big", "x".repeat(11))).rejects.toThrow("limited to 10 bytes");
    expect(await notes.read("big")).toBeNull();
  });

  it("deleteLines removes the lines that mention it, and never rewrites a note that is not UTF-8 text", async () => {
    const dataDir = await tempDataDir();
    const notes = new NotesStore({ dataDir });
    await notes.write("plan", "# Plan\n- the Alvarez visit\n- walk daily\n");
    await notes.write("only", "the Alvarez visit");
    await notes.write("other", "nothing to see");
    const latin1 = (text: string) => Buffer.from(text, "latin1");
    await writeFile(join(dataDir, "notes", "cafe.md"), latin1("Café with Alvarez\nmenu\n"));
    const untouched = latin1("Café, nothing else\n");
    await writeFile(join(dataDir, "notes", "menu.md"), untouched);

    const mentions = (text: string) => text.toLowerCase().includes("alvarez");
    expect(await notes.deleteLines(mentions)).toBe(3);
    expect(await notes.read("plan")).toBe("# Plan\n- walk daily\n");
    expect(await notes.read("only")).toBeNull();
    expect(await notes.read("cafe")).toBeNull();
    expect(await readFile(join(dataDir, "notes", "menu.md"))).toEqual(untouched);
    expect((await notes.list()).map((note) => note.key)).toEqual(["menu", "other", "plan"]);
  });
});
