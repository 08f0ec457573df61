import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SentFiles } from "../../src/store/sent-files.ts";
import { tempDataDir } from "./helpers.ts";

describe("the documents and sounds the person sent", () => {
  it("keeps a document owner-only in files/ and reads it back with its kind; a second write replaces it", async () => {
    const dataDir = await tempDataDir();
    const files = new SentFiles({ dataDir });
    const stored = await files.keep("telegram-1001-7", "pdf", Buffer.from("%PDF-1.4 first"));
    expect(stored).toBe("files/telegram-1001-7.pdf");
    expect((await stat(join(dataDir, "files"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dataDir, stored))).mode & 0o777).toBe(0o600);
    await files.keep("telegram-1001-7", "pdf", Buffer.from("%PDF-1.4 again"));
    const kept = await files.read(stored);
    expect(kept?.kind).toBe("pdf");
    expect(kept?.bytes.toString()).toBe("%PDF-1.4 again");
    const text = await files.keep("telegram-1001-9", "text", Buffer.from("a list"));
    expect(text).toBe("files/telegram-1001-9.txt");
    expect((await files.read(text))?.kind).toBe("text");
  });

  it("reads a deleted document, or a path that is not its own, as none", async () => {
    const dataDir = await tempDataDir();
    const files = new SentFiles({ dataDir });
    const stored = await files.keep("telegram-1001-8", "text", Buffer.from("words"));
    await rm(join(dataDir, stored));
    expect(await files.read(stored)).toBe(null);
    expect(await files.read("files/../mind.json")).toBe(null);
    expect(await files.read("mind.json")).toBe(null);
  });

  it("refuses a name that could point outside files/", async () => {
    const files = new SentFiles({ dataDir: await tempDataDir() });
    await expect(files.keep("../mind", "text", Buffer.from("x"))).rejects.toThrow(
      "not a plain file name for files/: ../mind",
    );
    await expect(files.keep(".hidden", "text", Buffer.from("x"))).rejects.toThrow(
      "not a plain file name for files/: .hidden",
    );
  });

  it("keeps a sound by its format's ending, dated by the clock, and reads it back as that format", async () => {
    const dataDir = await tempDataDir();
    const files = new SentFiles({ dataDir });
    const keptAt = new Date("2026-03-01T10:00:00Z");
    const stored = await files.keep("telegram-1001-11", "ogg", Buffer.from("OggS voice"), keptAt);
    expect(stored).toBe("files/telegram-1001-11.ogg");
    expect((await stat(join(dataDir, stored))).mtime.toISOString()).toBe(keptAt.toISOString());
    expect((await stat(join(dataDir, stored))).mode & 0o777).toBe(0o600);
    expect(await files.read(stored)).toEqual({ kind: "ogg", bytes: Buffer.from("OggS voice") });
    expect((await files.read(await files.keep("telegram-1001-12", "mp4", Buffer.from("ftyp"))))?.kind).toBe(
      "mp4",
    );
  });

  it("deletes the sounds kept before a moment, never a document, and one sound by its path", async () => {
    const dataDir = await tempDataDir();
    const files = new SentFiles({ dataDir });
    await files.keep("telegram-1001-1", "ogg", Buffer.from("old"), new Date("2026-01-01T00:00:00Z"));
    await files.keep("telegram-1001-2", "pdf", Buffer.from("%PDF-1.4"), new Date("2026-01-01T00:00:00Z"));
    const recent = await files.keep(
      "telegram-1001-3",
      "m4a",
      Buffer.from("new"),
      new Date("2026-02-01T00:00:00Z"),
    );
    expect(await files.removeSoundsKeptBefore(new Date("2026-01-15T00:00:00Z"))).toBe(1);
    expect((await readdir(join(dataDir, "files"))).sort()).toEqual([
      "telegram-1001-2.pdf",
      "telegram-1001-3.m4a",
    ]);
    expect(await files.remove(recent)).toBe(true);
    expect(await files.remove(recent)).toBe(false);
    expect(await files.remove("files/../mind.json")).toBe(false);
    expect(await readdir(join(dataDir, "files"))).toEqual(["telegram-1001-2.pdf"]);
  });

  it("spares an old sound it is told is still waiting, and names where a sound will be kept before it is", async () => {
    const dataDir = await tempDataDir();
    const files = new SentFiles({ dataDir });
    const waiting = files.storedPath("telegram-1001-4", "ogg");
    expect(waiting).toBe("files/telegram-1001-4.ogg");
    expect(
      await files.keep("telegram-1001-4", "ogg", Buffer.from("a"), new Date("2026-01-01T00:00:00Z")),
    ).toBe(waiting);
    await files.keep("telegram-1001-5", "ogg", Buffer.from("b"), new Date("2026-01-01T00:00:00Z"));
    expect(await files.removeSoundsKeptBefore(new Date("2026-01-15T00:00:00Z"), new Set([waiting]))).toBe(1);
    expect(await readdir(join(dataDir, "files"))).toEqual(["telegram-1001-4.ogg"]);
    expect(() => files.storedPath("../mind", "ogg")).toThrow(/not a plain file name/);
  });

  it("has nothing to delete before anything was kept", async () => {
    const files = new SentFiles({ dataDir: await tempDataDir() });
    expect(await files.removeSoundsKeptBefore(new Date("2026-01-01T00:00:00Z"))).toBe(0);
  });
});
