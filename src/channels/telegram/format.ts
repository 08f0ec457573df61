/**
 * Model markdown → Telegram text plus entities. Entities rather than HTML: nothing has to be
 * escaped, offsets are plain UTF-16 indexes (what JavaScript strings use), and when Telegram
 * refuses the formatting the same `text` goes out alone — readable, with no stray tags.
 */

/** The formatting this module produces: a subset of Telegram's MessageEntity. */
export type FormatEntity =
  | { type: "bold" | "italic" | "strikethrough" | "code" | "blockquote"; offset: number; length: number }
  | { type: "pre"; offset: number; length: number; language?: string }
  | { type: "text_link"; offset: number; length: number; url: string };

/** Text as the person will read it, with the formatting laid over it. */
export interface FormattedText {
  text: string;
  entities: FormatEntity[];
}

const SAFE_LINK = /^(https?:\/\/|tg:\/\/|mailto:)\S+$/i;

/** Converts the model's markdown into Telegram text and entities; never throws. */
export function formatMarkdown(markdown: string): FormattedText {
  const out = new Builder();
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let first = true;
  const newline = () => {
    if (!first) out.plain("\n");
    first = false;
  };
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const fence = openingFence(line);
    if (fence) {
      const body: string[] = [];
      i += 1;
      while (i < lines.length && !fence.closedBy(lines[i] ?? "")) body.push(lines[i++] ?? "");
      i += 1;
      newline();
      const code = body.join("\n");
      if (code.length > 0)
        out.styled({ type: "pre", ...(fence.language ? { language: fence.language } : {}) }, () =>
          out.plain(code),
        );
      continue;
    }
    if (/^\s*>/.test(line)) {
      const quoted: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i] ?? ""))
        quoted.push((lines[i++] ?? "").replace(/^\s*>\s?/, ""));
      newline();
      out.styled({ type: "blockquote" }, () => {
        quoted.forEach((q, n) => {
          if (n > 0) out.plain("\n");
          inline(q, out);
        });
      });
      continue;
    }
    newline();
    if (isParagraphLine(line)) {
      // A paragraph's lines are read as one, so emphasis may run across its line breaks.
      const paragraph = [line];
      while (i + 1 < lines.length && isParagraphLine(lines[i + 1] ?? "")) paragraph.push(lines[++i] ?? "");
      inline(paragraph.join("\n"), out);
    } else renderLine(line, out);
    i += 1;
  }
  return trimFormatted(out.result());
}

/** A code fence that opened: its language, and which line closes it. */
interface Fence {
  language: string | undefined;
  closedBy(line: string): boolean;
}

/**
 * A line opening a code fence: three or more backticks or tildes, then an optional info
 * string whose first word is the language. Only a run of the same character, at least as
 * long, closes it, so a ```` fence can show ``` inside.
 */
function openingFence(line: string): Fence | null {
  const match = /^\s*(`{3,}|~{3,})\s*(.*?)\s*$/.exec(line);
  if (!match) return null;
  const marker = match[1] ?? "```";
  const info = match[2] ?? "";
  if (marker.startsWith("`") && info.includes("`")) return null;
  const language = /^[\w+#.-]+/.exec(info)?.[0];
  const closing = new RegExp(`^\\s*\\${marker[0]}{${marker.length},}\\s*$`);
  return { language, closedBy: (candidate) => closing.test(candidate) };
}

/** A line of running text: not blank and not a heading, rule, list item, quote or fence. */
function isParagraphLine(line: string): boolean {
  return (
    line.trim() !== "" &&
    !/^\s{0,3}#{1,6}\s/.test(line) &&
    !/^\s*([-*_])(\s*\1){2,}\s*$/.test(line) &&
    !/^\s*[-*+]\s+/.test(line) &&
    !/^\s*\d{1,9}[.)]\s+/.test(line) &&
    !/^\s*>/.test(line) &&
    openingFence(line) === null
  );
}

function renderLine(line: string, out: Builder): void {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) {
    out.styled({ type: "bold" }, () => inline(heading[1] ?? "", out));
    return;
  }
  if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
    out.plain("———");
    return;
  }
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) {
    out.plain(`${bullet[1] ?? ""}• `);
    inline(bullet[2] ?? "", out);
    return;
  }
  const numbered = /^(\s*)(\d{1,9})[.)]\s+(.*)$/.exec(line);
  if (numbered) {
    out.plain(`${numbered[1] ?? ""}${numbered[2]}. `);
    inline(numbered[3] ?? "", out);
    return;
  }
  inline(line, out);
}

type Style = { type: "bold" | "italic" | "strikethrough" };

const DELIMITERS: { marker: string; style: Style }[] = [
  { marker: "**", style: { type: "bold" } },
  { marker: "__", style: { type: "bold" } },
  { marker: "~~", style: { type: "strikethrough" } },
  { marker: "*", style: { type: "italic" } },
  { marker: "_", style: { type: "italic" } },
];

const isWordChar = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);
const isSpace = (ch: string | undefined) => ch === undefined || /\s/.test(ch);

