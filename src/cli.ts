import { existsSync } from "node:fs";
import { benchCommand } from "../bench/command.ts";
import { simulateCommand } from "../simulations/command.ts";
import { awarenessCommand } from "./app/commands/awareness.ts";
import { chatCommand } from "./app/commands/chat.ts";
import {
  type Command,
  type CommandIO,
  EXIT_INTERRUPTED,
  parseCommandArgs,
  UsageError,
} from "./app/commands/command.ts";
import { heartbeatCheckCommand } from "./app/commands/heartbeat-check.ts";
import { injectCommand } from "./app/commands/inject.ts";
import { type Invocation, invocationFrom } from "./app/commands/invocation.ts";
import { setupCommand } from "./app/commands/setup.ts";
import { startCommand } from "./app/commands/start.ts";
import { statusCommand } from "./app/commands/status.ts";
import { traceCommand } from "./app/commands/trace.ts";
import { ConfigError } from "./app/config.ts";
import { DataLockedError } from "./app/runtime.ts";

/**
 * The `presence` command line: `npm run cli -- <command>` (or `presence <command>` once linked,
 * each line naming the command the way it was typed: invocation.ts), the one room above app,
 * simulations and bench. Commands live in src/app/commands, one file each, except the two
 * that live beside the code they run (simulations/command.ts, bench/command.ts); this file
 * only dispatches and turns known failures into one readable line and an exit code (2 for
 * usage and configuration mistakes).
 */

/**
 * Exit code of every writing command (start, chat, inject…) refused because another process
 * holds the data directory; the message names that process's PID. docs/running.md lists it.
 */
const EXIT_DATA_LOCKED = 1;
const commands: Command[] = [
  startCommand,
  setupCommand,
  chatCommand,
  awarenessCommand,
  heartbeatCheckCommand,
  statusCommand,
  injectCommand,
  traceCommand,
  benchCommand,
  simulateCommand,
];

function overview(invocation: Invocation): string {
  const width = Math.max(...commands.map((c) => c.name.length), 4);
  const linked = invocation.linked ? "" : "   (or `presence <command>` after `npm link`)";
  return [
    "presence: a Telegram companion for one person",
    "",
    `Usage: ${invocation.base} <command> [options]${linked}`,
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    `Run \`${invocation.base} <command> --help\` for a command's options.`,
  ].join("\n");
}

function commandHelp(command: Command, invocation: Invocation): string {
  // The usage line starts with the command's name; the person types it their way.
  const args = command.usage.slice(command.name.length).trim();
  return `Usage: ${invocation.typed(command.name, args)}\n\n${command.help}`;
}

/** Runs the command line and returns the exit code; never throws for expected failures. */
export async function runCli(argv: string[], io: CommandIO): Promise<number> {
  const invocation = invocationFrom(io.env);
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(`${overview(invocation)}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr(
      `${invocation.typed(name)}: unknown command (run \`${invocation.base} --help\` to see the commands)\n`,
    );
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(`${commandHelp(command, invocation)}\n`);
    return 0;
  }
  const typed = invocation.typed(command.name);
  try {
    return await command.run(parseCommandArgs(command, rest), io);
  } catch (error) {
    if (error instanceof UsageError) {
      const help = error.seeHelp ? ` (see \`${invocation.typed(command.name, "--help")}\`)` : "";
      io.stderr(`${typed}: ${error.message}${help}\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.stderr(`${error.message}\n`);
      return 2;
    }
    if (error instanceof DataLockedError) {
      io.stderr(`${typed}: ${error.message}\n`);
      return EXIT_DATA_LOCKED;
    }
    throw error;
  }
}

/**
 * Loads `.env` from the working directory when there is one. Variables already set in
 * the environment win, so a shell or pm2 can override the file. Done here rather than
 * with `node --env-file-if-exists`, which prints a notice on every run without a file.
 */
function loadDotEnv(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/src/cli.ts");
if (isMain) {
  loadDotEnv();
  const io: CommandIO = {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  };
  runCli(process.argv.slice(2), io).then(
    (code) => {
      process.exitCode = code;
      // Interrupted: end by SIGINT itself (its handlers are gone by now), as a shell and npm
      // expect of a program Ctrl-C stopped; the exit code stays as a fallback.
      if (code === EXIT_INTERRUPTED && process.listenerCount("SIGINT") === 0)
        process.kill(process.pid, "SIGINT");
    },
    (error: unknown) => {
      io.stderr(`presence: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
