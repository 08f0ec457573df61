import { describe, expect, it } from "vitest";
import type { MemoryItem } from "../../src/mind/memory.ts";
import {
  applyMemoryOps,
  type MemoryOpContext,
  priorMemoryFor,
  rankMemory,
  selectMemory,
} from "../../src/mind/memory.ts";

const now = new Date("2026-11-22T12:00:00.000Z");
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000).toISOString();

function item(overrides: Partial<MemoryItem> & Pick<MemoryItem, "id" | "kind" | "text">): MemoryItem {
  return { learnedAt: hoursAgo(1), sourceMessageIds: [], importance: 3, topics: [], ...overrides };
}

const weekends = item({
  id: "m1",
  kind: "pattern",
  text: "Weekends are loose: no plans before noon",
  topics: ["routine"],
  importance: 3,
  learnedAt: hoursAgo(24),
});
const interview = item({
  id: "m2",
  kind: "open_loop",
  text: "Waiting to hear back about the job interview",
  topics: ["work"],
  importance: 4,
  learnedAt: hoursAgo(48),
});
const fiveK = item({
  id: "m3",
  kind: "milestone",
  text: "Ran a first 5k",
  topics: ["exercise"],
  importance: 5,
  learnedAt: hoursAgo(240),
});
const query = { text: "How did the interview go? Any news about the job?", topics: ["work"] };

describe("ranking", () => {
  it("scores relevance, recency per hour, importance and open loops with fixed weights", () => {
    const ranked = rankMemory([weekends, interview, fiveK], query, now);
    expect(ranked.map((r) => r.item.id)).toEqual(["m2", "m1", "m3"]);
    const [first, second, third] = ranked;
    // m2: 2·1 shared topic + 0.5·2 shared words (job, interview) + 2·0.99^48 + 0.5·4 + 1 open loop
    expect(first?.sharedTopics).toBe(1);
    expect(first?.sharedWords).toBe(2);
    expect(first?.score).toBeCloseTo(2 + 1 + 1.234580281884576 + 2 + 1, 10);
    // m1: nothing shared; 2·0.99^24 + 0.5·3
    expect(second?.score).toBeCloseTo(1.5713562816144375 + 1.5, 10);
    // m3: nothing shared, ten days old; 2·0.99^240 + 0.5·5
    expect(third?.score).toBeCloseTo(0.17925723740464924 + 2.5, 10);
  });

  it("recency counts from the last time an item was learned again", () => {
    const reinforced = { ...fiveK, reinforcedAt: hoursAgo(0) };
    const [top] = rankMemory([weekends, reinforced], { text: "", topics: [] }, now);
    expect(top?.item.id).toBe("m3");
    expect(top?.score).toBeCloseTo(2 + 2.5, 10);
  });

  it("retired items are never ranked", () => {
    const closed = { ...interview, retiredAt: hoursAgo(2), retiredWhy: "closed" as const };
    expect(rankMemory([closed, weekends], query, now).map((r) => r.item.id)).toEqual(["m1"]);
  });

  it("fills the token budget best first, skipping what does not fit", () => {
    const long = item({
      id: "m4",
      kind: "pattern",
      text: "x ".repeat(200),
      importance: 5,
      learnedAt: hoursAgo(0),
    });
    const ranked = rankMemory([long, weekends, interview, fiveK], query, now);
    expect(ranked.map((r) => r.item.id)).toEqual(["m2", "m4", "m1", "m3"]);
    // Costs (text plus 2): m2 15, m4 117, m1 14, m3 6 tokens.
    expect(selectMemory(ranked, 40).map((i) => i.id)).toEqual(["m2", "m1", "m3"]);
    expect(selectMemory(ranked, 25).map((i) => i.id)).toEqual(["m2", "m3"]);
    expect(selectMemory(ranked, 200).map((i) => i.id)).toEqual(["m2", "m4", "m1", "m3"]);
  });

  it("priorMemoryFor groups the chosen items by kind for the awareness block", () => {
    expect(priorMemoryFor({ memory: [weekends, interview, fiveK] }, query, now, 100)).toEqual({
      declaredPatterns: ["Weekends are loose: no plans before noon"],
      openLoops: ["Waiting to hear back about the job interview"],
      recentMilestones: ["Ran a first 5k"],
    });
  });
});

