import type { SerializedError } from "vitest";
import type { Reporter, TestModule, TestRunEndReason } from "vitest/node";

/**
 * Ends a run with one plain line, `N passed, N failed` (and skipped), that any CI can
 * read whatever test runner it knows: vitest's own summary is styled for people.
 *
 * The line never disagrees with the exit code: besides failed tests, it counts as failed
 * every error outside a test — a test file that did not load, a failed beforeAll/afterAll,
 * an unhandled error — each named on a line of its own above it. A test skipped with a
 * note (`ctx.skip(note)`, e.g. a check that needs a program this machine lacks) gets its
 * note printed once, so a skip always says why and how to run it.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    let passed = 0;
    let failedTests = 0;
    let skipped = 0;
    const notes = new Set<string>();
    const outside: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") passed += 1;
        else if (result.state === "failed") failedTests += 1;
        else {
          skipped += 1;
          if (result.state === "skipped" && result.note) notes.add(result.note);
        }
      }
      for (const suite of [module, ...module.children.allSuites()]) {
        for (const error of suite.errors()) outside.push(`${module.relativeModuleId}: ${firstLine(error)}`);
      }
    }
    for (const error of unhandledErrors) outside.push(`unhandled error: ${firstLine(error)}`);
    // vitest failed the run for a reason none of the above shows: count it rather than print "0 failed".
    if (reason !== "passed" && failedTests + outside.length === 0) {
      outside.push(reason === "interrupted" ? "the run was interrupted" : "the run failed outside any test");
    }
    const failed = failedTests + outside.length;
    const lines = [
      ...[...notes].map((note) => `skipped: ${note}`),
      ...outside.map((problem) => `failed outside a test: ${problem}`),
      `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`,
    ];
    process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}

/** An error's first line, "Name: message", so each problem stays on one line. */
function firstLine(error: SerializedError): string {
  const message = (error.message ?? String(error)).split("\n")[0] ?? "";
  return error.name && error.name !== "Error" ? `${error.name}: ${message}` : message;
}
