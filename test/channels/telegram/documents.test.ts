import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Document } from "grammy/types";
import { describe, expect, it } from "vitest";
import {
  checkDocument,
  DOCUMENT_LIMITS,
  documentKind,
  notReadReply,
  refusedBeforeDownload,
} from "../../../src/channels/telegram/documents.ts";
import { pdfPageCount } from "../../../src/core/pdf.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "documents");
const fixture = (name: string) => readFile(join(FIXTURES, name));

function telegramDocument(fileName: string, fileSize: number): Document {
  return { file_id: "f", file_unique_id: "u", file_name: fileName, file_size: fileSize };
}

describe("which documents the model reads", () => {
  it("reads PDFs and plain text by mime type or by file name, and nothing else", () => {
    expect(documentKind("lease.pdf", "application/octet-stream")).toBe("pdf");
    expect(documentKind("scan", "application/pdf")).toBe("pdf");
    expect(documentKind("notes.md", "application/octet-stream")).toBe("text");
    expect(documentKind("data.CSV", undefined)).toBe("text");
    expect(documentKind("export", "application/json")).toBe("text");
    expect(documentKind("whatever", "text/markdown; charset=utf-8")).toBe("text");
    expect(
      documentKind("letter.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ).toBe(null);
    expect(documentKind("photos.zip", "application/zip")).toBe(null);
    expect(documentKind(undefined, undefined)).toBe(null);
  });

  it("refuses by type or announced size before downloading anything", () => {
    expect(refusedBeforeDownload(null, telegramDocument("a.zip", 10))).toBe("type");
    expect(refusedBeforeDownload("pdf", telegramDocument("a.pdf", DOCUMENT_LIMITS.pdfBytes + 1))).toBe(
      "size",
    );
    expect(refusedBeforeDownload("pdf", telegramDocument("a.pdf", DOCUMENT_LIMITS.pdfBytes))).toBe(null);
    expect(refusedBeforeDownload("text", telegramDocument("a.txt", DOCUMENT_LIMITS.textBytes + 1))).toBe(
      "size",
    );
  });

  it("takes a real PDF, counting its pages, and refuses bytes that only claim to be one", async () => {
    const pdf = await fixture("lease.pdf");
    expect(pdfPageCount(pdf)).toBe(2);
    expect(checkDocument("pdf", pdf)).toEqual({ ok: true, bytes: pdf });
    expect(checkDocument("pdf", Buffer.from("PK\u0003\u0004 a zip named .pdf"))).toEqual({
      ok: false,
      notRead: "content",
    });
  });

  it("refuses a PDF with more pages than the limit, and one whose pages it cannot count only by size", () => {
    const pages = "1 0 obj << /Type /Page >> endobj\n".repeat(DOCUMENT_LIMITS.pdfPages + 1);
    expect(checkDocument("pdf", Buffer.from(`%PDF-1.7\n${pages}`))).toEqual({ ok: false, notRead: "size" });
    const compressed = Buffer.from("%PDF-1.7\n1 0 obj << /Type /ObjStm /N 60 >> stream … endstream");
    expect(pdfPageCount(compressed)).toBe(null);
    expect(checkDocument("pdf", compressed).ok).toBe(true);
  });

  it("takes UTF-8 text (dropping a byte-order mark) and refuses other encodings, binary and long text", async () => {
    const text = await fixture("reading-list.md");
    expect(checkDocument("text", text)).toEqual({ ok: true, bytes: new Uint8Array(text) });
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text]);
    expect(checkDocument("text", withBom)).toEqual({ ok: true, bytes: new Uint8Array(text) });
    expect(checkDocument("text", await fixture("latin1.txt"))).toEqual({ ok: false, notRead: "content" });
    expect(checkDocument("text", Buffer.from("abc\u0000def"))).toEqual({ ok: false, notRead: "content" });
    expect(checkDocument("text", Buffer.from(" \n"))).toEqual({ ok: false, notRead: "content" });
    const long = Buffer.from("é".repeat(DOCUMENT_LIMITS.textChars + 1));
    expect(checkDocument("text", long)).toEqual({ ok: false, notRead: "size" });
    expect(checkDocument("text", Buffer.from("é".repeat(DOCUMENT_LIMITS.textChars))).ok).toBe(true);
  });

  it("answers a file too large with the limits the README states", () => {
    expect(notReadReply("big.pdf", "size")).toBe(
      "big.pdf is too large for me to read: I can take PDFs up to 10 MB and 50 pages, text files up to 100,000 characters. Could you send the part that matters?",
    );
  });
});
