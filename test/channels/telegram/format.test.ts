import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FormattedText, formatMarkdown, trimFormatted } from "../../../src/channels/telegram/format.ts";

/** Renders entities back as [type:text] so expectations read like the message. */
function show({ text, entities }: FormattedText): string[] {
  return entities.map((e) => `${e.type}:${text.slice(e.offset, e.offset + e.length)}`);
}

describe("formatMarkdown", () => {
  it("turns bold, italic, strikethrough and inline code into entities over the visible text", () => {
    const result = formatMarkdown("Drink **water**, *slowly*, ~~not~~ `now`.");
    expect(result.text).toBe("Drink water, slowly, not now.");
    expect(show(result)).toEqual(["bold:water", "italic:slowly", "strikethrough:not", "code:now"]);
  });

  it("nests emphasis", () => {
    const result = formatMarkdown("**very *much* so**");
    expect(result.text).toBe("very much so");
    expect(show(result)).toEqual(["bold:very much so", "italic:much"]);
    const both = formatMarkdown("***really***");
    expect(both.text).toBe("really");
    expect(show(both).sort()).toEqual(["bold:really", "italic:really"]);
  });

  it("keeps a fenced code block verbatim as pre with its language", () => {
    const result = formatMarkdown("Try:\n```ts\nconst a = 1 < 2 && **x**;\n```\nDone.");
    expect(result.text).toBe("Try:\nconst a = 1 < 2 && **x**;\nDone.");
    expect(result.entities).toContainEqual({ type: "pre", language: "ts", offset: 5, length: 25 });
  });

  it("keeps the balanced parentheses of a link's URL", () => {
    const result = formatMarkdown("See [the docs](https://en.wikipedia.org/wiki/Sleep_(disambiguation)).");
    expect(result.text).toBe("See the docs.");
    expect(result.entities).toEqual([
      {
        type: "text_link",
        url: "https://en.wikipedia.org/wiki/Sleep_(disambiguation)",
        offset: 4,
        length: 8,
      },
    ]);
  });

  it("accepts fences of more than three backticks, or tildes, closed only by the same marker", () => {
    const nested = formatMarkdown("````markdown\n```js\nx()\n```\n````\nafter");
    expect(nested.text).toBe("```js\nx()\n```\nafter");
    expect(nested.entities).toEqual([{ type: "pre", language: "markdown", offset: 0, length: 13 }]);
    const tilde = formatMarkdown("~~~python\nprint('~~hi~~')\n```\n~~~");
    expect(tilde.text).toBe("print('~~hi~~')\n```");
    expect(tilde.entities).toEqual([{ type: "pre", language: "python", offset: 0, length: 19 }]);
  });

  it("lets emphasis run across the line breaks of a paragraph", () => {
    const result = formatMarkdown("*across\nlines* and **bold\nagain**\n\n- item *one*\n*two");
    expect(result.text).toBe("across\nlines and bold\nagain\n\n• item one\n*two");
    expect(show(result)).toEqual(["italic:across\nlines", "bold:bold\nagain", "italic:one"]);
  });

  it("links only safe URLs and shows any other target as text", () => {
    const safe = formatMarkdown("See [the guide](https://example.org/a_b).");
    expect(safe.text).toBe("See the guide.");
    expect(safe.entities).toEqual([
      { type: "text_link", url: "https://example.org/a_b", offset: 4, length: 9 },
    ]);
    const unsafe = formatMarkdown("[click](javascript:alert)");
    expect(unsafe).toEqual({ text: "click (javascript:alert)", entities: [] });
  });

  it("renders lists, headings and quotes as text people read", () => {
    const result = formatMarkdown("# Plan\n- rest\n* walk\n2) eat\n> be kind");
    expect(result.text).toBe("Plan\n• rest\n• walk\n2. eat\nbe kind");
    expect(show(result)).toEqual(["bold:Plan", "blockquote:be kind"]);
  });

  it("leaves snake_case, arithmetic and unmatched markers literal", () => {
    for (const text of ["my_file_name", "2*3*4 = 24", "a * b", "**unclosed", "x_y_z and _"]) {
      expect(formatMarkdown(text), text).toEqual({ text, entities: [] });
    }
  });

  it("honours backslash escapes", () => {
    expect(formatMarkdown("\\*not italic\\*")).toEqual({ text: "*not italic*", entities: [] });
  });

  it("passes characters HTML would need escaped straight through", () => {
    expect(formatMarkdown("a <b> & c").text).toBe("a <b> & c");
  });

  it("counts offsets in UTF-16 units, past emoji", () => {
    const result = formatMarkdown("😀 **hi**");
    expect(result.entities).toEqual([{ type: "bold", offset: 3, length: 2 }]);
  });

  it("trims surrounding whitespace and keeps entities aligned", () => {
    expect(trimFormatted({ text: "  ab  ", entities: [{ type: "bold", offset: 0, length: 4 }] })).toEqual({
      text: "ab",
      entities: [{ type: "bold", offset: 0, length: 2 }],
    });
  });

  it("never produces an empty or out-of-bounds entity", () => {
    for (const text of ["****", "``", "[]()", "** **", "```\n```", "_ _", "> ", "#  "]) {
      const result = formatMarkdown(text);
      for (const e of result.entities) {
        expect(e.length, text).toBeGreaterThan(0);
        expect(e.offset + e.length, text).toBeLessThanOrEqual(result.text.length);
      }
    }
  });

  it("makes only entities Telegram accepts, for any input (property)", () => {
    const markdownish = fc.array(
      fc.oneof(
        fc.constantFrom(
          "*",
          "**",
          "_",
          "__",
          "~~",
          "`",
          "```",
          "\n",
          "\n\n",
          "# ",
          "- ",
          "> ",
          "[",
          "](",
          ")",
          "\\",
          " ",
        ),
        fc.constantFrom("https://x.org", "javascript:x", "😀", "word", "a_b", "1.", "<b>", "&amp;"),
        fc.string({ maxLength: 5 }),
      ),
      { maxLength: 60 },
    );
    fc.assert(
      fc.property(markdownish, (pieces) => {
        const { text, entities } = formatMarkdown(pieces.join(""));
        expect(text).toBe(text.trim());
        for (const e of entities) {
          expect(e.length).toBeGreaterThan(0);
          expect(e.offset).toBeGreaterThanOrEqual(0);
          expect(e.offset + e.length).toBeLessThanOrEqual(text.length);
          if (e.type === "text_link") expect(e.url).toMatch(/^(https?:\/\/|tg:\/\/|mailto:)/);
        }
      }),
      { numRuns: 500 },
    );
  });
});
