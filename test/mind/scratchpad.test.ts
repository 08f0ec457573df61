import { describe, expect, it } from "vitest";
import {
  applyScratchpadUpdate,
  FIELD_MAX_CHARS,
  fieldPaths,
  fieldText,
  initialScratchpad,
  injectSection,
  renderScratchpad,
  resolveFieldPath,
  type Scratchpad,
  type ScratchpadResult,
  WORKSPACE_BUDGET_TOKENS,
} from "../../src/mind/scratchpad.ts";
import { estimateTokens } from "../../src/model/tokens.ts";
import { lines } from "./items.ts";

const now = new Date("2026-11-22T08:30:15.000Z");

function pad(overrides: Partial<Scratchpad> = {}): Scratchpad {
  return { ...initialScratchpad(), understanding_known: lines("- (user) drinks tea"), ...overrides };
}

function applied(result: ScratchpadResult) {
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  return result;
}

function refusal(result: ScratchpadResult): string {
  if (result.ok) throw new Error("expected a refusal");
  return result.reason;
}

describe("field values", () => {
  it("a plain value replaces the field", () => {
    const r = applied(applyScratchpadUpdate(pad(), { fields: { trajectory_now: "Planning the week" } }, now));
    expect(r.pad.trajectory_now).toBe("Planning the week");
    expect(r.changed).toEqual(["trajectory_now"]);
  });

  it("APPEND: adds a line after the existing content", () => {
    const r = applied(
      applyScratchpadUpdate(pad(), { fields: { understanding_known: "APPEND: - (user) walks at 7" } }, now),
    );
    expect(fieldText(r.pad, "understanding_known")).toBe("- (user) drinks tea\n- (user) walks at 7");
    // The line that was there stays the same item; the new one is an item learned now.
    expect(r.pad.understanding_known[0]).toEqual(pad().understanding_known[0]);
    expect(r.pad.understanding_known[1]).toMatchObject({
      learnedAt: now.toISOString(),
      sourceMessageIds: [],
    });
  });

  it("APPEND: onto an empty field is just the addition", () => {
    const r = applied(
      applyScratchpadUpdate(pad(), { fields: { trajectory_later: "APPEND: ask about the trip" } }, now),
    );
    expect(r.pad.trajectory_later).toBe("ask about the trip");
  });

  it("CLEAR empties the field", () => {
    const r = applied(applyScratchpadUpdate(pad(), { fields: { understanding_known: "CLEAR" } }, now));
    expect(r.pad.understanding_known).toEqual([]);
  });

  it("REPLACE: replaces explicitly, even text that starts like a keyword", () => {
    const r = applied(
      applyScratchpadUpdate(pad(), { fields: { trajectory_now: "REPLACE: APPEND is a word here" } }, now),
    );
    expect(r.pad.trajectory_now).toBe("APPEND is a word here");
  });

  it("an update that changes nothing reports no changed fields", () => {
    const r = applied(applyScratchpadUpdate(pad(), {}, now));
    expect(r.changed).toEqual([]);
    expect(r.pad).toEqual(pad());
  });
});

describe("WORKSPACE edits", () => {
  const base = pad({ workspace: "- [ ] book dentist\n- [ ] call mum" });

  it("append and prepend add at either end", () => {
    const r = applied(
      applyScratchpadUpdate(
        base,
        {
          workspaceEdits: [
            { op: "append", text: "- [ ] buy bread" },
            { op: "prepend", text: "## This week" },
          ],
        },
        now,
      ),
    );
    expect(r.pad.workspace).toBe("## This week\n- [ ] book dentist\n- [ ] call mum\n- [ ] buy bread");
  });

  it("find_replace changes the first occurrence, or all of them", () => {
    const one = applied(
      applyScratchpadUpdate(
        base,
        { workspaceEdits: [{ op: "find_replace", find: "[ ]", replace: "[x]" }] },
        now,
      ),
    );
    expect(one.pad.workspace).toBe("- [x] book dentist\n- [ ] call mum");
    const all = applied(
      applyScratchpadUpdate(
        base,
        { workspaceEdits: [{ op: "find_replace", find: "[ ]", replace: "[x]", all: true }] },
        now,
      ),
    );
    expect(all.pad.workspace).toBe("- [x] book dentist\n- [x] call mum");
  });

  it("a replacement containing $& is taken literally", () => {
    const r = applied(
      applyScratchpadUpdate(
        base,
        { workspaceEdits: [{ op: "find_replace", find: "mum", replace: "$& $1" }] },
        now,
      ),
    );
    expect(r.pad.workspace).toContain("call $& $1");
  });

  it("delete removes an exact passage", () => {
    const r = applied(
      applyScratchpadUpdate(base, { workspaceEdits: [{ op: "delete", text: "- [ ] call mum" }] }, now),
    );
    expect(r.pad.workspace).toBe("- [ ] book dentist");
  });

  it("edits run after the whole-field value", () => {
    const r = applied(
      applyScratchpadUpdate(
        base,
        { fields: { workspace: "fresh" }, workspaceEdits: [{ op: "append", text: "more" }] },
        now,
      ),
    );
    expect(r.pad.workspace).toBe("fresh\nmore");
  });

  it("a WORKSPACE over its budget is archived with a pointer left in its place", () => {
    const big = "- a line of notes about the plan for the week ahead\n".repeat(80);
    expect(estimateTokens(big)).toBeGreaterThan(WORKSPACE_BUDGET_TOKENS);
    const r = applied(applyScratchpadUpdate(base, { fields: { workspace: big } }, now));
    expect(r.archive).toEqual({ key: "workspace-20261122-083015", content: big.trim() });
    expect(r.pad.workspace).toContain('"workspace-20261122-083015"');
    expect(r.pad.workspace).toContain("notes_read");
    expect(estimateTokens(r.pad.workspace)).toBeLessThan(WORKSPACE_BUDGET_TOKENS);
  });
});

