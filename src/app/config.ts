import { z } from "zod";
import { DEFAULT_TELEGRAM_CONNECT_TIMEOUT_MS } from "../channels/telegram/first-contact.ts";
import { CronError, type HeartbeatCron, parseCron } from "../conversation/schedule.ts";
import { parseQuietHours, type QuietHours } from "../core/checkin-settings.ts";
import { DEFAULT_SOUND_KEEP_DAYS } from "../core/sound.ts";
import { isKnownZone, machineZone } from "../core/zones.ts";
import { loadPriceTable, PriceFileError, type PriceTable, shippedPriceTable } from "../model/prices.ts";
import {
  DEFAULT_MODEL,
  DEFAULT_REFLECT_MODEL,
  type ModelConfig,
  type ModelSettings,
} from "../model/settings.ts";
import {
  DEFAULT_TRANSCRIBE_MODEL,
  DEFAULT_TRANSCRIBE_TIMEOUT_MS,
  type TranscriptionSettings,
} from "../model/transcription.ts";

/**
 * Configuration comes from the environment (the command line loads `.env` first, see
 * src/cli.ts; variables already set win). It is split into parts so that a command only asks
 * for what it uses: reading a log needs no Telegram token, chatting in the terminal
 * needs no bot at all.
 */

/** Every configuration problem at once, each naming the variable, what is wrong and a good value. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: ConfigProblem[]) {
    super(
      `presence is not configured correctly:\n${problems
        .map(
          (p) =>
            `  - ${p.variable}: ${p.problem}${p.example ? ` (for example ${p.variable}=${p.example})` : ""}`,
        )
        .join("\n")}\nSet these in .env (see .env.example) or in the environment.`,
    );
    this.name = "ConfigError";
    this.problems = problems;
  }
}

export interface ConfigProblem {
  variable: string;
  problem: string;
  example?: string;
  /** The variable is required and not set at all (rather than set to something wrong). */
  unset?: boolean;
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** Settings every command shares: where data lives, the person's zone, the check-in rules. */
export interface CoreConfig {
  timezone: string;
  dataDir: string;
  quietHours: QuietHours;
  heartbeatCron: HeartbeatCron;
  maxUnanswered: number;
  recentMinutes: number;
  weekendMaxUnanswered: number;
  minGapMinutes: number;
  maxCheckinsPerDay: number;
  /** Hold check-ins at hours the person rarely answers, learned from the log (PRESENCE_LEARN_TIMING). */
  learnTiming: boolean;
  logLevel: (typeof LOG_LEVELS)[number];
}

/** Where Telegram is and how long to keep trying to reach it at first: what `setup` needs before it has a token. */
export interface TelegramReach {
  apiRoot: string | undefined;
  /** How long `start` and `setup` try to reach Telegram (getMe) before giving up, all attempts together. */
  connectTimeoutMs: number;
}

/** Settings for the Telegram bot. */
export interface TelegramConfig extends TelegramReach {
  token: string;
  ownerId: number;
}

/**
 * What becomes of the person's voice notes: whether and where they are transcribed, and how long
 * their sound is kept. Not needed by any command: without PRESENCE_TRANSCRIBE_URL, voice notes are
 * simply not heard.
 */
export interface VoiceConfig {
  /** The transcription service, or null when PRESENCE_TRANSCRIBE_URL is not set (voice notes are not heard). */
  transcription: TranscriptionSettings | null;
  /** How many days a voice note's sound is kept after it arrived (PRESENCE_VOICE_KEEP_DAYS). */
  keepDays: number;
}

/** Collects problems while reading variables, so all of them are reported together. */
class Reader {
  readonly problems: ConfigProblem[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const v = this.env[name]?.trim();
    return v === undefined || v === "" ? undefined : v;
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  required(name: string, problem: string, example: string): string {
    const v = this.raw(name);
    if (v === undefined) this.problems.push({ variable: name, problem, example, unset: true });
    return v ?? "";
  }

  integer(name: string, fallback: number, min: number, max: number, example: string): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) {
      this.problems.push({
        variable: name,
        problem: `must be a whole number from ${min} to ${max}, got "${v}"`,
        example,
      });
      return fallback;
    }
    return n;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(v)) {
      this.problems.push({
        variable: name,
        problem: `must be one of ${allowed.join(", ")}, got "${v}"`,
        example: fallback,
      });
      return fallback;
    }
    return v as T;
  }

  url(name: string, example: string): string | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    const parsed = z.url({ protocol: /^https?$/ }).safeParse(v);
    if (!parsed.success)
      this.problems.push({ variable: name, problem: `must be an http(s) URL, got "${v}"`, example });
    return v.replace(/\/+$/, "");
  }

  /** A cron expression, checked by the one check (conversation/schedule.ts). */
  cron(name: string, fallback: string): HeartbeatCron {
    const v = this.raw(name) ?? fallback;
    try {
      return parseCron(v);
    } catch (error) {
      if (!(error instanceof CronError)) throw error;
      this.problems.push({
        variable: name,
        problem: `must be a cron expression (minute hour day month weekday), got "${v}": ${error.problem}`,
        example: `"${fallback}"`,
      });
      return parseCron(fallback);
    }
  }

  /** A price table: the file the variable names (checked field by field), or the shipped one. */
  prices(name: string, example: string): PriceTable {
    const file = this.raw(name);
    if (file === undefined) return shippedPriceTable();
    try {
      return loadPriceTable(file);
    } catch (error) {
      if (!(error instanceof PriceFileError)) throw error;
      this.problems.push({ variable: name, problem: error.message, example });
      return shippedPriceTable();
    }
  }

  done<T>(value: T): T {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
    return value;
  }
}

