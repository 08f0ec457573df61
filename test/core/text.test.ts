import { describe, expect, it } from "vitest";
import { clip, formatDuration, mentionMatcher, plural } from "../../src/core/text.ts";

describe("mentionMatcher", () => {
  it("matches across case and runs of whitespace, line breaks included", () => {
    const mentions = mentionMatcher("JOB  interview");
    expect(mentions("Has a job interview on Friday")).toBe(true);
    expect(mentions("the Job\n   Interview went well")).toBe(true);
    expect(mentions("a job, then an interview")).toBe(false);
  });

  it("a blank text mentions nothing, so /forget with spaces cannot erase everything", () => {
    expect(mentionMatcher("  \n ")("anything at all")).toBe(false);
    expect(mentionMatcher("")("")).toBe(false);
  });
});

describe("clip", () => {
  it("leaves a text that is short enough as it is", () => {
    expect(clip("short", 5)).toBe("short");
    expect(clip("  two\n lines ", 20, { oneLine: true })).toBe("two lines");
  });

  it("keeps max characters and adds the ellipsis after them unless told to fit", () => {
    expect(clip("abcdefghij", 4)).toBe("abcd…");
    expect(clip("abcdefghij", 4, { fit: true })).toBe("abc…");
    expect(clip("abcde", 5, { fit: true })).toBe("abcde");
    expect(clip("abcdef", 0, { fit: true })).toBe("…");
  });

  it("without oneLine, keeps the text's own spacing, also before the ellipsis", () => {
    expect(clip("ab  cd\nef", 5)).toBe("ab  c…");
    expect(clip("abc def", 5, { fit: true })).toBe("abc …");
  });

  it("on one line, measures the flattened text and leaves no space before the ellipsis", () => {
    expect(clip("I  work\nnights at the hospital", 15, { oneLine: true })).toBe("I work nights a…");
    expect(clip("I work nights at the hospital", 15, { oneLine: true, fit: true })).toBe("I work nights…");
  });

  it("at a word, cuts back to a space in the last 40% of the cut and drops the punctuation before it", () => {
    expect(clip("Went running today, then slept for ages", 20, { oneLine: true, atWord: true })).toBe(
      "Went running today…",
    );
    // The only space is too early: the word is cut instead of losing most of the quote.
    expect(clip("Hi extraordinarily-long-word here", 20, { oneLine: true, atWord: true })).toBe(
      "Hi extraordinarily-l…",
    );
  });
});

describe("plural", () => {
  it("says the count with the word in the form it takes", () => {
    expect(plural(1, "message")).toBe("1 message");
    expect(plural(0, "message")).toBe("0 messages");
    expect(plural(2, "memory", "memories")).toBe("2 memories");
    expect(plural(1, "message is", "messages are")).toBe("1 message is");
  });
});

describe("formatDuration", () => {
  it("says how long the way a person does", () => {
    expect(formatDuration(45)).toBe("45m");
    expect(formatDuration(120)).toBe("2h");
    expect(formatDuration(343)).toBe("5h 43m");
    expect(formatDuration(3 * 1440)).toBe("3d");
    expect(formatDuration(3 * 1440 + 4 * 60 + 59)).toBe("3d 4h");
  });
});
