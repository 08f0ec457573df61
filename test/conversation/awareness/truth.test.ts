import { describe, expect, it } from "vitest";
import {
  loadTruthCorpus,
  measureTruth,
  TRUTH_FLOORS,
  type TruthFigures,
  type TruthPart,
} from "../../../bench/awareness-truth.ts";

/**
 * The awareness block's facts measured against the hand-labelled corpus, so CI holds what
 * `npm run bench -- --suite awareness-truth` reports. On the tuning part every floor the issue sets
 * is asserted. The held-out parts miss several: for those the figures reached are asserted
 * instead, so they can only go up.
 * docs/awareness.md names each gap.
 */
const tuning = measureTruth(loadTruthCorpus("tuning"));

describe("the awareness-truth corpus, tuning part", () => {
  it("shows topics only in the person's words: no stem, no normalisation, none from another language", () => {
    expect(tuning.notTheirWords).toEqual([]);
    expect(tuning.foreignTopics).toBe(0);
  });

  it("tells questions at the floor both ways", () => {
    expect(tuning.questions.precision).toBeGreaterThanOrEqual(TRUTH_FLOORS.question);
    expect(tuning.questions.recall).toBeGreaterThanOrEqual(TRUTH_FLOORS.question);
  });

  // Each figure is held at the higher of the floor and where it reached, so it can only go up.
  it("reads friction with the companion at the floors", () => {
    // Reached with sarcasm, pointed repetition and retorts read: 40 of 41 claims, 40 of 42 found.
    expect(tuning.tense.precision).toBeGreaterThanOrEqual(Math.max(TRUTH_FLOORS.tensePrecision, 0.97));
    expect(tuning.tense.recall).toBeGreaterThanOrEqual(Math.max(TRUTH_FLOORS.tenseRecall, 0.95));
  });

  it("never holds a follow-up the person has not answered, and still holds habit re-asks, and only those", () => {
    expect(tuning.followUpsHeld).toEqual([]);
    expect(tuning.habitReasks.recall).toBeGreaterThanOrEqual(TRUTH_FLOORS.habitReasksHeld);
    expect(tuning.habitReasks.precision).toBe(1);
  });

  it("tells topics at the floors, counting a claim nobody judged as wrong", () => {
    // Reached: precision 0.966, recall 0.866.
    expect(tuning.topics.precision).toBeGreaterThanOrEqual(Math.max(TRUTH_FLOORS.topicPrecision, 0.96));
    expect(tuning.topics.recall).toBeGreaterThanOrEqual(Math.max(TRUTH_FLOORS.topicRecall, 0.86));
    expect(tuning.unjudged).toEqual([]);
  });

  it("calls a change of subject only when it is one, at the floor", () => {
    expect(tuning.shifts.precision).toBeGreaterThanOrEqual(TRUTH_FLOORS.shiftPrecision);
  });

  it("says a mood only when it is plain (the block shows it as a fact)", () => {
    expect(tuning.mood.precision).toBeGreaterThanOrEqual(0.9);
  });
});

/** What a held-out part has reached (precision, recall), asserted so it can only go up. */
interface Reached {
  readonly part: TruthPart;
  readonly topics: readonly [number, number];
  readonly tense: readonly [number, number];
  readonly habitReasksHeld: number;
  /** Of the habit re-asks the guard held, the share it should have held. */
  readonly habitHoldsRight: number;
}

/**
 * The held-out parts. held-out was kept unread while the first rules were tuned; the others were
 * written blind, each after a round of rules, and measured once before any change. Those first
 * figures (P / R) are the honest estimate for text nobody has read:
 * - held-out-2 (session 21): topics 0.65 / 0.57, questions 0.95 / 0.98, tense 1.00 / 0.71, habit re-asks held 3 of 3;
 * - held-out-3: topics 0.75 / 0.63, questions 0.90 / 0.96, tense 0.83 / 0.56, habit re-asks held 2 of 3;
 * - held-out-4: topics 0.71 / 0.70, questions 0.98 / 0.98, tense 1.00 / 0.54, habit re-asks held 1 of 4;
 * - held-out-5: topics 0.73 / 0.69, questions 0.97 / 1.00, tense 0.64 / 0.58, habit re-asks held 3 of 4;
 * and no follow-up held on any. The figures below are those reached since.
 */
