import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type FormatEntity,
  type FormattedText,
  formatMarkdown,
} from "../../../src/channels/telegram/format.ts";
import { splitFormatted, TELEGRAM_TEXT_LIMIT } from "../../../src/channels/telegram/split.ts";

const word = fc.oneof(
  fc.stringMatching(/^[a-zA-Z]{1,12}$/),
  fc.constantFrom("😀", "naïve", "𝔘𝔫𝔦", "日本語", "👩‍👩‍👧"),
);
const separator = fc.constantFrom(" ", " ", " ", ". ", "! ", "\n", "\n\n");

/** A text of words and separators, with entities covering whole runs of words. */
const formatted = fc.array(fc.tuple(word, separator), { minLength: 1, maxLength: 400 }).chain((tokens) => {
  let text = "";
  const words: { start: number; end: number }[] = [];
  for (const [w, sep] of tokens) {
    words.push({ start: text.length, end: text.length + w.length });
    text += w + sep;
  }
  const entity = fc
    .tuple(
      fc.nat(words.length - 1),
      fc.integer({ min: 0, max: 6 }),
      fc.constantFrom("bold", "italic", "code"),
    )
    .map(([first, span, type]): FormatEntity => {
      const from = words[first] as { start: number };
      const to = words[Math.min(first + span, words.length - 1)] as { end: number };
      return { type: type as "bold", offset: from.start, length: to.end - from.start };
    });
  return fc.record({ text: fc.constant(text.trim()), entities: fc.array(entity, { maxLength: 8 }) });
});

const stripSpace = (s: string) => s.replace(/\s+/g, "");
const covered = (m: FormattedText, e: FormatEntity) => m.text.slice(e.offset, e.offset + e.length);

describe("splitFormatted", () => {
  it("keeps a message that fits whole", () => {
    const message = formatMarkdown("**hello** there");
    expect(splitFormatted(message)).toEqual([message]);
  });

  it("prefers a paragraph boundary to a sentence boundary", () => {
    const first = `${"a".repeat(60)}. ${"b".repeat(20)}`;
    const second = "c".repeat(30);
    const parts = splitFormatted({ text: `${first}\n\n${second}`, entities: [] }, 100);
    expect(parts.map((p) => p.text)).toEqual([first, second]);
  });

  it("keeps a heading with the section under it", () => {
    const section = (i: number) => `## Part ${i}\n\n${"A sentence about the day. ".repeat(3).trim()}`;
    const message = formatMarkdown([1, 2, 3].map(section).join("\n\n"));
    const limit = message.text.indexOf("Part 3") + "Part 3".length + 4;
    const parts = splitFormatted(message, limit);
    expect(parts.map((p) => p.text.split("\n")[0])).toEqual(["Part 1", "Part 3"]);
    expect(parts[1]?.entities[0]).toMatchObject({ type: "bold", offset: 0, length: "Part 3".length });
  });

  it("falls back to a sentence boundary, then a word boundary", () => {
    const sentences = splitFormatted(
      { text: `${"a ".repeat(30)}end. ${"b ".repeat(40)}`, entities: [] },
      100,
    );
    expect(sentences[0]?.text.endsWith("end.")).toBe(true);
    const words = splitFormatted({ text: "word ".repeat(50), entities: [] }, 32);
    for (const part of words) expect(part.text).toMatch(/^(word )*word$/);
  });

  it("splits a code block longer than the limit at a line, formatting carried into both parts", () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");
    const parts = splitFormatted(formatMarkdown(`\`\`\`\n${code}\n\`\`\``), 100);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.entities).toEqual([{ type: "pre", offset: 0, length: part.text.length }]);
      expect(part.text).toMatch(/^(line \d+\n)*line \d+$/);
    }
  });

  it("cuts a long code block at a line rather than send its short intro alone", () => {
    const code = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");
    const parts = splitFormatted(formatMarkdown(`Here is the script:\n\n\`\`\`\n${code}\n\`\`\``), 100);
    expect(parts[0]?.text.startsWith("Here is the script:\n\nline 0\n")).toBe(true);
    expect(parts[0]?.text.length).toBeGreaterThanOrEqual(50);
    expect(parts.map((p) => p.text).join("\n")).toBe(`Here is the script:\n\n${code}`);
  });

  it("keeps a code block that fits whole in the next message", () => {
    const code = Array.from({ length: 12 }, (_, i) => `line ${i}`).join("\n");
    const parts = splitFormatted(
      formatMarkdown(`Intro.\n\n\`\`\`\n${code}\n\`\`\`\n\n${"word ".repeat(14)}`),
      100,
    );
    const pres = parts.flatMap((p) =>
      p.entities.filter((e) => e.type === "pre").map((e) => p.text.slice(e.offset, e.offset + e.length)),
    );
    expect(parts.length).toBeGreaterThan(1);
    expect(pres).toEqual([code]);
  });

  it("cuts a word longer than the limit without breaking a surrogate pair", () => {
    const parts = splitFormatted({ text: "😀".repeat(100), entities: [] }, 51);
    expect(parts.map((p) => p.text.length)).toEqual([50, 50, 50, 50]);
    expect(parts.join("")).not.toMatch(/\uFFFD/);
  });

  it("holds its promises for any text (property)", () => {
    fc.assert(
      fc.property(formatted, fc.integer({ min: 40, max: 400 }), (message, limit) => {
        const parts = splitFormatted(message, limit);
        const longestWord = Math.max(...message.text.split(/\s+/).map((w) => w.length));
        for (const part of parts) {
          expect(part.text.length).toBeGreaterThan(0);
          expect(part.text.length).toBeLessThanOrEqual(limit);
          expect(part.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
          for (const e of part.entities) expect(e.offset + e.length).toBeLessThanOrEqual(part.text.length);
        }
        expect(stripSpace(parts.map((p) => p.text).join(""))).toBe(stripSpace(message.text));
        if (longestWord <= limit) {
          const words = parts.flatMap((p) => p.text.split(/\s+/));
          expect(words).toEqual(message.text.split(/\s+/));
        }
        const regions = mergedRegions(message.text, message.entities);
        if (regions.every((r) => r.length <= limit)) {
          for (const e of message.entities) {
            const whole = covered(message, e);
            const found = parts.some((p) =>
              p.entities.some((pe) => pe.type === e.type && covered(p, pe) === whole),
            );
            expect(found, `entity ${e.type} "${whole}" kept whole`).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("uses Telegram's limit by default", () => {
    const parts = splitFormatted({ text: "word ".repeat(2000), entities: [] });
    expect(parts.length).toBe(3);
    for (const part of parts) expect(part.text.length).toBeLessThanOrEqual(TELEGRAM_TEXT_LIMIT);
  });
});

/**
 * The stretches that can only be kept whole if they fit: overlapping entities together, widened
 * to whole words (punctuation stuck to an entity's last word belongs to the word).
 */
function mergedRegions(text: string, entities: FormatEntity[]): { start: number; length: number }[] {
  const widened = entities
    .map((e) => {
      let start = e.offset;
      let end = e.offset + e.length;
      while (start > 0 && !/\s/.test(text[start - 1] ?? "")) start -= 1;
      while (end < text.length && !/\s/.test(text[end] ?? "")) end += 1;
      return { start, end };
    })
    .sort((a, b) => a.start - b.start);
  const regions: { start: number; end: number }[] = [];
  for (const w of widened) {
    const last = regions.at(-1);
    if (last && w.start < last.end) last.end = Math.max(last.end, w.end);
    else regions.push({ ...w });
  }
  return regions.map((r) => ({ start: r.start, length: r.end - r.start }));
}
