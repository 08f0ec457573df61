import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runCli } from "../../src/cli.ts";

/** The repository root: the real command runs from here, as `npm run -s cli` does. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the command line in this process with a clean environment (only what `env` sets);
 * `columns` plays a terminal that wide (without it, output goes to a pipe).
 */
export async function runInProcess(
  args: string[],
  env: Record<string, string> = {},
  options: { columns?: number } = {},
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env,
    interactive: false,
    ...(options.columns === undefined ? {} : { columns: options.columns }),
  });
  return { code, stdout, stderr };
}

/** Runs the real process the way a person does: `node --import tsx src/cli.ts ...`. */
export function spawnCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Lines of output, without the trailing newline's empty line. */
export function lines(text: string): string[] {
  return text.split("\n").filter((line, i, all) => line !== "" || i < all.length - 1);
}
