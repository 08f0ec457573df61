import { CliOutbound, runCliChat, TERMINAL_TEXT_LIMIT } from "../../channels/cli.ts";
import { exportsDir } from "../../companion/data-rights.ts";
import { systemClock, systemTimers } from "../../core/clock.ts";
import { createLogger } from "../../core/log.ts";
import { loadConfigParts, loadCoreConfig, loadModelConfig, loadVoiceConfig } from "../config.ts";
import { buildCommandHandlers, buildCompanion, openRuntime } from "../runtime.ts";
import { defineCommand } from "./command.ts";

/**
 * `chat` (`npm run chat`): the companion in the terminal, channel "cli" — same log, same
 * memory. It takes the data lock, so it refuses while the bot runs on the same data.
 *
 * Unlike `start`, it runs no crash recovery: what a crashed bot left behind (a message the
 * outbox had not delivered, a message of the person's not yet answered) belongs on Telegram,
 * and answering it here, unasked, would put it where the person may not be looking. The next
 * `npm start` recovers it; meanwhile the first line typed here is answered together with
 * anything still unanswered, since it is the same person and the same log.
 */
export const chatCommand = defineCommand({
  name: "chat",
  summary: "talk to the companion in the terminal (npm run chat)",
  usage: "chat",
  help: [
    "Reads lines from the terminal (or standard input) and answers them with the same companion,",
    "log and memory as the bot. The slash commands work; /quit or end of input stops.",
    "Needs ANTHROPIC_API_KEY; not TELEGRAM_*. Refused while `npm start` runs on the same data.",
  ].join("\n"),
  options: {},
  async run(_args, io) {
    // The voice settings too: a voice note the bot left waiting is heard here as it would be
    // there, and /status and /help say what is true.
    const { core, model, voice } = loadConfigParts(
      { core: loadCoreConfig, model: loadModelConfig, voice: loadVoiceConfig },
      io.env,
    );
    // The conversation owns the terminal's output: the process log goes to stderr, and only
    // errors unless LOG_LEVEL asks for more (a deferred reply shows up as the notice instead).
    const logger = createLogger(io.env.LOG_LEVEL ? core.logLevel : "error", false, process.stderr);
    const runtime = await openRuntime({
      core,
      model,
      voice,
      purpose: "chat",
      clock: systemClock,
      timers: systemTimers,
      logger,
    });
    const companion = buildCompanion(runtime, new CliOutbound(io.stdout), { defaultChannel: "cli" });
    try {
      await runCliChat({
        companion,
        commands: buildCommandHandlers(runtime, companion, { textLimit: TERMINAL_TEXT_LIMIT }),
        input: process.stdin,
        write: io.stdout,
        logger,
        exportDir: exportsDir(core.dataDir),
      });
      await companion.idle();
    } finally {
      await companion.close();
      await runtime.lock.release();
    }
    return 0;
  },
});
