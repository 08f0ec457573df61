import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runVitest, summaryOf } from "./run-vitest.ts";

/**
 * The closing `N passed, N failed` line, read from a real vitest run over the small fixture
 * suite in test/fixtures/summary-reporter/: whatever broke, the line and the exit code agree.
 */

const ROOT = join(import.meta.dirname, "..", "..");
const FIXTURES = join(ROOT, "test", "fixtures", "summary-reporter");
/** Each case is a whole vitest run: a bound for a busy machine, not a speed target. */
const RUN_TIMEOUT_MS = 60_000;

const fixtureRun = (...files: string[]) =>
  runVitest(["--config", join(FIXTURES, "vitest.config.ts"), ...files], { cwd: FIXTURES });

describe("the summary line", () => {
  it(
    "says 0 failed when vitest exits 0, and prints a skipped test's note once",
    async () => {
      const run = await fixtureRun("passes.check.ts");
      expect(run.code).toBe(0);
      expect(summaryOf(run)).toEqual({ passed: 1, failed: 0, skipped: 1 });
      expect(run.lines.filter((l) => l.startsWith("skipped: "))).toEqual([
        "skipped: fixture check skipped: set FIXTURE_TOOL to run it",
      ]);
    },
    RUN_TIMEOUT_MS,
  );

  it.each([
    ["a test file that throws at load", "throws-at-load.check.ts", "fixture: this file cannot load"],
    ["a beforeAll that throws", "before-all-fails.check.ts", "fixture: setup failed"],
    ["an unhandled error from a passing test", "unhandled.check.ts", "fixture: thrown from a timer"],
  ])(
    "counts %s as failed, as the exit code does",
    async (_what, file, problem) => {
      const run = await fixtureRun("passes.check.ts", file);
      expect(run.code).toBe(1);
      expect(summaryOf(run).failed).toBe(1);
      const named = run.lines.filter((l) => l.startsWith("failed outside a test: "));
      expect(named).toHaveLength(1);
      expect(named[0]).toContain(problem);
    },
    RUN_TIMEOUT_MS,
  );
});
