import { describe, expect, it } from "vitest";
import { runScenario } from "../../simulations/harness.ts";
import { loadScenarios, naiveRunModel, scenarioNames } from "../../simulations/run.ts";

/**
 * Every shipped scenario, lived offline with the naive model, meets its expectations:
 * what the scenarios promise is what the code guarantees without a clever model.
 */
const names = await scenarioNames();

describe("shipped scenarios, offline", () => {
  it("include the ones the simulations issue asks for", () => {
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
      ]),
    );
  });

  it.concurrent.each(names)("%s meets its expectations", async (name) => {
    const [scenario] = await loadScenarios([name]);
    if (!scenario) throw new Error(`scenario ${name} did not load`);
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
  });
});
