import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Two projects over test/**: the end-to-end files each in a fresh process, as vitest runs files
 * by default; every other file without that isolation. Re-importing zod, the SDK, chrono and
 * src for each of ~100 small files cost more CPU than the tests themselves; on a worker reused
 * across files, a file sees the modules an earlier file imported, so a test helper must not
 * keep state or register hooks at its top level (test/store/helpers.ts cleans up per test).
 * The e2e files stay isolated: they mock modules (heartbeat-restarts) and start processes.
 */
const E2E = "test/e2e/**/*.test.ts";

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
    projects: [
      { extends: true, test: { name: "e2e", include: [E2E] } },
      {
        extends: true,
        test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [E2E], isolate: false },
      },
    ],
  },
});
