import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { MessagesRequestBody } from "../../testkit/messages-api.ts";
import { OWNER_ID, waitFor } from "./harness.ts";
import { inProcessBotPerTest } from "./in-process.ts";

/**
 * Documents the person sends, through the whole wiring of `start` (real grammY against the Bot API
 * fake, the real SDK against the Messages API fake): what reaches the model, what is kept and where,
 * what the person is told when a file cannot be read, and that /forget and /wipe delete the files.
 */

const presence = inProcessBotPerTest();
const FIXTURES = join(import.meta.dirname, "..", "fixtures", "documents");
const fixture = (name: string) => readFile(join(FIXTURES, name));

async function start() {
  return presence.start({}, { clock: systemClock, timers: systemTimers, logger: silentLogger });
}

/** The content blocks of a request's messages, every turn. */
function blocksOf(body: MessagesRequestBody): Record<string, unknown>[] {
  return body.messages.flatMap((m) =>
    typeof m.content === "string"
      ? [{ type: "text", text: m.content }]
      : (m.content as Record<string, unknown>[]),
  );
}

/** The reply requests (reflection's are not what the person's words are answered with). */
function replyRequests(): MessagesRequestBody[] {
  return presence.world.model.requests
    .map((r) => r.body)
    .filter((b) => !JSON.stringify(b.tool_choice ?? null).includes("reflect"));
}

