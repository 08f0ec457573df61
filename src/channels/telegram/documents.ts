import type { Document } from "grammy/types";
import type { Media } from "../../core/message.ts";
import { pdfPageCount } from "../../core/pdf.ts";
import type { DocumentKind } from "../../core/port.ts";

/**
 * Documents the person sends on Telegram, read rather than named: a PDF or a plain-text file
 * within the limits below is downloaded and handed to the companion, which keeps it for the
 * model (store/sent-files.ts); anything else is logged by name with the reason it was not read,
 * and answered honestly. The README states these limits.
 */

/**
 * What the model is given at most. Telegram lets a bot download files up to 20 MB; the Messages
 * API takes PDFs up to 32 MB and 100 pages, but each page costs about 1,500–3,000 tokens, so
 * 50 pages already fill much of a 200k-token context. Text is counted in characters (about
 * four to a token): 100,000 are some 25,000 tokens.
 */
export const DOCUMENT_LIMITS = {
  pdfBytes: 10 * 1024 * 1024,
  /** Checked when the page count can be read from the file without parsing it (see pdfPageCount). */
  pdfPages: 50,
  textChars: 100_000,
  /** UTF-8 takes up to 4 bytes a character: more bytes than this cannot be within textChars. */
  textBytes: 400_000,
} as const;

/** Why a document was not read (media.notRead). */
export type NotRead = NonNullable<Media["notRead"]>;

/** File name endings read as plain text, whatever mime type Telegram guessed (often application/octet-stream). */
const TEXT_EXTENSIONS = new Set([
  "txt",
  "text",
  "md",
  "markdown",
  "csv",
  "tsv",
  "json",
  "jsonl",
  "ndjson",
  "log",
  "xml",
  "yaml",
  "yml",
  "toml",
  "ini",
  "srt",
  "vtt",
  "tex",
  "rst",
  "org",
]);

/** Mime types of plain text besides text/*. */
const TEXT_MIME_TYPES = new Set([
  "application/json",
  "application/x-ndjson",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/x-subrip",
]);

/** The kind of a document by its mime type and file name, or null when the model cannot read that kind. */
export function documentKind(
  fileName: string | undefined,
  mimeType: string | undefined,
): DocumentKind | null {
  const extension = fileName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  const mime = mimeType?.toLowerCase().split(";")[0]?.trim();
  if (mime === "application/pdf" || extension === "pdf") return "pdf";
  if (
    (mime !== undefined && (mime.startsWith("text/") || TEXT_MIME_TYPES.has(mime))) ||
    TEXT_EXTENSIONS.has(extension ?? "")
  )
    return "text";
  return null;
}

/** Why a document of this kind and announced size is not read before downloading it, or null to download it. */
export function refusedBeforeDownload(kind: DocumentKind | null, document: Document): NotRead | null {
  if (kind === null) return "type";
  const limit = kind === "pdf" ? DOCUMENT_LIMITS.pdfBytes : DOCUMENT_LIMITS.textBytes;
  return (document.file_size ?? 0) > limit ? "size" : null;
}

/**
 * Checks the downloaded bytes are what the name promised and within the limits: a PDF starts
 * with its `%PDF-` header and has at most pdfPages pages when they can be counted (core/pdf.ts;
 * a PDF whose pages cannot be counted is limited by its size only); a text file
 * decodes as UTF-8 (a byte-order mark is dropped), is not blank and has no NUL bytes, in at most textChars
 * characters. Returns what the model is given (the text, decoded), or why not.
 */
export function checkDocument(
  kind: DocumentKind,
  bytes: Uint8Array,
): { ok: true; bytes: Uint8Array } | { ok: false; notRead: NotRead } {
  if (kind === "pdf") {
    if (bytes.byteLength > DOCUMENT_LIMITS.pdfBytes) return { ok: false, notRead: "size" };
    const head = Buffer.from(bytes.subarray(0, 1024)).toString("latin1");
    if (!head.includes("%PDF-")) return { ok: false, notRead: "content" };
    const pages = pdfPageCount(bytes);
    if (pages !== null && pages > DOCUMENT_LIMITS.pdfPages) return { ok: false, notRead: "size" };
    return { ok: true, bytes };
  }
  if (bytes.byteLength > DOCUMENT_LIMITS.textBytes) return { ok: false, notRead: "size" };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { ok: false, notRead: "content" };
  }
  if (text.includes("\u0000") || text.trim() === "") return { ok: false, notRead: "content" };
  if ([...text].length > DOCUMENT_LIMITS.textChars) return { ok: false, notRead: "size" };
  return { ok: true, bytes: new TextEncoder().encode(text) };
}

/** The name a document is kept under (files/…, the store adds its kind's ending): one per Telegram message, so a redelivery replaces it. */
export function keptName(chatId: number, messageId: number): string {
  return `telegram-${Math.abs(chatId)}-${messageId}`;
}

/** What the log says about a document not read, inside its `[document: …]` line: the model reads it too. */
export function notReadNote(notRead: NotRead): string {
  switch (notRead) {
    case "type":
      return "not read: only PDFs and plain-text files can be read";
    case "size":
      return "not read: too large to read";
    case "download":
      return "not read: it could not be downloaded from Telegram";
    case "content":
      return "not read: it is empty or its contents could not be read";
    case "together":
      return "not read: it came with other documents, too large to read together";
  }
}

/** The limits in the person's words, for the fixed answer to a file too large. */
const LIMITS_IN_WORDS = `PDFs up to ${DOCUMENT_LIMITS.pdfBytes / 1024 / 1024} MB and ${DOCUMENT_LIMITS.pdfPages} pages, text files up to ${DOCUMENT_LIMITS.textChars.toLocaleString("en-US")} characters`;

/**
 * The fixed words (no model) a document gets that came without a caption and could not be read:
 * what happened and what the person can do instead.
 */
export function notReadReply(fileName: string, notRead: NotRead): string {
  switch (notRead) {
    case "type":
      return `I can only read PDFs and plain-text files, so I couldn't open ${fileName}. Could you send it as a PDF, or paste the part that matters?`;
    case "size":
      return `${fileName} is too large for me to read: I can take ${LIMITS_IN_WORDS}. Could you send the part that matters?`;
    case "download":
      return `I couldn't download ${fileName} from Telegram just now. Could you send it again?`;
    case "content":
      return `I couldn't read ${fileName}: it's empty, or not a PDF or plain text I can make sense of. Could you paste the part that matters?`;
    case "together":
      return `${fileName} came with other documents, too much for me to read together, so I didn't read it. Could you send it again on its own?`;
  }
}
