import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Time comes from the injected clock, and waits from the injected timers beside it, so a day
 * can be simulated in seconds and tests are exact. This scans src/ and simulations/ for reads
 * of the wall clock outside src/core/clock.ts (`Date.now()`, and `new Date()`, luxon's
 * `DateTime.now()` and `DateTime.local()` with no argument), and for real timers outside the
 * few files that must wait on the machine itself.
 */
const root = join(import.meta.dirname, "..");
const WALL_CLOCK = /Date\.now\(\)|new Date\(\s*\)|DateTime\.(now|local)\(\s*\)/;
const REAL_TIMER = /\bset(Timeout|Interval)\(|AbortSignal\.timeout\(|["']node:timers/;

/** Where a real timer is right, and why: everything else waits on the Timers port (src/core/clock.ts). */
const REAL_TIMERS_ALLOWED: Record<string, string> = {
  "src/core/clock.ts":
    "systemTimers: the Timers port's production side, the one place logic's waits meet the machine",
  "src/channels/telegram/transport.ts":
    "network level: the limit on one request to Telegram and on a stalled answer, aborting the fetch",
  "src/channels/telegram/first-contact.ts":
    "network level: the limit on one getMe attempt while start-up waits for Telegram to answer at all",
  "src/app/main.ts": "process exit: a second signal exits after a moment even if removing the lock hangs",
  "src/app/commands/start.ts":
    "process exit: the grace before exiting once the bot stopped, so logs are flushed",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** A file's path from the repository root, with forward slashes. */
function repoPath(file: string): string {
  return relative(root, file).split(sep).join("/");
}

/** `file:line` of every line outside comments that matches `pattern`, in files `skip` does not exclude. */
function offenders(pattern: RegExp, skip: (file: string) => boolean): string[] {
  return [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "simulations"))]
    .filter((file) => !skip(repoPath(file)))
    .flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .map((line, index) => ({ line, index }))
        .filter(
          ({ line }) => pattern.test(line) && !line.trim().startsWith("//") && !line.trim().startsWith("*"),
        )
        .map(({ index }) => `${repoPath(file)}:${index + 1}`),
    );
}

describe("the wall clock", () => {
  it("is read only in src/core/clock.ts", () => {
    expect(offenders(WALL_CLOCK, (file) => file === "src/core/clock.ts")).toEqual([]);
  });
});

describe("real timers", () => {
  it("are used only where the machine's time is the point, each file with its reason", () => {
    expect(offenders(REAL_TIMER, (file) => file in REAL_TIMERS_ALLOWED)).toEqual([]);
  });

  it("are still used in every file allowed them, so the list stays honest", () => {
    const unused = Object.keys(REAL_TIMERS_ALLOWED).filter(
      (file) => !REAL_TIMER.test(readFileSync(join(root, file), "utf8")),
    );
    expect(unused).toEqual([]);
  });

  it("are found by the scan (setTimeout, setInterval, AbortSignal.timeout, node:timers)", () => {
    for (const line of [
      "const t = setTimeout(fire, 10);",
      "setInterval(tick, 4_000)",
      "const signal = AbortSignal.timeout(5_000);",
      'import { setTimeout as sleep } from "node:timers/promises";',
    ]) {
      expect(REAL_TIMER.test(line), line).toBe(true);
    }
    expect(REAL_TIMER.test("this.#deps.timers.after(delay, attempt)")).toBe(false);
  });
});
