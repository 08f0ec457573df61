import { existsSync } from "node:fs";
import { DateTime } from "luxon";
import { openMind } from "../../companion/mind-document.ts";
import { type Clock, systemClock } from "../../core/clock.ts";
import { readDataLock } from "../../store/lock.ts";
import { MessageLog } from "../../store/messages.ts";
import {
  loadConfigParts,
  loadCoreConfig,
  loadModelSettings,
  loadVoiceConfig,
  unsetStartSettings,
} from "../config.ts";
import { formatStatus, readStatus } from "../status.ts";
import { parseInstant } from "./awareness.ts";
import { defineCommand } from "./command.ts";
import { outputWidth, wrapWords } from "./layout.ts";

/**
 * `status`: what the companion's data says now. Reads only: safe while the bot runs, and
 * needs no secrets (the daily budget is a non-secret model setting; 0 means none). It only
 * notes which of `start`'s required settings are not set, first, with what to run.
 */
export const statusCommand = defineCommand({
  name: "status",
  summary: "what the data says now: check-ins on or paused, unanswered, next check-in, tokens today",
  usage: "status [--json] [--now ISO]",
  help: [
    "Reads the data directory (PRESENCE_DATA_DIR) without changing it, safe while the bot runs.",
    "",
    "Options:",
    "  --json      the status as JSON",
    "  --now ISO   look as of this moment instead of now (ISO 8601; without an offset, in PRESENCE_TIMEZONE)",
  ].join("\n"),
  options: { json: { type: "boolean" }, now: { type: "string" } },
  async run({ values }, io) {
    const { core, model, voice } = loadConfigParts(
      { core: loadCoreConfig, model: loadModelSettings, voice: loadVoiceConfig },
      io.env,
    );
    const transcribeUrl = voice.transcription?.baseUrl;
    const { dailyTokenBudget } = model;
    const unset = unsetStartSettings(io.env);
    // Said first: the lines after it read as if presence ran, and on a new install it cannot.
    const notSetUp =
      unset.length === 0
        ? ""
        : [
            `Not set up yet: ${unset.join(", ")} ${unset.length === 1 ? "is" : "are"} not set.`,
            "Run `npm run setup` in a terminal. Nothing runs until then; below is what the data says.",
          ]
            .flatMap((line) => wrapWords(line, outputWidth(io)))
            .map((line) => `${line}\n`)
            .join("");
    const budget = dailyTokenBudget > 0 ? dailyTokenBudget : null;
    const now =
      values.now === undefined ? systemClock.now() : parseInstant("--now", values.now, core.timezone);
    if (!existsSync(core.dataDir)) {
      // Opening the stores would create the directory; a read-only command must not.
      io.stdout(
        values.json
          ? `${JSON.stringify({ dataDir: core.dataDir, exists: false, unset })}\n`
          : `${notSetUp}No data yet in ${core.dataDir}: presence has not run with this PRESENCE_DATA_DIR.\n`,
      );
      return 0;
    }
    const clock: Clock = { now: () => now };
    const mind = await openMind(core.dataDir, clock, { readOnly: true });
    const log = await MessageLog.open({ dataDir: core.dataDir, clock, timeZone: core.timezone });
    const status = await readStatus({
      now,
      core,
      mind,
      log,
      budget,
      ...(transcribeUrl ? { transcribeUrl } : {}),
    });
    const timezone = status.timezone;
    const running = await readDataLock(core.dataDir);
    if (values.json) {
      io.stdout(`${JSON.stringify({ ...status, running, unset }, null, 2)}\n`);
      return 0;
    }
    const runningLine = running
      ? `Running: yes (pid ${running.pid}, ${running.purpose}, since ${DateTime.fromISO(running.startedAt, { zone: timezone }).toFormat("ccc d LLL HH:mm")})`
      : "Running: no";
    io.stdout(`${notSetUp}${formatStatus(status, timezone, outputWidth(io))}\n${runningLine}\n`);
    return 0;
  },
});
