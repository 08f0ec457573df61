import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Time comes from the injected clock so a day can be simulated in seconds. This scans
 * the source for reads of the wall clock outside src/clock.ts: `Date.now()`, and
 * `new Date()`, luxon's `DateTime.now()` and `DateTime.local()` with no argument.
 */
const root = join(import.meta.dirname, "..");
const WALL_CLOCK = /Date\.now\(\)|new Date\(\s*\)|DateTime\.(now|local)\(\s*\)/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("the wall clock", () => {
  it("is read only in src/clock.ts", () => {
    const offenders = [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "simulations"))]
      .filter((file) => !file.endsWith(join("src", "clock.ts")))
      .flatMap((file) =>
        readFileSync(file, "utf8")
          .split("\n")
          .map((line, index) => ({ line, index }))
          .filter(
            ({ line }) =>
              WALL_CLOCK.test(line) && !line.trim().startsWith("//") && !line.trim().startsWith("*"),
          )
          .map(({ index }) => `${relative(root, file)}:${index + 1}`),
      );
    expect(offenders).toEqual([]);
  });
});
