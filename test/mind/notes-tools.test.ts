import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NOTES_TOOLS, runNotesTool } from "../../src/mind/notes-tools.ts";
import { NotesStore } from "../../src/store/notes.ts";

let root: string;
let notes: NotesStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-notes-tools-"));
  notes = new NotesStore({ dataDir: join(root, "data") });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("the notes tools", () => {
  it("define list, read and write with the key rule in their schemas", () => {
    expect(NOTES_TOOLS.map((t) => t.name)).toEqual(["notes_list", "notes_read", "notes_write"]);
    expect(JSON.stringify(NOTES_TOOLS)).toContain("no slashes, dots or spaces");
  });

  it("promise in notes_list's description only what a listing holds", async () => {
    await notes.write("plan", "- pack boots");
    const listing = await runNotesTool(notes, "notes_list", {});
    expect(listing.content).toBe("plan (12 bytes)");
    expect(NOTES_TOOLS[0]?.description).toMatch(/\(key and size\)/);
  });

  it("write, list and read a note", async () => {
    expect(await runNotesTool(notes, "notes_list", {})).toEqual({
      content: "(no notes yet)",
      isError: false,
    });
    const written = await runNotesTool(notes, "notes_write", { key: "trip-plan_2", text: "- pack boots" });
    expect(written).toEqual({ content: 'saved note "trip-plan_2" (12 characters)', isError: false });
    expect((await runNotesTool(notes, "notes_list", {})).content).toMatch(/^trip-plan_2 \(12 bytes\)$/);
    expect(await runNotesTool(notes, "notes_read", { key: "trip-plan_2" })).toEqual({
      content: "- pack boots",
      isError: false,
    });
  });

  it.each([
    "../../etc/passwd",
    "../mind",
    "a/b",
    "notes.md",
    ".hidden",
    "with space",
    "",
    "k".repeat(65),
    "caf\u00e9",
    "..",
  ])("refuses the key %j with an error the model can read, writing nothing", async (key) => {
    const write = await runNotesTool(notes, "notes_write", { key, text: "x" });
    expect(write.isError).toBe(true);
    expect(write.content).toMatch(/invalid note key/);
    expect(write.content).toMatch(/letter A-Z or a-z, a digit/);
    const read = await runNotesTool(notes, "notes_read", { key });
    expect(read.isError).toBe(true);
    expect(read.content).toMatch(/invalid note key/);
    const files = await readdir(join(root, "data")).catch(() => []);
    expect(files).toEqual([]);
  });

  it("a missing note, a malformed input and an unknown tool are errors, not exceptions", async () => {
    expect(await runNotesTool(notes, "notes_read", { key: "nope" })).toEqual({
      content: 'there is no note "nope"; notes_list shows the keys',
      isError: true,
    });
    expect((await runNotesTool(notes, "notes_write", { key: "a" })).isError).toBe(true);
    expect((await runNotesTool(notes, "notes_delete", { key: "a" })).content).toMatch(/unknown tool/);
  });

  it("a note over the size limit is refused with the limit", async () => {
    const small = new NotesStore({ dataDir: join(root, "data"), maxNoteBytes: 10 });
    const result = await runNotesTool(small, "notes_write", { key: "big", text: "0123456789abc" });
    expect(result).toEqual({
      content: 'note "big" is 13 bytes; notes are limited to 10 bytes',
      isError: true,
    });
  });
});
