import { chmod, readFile, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { Api } from "grammy";
import {
  firstContact,
  TelegramTokenRejectedError,
  TelegramUnreachableError,
} from "../channels/telegram/first-contact.ts";
import { parseQuietHours } from "../core/checkin-settings.ts";
import { systemClock } from "../core/clock.ts";
import { isKnownZone, machineZone } from "../core/zones.ts";
import { ModelClient, ModelKeyRejectedError } from "../model/llm.ts";
import type { ModelSettings } from "../model/settings.ts";
import {
  ConfigError,
  loadConfigParts,
  loadModelSettings,
  loadTelegramReach,
  type TelegramReach,
} from "./config.ts";

/**
 * The first run (`npm run setup`): asks for each setting in turn, checks the bot token with
 * Telegram (getMe, bounded like `start`'s), can find the person's numeric id by waiting for them
 * to message the bot, checks the API key as `start` does, and writes `.env` readable by its
 * owner only. It only ever runs with a person at a terminal.
 */

/** How setup talks to the person; the terminal in real use, a script in tests. */
export interface SetupPrompter {
  ask(question: string, options?: { secret?: boolean }): Promise<string>;
  say(text: string): void;
  close(): void;
}

export interface SetupOptions {
  prompter: SetupPrompter;
  /** The environment as it is now: existing values are offered as defaults. */
  env: Record<string, string | undefined>;
  /** The file to write (`.env` in the working directory). */
  envPath: string;
  /** How long to wait for the person's message when finding their id. */
  detectIdTimeoutMs?: number;
  /** Set when the bot starts right after (setup offered by `npm start`): no "now run npm start". */
  startsNext?: boolean;
}

/** Setup needs answers from a person; without a terminal it stops here. */
export const NO_TERMINAL_MESSAGE =
  "presence setup asks questions and needs a terminal. Run `npm run setup` in a terminal, or write .env yourself (see .env.example): TELEGRAM_BOT_TOKEN (from @BotFather), TELEGRAM_OWNER_ID (your numeric Telegram id: `npm run setup` reads it when you message your bot, and a running presence bot tells anyone who writes to it their id), ANTHROPIC_API_KEY, PRESENCE_TIMEZONE, PRESENCE_QUIET_HOURS.\n";

const MAX_TRIES = 5;

/** An answer accepted (with what it became), or the sentence saying what is wrong with it. */
type Checked<T> = { value: T } | { problem: string };

/** Asks until `check` accepts the answer or the person has had enough tries. */
async function askUntil<T>(
  prompter: SetupPrompter,
  question: string,
  check: (answer: string) => Promise<Checked<T>> | Checked<T>,
  options: { secret?: boolean; fallback?: string } = {},
): Promise<T> {
  for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
    const typed = (await prompter.ask(question, options)).trim();
    const answer = typed === "" && options.fallback !== undefined ? options.fallback : typed;
    const result = await check(answer);
    if ("value" in result) return result.value;
    prompter.say(`  ${result.problem}\n`);
  }
  throw new SetupAbandonedError("too many tries; nothing was written. Run `npm run setup` again when ready.");
}

/** The person could not or would not answer; nothing was written. */
class SetupAbandonedError extends Error {
  override readonly name = "SetupAbandonedError";
}

