import { existsSync } from "node:fs";
import {
  TelegramTokenRejectedError,
  TelegramUnreachableError,
} from "../../channels/telegram/first-contact.ts";
import { systemClock, systemTimers } from "../../core/clock.ts";
import { createLogger } from "../../core/log.ts";
import { ModelKeyRejectedError } from "../../model/llm.ts";
import {
  ConfigError,
  loadConfigParts,
  loadCoreConfig,
  loadModelConfig,
  loadTelegramConfig,
  loadVoiceConfig,
} from "../config.ts";
import { StartCancelledError, type StartConfig, startBot } from "../main.ts";
import {
  CANCELLED_LINE,
  runSetup,
  SetupAbandonedError,
  SetupCancelledError,
  terminalPrompter,
} from "../setup.ts";
import { type CommandIO, defineCommand, EXIT_INTERRUPTED } from "./command.ts";

/** Said after the list of configuration problems: the one command that fixes them all. */
const SETUP_HINT =
  "Run `npm run setup` in a terminal to answer these one by one: it checks the token with Telegram and finds your numeric id when you message your bot (the bot also tells anyone who messages it their id).\n";

/** How long after stopping the process may linger before it is ended anyway (a stuck socket must not outlive a stop). */
export const EXIT_GRACE_MS = 1_000;

/**
 * `start` (`npm start`): the companion on Telegram until SIGINT/SIGTERM. Configuration
 * mistakes are one message and exit 2 — in a terminal, an offer to run setup first; a token
 * Telegram rejects or an API key the Anthropic API rejects is exit 2 too; Telegram unreachable
 * within TELEGRAM_CONNECT_TIMEOUT_MS is exit 1; a stop signal before listening is exit 0
 * (Ctrl-C in the setup it offers is EXIT_INTERRUPTED, as in `setup`);
 * another process on the same data is refused by the command line (DataLockedError), like
 * every writing command.
 */
export const startCommand = defineCommand({
  name: "start",
  summary: "run the companion on Telegram (npm start)",
  usage: "start",
  help: [
    "Runs the bot until stopped with Ctrl-C or SIGTERM (pm2 stop). Settings come from .env or the",
    "environment: TELEGRAM_BOT_TOKEN, TELEGRAM_OWNER_ID, ANTHROPIC_API_KEY, and optionally",
    "TELEGRAM_API_ROOT, TELEGRAM_CONNECT_TIMEOUT_MS, ANTHROPIC_BASE_URL, PRESENCE_DATA_DIR, PRESENCE_TIMEZONE,",
    "PRESENCE_QUIET_HOURS, PRESENCE_HEARTBEAT_CRON, and PRESENCE_TRANSCRIBE_URL (with _KEY, _MODEL) to hear",
    "voice notes. Run `npm run setup` to write .env interactively.",
  ].join("\n"),
  options: {},
  async run(_args, io) {
    const config = await readStartConfig(io);
    if (typeof config === "number") return config;
    const logger = createLogger(config.core.logLevel);
    let bot: Awaited<ReturnType<typeof startBot>>;
    try {
      bot = await startBot(config, {
        clock: systemClock,
        timers: systemTimers,
        logger,
        signals: ["SIGINT", "SIGTERM"],
      });
    } catch (error) {
      const code = startFailure(error);
      if (code === undefined) throw error;
      if (!(error instanceof StartCancelledError)) io.stderr(`presence: ${(error as Error).message}\n`);
      setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
      return code;
    }
    const code = await bot.done;
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
    return code;
  },
});

/**
 * The exit code for a start-up that did not reach listening, when it is one `start` expects:
 * 2 for what only the person can fix (pm2 does not restart it), 1 for what a restart may fix
 * (pm2 restarts it with a growing wait), 0 for a stop signal that came first.
 */
function startFailure(error: unknown): number | undefined {
  if (error instanceof StartCancelledError) return 0;
  if (error instanceof TelegramTokenRejectedError || error instanceof ModelKeyRejectedError) return 2;
  if (error instanceof TelegramUnreachableError) return 1;
  return undefined;
}

/**
 * Reads every setting `start` needs, reporting all problems at once. In a terminal, offers
 * setup and reads `.env` again after it; returns an exit code when it cannot go on.
 */
async function readStartConfig(io: CommandIO): Promise<StartConfig | number> {
  const load = () =>
    loadConfigParts(
      { core: loadCoreConfig, model: loadModelConfig, telegram: loadTelegramConfig, voice: loadVoiceConfig },
      io.env,
    );
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (!io.interactive) {
      io.stderr(`${error.message}\n${SETUP_HINT}`);
      return 2;
    }
    io.stderr(`${error.message}\n\n`);
    const prompter = terminalPrompter();
    let answer: string;
    try {
      answer = (await prompter.ask("Run setup now? [Y/n] ")).trim().toLowerCase();
    } catch (stopped) {
      if (stopped instanceof SetupCancelledError) {
        prompter.say(CANCELLED_LINE);
        prompter.close();
        return EXIT_INTERRUPTED;
      }
      if (!(stopped instanceof SetupAbandonedError)) throw stopped;
      answer = "no";
    }
    if (answer !== "" && answer !== "y" && answer !== "yes") {
      prompter.close();
      io.stderr(SETUP_HINT);
      return 2;
    }
    const code = await runSetup({ prompter, env: io.env, envPath: ".env", startsNext: true });
    if (code !== 0) return code;
    if (existsSync(".env")) process.loadEnvFile(".env");
    try {
      return load();
    } catch (again) {
      if (!(again instanceof ConfigError)) throw again;
      io.stderr(`${again.message}\n`);
      return 2;
    }
  }
}
