import { existsSync } from "node:fs";
import { HttpError } from "grammy";
import { TelegramTokenRejectedError } from "../channels/telegram/bot.ts";
import { systemClock } from "../clock.ts";
import {
  ConfigError,
  loadConfigParts,
  loadCoreConfig,
  loadModelConfig,
  loadTelegramConfig,
} from "../config.ts";
import { createLogger } from "../log.ts";
import { type StartConfig, startBot } from "../main.ts";
import { runSetup, terminalPrompter } from "../setup.ts";
import { type CommandIO, defineCommand } from "./command.ts";

/** Said after the list of configuration problems: the one command that fixes them all. */
export const SETUP_HINT =
  "Run `npm run setup` in a terminal to answer these one by one: it checks the token with Telegram and finds your numeric id when you message your bot (the bot also tells anyone who messages it their id).\n";

/** How long after stopping the process may linger before it is ended anyway (a stuck socket must not outlive a stop). */
export const EXIT_GRACE_MS = 1_000;

/**
 * `start` (`npm start`): the companion on Telegram until SIGINT/SIGTERM. Configuration
 * mistakes are one message and exit 2 — in a terminal, an offer to run setup first; a token
 * Telegram rejects is exit 2 too; another process on the same data is refused by the command
 * line (DataLockedError), like every writing command.
 */
export const startCommand = defineCommand({
  name: "start",
  summary: "run the companion on Telegram (npm start)",
  usage: "start",
  help: [
    "Runs the bot until stopped with Ctrl-C or SIGTERM (pm2 stop). Settings come from .env or the",
    "environment: TELEGRAM_BOT_TOKEN, TELEGRAM_OWNER_ID, ANTHROPIC_API_KEY, and optionally",
    "TELEGRAM_API_ROOT, ANTHROPIC_BASE_URL, PRESENCE_DATA_DIR, PRESENCE_TIMEZONE, PRESENCE_QUIET_HOURS,",
    "PRESENCE_HEARTBEAT_CRON. Run `npm run setup` to write .env interactively.",
  ].join("\n"),
  options: {},
  async run(_args, io) {
    const config = await readStartConfig(io);
    if (typeof config === "number") return config;
    const logger = createLogger(config.core.logLevel);
    let bot: Awaited<ReturnType<typeof startBot>>;
    try {
      bot = await startBot(config, { clock: systemClock, logger, signals: ["SIGINT", "SIGTERM"] });
    } catch (error) {
      if (error instanceof TelegramTokenRejectedError) {
        io.stderr(`presence: ${error.message}\n`);
        return 2;
      }
      if (error instanceof HttpError) {
        io.stderr(
          `presence: could not reach Telegram at ${config.telegram.apiRoot ?? "https://api.telegram.org"} (${error.message}). Check the network${config.telegram.apiRoot ? " and TELEGRAM_API_ROOT" : ""}.\n`,
        );
        return 1;
      }
      throw error;
    }
    const code = await bot.done;
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
    return code;
  },
});

/**
 * Reads every setting `start` needs, reporting all problems at once. In a terminal, offers
 * setup and reads `.env` again after it; returns an exit code when it cannot go on.
 */
async function readStartConfig(io: CommandIO): Promise<StartConfig | number> {
  const load = () =>
    loadConfigParts({ core: loadCoreConfig, model: loadModelConfig, telegram: loadTelegramConfig }, io.env);
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
    const answer = (await prompter.ask("Run setup now? [Y/n] ")).trim().toLowerCase();
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
