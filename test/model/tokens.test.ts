import { describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/model/tokens.ts";

describe("estimateTokens", () => {
  it("counts ASCII at about 3.5 characters a token, rounded up", () => {
    expect(estimateTokens("")).toBe(0);
    expect(estimateTokens("a")).toBe(1);
    expect(estimateTokens("seven c")).toBe(2);
    expect(estimateTokens("x".repeat(35))).toBe(10);
  });

  it("counts every non-ASCII code point as one: an accent, a character of another script, an emoji of two UTF-16 units", () => {
    expect(estimateTokens("é")).toBe(1);
    expect(estimateTokens("日本語")).toBe(3);
    expect(estimateTokens("😀")).toBe(1);
    expect(estimateTokens("👍🏽")).toBe(2);
    expect(estimateTokens("ok 😀😀")).toBe(1 + 2);
    // A surrogate without its other half is still one code point.
    expect(estimateTokens("\ud83d")).toBe(1);
    expect(estimateTokens("\ude00\ud83d")).toBe(2);
  });
});
