import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BotApiFake, startBotApiFake } from "../../testkit/bot-api.ts";
import { type MessagesApiFake, startMessagesApiFake, textReply } from "../../testkit/messages-api.ts";

/**
 * End-to-end harness: the real `presence start` process, as a person runs it (node with tsx's
 * loader, src/cli.ts start), pointed at the loopback Bot API and Messages API fakes through
 * TELEGRAM_API_ROOT and ANTHROPIC_BASE_URL, with its own data directory. The process runs in
 * an empty working directory so a developer's .env never leaks into a test.
 */

export const ROOT = join(import.meta.dirname, "..", "..");
export const TSX_LOADER = join(ROOT, "node_modules", "tsx", "dist", "loader.mjs");
export const OWNER_ID = 1001;

export interface World {
  bot: BotApiFake;
  model: MessagesApiFake;
  dataDir: string;
  workDir: string;
  /** Every process started in this world; close() kills those still running. */
  processes: Presence[];
  /** Kills the world's processes still running, waits for them, then stops the fakes and deletes the files. */
  close(): Promise<void>;
}

/** Fakes and an empty data directory; the model answers every request with a numbered line. */
export async function createWorld(): Promise<World> {
  const bot = await startBotApiFake();
  const model = await startMessagesApiFake();
  let answers = 0;
  model.setHandler(() => textReply(`Answer ${++answers}.`));
  const workDir = await mkdtemp(join(tmpdir(), "presence-e2e-"));
  const processes: Presence[] = [];
  return {
    bot,
    model,
    workDir,
    dataDir: join(workDir, "data"),
    processes,
    async close() {
      for (const p of processes) {
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      }
      await Promise.all(processes.map((p) => p.exited));
      await bot.close();
      await model.close();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** The settings that point presence at the world's fakes and its data directory. */
export function worldEnv(world: World): Record<string, string> {
  return {
    TELEGRAM_BOT_TOKEN: world.bot.token,
    TELEGRAM_OWNER_ID: String(OWNER_ID),
    TELEGRAM_API_ROOT: world.bot.apiRoot,
    ANTHROPIC_API_KEY: world.model.apiKey,
    ANTHROPIC_BASE_URL: world.model.url,
    PRESENCE_DATA_DIR: world.dataDir,
  };
}

export interface Presence {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
}

/**
 * The quiet defaults of these tests, for the process and for a bot started in the test's own
 * process alike: UTC, no quiet hours, no reflection, a model call not retried.
 */
export const QUIET_SETTINGS: Readonly<Record<string, string>> = {
  PRESENCE_TIMEZONE: "UTC",
  PRESENCE_QUIET_HOURS: "00:00-00:00",
  PRESENCE_REFLECT_MODE: "off",
  PRESENCE_MAX_RETRIES: "0",
};

/** What presence runs with in these tests: the world's fakes and data, quiet defaults, then `env`. */
export function presenceEnv(world: World, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "",
    HOME: world.workDir,
    ...worldEnv(world),
    ...QUIET_SETTINGS,
    LOG_LEVEL: "info",
    ...env,
  };
}

/**
 * Spawns `command args` in the world's working directory with `env`, keeps its output, and
 * registers it with the world so that close() never leaves it running.
 */
export function spawnInWorld(
  world: World,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  stdin: "pipe" | "ignore" = "ignore",
): Presence {
  const child = spawn(command, args, { cwd: world.workDir, env, stdio: [stdin, "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString("utf8");
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
    // A command that cannot be started (no `unshare`, say) emits only "error".
    child.once("error", (error) => resolve(`spawn failed: ${error.message}`));
  });
  const presence = { child, pid: child.pid ?? 0, stdout: () => out, stderr: () => err, exited };
  world.processes.push(presence);
  return presence;
}

/** Starts `presence start` (or another command) with the world's settings plus `env`. */
export function startPresence(world: World, env: Record<string, string> = {}, command = "start"): Presence {
  return spawnInWorld(
    world,
    process.execPath,
    ["--import", TSX_LOADER, join(ROOT, "src", "cli.ts"), command],
    presenceEnv(world, env),
    command === "chat" ? "pipe" : "ignore",
  );
}

/** Waits until the process polls Telegram (it is listening), or fails with its output. */
export async function untilListening(world: World, presence: Presence, timeoutMs = 20_000): Promise<void> {
  const polls = () => world.bot.calls.filter((c) => c.method === "getUpdates").length;
  const before = polls();
  await waitFor(
    () => polls() > before,
    timeoutMs,
    () => `presence never polled:\n${presence.stderr()}\n${presence.stdout()}`,
  );
}

/** Sends a signal and waits for the exit; returns the code and how long it took. */
export async function stopPresence(
  presence: Presence,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<{ code: number | string; ms: number }> {
  const started = performance.now();
  presence.child.kill(signal);
  const code = await presence.exited;
  return { code, ms: performance.now() - started };
}

/** Every text file in the data directory, for checking what was (not) written. */
export async function dataDirText(dataDir: string): Promise<string> {
  const files = await readdir(dataDir, { recursive: true, withFileTypes: true }).catch(() => []);
  const texts = await Promise.all(
    files.filter((f) => f.isFile()).map((f) => readFile(join(f.parentPath, f.name), "utf8").catch(() => "")),
  );
  return texts.join("\n");
}

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs: number,
  explain: () => string = () => "condition not met",
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${explain()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
