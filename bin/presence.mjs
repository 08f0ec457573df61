#!/usr/bin/env node
// The `presence` command once installed (npm link): runs src/cli.ts through tsx.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const result = spawnSync(
  process.execPath,
  ["--import", import.meta.resolve("tsx"), join(root, "src/cli.ts"), ...process.argv.slice(2)],
  {
    stdio: "inherit",
    // So usage and error lines name the command as it was typed: `presence awareness`.
    env: { ...process.env, PRESENCE_INVOKED_AS: "presence" },
  },
);
// Ended by a signal (Ctrl-C in setup): end by the same one, so the shell sees it too.
if (result.signal) process.kill(process.pid, result.signal);
process.exit(result.status ?? 1);