/** When check-ins are considered unless PRESENCE_HEARTBEAT_CRON says otherwise: hourly at :07. */
const DEFAULT_HEARTBEAT_CRON = "7 * * * *";

/** Reads the settings every command needs; none of them is secret. */
export function loadCoreConfig(env: Env = process.env): CoreConfig {
  const r = new Reader(env);
  const timezone = r.string("PRESENCE_TIMEZONE", machineZone());
  if (!isKnownZone(timezone)) {
    r.problems.push({
      variable: "PRESENCE_TIMEZONE",
      problem: `"${timezone}" is not an IANA time zone`,
      example: "Europe/Berlin",
    });
  }
  const quietText = r.string("PRESENCE_QUIET_HOURS", "22:00-08:00");
  const quietHours = parseQuietHours(quietText);
  if (!quietHours) {
    r.problems.push({
      variable: "PRESENCE_QUIET_HOURS",
      problem: `must be HH:MM-HH:MM in 24-hour time, got "${quietText}"`,
      example: "22:00-08:00",
    });
  }
  const heartbeatCron = r.cron("PRESENCE_HEARTBEAT_CRON", DEFAULT_HEARTBEAT_CRON);
  return r.done({
    timezone,
    dataDir: r.string("PRESENCE_DATA_DIR", "./data"),
    quietHours: quietHours ?? { start: 22 * 60, end: 8 * 60 },
    heartbeatCron,
    maxUnanswered: r.integer("PRESENCE_MAX_UNANSWERED", 3, 1, 100, "3"),
    recentMinutes: r.integer("PRESENCE_RECENT_MINUTES", 30, 0, 24 * 60, "30"),
    weekendMaxUnanswered: r.integer("PRESENCE_WEEKEND_MAX_UNANSWERED", 1, 0, 100, "1"),
    minGapMinutes: r.integer("PRESENCE_MIN_GAP_MINUTES", 45, 0, 24 * 60, "45"),
    maxCheckinsPerDay: r.integer("PRESENCE_MAX_CHECKINS_PER_DAY", 8, 0, 1000, "8"),
    learnTiming: r.oneOf("PRESENCE_LEARN_TIMING", ["on", "off"] as const, "on") === "on",
    logLevel: r.oneOf("LOG_LEVEL", LOG_LEVELS, "info"),
  });
}

