import { describe, expect, it } from "vitest";
import { formatTable, OUTPUT_WIDTH, outputWidth, wrapWords } from "../../../src/app/commands/layout.ts";

const widest = (lines: readonly string[]) => Math.max(...lines.map((line) => line.length));

describe("outputWidth", () => {
  it("is 100 columns for a pipe or a wider terminal, a narrower terminal's own width", () => {
    expect(outputWidth({})).toBe(OUTPUT_WIDTH);
    expect(OUTPUT_WIDTH).toBe(100);
    expect(outputWidth({ columns: 200 })).toBe(100);
    expect(outputWidth({ columns: 80 })).toBe(80);
    expect(outputWidth({ columns: 0 })).toBe(100);
  });
});

describe("formatTable", () => {
  const headings = [["name"], ["count"], ["costs ×", "presence"]];
  const groups = [{ label: "a bot", from: 1, to: 2 }];
  const rows = [
    ["a-rather-long-scenario-name-indeed", "12", "×2.2"],
    ["short", "3", "×0.7"],
  ];
  const right = new Set([1, 2]);

  it("aligns the rows under their headings, groups above, a rule below, figures right-aligned", () => {
    expect(formatTable(rows, { headings, groups, right, width: 100 })).toEqual([
      "a bot".padStart(51),
      "costs ×".padStart(51),
      "name                                count  presence",
      "----------------------------------  -----  --------",
      "a-rather-long-scenario-name-indeed     12      ×2.2",
      "short                                   3      ×0.7",
    ]);
  });

  it("on a narrower screen puts each row's first cell above its figures, never a row over the width", () => {
    const lines = formatTable(rows, { headings, groups, right, width: 40 });
    expect(widest(lines)).toBeLessThanOrEqual(40);
    expect(lines).toEqual([
      "name",
      "a bot".padStart(17),
      "costs ×".padStart(17),
      "  count  presence",
      "  -----  --------",
      "a-rather-long-scenario-name-indeed",
      "     12      ×2.2",
      "short",
      "      3      ×0.7",
    ]);
  });

  it("widens a group's last column when its label is longer than the columns under it", () => {
    const lines = formatTable([["x", "1", "2"]], {
      headings: [["n"], ["a"], ["b"]],
      groups: [{ label: "a long label", from: 1, to: 2 }],
      right,
      width: 100,
    });
    expect(lines[0]).toBe("   a long label");
    expect(lines.at(-1)).toBe(`x  1  ${"2".padStart(9)}`);
  });

  it("leaves out a column empty in every row, and cuts a line that cannot fit even stacked", () => {
    const lines = formatTable(
      [
        ["x".repeat(60), "", "1"],
        ["y", "", "2"],
      ],
      { right: new Set([2]), indent: "  ", width: 40 },
    );
    expect(lines).toEqual([`  ${"x".repeat(37)}…`, "    1", "  y", "    2"]);
  });
});

describe("wrapWords", () => {
  it("breaks between words, going on indented under the paragraph's own indentation", () => {
    const lines = wrapWords("  one two three four five six", 14);
    expect(lines).toEqual(["  one two", "    three four", "    five six"]);
    expect(wrapWords("a b c", 80)).toEqual(["a b c"]);
    expect(wrapWords("see /a/very/long/path/that/the/person/chose ok", 10, "")).toEqual([
      "see",
      "/a/very/long/path/that/the/person/chose",
      "ok",
    ]);
  });
});
