import { DateTime } from "luxon";
import { buildAwarenessContext } from "../../conversation/awareness/build.ts";
import {
  type AwarenessContext,
  defaultAwarenessSettings,
  type Trigger,
} from "../../conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../../conversation/awareness/format.ts";
import type { Message } from "../../core/message.ts";
import { isKnownZone } from "../../core/zones.ts";
import { LogFileError, loadLogFile } from "../../store/log-file.ts";
import { ConfigError, type CoreConfig, loadCoreConfig } from "../config.ts";
import { type CommandIO, defineCommand, UsageError } from "./command.ts";

/** A log read at a moment: what `awareness` and `heartbeat-check` both start from. */
export interface LogAtMoment {
  core: CoreConfig;
  log: Message[];
  now: Date;
  timezone: string;
  context: AwarenessContext;
}

/**
 * Reads --log, --now and --tz the same way for every read-only command: no secrets, only
 * the core settings (zone: --tz, else PRESENCE_TIMEZONE, else the machine's). Every
 * mistake becomes one UsageError line naming the option or file.
 */
export async function readLogAtMoment(
  options: { log?: string; now?: string; tz?: string },
  trigger: Trigger,
  io: CommandIO,
): Promise<LogAtMoment> {
  if (options.tz !== undefined && !isKnownZone(options.tz)) {
    throw new UsageError(`--tz "${options.tz}" is not an IANA time zone (for example Europe/Berlin)`);
  }
  const core = readCoreConfig(
    options.tz === undefined ? io.env : { ...io.env, PRESENCE_TIMEZONE: options.tz },
  );
  const timezone = core.timezone;
  const now = parseInstant("--now", requireOption("--now", options.now), timezone);
  const path = requireOption("--log", options.log);
  let log: Message[];
  try {
    log = await loadLogFile(path);
  } catch (error) {
    if (error instanceof LogFileError) throw new UsageError(error.message);
    throw error;
  }
  const context = buildAwarenessContext(log, now, { ...defaultAwarenessSettings, timezone, trigger });
  return { core, log, now, timezone, context };
}

/** The core settings, with every problem in one line: these commands answer in one line. */
function readCoreConfig(env: CommandIO["env"]): CoreConfig {
  try {
    return loadCoreConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const problems = error.problems.map(
      (p) => `${p.variable} ${p.problem}${p.example ? ` (for example ${p.variable}=${p.example})` : ""}`,
    );
    throw new UsageError(problems.join("; "));
  }
}

function requireOption(flag: string, value: string | undefined): string {
  if (value === undefined || value === "") {
    throw new UsageError(`${flag} is required`, { seeHelp: true });
  }
  return value;
}

/** A full ISO 8601 date and time; the offset may be left out, the date may not (nor the time). */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

/**
 * An instant from the command line: ISO 8601 with Z or an offset, or without one, read as a
 * wall time in the person's zone (what someone looking at their own clock would type). A date
 * and a time are both required: a missing part would silently be taken from the wall clock.
 */
export function parseInstant(flag: string, text: string, zone: string): Date {
  const time = ISO_DATE_TIME.test(text) ? DateTime.fromISO(text, { zone }) : undefined;
  if (!time?.isValid) {
    throw new UsageError(
      `${flag} "${text}" is not an ISO 8601 time (for example 2026-02-07T14:22:00Z or 2026-02-07T14:22)`,
    );
  }
  return new Date(time.toMillis());
}

const TRIGGERS: readonly Trigger[] = ["heartbeat", "reply"];

/** `presence awareness`: the awareness block (or its structure) for a log at a moment. */
export const awarenessCommand = defineCommand({
  name: "awareness",
  summary: "show the awareness block for a message log at a moment",
  usage: "awareness --log FILE --now ISO [--tz IANA] [--trigger heartbeat|reply] [--json]",
  help: [
    "Computes where the conversation stands at --now from a message log alone, the way the",
    "companion sees it before it speaks, and prints the markdown block given to the model.",
    "Needs no bot token or API key.",
    "",
    "Options:",
    '  --log FILE        the log: { "messages": [...] } or an array; entries need role, text, ts',
    "  --now ISO         the moment, e.g. 2026-02-07T14:22:00Z; without an offset it is read in the zone",
    "  --tz IANA         the person's zone (default: PRESENCE_TIMEZONE, else this machine's)",
    "  --trigger KIND    heartbeat (default: always the full block) or reply (full or slim, as the context says)",
    "  --json            print the awareness structure as JSON instead of the block",
  ].join("\n"),
  options: {
    log: { type: "string" },
    now: { type: "string" },
    tz: { type: "string" },
    trigger: { type: "string", default: "heartbeat" },
    json: { type: "boolean", default: false },
  },
  async run({ values }, io) {
    const trigger = values.trigger as Trigger;
    if (!TRIGGERS.includes(trigger)) {
      throw new UsageError(`--trigger must be heartbeat or reply, got "${values.trigger}"`);
    }
    const { context } = await readLogAtMoment(values, trigger, io);
    io.stdout(
      values.json ? `${JSON.stringify(context, null, 2)}\n` : formatAwarenessForPrompt(context, trigger),
    );
    return 0;
  },
});
