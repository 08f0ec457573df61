import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import SlowestFirst from "./test/support/slowest-first.ts";

/**
 * Files that mock a module (vi.mock) need a fresh module registry each, as vitest runs files by
 * default: on a shared one the mock would reach other files, or miss modules they imported first.
 * Found by reading the test files, so a new one cannot be left off a list.
 */
const MOCKING_MODULES = readdirSync(fileURLToPath(new URL("./test", import.meta.url)), {
  recursive: true,
  encoding: "utf8",
})
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => `test/${file.replaceAll("\\", "/")}`)
  .filter((file) =>
    /\bvi\.(?:doMock|mock)\(/.test(
      readFileSync(fileURLToPath(new URL(`./${file}`, import.meta.url)), "utf8"),
    ),
  );

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default (one core less than the machine has) runs every file in series on 2
    // cores; the end-to-end files mostly wait on a process or a socket, so files beside them
    // keep the cores busy. Four at least, not so many that a process's real timings starve.
    maxWorkers: Math.max(4, availableParallelism()),
    reporters: ["default", "./test/support/summary-reporter.ts"],
    sequence: { sequencer: SlowestFirst },
    projects: [
      { extends: true, test: { name: "isolated", include: MOCKING_MODULES } },
      {
        // Every other file runs on a worker that keeps its modules from one file to the next:
        // importing zod, the SDK, chrono and src afresh for each of ~100 files cost more CPU than
        // the tests. So a test helper keeps no state and registers no hooks at its top level (it
        // would belong to the first file that imported it): test/store/helpers.ts cleans up per test.
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: MOCKING_MODULES, isolate: false },
      },
    ],
  },
});
