import { NO_TERMINAL_MESSAGE, runSetup, terminalPrompter } from "../setup.ts";
import { defineCommand } from "./command.ts";

/** `setup` (`npm run setup`): the first run's questions; writes `.env`. Never waits for a terminal that isn't there. */
export const setupCommand = defineCommand({
  name: "setup",
  summary: "answer a few questions and write .env (npm run setup)",
  usage: "setup",
  help: [
    "Asks for the Telegram bot token (checked with Telegram), your numeric Telegram id (found for",
    "you when you message the bot), the Anthropic API key, your time zone and quiet hours, and",
    "writes them to .env, readable only by you. Existing values are kept when you press Enter.",
  ].join("\n"),
  options: {},
  async run(_args, io) {
    if (!io.interactive) {
      io.stderr(NO_TERMINAL_MESSAGE);
      return 2;
    }
    return runSetup({ prompter: terminalPrompter(), env: io.env, envPath: ".env" });
  },
});
