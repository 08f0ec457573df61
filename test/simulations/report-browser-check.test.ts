import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runVitest, summaryOf } from "../support/run-vitest.ts";

/**
 * The report's browser check on a machine without a runnable Chromium, through a real vitest
 * run of test/simulations/report.test.ts as `npm test` runs it: a person's run passes and says
 * in one line what was skipped and how to enable it; a CI run fails. PRESENCE_TEST_CHROMIUM
 * points at a missing file or at a "Chromium" that exits at once, so this holds on machines
 * that have one too.
 */

const ROOT = join(import.meta.dirname, "..", "..");
/** Each case is a whole vitest run that lives a simulated week: a bound, not a speed target. */
const RUN_TIMEOUT_MS = 120_000;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "presence-no-chromium-"));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const reportRun = (env: Record<string, string | undefined>) =>
  runVitest(["test/simulations/report.test.ts"], { cwd: ROOT, env });

describe("the report's browser check without a runnable Chromium", () => {
  it(
    "is skipped on a person's machine, with one line saying how to enable it, and the run passes",
    async () => {
      const missing = join(scratch, "no-such-chromium");
      const run = await reportRun({ CI: undefined, PRESENCE_TEST_CHROMIUM: missing });
      expect(run.code).toBe(0);
      expect(summaryOf(run)).toEqual({ passed: 1, failed: 0, skipped: 3 });
      const notes = run.lines.filter((line) => line.startsWith("skipped: "));
      expect(notes).toEqual([
        `skipped: the report's browser check, because there is no Chromium at ${missing}; to run it, install Debian's chromium (apt-get install chromium) or set PRESENCE_TEST_CHROMIUM to a Chromium binary`,
      ]);
    },
    RUN_TIMEOUT_MS,
  );

  it(
    "fails under CI=true when the Chromium there does not start",
    async () => {
      const broken = join(scratch, "broken-chromium");
      await writeFile(broken, "#!/bin/sh\nexit 1\n");
      await chmod(broken, 0o755);
      const run = await reportRun({ CI: "true", PRESENCE_TEST_CHROMIUM: broken });
      expect(run.code).toBe(1);
      expect(summaryOf(run)).toEqual({ passed: 1, failed: 3, skipped: 0 });
      expect(run.stderr).toContain(
        `CI needs the report's browser check, but the Chromium at ${broken} did not start`,
      );
    },
    RUN_TIMEOUT_MS,
  );
});
