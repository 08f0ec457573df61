import { describe, expect, it } from "vitest";
import { HOLDERS_OF_WORDS } from "../../src/companion/data-rights.ts";
import { PERSON_FILES } from "../../src/store/person-files.ts";

describe("the one list of what holds the person's words", () => {
  it("gives every file the stores keep the person's words in to exactly one holder", () => {
    const held = Object.values(HOLDERS_OF_WORDS).flatMap((holder) => holder.files);
    expect([...held].sort()).toEqual(Object.keys(PERSON_FILES).sort());
  });

  it("lists the holders in the order /export writes them and /wipe deletes them", () => {
    expect(Object.keys(HOLDERS_OF_WORDS)).toEqual(["log", "mind", "notes", "trace", "otherFiles"]);
  });
});