/** The non-secret model settings, read into `r` so their problems are reported with the key's. */
function readModelSettings(r: Reader): ModelSettings {
  const reflectModel = r.string("PRESENCE_REFLECT_MODEL", DEFAULT_REFLECT_MODEL);
  return {
    baseURL: r.url("ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
    model: r.string("PRESENCE_MODEL", DEFAULT_MODEL),
    reflectModel,
    decideModel: r.string("PRESENCE_DECIDE_MODEL", reflectModel),
    maxRetries: r.integer("PRESENCE_MAX_RETRIES", 2, 0, 10, "2"),
    timeoutMs: r.integer("PRESENCE_MODEL_TIMEOUT_MS", 60_000, 1_000, 600_000, "60000"),
    dailyTokenBudget: r.integer("PRESENCE_DAILY_TOKEN_BUDGET", 2_000_000, 0, 1_000_000_000, "2000000"),
    promptCeiling: r.integer("PRESENCE_PROMPT_CEILING", 12_000, 6_000, 200_000, "12000"),
    reflectMode: r.oneOf("PRESENCE_REFLECT_MODE", ["two-phase", "single-phase", "off"] as const, "two-phase"),
    answeredTopicHours: r.integer("PRESENCE_ANSWERED_TOPIC_HOURS", 6, 0, 168, "6"),
    prices: r.prices("PRESENCE_PRICES_FILE", "./my-prices.json"),
  };
}

/** Reads the model settings without the API key: for commands that only look (status). */
export function loadModelSettings(env: Env = process.env): ModelSettings {
  const r = new Reader(env);
  return r.done(readModelSettings(r));
}

/** Reads the model settings and the API key, which is required; every problem is reported at once. */
export function loadModelConfig(env: Env = process.env): ModelConfig {
  const r = new Reader(env);
  const apiKey = r.required(
    "ANTHROPIC_API_KEY",
    "is not set; create a key in the Anthropic Console (Settings → API keys)",
    "sk-ant-…",
  );
  const settings = readModelSettings(r);
  return r.done({ apiKey, ...settings });
}

/**
 * Reads the voice note settings: PRESENCE_TRANSCRIBE_URL (an http(s) base such as
 * http://127.0.0.1:8080/v1; unset, nothing is transcribed), its key, model, language and time
 * limit, and PRESENCE_VOICE_KEEP_DAYS. The key is optional (a local server needs none) and never
 * printed.
 */
export function loadVoiceConfig(env: Env = process.env): VoiceConfig {
  const r = new Reader(env);
  const baseUrl = r.url("PRESENCE_TRANSCRIBE_URL", "http://127.0.0.1:8080/v1");
  const language = r.raw("PRESENCE_TRANSCRIBE_LANGUAGE");
  if (language !== undefined && !/^[a-z]{2,3}$/.test(language)) {
    r.problems.push({
      variable: "PRESENCE_TRANSCRIBE_LANGUAGE",
      problem: `must be a language code of two or three lower-case letters (ISO 639-1), got "${language}"`,
      example: "en",
    });
  }
  const settings = {
    apiKey: r.raw("PRESENCE_TRANSCRIBE_KEY"),
    model: r.string("PRESENCE_TRANSCRIBE_MODEL", DEFAULT_TRANSCRIBE_MODEL),
    language,
    timeoutMsPerMinute: r.integer(
      "PRESENCE_TRANSCRIBE_TIMEOUT_MS",
      DEFAULT_TRANSCRIBE_TIMEOUT_MS,
      1_000,
      3_600_000,
      String(DEFAULT_TRANSCRIBE_TIMEOUT_MS),
    ),
  };
  const keepDays = r.integer("PRESENCE_VOICE_KEEP_DAYS", DEFAULT_SOUND_KEEP_DAYS, 1, 3_650, "30");
  return r.done({ transcription: baseUrl === undefined ? null : { baseUrl, ...settings }, keepDays });
}

/** Reads the Telegram settings; token and owner id are required. */
export function loadTelegramConfig(env: Env = process.env): TelegramConfig {
  const r = new Reader(env);
  const token = r.required(
    "TELEGRAM_BOT_TOKEN",
    "is not set; create a bot with @BotFather in Telegram (/newbot) and copy the token it gives you",
    "123456789:AAE…",
  );
  if (token && !/^\d+:[A-Za-z0-9_-]{20,}$/.test(token)) {
    r.problems.push({
      variable: "TELEGRAM_BOT_TOKEN",
      problem: "does not look like a bot token (digits, a colon, then at least 20 letters, digits, - or _)",
      example: "123456789:AAE…",
    });
  }
  const ownerText = r.required(
    "TELEGRAM_OWNER_ID",
    "is not set; run `npm run setup` in a terminal: it reads your numeric id when you message your bot",
    "123456789",
  );
  const ownerId = Number(ownerText);
  if (ownerText && (!Number.isSafeInteger(ownerId) || ownerId <= 0)) {
    r.problems.push({
      variable: "TELEGRAM_OWNER_ID",
      problem: `must be your numeric Telegram user id, got "${ownerText}"`,
      example: "123456789",
    });
  }
  return r.done({ token, ownerId, ...readTelegramReach(r) });
}

function readTelegramReach(r: Reader): TelegramReach {
  return {
    apiRoot: r.url("TELEGRAM_API_ROOT", "http://127.0.0.1:8081"),
    connectTimeoutMs: r.integer(
      "TELEGRAM_CONNECT_TIMEOUT_MS",
      DEFAULT_TELEGRAM_CONNECT_TIMEOUT_MS,
      1_000,
      600_000,
      String(DEFAULT_TELEGRAM_CONNECT_TIMEOUT_MS),
    ),
  };
}

/** Reads where Telegram is and the first-contact bound, without the token: for `setup`, which asks for the token itself. */
export function loadTelegramReach(env: Env = process.env): TelegramReach {
  const r = new Reader(env);
  return r.done(readTelegramReach(r));
}

/**
 * The settings `start` requires that are not set at all, in the order it reads them: what a
 * command that runs without them (`status`) names first, so a new install is not mistaken for
 * a running one.
 */
export function unsetStartSettings(env: Env = process.env): string[] {
  try {
    loadConfigParts({ telegram: loadTelegramConfig, model: loadModelConfig }, env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.filter((p) => p.unset).map((p) => p.variable);
  }
}

/** Reads several parts at once so that every problem across them is reported together. */
export function loadConfigParts<T extends Record<string, (env: Env) => unknown>>(
  parts: T,
  env: Env = process.env,
): { [K in keyof T]: ReturnType<T[K]> } {
  const problems: ConfigProblem[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, load] of Object.entries(parts)) {
    try {
      out[key] = load(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as { [K in keyof T]: ReturnType<T[K]> };
}
