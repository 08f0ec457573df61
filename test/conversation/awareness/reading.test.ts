import { describe, expect, it } from "vitest";
import { englishWords } from "../../../src/conversation/awareness/reading.ts";

describe("englishWords", () => {
  it("reads a message the same whatever the process read before it", () => {
    // wink keeps an unknown name with its "'s" whole once it has seen it so ("jas's!"): the topics
    // of a message, and so the awareness block, would depend on the order messages were read in.
    const text = "going to jas's to watch the new season";
    const words = () => englishWords(text).map((w) => `${w.text}/${w.pos}`);
    const first = words();
    for (const other of ["i was at jas's.", "JAS'S", '"jas\'s"', "jas's!"]) englishWords(other);
    expect(words()).toEqual(first);
    expect(first).toContain("jas/NOUN");
  });

  it("leaves the clitic of a word the model knows as the model reads it", () => {
    expect(englishWords("that's great").map((w) => `${w.text}/${w.pos}`)).toEqual([
      "that/PRON",
      "'s/AUX",
      "great/ADJ",
    ]);
  });
});