/** What the API would have refused about documents or the prompt's size (reflection's plain answers aside). */
function documentProblems(): string[] {
  return presence.world.model.problems.filter((p) => p.includes("document") || p.includes("too long"));
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

async function filesDir(): Promise<string[]> {
  return readdir(join(presence.world.dataDir, "files")).catch(() => []);
}

describe("documents the person sends", () => {
  it("shows a PDF to the model as a document block, its caption once, and keeps it owner-only out of the log", async () => {
    await start();
    const { bot, model, dataDir } = presence.world;
    const pdf = await fixture("lease.pdf");
    bot.message(bot.user(OWNER_ID, "Ada"), {
      document: {
        fileName: "lease.pdf",
        mimeType: "application/pdf",
        caption: "is the rent rise fair?",
        bytes: pdf,
      },
    });
    await bot.waitForSent(1, 15_000);
    const [request] = replyRequests();
    if (!request) throw new Error("no reply request");
    expect(blocksOf(request)).toContainEqual({
      type: "document",
      source: { type: "base64", media_type: "application/pdf", data: pdf.toString("base64") },
      title: "lease.pdf",
    });
    // Once in the message, and once where the awareness block quotes their last message (as it
    // quotes any message), not again beside a media label in either.
    expect(count(JSON.stringify(request.messages), "is the rent rise fair?")).toBe(1);
    expect(count(JSON.stringify(request.system), "is the rent rise fair?")).toBe(1);
    expect(model.problems).toEqual([]);

    const kept = await filesDir();
    expect(kept).toEqual([expect.stringMatching(/^telegram-1001-\d+\.pdf$/)]);
    const path = join(dataDir, "files", kept[0] as string);
    expect(await readFile(path)).toEqual(pdf);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dataDir, "files"))).mode & 0o777).toBe(0o700);
    const log = await readFile(join(dataDir, "messages.json"), "utf8");
    expect(log).toContain(`"stored":"files/${kept[0]}"`);
    expect(log).not.toContain(pdf.toString("base64").slice(0, 40));
  });

  it("shows a text file to the model as plain text", async () => {
    await start();
    const { bot, model } = presence.world;
    const text = await fixture("reading-list.md");
    bot.message(bot.user(OWNER_ID, "Ada"), {
      document: { fileName: "reading-list.md", mimeType: "application/octet-stream", bytes: text },
    });
    await bot.waitForSent(1, 15_000);
    const [request] = replyRequests();
    if (!request) throw new Error("no reply request");
    expect(blocksOf(request)).toContainEqual({
      type: "document",
      source: { type: "text", media_type: "text/plain", data: text.toString("utf8") },
      title: "reading-list.md",
    });
    expect(model.problems).toEqual([]);
  });

  it("answers a file it cannot read, or one too large, with fixed words and no model call", async () => {
    await start();
    const { bot, model } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    bot.message(owner, {
      document: {
        fileName: "letter.docx",
        mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        bytes: Buffer.from("PK\u0003\u0004 not really a docx"),
      },
    });
    await bot.waitForSent(1, 15_000);
    // Announced larger than the limit: refused before anything is downloaded.
    bot.message(owner, {
      document: {
        fileName: "scan.pdf",
        mimeType: "application/pdf",
        bytes: await fixture("lease.pdf"),
        fileSize: 25_000_000,
      },
    });
    await bot.waitForSent(2, 15_000);
    // Downloaded, and longer than the limit once decoded.
    bot.message(owner, {
      document: {
        fileName: "dump.log",
        mimeType: "text/plain",
        bytes: Buffer.from("log line\n".repeat(12_000)),
      },
    });
    await bot.waitForSent(3, 15_000);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(bot.sent.map((s) => s.text)).toEqual([
      "I can only read PDFs and plain-text files, so I couldn't open letter.docx. Could you send it as a PDF, or paste the part that matters?",
      "scan.pdf is too large for me to read: I can take PDFs up to 10 MB and 50 pages, text files up to 100,000 characters. Could you send the part that matters?",
      "dump.log is too large for me to read: I can take PDFs up to 10 MB and 50 pages, text files up to 100,000 characters. Could you send the part that matters?",
    ]);
    expect(model.requests).toEqual([]);
    expect(bot.calls.filter((c) => c.method === "getFile")).toHaveLength(1);
    expect(await filesDir()).toEqual([]);
  });

  it("lets the model answer the caption of a file it cannot read, told why", async () => {
    await start();
    const { bot } = presence.world;
    bot.message(bot.user(OWNER_ID, "Ada"), {
      document: {
        fileName: "photos.zip",
        mimeType: "application/zip",
        caption: "from the trip!",
        bytes: Buffer.from("PK"),
      },
    });
    await bot.waitForSent(1, 15_000);
    expect(bot.sent[0]?.text).toBe("Answer 1.");
    const [request] = replyRequests();
    expect(JSON.stringify(request?.messages)).toContain(
      "[document: photos.zip — not read: only PDFs and plain-text files can be read] from the trip!",
    );
  });

  it("deletes the kept file on /forget of words in it, tells the model it is gone, and /export carries files", async () => {
    await start();
    const { bot, model } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    const text = await fixture("reading-list.md");
    bot.message(owner, { document: { fileName: "reading-list.md", bytes: text } });
    await bot.waitForSent(1, 15_000);
    expect(await filesDir()).toHaveLength(1);

    bot.message(owner, { text: "/export" });
    await bot.waitForSent(2, 15_000);
    const exported = JSON.parse(Buffer.from(bot.sent[1]?.document?.bytes ?? []).toString("utf8"));
    expect(exported.otherFiles).toContainEqual({
      file: expect.stringMatching(/^files\/telegram-1001-\d+\.txt$/),
      kind: "document",
      text: text.toString("utf8"),
    });

    bot.message(owner, { text: "/forget lighthouse keeper" });
    await bot.waitForSent(3, 15_000);
    expect(bot.sent[2]?.text).toContain("1 other file");
    expect(await filesDir()).toEqual([]);

    bot.message(owner, { text: "what was on my list?" });
    await bot.waitForSent(4, 15_000);
    const last = replyRequests().at(-1);
    expect(JSON.stringify(last?.messages)).toContain(
      "the file is no longer kept (deleted), so you cannot read it now",
    );
    expect(JSON.stringify(last?.messages)).not.toContain("lighthouse");
    // Reflection ran meanwhile against the world's plain answers; the document blocks were all valid.
    expect(model.problems.filter((p) => p.includes("document"))).toEqual([]);
  });

  it("deletes every kept file on /wipe", async () => {
    await start();
    const { bot, dataDir } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    bot.message(owner, { document: { fileName: "lease.pdf", bytes: await fixture("lease.pdf") } });
    await bot.waitForSent(1, 15_000);
    expect(await filesDir()).toHaveLength(1);
    bot.message(owner, { text: "/wipe yes" });
    await bot.waitForSent(2, 15_000);
    await expect(stat(join(dataDir, "files"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("answers without a PDF the model's API refuses, telling the model it could not open it", async () => {
    await start();
    const { bot, model } = presence.world;
    model.failNext("400");
    bot.message(bot.user(OWNER_ID, "Ada"), {
      document: { fileName: "locked.pdf", caption: "can you read this?", bytes: await fixture("lease.pdf") },
    });
    await bot.waitForSent(1, 15_000);
    expect(bot.sent[0]?.text).toBe("Answer 1.");
    const [refused, retried] = replyRequests();
    expect(blocksOf(refused as MessagesRequestBody).some((b) => b.type === "document")).toBe(true);
    expect(blocksOf(retried as MessagesRequestBody).some((b) => b.type === "document")).toBe(false);
    expect(JSON.stringify(retried?.messages)).toContain(
      "[document: locked.pdf (you could not open this file: the model's API refused it)] can you read this?",
    );
    await waitFor(async () => (await filesDir()).length === 1, 1_000);
  });

  it("reads two large PDFs sent together newest first within the per-turn bound, and says which it did not read", async () => {
    await start();
    const { bot, model, dataDir } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    // Each at the per-file page limit: together they pass the model's context window.
    const pdf = await fixture("fifty-pages.pdf");
    // The model is overloaded for the first one (its three tries), so both wait for the same turn.
    model.failNext("529", 3, { retryAfterMs: 1 });
    bot.message(owner, { document: { fileName: "report.pdf", caption: "both of these", bytes: pdf } });
    await waitFor(() => model.requests.length === 3, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    bot.message(owner, { document: { fileName: "appendix.pdf", bytes: pdf } });
    await bot.waitForSent(1, 15_000);
    expect(documentProblems()).toEqual([]);
    const answered = replyRequests().at(-1);
    if (!answered) throw new Error("no reply request");
    const documents = blocksOf(answered).filter((b) => b.type === "document");
    expect(documents).toEqual([expect.objectContaining({ title: "appendix.pdf" })]);
    expect(JSON.stringify(answered.messages)).toContain(
      "[document: report.pdf (you did not read this file: it came with other documents, too large to read together; they can send it again on its own)] both of these",
    );
    expect(bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    // Marked in the log, so later turns say the same; the file stays, the person's own.
    const log = JSON.parse(await readFile(join(dataDir, "messages.json"), "utf8"));
    const report = (log.messages as { media?: { fileName?: string; notRead?: string } }[]).find(
      (m) => m.media?.fileName === "report.pdf",
    );
    expect(report?.media?.notRead).toBe("together");
    expect(await filesDir()).toHaveLength(2);

    bot.message(owner, { text: "what did the appendix say?" });
    await bot.waitForSent(2, 15_000);
    const later = replyRequests().at(-1);
    expect(JSON.stringify(later?.messages)).toContain("[document: report.pdf (you did not read this file");
    expect(blocksOf(later as MessagesRequestBody).filter((b) => b.type === "document")).toHaveLength(1);
    expect(documentProblems()).toEqual([]);
  });

  it("shows a large PDF sent soon after another without the earlier one, which it read when it came", async () => {
    await start();
    const { bot } = presence.world;
    const owner = bot.user(OWNER_ID, "Ada");
    const pdf = await fixture("fifty-pages.pdf");
    bot.message(owner, { document: { fileName: "report.pdf", bytes: pdf } });
    await bot.waitForSent(1, 15_000);
    bot.message(owner, { document: { fileName: "appendix.pdf", bytes: pdf } });
    await bot.waitForSent(2, 15_000);
    expect(documentProblems()).toEqual([]);
    expect(bot.sent).toHaveLength(2);
    const second = replyRequests().at(-1) as MessagesRequestBody;
    expect(blocksOf(second).filter((b) => b.type === "document")).toEqual([
      expect.objectContaining({ title: "appendix.pdf" }),
    ]);
    expect(JSON.stringify(second.messages)).toContain(
      "[document: report.pdf (you read it when it arrived; it is not shown again)]",
    );
  });
});