describe("memory operations", () => {
  let counter = 0;
  const ctx = (): MemoryOpContext => ({
    now,
    sourceMessageIds: ["msg-9"],
    newId: () => `n${++counter}`,
    topicsOf: (text) => (text.includes("water") ? ["hydration"] : []),
    forgotten: new Set(),
  });

  it("adds items with when they were learned, from which messages, and their topics", () => {
    counter = 0;
    const r = applyMemoryOps(
      [],
      [{ op: "add", kind: "open_loop", text: "Drink more water this week" }],
      ctx(),
    );
    if (!r.ok) throw new Error(r.reason);
    expect(r.items).toEqual([
      {
        id: "n1",
        kind: "open_loop",
        text: "Drink more water this week",
        learnedAt: now.toISOString(),
        sourceMessageIds: ["msg-9"],
        importance: 3,
        topics: ["hydration"],
      },
    ]);
  });

  it("topics the model gives are mapped onto the lexicon's labels, so they meet the exchange's", () => {
    const r = applyMemoryOps(
      [],
      [{ op: "add", kind: "pattern", text: "Forgets to drink before noon", topics: ["Water", "hydration"] }],
      ctx(),
    );
    if (!r.ok) throw new Error(r.reason);
    expect(r.items[0]?.topics).toEqual(["hydration"]);
  });

  it("adding what is already known reinforces it instead of duplicating", () => {
    const r = applyMemoryOps(
      [weekends],
      // The same words as the forgotten-words check compares them: case, spacing, a bullet and the final full stop aside.
      [{ op: "add", kind: "pattern", text: "- weekends are  LOOSE: no plans before noon." }],
      ctx(),
    );
    if (!r.ok) throw new Error(r.reason);
    expect(r.items).toHaveLength(1);
    expect(r.items[0]?.reinforcedAt).toBe(now.toISOString());
    expect(r.items[0]?.sourceMessageIds).toEqual(["msg-9"]);
  });

  it("closing a loop retires it with when and why, and keeps it", () => {
    const r = applyMemoryOps([interview], [{ op: "close", id: "m2", note: "got the job" }], ctx());
    if (!r.ok) throw new Error(r.reason);
    expect(r.items).toEqual([
      { ...interview, retiredAt: now.toISOString(), retiredWhy: "closed", retiredNote: "got the job" },
    ]);
  });

  it("superseding retires the old item and points it at its replacement", () => {
    counter = 0;
    const r = applyMemoryOps(
      [weekends],
      [{ op: "supersede", id: "m1", text: "Saturdays are loose; Sundays are for family" }],
      ctx(),
    );
    if (!r.ok) throw new Error(r.reason);
    expect(r.items).toHaveLength(2);
    expect(r.items[0]).toMatchObject({
      id: "m1",
      retiredWhy: "superseded",
      supersededBy: "n1",
      retiredAt: now.toISOString(),
    });
    expect(r.items[1]).toMatchObject({
      id: "n1",
      kind: "pattern",
      importance: 3,
      text: "Saturdays are loose; Sundays are for family",
    });
  });

  it.each([
    ["close of an unknown id", [{ op: "close" as const, id: "zz" }], /no open item/],
    ["close of a pattern", [{ op: "close" as const, id: "m1" }], /not an open loop/],
    ["add without kind", [{ op: "add" as const, text: "x" }], /needs kind and text/],
    ["supersede without text", [{ op: "supersede" as const, id: "m1" }], /needs the text/],
    [
      "a bad op after a good one",
      [
        { op: "add" as const, kind: "milestone" as const, text: "ok" },
        { op: "close" as const, id: "m9" },
      ],
      /memory op 2/,
    ],
  ])("refuses %s as a whole", (_name, ops, reason) => {
    const items = [weekends, interview];
    const r = applyMemoryOps(items, ops, ctx());
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
    expect(items).toEqual([weekends, interview]);
  });
});
