import { spawn } from "node:child_process";
import { join } from "node:path";

/**
 * Runs vitest in a child process, as `npm test` runs it, for tests about the test run itself
 * (the summary line, the report's browser check); resolves with the exit code and output.
 */

const VITEST = join(import.meta.dirname, "..", "..", "node_modules", "vitest", "vitest.mjs");

/** What a vitest run printed and how it ended. */
export interface VitestRun {
  code: number | null;
  stdout: string;
  /** Where vitest prints each failure in full. */
  stderr: string;
  /** stdout's lines, trailing spaces trimmed. */
  lines: string[];
}

export function runVitest(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<VitestRun> {
  // The outer run's own variables (VITEST_WORKER_ID and the like) must not steer the inner run.
  const inherited = Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST"));
  const env: Record<string, string> = {};
  for (const [key, value] of [...inherited, ...Object.entries({ NO_COLOR: "1", ...options.env })]) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const child = spawn(process.execPath, [VITEST, "run", ...args], {
    cwd: options.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) =>
      resolve({
        code,
        stdout,
        stderr,
        lines: stdout
          .trimEnd()
          .split("\n")
          .map((line) => line.trimEnd()),
      }),
    );
  });
}

/** The summary reporter's closing line (`N passed, N failed[, N skipped]`) as numbers. */
export function summaryOf(run: VitestRun): { passed: number; failed: number; skipped: number } {
  const last = run.lines.at(-1) ?? "";
  const match = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/.exec(last);
  if (!match) throw new Error(`the run did not end with the summary line; it ended with: ${last}`);
  return { passed: Number(match[1]), failed: Number(match[2]), skipped: Number(match[3] ?? 0) };
}
