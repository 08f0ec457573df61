import type { Message } from "./message.ts";
import { soundLabel } from "./sound.ts";

/**
 * Small text helpers every room uses, kept here once so the same words are matched, counted
 * and spelled the same way everywhere. Pure: no I/O, no clock.
 */

/**
 * Whether a piece of text mentions `text`, ignoring case and runs of whitespace; a blank
 * `text` mentions nothing. The one matcher /forget uses for the mind (memory items,
 * scratchpad lines, thread notes), notes, trace records and kept copies, so what the person
 * is told was forgotten is the same everywhere.
 */
export function mentionMatcher(text: string): (candidate: string) => boolean {
  const needle = normalizeSpacing(text);
  return (candidate) => needle !== "" && normalizeSpacing(candidate).includes(needle);
}

/** How {@link clip} cuts a text: each caller says what its place needs. */
export interface ClipOptions {
  /**
   * On one line: each run of whitespace one space and the ends trimmed before measuring, and no
   * space left before the "…" (a message quoted inside a line of its own).
   */
  oneLine?: boolean;
  /**
   * Back to the last space when one is in the last 40% of the cut, and the punctuation the cut
   * ends with dropped, so a quote does not stop mid-word or on a comma.
   */
  atWord?: boolean;
  /**
   * The "…" counts towards `max`, so the result is never longer than `max` (a table cell, a
   * quote in a fixed-width answer); otherwise `max` characters are kept and the "…" follows.
   */
  fit?: boolean;
}

/**
 * The text cut to `max` characters with "…" marking the cut, or as it is when it is short
 * enough: the one way presence shortens what it shows (awareness quotes, /memory's sources,
 * reflection's refusals, the trace, the bench report).
 */
export function clip(text: string, max: number, options: ClipOptions = {}): string {
  const whole = options.oneLine ? text.replace(/\s+/g, " ").trim() : text;
  if (whole.length <= max) return whole;
  let cut = whole.slice(0, options.fit ? Math.max(0, max - 1) : max);
  if (options.atWord) {
    const space = cut.lastIndexOf(" ");
    if (space > cut.length * 0.6) cut = cut.slice(0, space);
    cut = cut.replace(/[\s,.;:!?—-]+$/u, "");
  } else if (options.oneLine) {
    cut = cut.trimEnd();
  }
  return `${cut}…`;
}

/** Lower case, each run of whitespace one space, trimmed: how a text is searched for (mentionMatcher). */
function normalizeSpacing(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/**
 * A remembered line reduced to its words: normalizeSpacing, without a leading bullet or the
 * punctuation that ends it. Two items are the same words when this is equal — for reflection's
 * duplicate checks and for the hash of what the person forgot (mind/refusals.ts
 * forgottenHash) alike, so "- (User) works nights." is both a duplicate of "(user) works
 * nights" and refused once those words were forgotten.
 */
export function sameWords(text: string): string {
  return normalizeSpacing(text)
    .replace(/^[-•*]\s*/, "")
    .replace(/[.!;\s]+$/, "");
}

/** "1 message", "3 messages", "2 memories": the count with the word in the form it takes. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** "45m", "5h 43m", "2h", "3d 4h": how long, the way a person says it. */
export function formatDuration(minutes: number): string {
  if (minutes < 60) return `${minutes}m`;
  if (minutes < 24 * 60) {
    const rest = minutes % 60;
    return rest === 0 ? `${Math.floor(minutes / 60)}h` : `${Math.floor(minutes / 60)}h ${rest}m`;
  }
  const days = Math.floor(minutes / (24 * 60));
  const hours = Math.floor((minutes % (24 * 60)) / 60);
  return hours === 0 ? `${days}d` : `${days}d ${hours}h`;
}

/**
 * English function words: they say nothing about what a text is about, so memory ranking
 * does not count them as shared words and the topic fallback never takes one for a subject
 * (the awareness lexicon adds the small talk of chat on top).
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  `the and for are but not you your yours with this that have has had was were will would could should
  they them their there then than what when where which who whom why how about into onto from over under
  just also very really some any all each more most much many such only own same too can did does doing
  been being its it's i'm i've i'll you're we're she he her his him our out off again once here both`.split(
    /\s+/,
  ),
);

/**
 * A message in the words the model reads, in the prompt and in the awareness block alike: its
 * text, after a `[kind]` label when the text does not already say what it is (a photo's text is
 * its caption; a voice note's or document's text starts with its own `[…]` description). A
 * caption is part of the text (channels/telegram/incoming.ts), so it appears exactly once:
 * media.caption is never added, except to a sound that was heard, whose text is its transcript:
 * "[voice note, 0:42] …", "[voice note, 0:42; caption: for you] …". `note` goes inside the
 * label, e.g. "[photo (image not shown)]". A reaction the companion gave instead of writing reads
 * "[you reacted 👍]" wherever the model sees it (the conversation, reflection), the wording the
 * react tool announces.
 */
export function messageAsRead(message: Pick<Message, "text" | "media" | "reaction">, note?: string): string {
  if (message.reaction !== undefined) return `[you reacted ${message.reaction}]`;
  const kind = message.media?.kind;
  const text = message.text.trim();
  const noted = note ? ` (${note})` : "";
  if (message.media?.transcribed) {
    const caption = message.media.caption ? `; caption: ${message.media.caption}` : "";
    return `[${soundLabel(message.media)}${caption}${noted}] ${text}`;
  }
  const end = text.indexOf("]");
  if (kind !== undefined && text.startsWith(`[${kind}`) && end > 0) {
    return `${text.slice(0, end)}${noted}${text.slice(end)}`;
  }
  const label = kind !== undefined ? `[${kind}${noted}]` : "";
  return [label, text].filter((s) => s !== "").join(" ");
}