/** Inline markdown on one line: code spans, links, emphasis, backslash escapes. */
function inline(source: string, out: Builder): void {
  let i = 0;
  let pending = "";
  const flush = () => {
    if (pending) out.plain(pending);
    pending = "";
  };
  while (i < source.length) {
    const ch = source[i] ?? "";
    if (ch === "\\" && i + 1 < source.length && /[!-/:-@[-`{-~]/.test(source[i + 1] ?? "")) {
      pending += source[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      const run = /^`+/.exec(source.slice(i))?.[0] ?? "`";
      const close = source.indexOf(run, i + run.length);
      const code = close === -1 ? "" : source.slice(i + run.length, close).replace(/^ (.*) $/, "$1");
      if (close !== -1 && code.length > 0) {
        flush();
        out.styled({ type: "code" }, () => out.plain(code));
        i = close + run.length;
        continue;
      }
    }
    if (ch === "[") {
      const link = parseLink(source, i);
      if (link) {
        const { length: whole, label, url } = link;
        flush();
        if (SAFE_LINK.test(url)) out.styled({ type: "text_link", url }, () => inline(label, out));
        else {
          inline(label, out);
          out.plain(` (${url})`);
        }
        i += whole;
        continue;
      }
    }
    const delimiter = DELIMITERS.find((d) => source.startsWith(d.marker, i));
    if (delimiter) {
      const close = findClosing(source, i, delimiter.marker);
      if (close !== -1) {
        flush();
        const inner = source.slice(i + delimiter.marker.length, close);
        out.styled(delimiter.style, () => inline(inner, out));
        i = close + delimiter.marker.length;
        continue;
      }
      pending += delimiter.marker;
      i += delimiter.marker.length;
      continue;
    }
    pending += ch;
    i += 1;
  }
  flush();
}

/**
 * A markdown link `[label](url)` starting at `open`, or null. The URL's parentheses are
 * counted, so `(https://en.wikipedia.org/wiki/Sleep_(disambiguation))` keeps its last `)`.
 */
function parseLink(source: string, open: number): { length: number; label: string; url: string } | null {
  const head = /^\[([^\]\n]+)\]\(\s*(<?)/.exec(source.slice(open));
  if (!head) return null;
  const angled = head[2] === "<";
  const start = open + head[0].length;
  let depth = 0;
  let i = start;
  for (; i < source.length; i++) {
    const ch = source[i] ?? "";
    if (/\s/.test(ch) || (angled && ch === ">")) break;
    if (ch === "(") depth += 1;
    else if (ch === ")") {
      if (depth === 0) break;
      depth -= 1;
    }
  }
  const url = source.slice(start, i);
  const tail = (angled ? /^>\s*\)/ : /^\s*\)/).exec(source.slice(i));
  if (url === "" || !tail) return null;
  return { length: i + tail[0].length - open, label: head[1] ?? "", url };
}

/**
 * Where an emphasis run opened at `open` closes, or -1. The opener must be followed by a
 * non-space and the closer preceded by one; single markers and underscores must also sit at
 * word edges, so snake_case and 2*3*4 stay literal.
 */
function findClosing(source: string, open: number, marker: string): number {
  const after = source[open + marker.length];
  if (isSpace(after)) return -1;
  const atWordEdge = marker.length === 1 || marker.startsWith("_");
  if (atWordEdge && isWordChar(source[open - 1])) return -1;
  let i = open + marker.length + 1;
  while (i < source.length) {
    if (source[i] === "`") {
      const end = source.indexOf("`", i + 1);
      i = end === -1 ? i + 1 : end + 1;
      continue;
    }
    if (source.startsWith(marker, i) && !isSpace(source[i - 1])) {
      // In a run like "***", the closer is the run's last characters: "***x***" is bold italic.
      while (source[i + marker.length] === marker[0] && marker.length === 2) i += 1;
      const next = source[i + marker.length];
      const doubledSingle = marker.length === 1 && next === marker;
      const wordAfter = atWordEdge && isWordChar(next);
      if (!doubledSingle && !wordAfter) return i;
    }
    i += 1;
  }
  return -1;
}

/** Accumulates text and entities, with offsets in UTF-16 code units. */
class Builder {
  #text = "";
  #entities: FormatEntity[] = [];

  plain(text: string): void {
    this.#text += text;
  }

  styled(style: DistributiveOmit<FormatEntity, "offset" | "length">, render: () => void): void {
    const offset = this.#text.length;
    render();
    const length = this.#text.length - offset;
    if (length > 0) this.#entities.push({ ...style, offset, length } as FormatEntity);
  }

  result(): FormattedText {
    return { text: this.#text, entities: this.#entities };
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The part of a formatted text between two offsets, entities clipped to it and dropped when
 * nothing of them is left. The one place offsets are shifted, so split and trim agree.
 */
export function sliceFormatted(
  message: FormattedText,
  start: number,
  end = message.text.length,
): FormattedText {
  const entities: FormatEntity[] = [];
  for (const entity of message.entities) {
    const from = Math.max(entity.offset, start);
    const to = Math.min(entity.offset + entity.length, end);
    if (to > from) entities.push({ ...entity, offset: from - start, length: to - from });
  }
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text: message.text.slice(start, end), entities };
}

/** Drops leading and trailing whitespace, as Telegram would, keeping entities aligned. */
export function trimFormatted(message: FormattedText): FormattedText {
  const start = message.text.length - message.text.trimStart().length;
  const end = message.text.trimEnd().length;
  if (end <= start) return { text: "", entities: [] };
  return sliceFormatted(message, start, end);
}