/** Runs the questions and writes `.env`; returns the exit code. */
export async function runSetup(options: SetupOptions): Promise<number> {
  const { prompter, env } = options;
  try {
    const settings = readCheckSettings(env, prompter);
    if (settings === null) return 2;
    const { reach, model } = settings;
    const apiRoot = reach.apiRoot;
    prompter.say("Setting up presence. Press Enter to keep a value shown in [brackets].\n\n");

    prompter.say(
      "1. The Telegram bot. In Telegram, message @BotFather, send /newbot, and copy the token it gives you.\n",
    );
    const { token, username } = await askUntil<{ token: string; username: string }>(
      prompter,
      `Bot token${env.TELEGRAM_BOT_TOKEN ? " [keep current]" : ""}: `,
      async (answer) => {
        if (!/^\d+:[A-Za-z0-9_-]{20,}$/.test(answer)) {
          return {
            problem:
              answer === ""
                ? "The token is required."
                : "That doesn't look like a bot token (digits, a colon, then letters).",
          };
        }
        return checkToken(answer, reach);
      },
      { secret: true, ...(env.TELEGRAM_BOT_TOKEN ? { fallback: env.TELEGRAM_BOT_TOKEN } : {}) },
    );
    prompter.say(`  Telegram knows this bot as @${username}.\n\n`);

    prompter.say(
      `2. Who the bot talks to: your numeric Telegram id. Press Enter and then message @${username}; I'll read it.\n`,
    );
    const ownerId = await askUntil<string>(
      prompter,
      `Your numeric id${env.TELEGRAM_OWNER_ID ? ` [${env.TELEGRAM_OWNER_ID}]` : " (Enter to detect)"}: `,
      async (answer) => {
        if (/^\d+$/.test(answer)) return { value: answer };
        if (answer !== "") return { problem: "The id is a number, like 123456789." };
        prompter.say(`  Waiting for your message to @${username}…\n`);
        const found = await detectOwnerId(token, apiRoot, options.detectIdTimeoutMs ?? 120_000);
        if (found === null)
          return { problem: `No message arrived. Send any message to @${username}, or type your id.` };
        prompter.say(`  Got it: ${found.name} (${found.id}).\n`);
        return { value: String(found.id) };
      },
      env.TELEGRAM_OWNER_ID ? { fallback: env.TELEGRAM_OWNER_ID } : {},
    );
    prompter.say("\n");

    prompter.say("3. The model. Create an API key in the Anthropic Console (Settings → API keys).\n");
    const apiKey = await askUntil<string>(
      prompter,
      `Anthropic API key${env.ANTHROPIC_API_KEY ? " [keep current]" : ""}: `,
      (answer) =>
        answer.length >= 8 ? checkKey(answer, model, prompter) : { problem: "The API key is required." },
      { secret: true, ...(env.ANTHROPIC_API_KEY ? { fallback: env.ANTHROPIC_API_KEY } : {}) },
    );
    prompter.say("\n");

    const zoneDefault = env.PRESENCE_TIMEZONE || machineZone();
    const timezone = await askUntil<string>(
      prompter,
      `4. Your time zone [${zoneDefault}]: `,
      (answer) =>
        isKnownZone(answer)
          ? { value: answer }
          : { problem: "Use a zone name like Europe/Berlin or America/New_York." },
      { fallback: zoneDefault },
    );
    const quietDefault = env.PRESENCE_QUIET_HOURS || "22:00-08:00";
    const quiet = await askUntil<string>(
      prompter,
      `5. Quiet hours, when it never checks in [${quietDefault}]: `,
      (answer) =>
        parseQuietHours(answer)
          ? { value: answer }
          : { problem: "Use HH:MM-HH:MM in 24-hour time, like 22:00-08:00." },
      { fallback: quietDefault },
    );

    const existing = await readFile(options.envPath, "utf8").catch(() => "");
    const values: Record<string, string> = {
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_OWNER_ID: ownerId,
      ANTHROPIC_API_KEY: apiKey,
      PRESENCE_TIMEZONE: timezone,
      PRESENCE_QUIET_HOURS: quiet,
    };
    await writeFile(options.envPath, mergeEnvFile(existing, values), { mode: 0o600 });
    await chmod(options.envPath, 0o600);
    prompter.say(
      `\nSaved ${options.envPath} (readable only by you). ${options.startsNext ? "Starting the companion now." : "Start the companion with: npm start"}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof SetupAbandonedError) {
      prompter.say(`\nSetup stopped: ${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    prompter.close();
  }
}

/**
 * The settings setup checks the token and the key against (where Telegram and the API are, which
 * model), or null after saying what is wrong with them: checking against wrong ones would mislead.
 */
function readCheckSettings(
  env: SetupOptions["env"],
  prompter: SetupPrompter,
): { reach: TelegramReach; model: ModelSettings } | null {
  try {
    return loadConfigParts({ reach: loadTelegramReach, model: loadModelSettings }, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    prompter.say(
      `${error.message}\nSetup checks the bot token and the API key with these settings: fix them first, then run \`npm run setup\` again.\n`,
    );
    return null;
  }
}

/** getMe with the token, bounded as at start: the bot's username, or the sentence to show when Telegram says no. */
async function checkToken(
  token: string,
  reach: TelegramReach,
): Promise<Checked<{ token: string; username: string }>> {
  try {
    const me = await firstContact(token, { apiRoot: reach.apiRoot, timeoutMs: reach.connectTimeoutMs });
    return { value: { token, username: me.username } };
  } catch (error) {
    if (error instanceof TelegramTokenRejectedError) {
      return {
        problem:
          "Telegram rejected this token. Copy it again from @BotFather (/mybots → your bot → API Token).",
      };
    }
    if (error instanceof TelegramUnreachableError) {
      return { problem: `Could not check the token: ${error.message}` };
    }
    throw error;
  }
}

/**
 * The key checked as `start` checks it: one the API rejects is asked for again; one that could
 * not be checked (API down, a proxy without the models endpoint) is kept, with a word on why.
 */
async function checkKey(
  apiKey: string,
  settings: ModelSettings,
  prompter: SetupPrompter,
): Promise<Checked<string>> {
  try {
    const warning = await new ModelClient({ ...settings, apiKey }, { clock: systemClock }).checkKey();
    if (warning)
      prompter.say(`  Note: ${warning.message}. The key is kept; presence checks it again when it starts.\n`);
    return { value: apiKey };
  } catch (error) {
    if (!(error instanceof ModelKeyRejectedError)) throw error;
    return {
      problem: `Anthropic rejected this key (${error.status}${error.detail ? `: ${error.detail}` : ""}). Copy it again from the Anthropic Console (Settings → API keys), or create a new one there.`,
    };
  }
}

/** Waits for a private message to the bot and returns its sender; confirms the update so the bot won't answer it later. */
async function detectOwnerId(
  token: string,
  apiRoot: string | undefined,
  timeoutMs: number,
): Promise<{ id: number; name: string } | null> {
  const api = new Api(token, apiRoot ? { apiRoot } : {});
  const deadline = performance.now() + timeoutMs;
  let offset: number | undefined;
  while (performance.now() < deadline) {
    const waitSeconds = Math.max(1, Math.min(20, Math.floor((deadline - performance.now()) / 1000)));
    const updates = await api.getUpdates({
      timeout: waitSeconds,
      allowed_updates: ["message"],
      ...(offset ? { offset } : {}),
    });
    for (const update of updates) {
      offset = update.update_id + 1;
      const from = update.message?.from;
      if (update.message?.chat.type === "private" && from && !from.is_bot) {
        await api.getUpdates({ offset, timeout: 0 });
        return { id: from.id, name: from.first_name };
      }
    }
  }
  return null;
}

/** Sets the given keys in a .env text, keeping every other line (comments included) as it was. */
export function mergeEnvFile(existing: string, values: Record<string, string>): string {
  const remaining = new Map(Object.entries(values));
  const lines = existing === "" ? [] : existing.replace(/\n$/, "").split("\n");
  const merged = lines.map((line) => {
    const key = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1];
    if (key === undefined || !remaining.has(key)) return line;
    const value = remaining.get(key) as string;
    remaining.delete(key);
    return `${key}=${quoteEnvValue(value)}`;
  });
  for (const [key, value] of remaining) merged.push(`${key}=${quoteEnvValue(value)}`);
  return `${merged.join("\n")}\n`;
}

function quoteEnvValue(value: string): string {
  return /^[A-Za-z0-9_:/.+@,-]*$/.test(value) ? value : JSON.stringify(value);
}

/** Questions on the terminal; secret answers are not echoed. */
export function terminalPrompter(input = process.stdin, output = process.stdout): SetupPrompter {
  let muted = false;
  const screen = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input, output: screen, terminal: Boolean(input.isTTY) });
  return {
    ask(question, options = {}) {
      return new Promise((resolve) => {
        const done = (answer: string) => {
          if (muted) output.write("\n");
          muted = false;
          resolve(answer);
        };
        if (options.secret !== true) {
          rl.question(question, done);
          return;
        }
        output.write(question);
        muted = true;
        rl.question("", done);
      });
    },
    say: (text) => output.write(text),
    close: () => rl.close(),
  };
}