describe("refusals leave the pad as it was", () => {
  const base = pad({ workspace: "- [ ] book dentist" });
  const cases: [string, Parameters<typeof applyScratchpadUpdate>[1], RegExp][] = [
    [
      "an oversized value",
      { fields: { understanding_known: "x".repeat(FIELD_MAX_CHARS + 1) } },
      /limit 1500/,
    ],
    [
      "an append that outgrows the field",
      { fields: { understanding_known: `APPEND: ${"y".repeat(FIELD_MAX_CHARS - 12)}` } },
      /would hold \d+ characters/,
    ],
    [
      "a confidence without a level",
      { fields: { self_confidence: "pretty sure about things" } },
      /HIGH, MEDIUM or LOW/,
    ],
    ["a cleared confidence", { fields: { self_confidence: "CLEAR" } }, /HIGH, MEDIUM or LOW/],
    [
      "a find that is not there",
      { workspaceEdits: [{ op: "find_replace", find: "call mum", replace: "x" }] },
      /edit 1 \(find_replace\).*not in WORKSPACE/,
    ],
    ["a delete that is not there", { workspaceEdits: [{ op: "delete", text: "nope" }] }, /not in WORKSPACE/],
    ["an append with no text", { workspaceEdits: [{ op: "append", text: "  " }] }, /needs non-empty text/],
    ["a find_replace with no find", { workspaceEdits: [{ op: "find_replace", replace: "x" }] }, /needs find/],
    [
      "an update that wipes the pad",
      {
        fields: {
          ...Object.fromEntries(Object.keys(initialScratchpad()).map((k) => [k, "CLEAR"])),
          self_confidence: "LOW",
        },
      },
      /nearly empty/,
    ],
  ];

  it.each(cases)("refuses %s", (_name, update, reason) => {
    const before = structuredClone(base);
    expect(refusal(applyScratchpadUpdate(base, update, now))).toMatch(reason);
    expect(base).toEqual(before);
  });

  it("one bad field refuses the good ones with it", () => {
    const r = applyScratchpadUpdate(
      base,
      { fields: { trajectory_now: "new focus", self_confidence: "unsure" } },
      now,
    );
    expect(r.ok).toBe(false);
  });

  it("a confidence that states its level is accepted in any case", () => {
    const r = applied(
      applyScratchpadUpdate(base, { fields: { self_confidence: "medium - they opened up" } }, now),
    );
    expect(r.pad.self_confidence).toBe("medium - they opened up");
  });
});

describe("inject", () => {
  it("accepts SECTION.Field, the bare field name or the tool key, in any case", () => {
    expect(resolveFieldPath("UNDERSTANDING.Known")).toBe("understanding_known");
    expect(resolveFieldPath("known")).toBe("understanding_known");
    expect(resolveFieldPath("self_flags")).toBe("self_flags");
    expect(resolveFieldPath("Workspace")).toBe("workspace");
    expect(resolveFieldPath("UNDERSTANDING")).toBeNull();
  });

  it("pre-populates a field with the same semantics", () => {
    const r = applied(injectSection(pad(), "Known", "APPEND: - (user) has a dog called Pip", now));
    expect(fieldText(r.pad, "understanding_known")).toBe(
      "- (user) drinks tea\n- (user) has a dog called Pip",
    );
  });

  it("an unknown section lists the valid ones", () => {
    expect(() => injectSection(pad(), "Feelings", "x", now)).toThrow(
      `unknown section "Feelings"; valid sections: ${fieldPaths().join(", ")}`,
    );
    expect(fieldPaths()).toHaveLength(13);
  });
});

describe("renderScratchpad", () => {
  it("shows the five sections in order, one line per short field, empty ones marked", () => {
    const text = renderScratchpad(pad({ understanding_known: lines("- a\n- b") }));
    expect(text.split("\n").filter((l) => l.startsWith("## "))).toEqual([
      "## IDENTITY",
      "## UNDERSTANDING",
      "## TRAJECTORY",
      "## WORKSPACE",
      "## SELF",
    ]);
    expect(text).toContain("Known:\n- a\n- b");
    expect(text).toContain("Now: Getting to know them.");
    expect(text).toContain("Believed: (empty)");
  });
});
