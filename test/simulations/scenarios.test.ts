import { describe, expect, it } from "vitest";
import { runScenario } from "../../simulations/harness.ts";
import { planScenario } from "../../simulations/plan.ts";
import { loadScenarios, naiveRunModel, scenarioNames } from "../../simulations/run.ts";

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
      ]),
    );
  });

  for (const scenario of scenarios) {
    it.concurrent(
      `${scenario.name} meets its expectations`,
      async () => {
        const model = await naiveRunModel();
        try {
          const result = await runScenario(scenario, { model: model.access });
          const failed = result.expectations
            .filter((e) => !e.ok)
            .map((e) => `${e.name}: wanted ${e.wanted}, got ${e.got}`);
          expect(failed).toEqual([]);
          expect(result.metrics.considered).toBeGreaterThan(0);
        } finally {
          await model.close();
        }
      },
      timeoutFor(scenario),
    );
  }
});
