import { type FormattedText, sliceFormatted, trimFormatted } from "./format.ts";

/** Telegram's limit on one message's text, in UTF-16 code units after entity parsing. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/**
 * Where a long reply may be cut, most natural first. A cut at a position means the text
 * before it ends one message and the text after it (whitespace trimmed) starts the next.
 */
const BOUNDARIES: ((text: string, at: number) => boolean)[] = [
  (text, at) => text.startsWith("\n\n", at),
  (text, at) => text[at] === "\n",
  (text, at) => /\s/.test(text[at] ?? "") && /[.!?…]["')\]»]*$/.test(text.slice(Math.max(0, at - 4), at)),
  (text, at) => /\s/.test(text[at] ?? ""),
];

/** A cut this far into the allowed length or further is good enough at its level. */
const GOOD_ENOUGH = 0.5;

/**
 * Splits a formatted reply into messages Telegram accepts: each at most `limit` long, cut on
 * a paragraph, then a line, then a sentence, then a word boundary, never inside a word, a
 * surrogate pair or a formatting entity, and not between a heading and its section when
 * another cut will do. Only when one word or one entity is itself longer than
 * the limit is it cut (a code block at a line break when it can be), its formatting carried
 * into both parts; a code block is also cut at a line break rather than leave a first part
 * under half the limit.
 */
export function splitFormatted(message: FormattedText, limit = TELEGRAM_TEXT_LIMIT): FormattedText[] {
  if (limit < 2) throw new RangeError(`splitFormatted: limit must be at least 2, got ${limit}`);
  const parts: FormattedText[] = [];
  let rest = trimFormatted(message);
  while (rest.text.length > limit) {
    const cut = chooseCut(rest, limit);
    const head = trimFormatted(sliceFormatted(rest, 0, cut));
    if (head.text.length > 0) parts.push(head);
    rest = trimFormatted(sliceFormatted(rest, cut));
  }
  if (rest.text.length > 0) parts.push(rest);
  return parts;
}

function chooseCut(message: FormattedText, limit: number): number {
  const { text } = message;
  const outsideEntities = (at: number) =>
    message.entities.every((e) => at <= e.offset || at >= e.offset + e.length);
  const whole = (at: number) => !isInsideSurrogatePair(text, at);
  const safeCut = (alsoTest: (at: number) => boolean) =>
    pick(
      BOUNDARIES.map((boundary) =>
        lastMatching(limit, (at) => boundary(text, at) && whole(at) && outsideEntities(at) && alsoTest(at)),
      ),
      limit,
    );
  const safe = safeCut((at) => !endsWithTitle(message, at)) ?? safeCut(() => true);
  if (safe !== undefined && safe >= limit * GOOD_ENOUGH) return safe;
  // A code block too long for one message anyway, right after a short intro: a line break
  // inside the block beats a message holding only the intro.
  const inLongCode = lastMatching(
    limit,
    (at) =>
      text[at] === "\n" &&
      at >= limit * GOOD_ENOUGH &&
      message.entities.every(
        (e) => at <= e.offset || at >= e.offset + e.length || (e.type === "pre" && e.length > limit),
      ),
  );
  if (inLongCode !== undefined) return inLongCode;
  if (safe !== undefined) return safe;
  const acrossEntities = pick(
    BOUNDARIES.map((boundary) => lastMatching(limit, (at) => boundary(text, at))),
    limit,
  );
  return acrossEntities ?? (isInsideSurrogatePair(text, limit) ? limit - 1 : limit);
}

/** The first level's cut that is good enough, else the first level's cut that exists. */
function pick(levels: (number | undefined)[], limit: number): number | undefined {
  return (
    levels.find((at) => at !== undefined && at >= limit * GOOD_ENOUGH) ??
    levels.find((at) => at !== undefined)
  );
}

/** The largest position in (0, limit] satisfying the test. */
function lastMatching(limit: number, test: (at: number) => boolean): number | undefined {
  for (let at = limit; at > 0; at -= 1) if (test(at)) return at;
  return undefined;
}

/** Longest line taken for a title (a markdown heading becomes a bold line). */
const TITLE_MAX_LENGTH = 80;

/**
 * Whether the text before `at` ends with a title: a short line that is bold from end to end.
 * A cut there would leave a heading at the bottom of one message and its section in the next.
 */
function endsWithTitle(message: FormattedText, at: number): boolean {
  const lineStart = message.text.lastIndexOf("\n", at - 1) + 1;
  const line = message.text.slice(lineStart, at);
  if (line.trim() === "" || line.length > TITLE_MAX_LENGTH) return false;
  return message.entities.some(
    (e) =>
      e.type === "bold" && e.offset <= lineStart && e.offset + e.length >= lineStart + line.trimEnd().length,
  );
}

function isInsideSurrogatePair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