const HELD_OUT: readonly Reached[] = [
  // held-out's guard holds one habit check-in it should allow (5 of 6 holds right).
  {
    part: "held-out",
    topics: [0.92, 0.82],
    tense: [0.96, 0.96],
    habitReasksHeld: 0.95,
    habitHoldsRight: 0.83,
  },
  { part: "held-out-2", topics: [0.8, 0.69], tense: [0.9, 0.85], habitReasksHeld: 0.95, habitHoldsRight: 1 },
  // Both misses of held-out-3 and -5 are a dog walk said as "out with Moose", "mit dem Wastl draußen".
  { part: "held-out-3", topics: [0.78, 0.69], tense: [1, 0.88], habitReasksHeld: 0.66, habitHoldsRight: 1 },
  { part: "held-out-4", topics: [0.77, 0.73], tense: [1, 0.84], habitReasksHeld: 0.95, habitHoldsRight: 1 },
  { part: "held-out-5", topics: [0.73, 0.69], tense: [0.92, 1], habitReasksHeld: 0.75, habitHoldsRight: 1 },
];

describe.each(HELD_OUT)("the awareness-truth corpus, $part part (figures reached)", (reached) => {
  const f: TruthFigures = measureTruth(loadTruthCorpus(reached.part));

  it("shows no stem, no normalisation, no word-made topic of another language, no unjudged claim", () => {
    expect(f.notTheirWords).toEqual([]);
    expect(f.foreignTopics).toBe(0);
    expect(f.unjudged).toEqual([]);
  });

  it("tells questions at the floor both ways, calls no false change of subject, holds no follow-up", () => {
    expect(f.questions.precision).toBeGreaterThanOrEqual(TRUTH_FLOORS.question);
    expect(f.questions.recall).toBeGreaterThanOrEqual(TRUTH_FLOORS.question);
    expect(f.shifts.precision).toBeGreaterThanOrEqual(TRUTH_FLOORS.shiftPrecision);
    expect(f.followUpsHeld).toEqual([]);
  });

  it("holds what it reached on topics, friction, habit re-asks and mood", () => {
    expect(f.topics.precision).toBeGreaterThanOrEqual(reached.topics[0]);
    expect(f.topics.recall).toBeGreaterThanOrEqual(reached.topics[1]);
    expect(f.tense.precision).toBeGreaterThanOrEqual(reached.tense[0]);
    expect(f.tense.recall).toBeGreaterThanOrEqual(reached.tense[1]);
    expect(f.habitReasks.recall).toBeGreaterThanOrEqual(reached.habitReasksHeld);
    expect(f.habitReasks.precision).toBeGreaterThanOrEqual(reached.habitHoldsRight);
    expect(f.mood.precision).toBeGreaterThanOrEqual(0.6);
  });
});

describe("the awareness-truth corpus as a whole", () => {
  it("has the support the floors need: 30 tense messages, 20 shifts, 40 guard cases, 300 of the person's messages", () => {
    const both = [loadTruthCorpus("tuning"), loadTruthCorpus("held-out")];
    const theirs = both.flatMap((c) =>
      c.conversations.flatMap((v) => v.messages.filter((m) => m.role === "user")),
    );
    expect(theirs.length).toBeGreaterThanOrEqual(300);
    expect(
      theirs.filter((m) => m.role === "user" && m.labels.tone === "tense").length,
    ).toBeGreaterThanOrEqual(30);
    expect(theirs.filter((m) => m.role === "user" && m.labels.shift === true).length).toBeGreaterThanOrEqual(
      20,
    );
    expect(both.reduce((n, c) => n + c.guardCases.length, 0)).toBeGreaterThanOrEqual(40);
  });
});
