import { describe, expect, it } from "vitest";
import { formatDuration, mentionMatcher, plural } from "../../src/core/text.ts";

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
