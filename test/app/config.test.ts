import { describe, expect, it } from "vitest";
import {
  ConfigError,
  loadConfigParts,
  loadCoreConfig,
  loadModelConfig,
  loadTelegramConfig,
  loadTelegramReach,
  loadVoiceConfig,
} from "../../src/app/config.ts";
import { DOCUMENTED_CHECKIN_RULES } from "../support/core-config.ts";

function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => p.variable);
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("core config", () => {
  it("has the documented defaults", () => {
    const core = loadCoreConfig({ PRESENCE_TIMEZONE: "Europe/Berlin" });
    expect(core).toMatchObject({
      timezone: "Europe/Berlin",
      dataDir: "./data",
      ...DOCUMENTED_CHECKIN_RULES,
      logLevel: "info",
    });
  });

  it("learns check-in timing unless PRESENCE_LEARN_TIMING=off, and names a bad value", () => {
    expect(loadCoreConfig({}).learnTiming).toBe(true);
    expect(loadCoreConfig({ PRESENCE_LEARN_TIMING: "on" }).learnTiming).toBe(true);
    expect(loadCoreConfig({ PRESENCE_LEARN_TIMING: "off" }).learnTiming).toBe(false);
    expect(() => loadCoreConfig({ PRESENCE_LEARN_TIMING: "sometimes" })).toThrow(
      'PRESENCE_LEARN_TIMING: must be one of on, off, got "sometimes" (for example PRESENCE_LEARN_TIMING=on)',
    );
  });

  it("defaults the zone to the machine's", () => {
    expect(loadCoreConfig({}).timezone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it("reports every problem at once, each with the variable, the bad value and an example", () => {
    const env = {
      PRESENCE_TIMEZONE: "Mars/Olympus",
      PRESENCE_QUIET_HOURS: "10pm-8am",
      PRESENCE_MAX_UNANSWERED: "three",
      PRESENCE_HEARTBEAT_CRON: "every hour",
      LOG_LEVEL: "loud",
    };
    let message = "";
    try {
      loadCoreConfig(env);
    } catch (error) {
      message = (error as Error).message;
    }
    for (const variable of Object.keys(env)) expect(message).toContain(variable);
    expect(message).toContain('"Mars/Olympus"');
    expect(message).toContain("PRESENCE_TIMEZONE=Europe/Berlin");
    expect(message).toContain("PRESENCE_QUIET_HOURS=22:00-08:00");
  });

  it("refuses a heartbeat schedule the scheduler could not run, saying why", () => {
    expect(() => loadCoreConfig({ PRESENCE_HEARTBEAT_CRON: "99 * * * *" })).toThrow(
      /PRESENCE_HEARTBEAT_CRON: .*"99 \* \* \* \*": "99" in the minute field is not valid \(use 0-59/,
    );
    expect(() => loadCoreConfig({ PRESENCE_HEARTBEAT_CRON: "0 0 31 2 *" })).toThrow(
      /PRESENCE_HEARTBEAT_CRON: .*"0 0 31 2 \*": day of month "31" never occurs/,
    );
    expect(loadCoreConfig({ PRESENCE_HEARTBEAT_CRON: "0 */2 * * 1-5" }).heartbeatCron).toBe("0 */2 * * 1-5");
  });
});

describe("secrets", () => {
  it("never appear in a configuration error", () => {
    const token = "123456789:AAE-secret-secret-secret-secret";
    const apiKey = "sk-ant-very-secret";
    let message = "";
    try {
      loadConfigParts(
        { telegram: loadTelegramConfig, model: loadModelConfig },
        {
          TELEGRAM_BOT_TOKEN: token,
          TELEGRAM_OWNER_ID: "me",
          ANTHROPIC_API_KEY: apiKey,
          PRESENCE_MAX_RETRIES: "x",
        },
      );
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("TELEGRAM_OWNER_ID");
    expect(message).toContain("PRESENCE_MAX_RETRIES");
    expect(message).not.toContain("secret");
  });

  it("a malformed token is named without being echoed", () => {
    expect(() =>
      loadTelegramConfig({ TELEGRAM_BOT_TOKEN: "not-a-token-value", TELEGRAM_OWNER_ID: "42" }),
    ).toThrow(/TELEGRAM_BOT_TOKEN: does not look like a bot token/);
    try {
      loadTelegramConfig({ TELEGRAM_BOT_TOKEN: "not-a-token-value", TELEGRAM_OWNER_ID: "42" });
    } catch (error) {
      expect((error as Error).message).not.toContain("not-a-token-value");
    }
  });
});

describe("parts", () => {
  it("collects the problems of several parts together and says how to fix each", () => {
    expect(
      problemsOf(() => loadConfigParts({ telegram: loadTelegramConfig, model: loadModelConfig }, {})),
    ).toEqual(["TELEGRAM_BOT_TOKEN", "TELEGRAM_OWNER_ID", "ANTHROPIC_API_KEY"]);
    expect(() => loadTelegramConfig({})).toThrow(/@BotFather/);
    expect(() => loadTelegramConfig({})).toThrow(/reads your numeric id when you message your bot/);
  });

  it("bounds Telegram's first contact at 30 s unless TELEGRAM_CONNECT_TIMEOUT_MS says otherwise", () => {
    expect(loadTelegramReach({})).toEqual({ apiRoot: undefined, connectTimeoutMs: 30_000 });
    expect(loadTelegramReach({ TELEGRAM_CONNECT_TIMEOUT_MS: "2000" }).connectTimeoutMs).toBe(2_000);
    expect(() => loadTelegramReach({ TELEGRAM_CONNECT_TIMEOUT_MS: "30s" })).toThrow(
      /TELEGRAM_CONNECT_TIMEOUT_MS: must be a whole number from 1000 to 600000, got "30s"/,
    );
  });

  it("reads the model settings with their defaults", () => {
    expect(
      loadModelConfig({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "http://127.0.0.1:9/" }),
    ).toMatchObject({
      baseURL: "http://127.0.0.1:9",
      reflectMode: "two-phase",
      answeredTopicHours: 6,
    });
  });
});

describe("voice notes", () => {
  it("are not heard unless PRESENCE_TRANSCRIBE_URL is set; their sound is kept 30 days", () => {
    expect(loadVoiceConfig({})).toEqual({ transcription: null, keepDays: 30 });
  });

  it("are heard through the URL given, with whisper-1, no key, a minute of time for each minute of sound", () => {
    expect(loadVoiceConfig({ PRESENCE_TRANSCRIBE_URL: "http://127.0.0.1:8080/v1/" })).toEqual({
      transcription: {
        baseUrl: "http://127.0.0.1:8080/v1",
        apiKey: undefined,
        model: "whisper-1",
        language: undefined,
        timeoutMsPerMinute: 60_000,
      },
      keepDays: 30,
    });
    expect(
      loadVoiceConfig({
        PRESENCE_TRANSCRIBE_URL: "https://api.openai.com/v1",
        PRESENCE_TRANSCRIBE_KEY: "sk-proj-secret",
        PRESENCE_TRANSCRIBE_MODEL: "gpt-4o-mini-transcribe",
        PRESENCE_TRANSCRIBE_LANGUAGE: "de",
        PRESENCE_TRANSCRIBE_TIMEOUT_MS: "120000",
        PRESENCE_VOICE_KEEP_DAYS: "7",
      }),
    ).toEqual({
      transcription: {
        baseUrl: "https://api.openai.com/v1",
        apiKey: "sk-proj-secret",
        model: "gpt-4o-mini-transcribe",
        language: "de",
        timeoutMsPerMinute: 120_000,
      },
      keepDays: 7,
    });
  });

  it("names every wrong voice setting at once, never echoing the key", () => {
    const env = {
      PRESENCE_TRANSCRIBE_URL: "127.0.0.1:8080",
      PRESENCE_TRANSCRIBE_KEY: "sk-proj-secret",
      PRESENCE_TRANSCRIBE_LANGUAGE: "German",
      PRESENCE_TRANSCRIBE_TIMEOUT_MS: "soon",
      PRESENCE_VOICE_KEEP_DAYS: "0",
    };
    expect(problemsOf(() => loadVoiceConfig(env))).toEqual([
      "PRESENCE_TRANSCRIBE_URL",
      "PRESENCE_TRANSCRIBE_LANGUAGE",
      "PRESENCE_TRANSCRIBE_TIMEOUT_MS",
      "PRESENCE_VOICE_KEEP_DAYS",
    ]);
    expect(() => loadVoiceConfig(env)).toThrow(/PRESENCE_TRANSCRIBE_URL: must be an http\(s\) URL/);
    expect(() => loadVoiceConfig(env)).not.toThrow(/sk-proj-secret/);
  });
});
