import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { runScenario } from "../../simulations/harness.ts";
import { planScenario } from "../../simulations/plan.ts";
import { renderReport } from "../../simulations/report.ts";
import type { RunResult } from "../../simulations/result.ts";
import { loadScenarios, naiveRunModel, scenarioNames } from "../../simulations/run.ts";
import type { Scenario } from "../../simulations/scenario.ts";

/**
 * Every shipped scenario, lived offline with the naive model, meets its expectations:
 * what the scenarios promise is what the code guarantees without a clever model.
 */
const names = await scenarioNames();
const scenarios = await loadScenarios(names);

/** A lived day takes seconds, the month a minute or two on a busy machine: each run gets room by its length. */
function timeoutFor(scenario: (typeof scenarios)[number]): number {
  const { start, end } = planScenario(scenario);
  const days = (end.getTime() - start.getTime()) / 86_400_000;
  return Math.max(30_000, Math.ceil(days) * 10_000);
}

/** Each run once per key, so a comparison reuses the shipped scenario's run instead of living it again. */
const runs = new Map<string, Promise<RunResult>>();
function lived(key: string, scenario: Scenario): Promise<RunResult> {
  let run = runs.get(key);
  if (run === undefined) {
    run = (async () => {
      const model = await naiveRunModel();
      try {
        return await runScenario(scenario, { model: model.access });
      } finally {
        await model.close();
      }
    })();
    runs.set(key, run);
  }
  return run;
}

describe("shipped scenarios, offline", () => {
  it("include the ones the simulations and cost issues ask for", () => {
    expect(names).toEqual(
      expect.arrayContaining([
        "saturday-good-morning-then-silence",
        "busy-workday-sporadic-replies",
        "answered-early-tempted-to-re-ask",
        "habits-to-project-switch",
        "warm-turning-terse",
        "weekend",
        "night-in-quiet-hours",
        "clocks-change",
        "trip-week",
        "a-month-with-a-close-companion",
        "evening-answerer",
      ]),
    );
  });

  for (const scenario of scenarios) {
    it.concurrent(
      `${scenario.name} meets its expectations`,
      async () => {
        const result = await lived(scenario.name, scenario);
        const failed = result.expectations
          .filter((e) => !e.ok)
          .map((e) => `${e.name}: wanted ${e.wanted}, got ${e.got}`);
        expect(failed).toEqual([]);
        expect(result.metrics.considered).toBeGreaterThan(0);
      },
      timeoutFor(scenario),
    );
  }
});

/** Check-ins sent, each with its local hour and whether the person wrote within two hours of it. */
function checkins(result: RunResult): { hour: number; answered: boolean }[] {
  return result.events.flatMap((event) => {
    if (event.kind !== "checkin-sent") return [];
    const sentMs = Date.parse(event.at);
    const answered = result.events.some(
      (e) => e.kind === "person" && Date.parse(e.at) > sentMs && Date.parse(e.at) - sentMs <= 2 * 3_600_000,
    );
    return [{ hour: DateTime.fromISO(event.at, { zone: event.zone }).hour, answered }];
  });
}

describe("check-ins that learn their timing (evening-answerer)", () => {
  const evening = scenarios.find((s) => s.name === "evening-answerer");
  if (evening === undefined) throw new Error("the evening-answerer scenario did not load");

  it.concurrent(
    "move to the evening and leave fewer check-ins unanswered (for 2 hours) than with PRESENCE_LEARN_TIMING=off",
    async () => {
      const off = lived("evening-answerer:off", {
        ...evening,
        settings: { ...evening.settings, learnTiming: false },
      });
      const [learning, fixed] = [await lived(evening.name, evening), await off];
      const eveningShare = (r: RunResult) => {
        const sent = checkins(r);
        return sent.filter((c) => c.hour >= 18).length / sent.length;
      };
      const unanswered = (r: RunResult) => checkins(r).filter((c) => !c.answered).length;
      const figures = {
        eveningShare: { learning: eveningShare(learning), off: eveningShare(fixed) },
        unanswered: { learning: unanswered(learning), off: unanswered(fixed) },
      };
      expect(figures.eveningShare.learning).toBeGreaterThan(figures.eveningShare.off + 0.25);
      expect(figures.unanswered.learning).toBeLessThan(figures.unanswered.off / 2);
      expect(learning.metrics.heldByReason["unanswered-limit"] ?? 0).toBeLessThan(
        fixed.metrics.heldByReason["unanswered-limit"] ?? 0,
      );
      expect(fixed.metrics.heldByReason["unlikely-moment"]).toBeUndefined();
      expect(learning.metrics.heldByReason["unlikely-moment"]).toBeGreaterThanOrEqual(30);
      // The report counts held-back check-ins by reason: the new one is among them, coloured as its own.
      const report = renderReport(learning);
      expect(report).toMatch(
        /<span class="bar-label">unlikely-moment<\/span><span class="bar" style="width:\d+%;background:#2a9d8f"/,
      );
    },
    2 * timeoutFor(evening),
  );
});
