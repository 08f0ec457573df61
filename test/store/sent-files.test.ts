import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SentFiles } from "../../src/store/sent-files.ts";
import { tempDataDir } from "./helpers.ts";

describe("the documents the person sent", () => {
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
});
