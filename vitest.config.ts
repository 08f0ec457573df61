import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Vitest's default (one core less than the machine has) runs every file in series on 2
    // cores; the end-to-end files mostly wait on a process or a socket, so files beside them
    // keep the cores busy. Four at least, not so many that a process's real timings starve.
    maxWorkers: Math.max(4, availableParallelism()),
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
