import { chmod, readFile, writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { Api } from "grammy";
import {
  firstContact,
  TELEGRAM_API_ROOT,
  TelegramTokenRejectedError,
  TelegramUnreachableError,
} from "../channels/telegram/first-contact.ts";
import { parseQuietHours } from "../core/checkin-settings.ts";
import { systemClock, systemTimers, type Timers } from "../core/clock.ts";
import { isKnownZone, machineZone } from "../core/zones.ts";
import { ModelClient, ModelKeyRejectedError } from "../model/llm.ts";
import type { ModelSettings } from "../model/settings.ts";
import { DEFAULT_TRANSCRIBE_MODEL, TranscriptionClient } from "../model/transcription.ts";
import { EXIT_INTERRUPTED } from "./commands/command.ts";
import {
  ConfigError,
  loadConfigParts,
  loadModelSettings,
  loadTelegramReach,
  loadVoiceConfig,
  type TelegramReach,
} from "./config.ts";

/**
 * The first run (`npm run setup`): asks for each setting in turn, checks the bot token with
 * Telegram (getMe, bounded like `start`'s), can find the person's numeric id by waiting for them
 * to message the bot, checks the API key as `start` does, and writes `.env` readable by its
 * owner only. It only ever runs with a person at a terminal, so the person can always leave:
 * Ctrl-C stops any question or check at once, and a token that fails its check can be kept
 * unchecked or given up on. While a check runs, one line says what it waits on and for how long.
 */

/** How setup talks to the person; the terminal in real use, a script in tests. */
export interface SetupPrompter {
  /** Rejects with the reason `stopped` carries once it is aborted (Ctrl-C, or the input ended). */
  ask(question: string, options?: { secret?: boolean }): Promise<string>;
  say(text: string): void;
  /** A line that stands until the next progress(), say() or ask() replaces it: what setup is waiting on, and for how long. */
  progress(text: string): void;
  /**
   * Aborted when the person presses Ctrl-C (reason: SetupCancelledError) or the input ends
   * (SetupAbandonedError): the question or the check under way stops at once.
   */
  readonly stopped: AbortSignal;
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
  /** What the progress line's waits run on: the machine's timers, or a test's virtual ones. */
  timers?: Timers;
}

/** Setup needs answers from a person; without a terminal it stops here. */
export const NO_TERMINAL_MESSAGE =
  "presence setup asks questions and needs a terminal. Run `npm run setup` in a terminal, or write .env yourself (see .env.example): TELEGRAM_BOT_TOKEN (from @BotFather), TELEGRAM_OWNER_ID (your numeric Telegram id: `npm run setup` reads it when you message your bot, and a running presence bot tells anyone who writes to it their id), ANTHROPIC_API_KEY, PRESENCE_TIMEZONE, PRESENCE_QUIET_HOURS.\n";

/** The one line Ctrl-C leaves, wherever it comes. */
export const CANCELLED_LINE = "Setup cancelled; nothing was written.\n";

const MAX_TRIES = 5;
/** A check under way says how long it has taken this often: often enough that a slow network never looks like a hang. */
const PROGRESS_EVERY_MS = 5_000;

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
export class SetupAbandonedError extends Error {
  override readonly name = "SetupAbandonedError";
}

/** The person pressed Ctrl-C (or the process got SIGINT); nothing was written. */
export class SetupCancelledError extends Error {
  override readonly name = "SetupCancelledError";
  constructor() {
    super("cancelled with Ctrl-C");
  }
}

/** What every step of one run shares: who it talks to and what the progress line keeps time on. */
interface SetupRun {
  prompter: SetupPrompter;
  timers: Timers;
}

/** A token setup could check (with the name Telegram knows the bot by), or one the person kept unchecked. */
type BotToken = { token: string; username: string | null };

/** Runs the questions and writes `.env`; returns the exit code (EXIT_INTERRUPTED after Ctrl-C). */
export async function runSetup(options: SetupOptions): Promise<number> {
  const { prompter, env } = options;
  const run: SetupRun = { prompter, timers: options.timers ?? systemTimers };
  try {
    const settings = readCheckSettings(env, prompter);
    if (settings === null) return 2;
    const { reach, model } = settings;
    prompter.say("Setting up presence. Press Enter to keep a value shown in [brackets]. Ctrl-C stops.\n\n");

    prompter.say(
      "1. The Telegram bot. In Telegram, message @BotFather, send /newbot, and copy the token it gives you.\n",
    );
    const { token, username } = await askToken(run, env, reach);
    if (username !== null) prompter.say(`  Telegram knows this bot as @${username}.\n`);
    prompter.say("\n");

    const ownerId = await askOwnerId(run, env, token, username, reach.apiRoot, options.detectIdTimeoutMs);
    prompter.say("\n");

    prompter.say("3. The model. Create an API key in the Anthropic Console (Settings → API keys).\n");
    const apiKey = await askUntil<string>(
      prompter,
      `Anthropic API key${env.ANTHROPIC_API_KEY ? " [keep current]" : ""}: `,
      (answer) =>
        answer.length >= 8 ? checkKey(run, answer, model) : { problem: "The API key is required." },
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

    prompter.say("\n");
    const voice = await askVoiceNotes(run, env);

    const existing = await readFile(options.envPath, "utf8").catch(() => "");
    const values: Record<string, string> = {
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_OWNER_ID: ownerId,
      ANTHROPIC_API_KEY: apiKey,
      PRESENCE_TIMEZONE: timezone,
      PRESENCE_QUIET_HOURS: quiet,
      ...voice,
    };
    await writeFile(options.envPath, mergeEnvFile(existing, values), { mode: 0o600 });
    await chmod(options.envPath, 0o600);
    const unchecked = username === null ? " The bot token is unchecked: `npm start` checks it first." : "";
    prompter.say(
      `\nSaved ${options.envPath} (readable only by you).${unchecked} ${options.startsNext ? "Starting the companion now." : "Start the companion with: npm start"}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof SetupCancelledError) {
      prompter.say(CANCELLED_LINE);
      return EXIT_INTERRUPTED;
    }
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
 * Step 1: a token that looks like one, checked with Telegram. When Telegram rejects it or
 * cannot be reached, the person chooses: try again (another token, or the same check again),
 * keep it unchecked, or quit.
 */
async function askToken(run: SetupRun, env: SetupOptions["env"], reach: TelegramReach): Promise<BotToken> {
  const { prompter } = run;
  for (;;) {
    const token = await askUntil<string>(
      prompter,
      `Bot token${env.TELEGRAM_BOT_TOKEN ? " [keep current]" : ""}: `,
      (answer) =>
        /^\d+:[A-Za-z0-9_-]{20,}$/.test(answer)
          ? { value: answer }
          : {
              problem:
                answer === ""
                  ? "The token is required."
                  : "That doesn't look like a bot token (digits, a colon, then letters).",
            },
      { secret: true, ...(env.TELEGRAM_BOT_TOKEN ? { fallback: env.TELEGRAM_BOT_TOKEN } : {}) },
    );
    for (;;) {
      const checked = await checkToken(run, token, reach);
      if (checked.kind === "known") return { token, username: checked.username };
      prompter.say(`  ${checked.problem}\n`);
      const again = checked.kind === "rejected" ? "Type another token" : "Check again";
      const choice = await askUntil<"again" | "keep" | "quit">(
        prompter,
        `  ${again} (Enter), keep this one unchecked (k), or quit (q)? `,
        (answer) => {
          const word = answer.toLowerCase();
          if (word === "" || word === "r" || word === "retry") return { value: "again" };
          if (word === "k" || word === "keep") return { value: "keep" };
          if (word === "q" || word === "quit") return { value: "quit" };
          return { problem: "Press Enter, or type k or q." };
        },
      );
      if (choice === "keep") return { token, username: null };
      if (choice === "quit") {
        throw new SetupAbandonedError("nothing was written. Run `npm run setup` again when ready.");
      }
      if (checked.kind === "rejected") break;
    }
  }
}

/**
 * Step 2: the person's numeric id, read from their first message to the bot, or typed. With the
 * token unchecked it can only be typed: a bot Telegram may not know cannot be asked for messages.
 */
async function askOwnerId(
  run: SetupRun,
  env: SetupOptions["env"],
  token: string,
  username: string | null,
  apiRoot: string | undefined,
  detectIdTimeoutMs = 120_000,
): Promise<string> {
  const { prompter } = run;
  const fallback = env.TELEGRAM_OWNER_ID ? { fallback: env.TELEGRAM_OWNER_ID } : {};
  if (username === null) {
    prompter.say(
      "2. Who the bot talks to: your numeric Telegram id. With the token unchecked it cannot be read from your message: type it (a running presence bot tells anyone who writes to it their id).\n",
    );
    return askUntil<string>(
      prompter,
      `Your numeric id${env.TELEGRAM_OWNER_ID ? ` [${env.TELEGRAM_OWNER_ID}]` : ""}: `,
      (answer) =>
        /^\d+$/.test(answer) ? { value: answer } : { problem: "The id is a number, like 123456789." },
      fallback,
    );
  }
  prompter.say(
    `2. Who the bot talks to: your numeric Telegram id. Press Enter and then message @${username}; I'll read it.\n`,
  );
  return askUntil<string>(
    prompter,
    `Your numeric id${env.TELEGRAM_OWNER_ID ? ` [${env.TELEGRAM_OWNER_ID}]` : " (Enter to detect)"}: `,
    async (answer) => {
      if (/^\d+$/.test(answer)) return { value: answer };
      if (answer !== "") return { problem: "The id is a number, like 123456789." };
      const found = await whileWaiting(run, `Waiting for your message to @${username}`, (signal) =>
        detectOwnerId(token, apiRoot, detectIdTimeoutMs, signal),
      );
      if (found === null)
        return { problem: `No message arrived. Send any message to @${username}, or type your id.` };
      prompter.say(`  Got it: ${found.name} (${found.id}).\n`);
      return { value: String(found.id) };
    },
    fallback,
  );
}

/** What the person types to turn voice notes off when a transcription service is set. */
const NO_TRANSCRIPTION = "none";

/**
 * Step 6, optional: a transcription service for voice notes (PRESENCE_TRANSCRIBE_URL, and its key
 * and model), checked for an answer of any kind as `start` checks it. Enter keeps what is set
 * (nothing, on a first run); "none" turns hearing off. Returns the settings to write: none when
 * nothing changes.
 */
async function askVoiceNotes(run: SetupRun, env: SetupOptions["env"]): Promise<Record<string, string>> {
  const { prompter } = run;
  const current = env.PRESENCE_TRANSCRIBE_URL?.trim() || undefined;
  prompter.say(
    [
      "6. Voice notes (optional). To hear them, presence sends their sound to a transcription service that speaks",
      "   OpenAI's /audio/transcriptions, and to nothing else. A local one keeps the sound on this computer",
      "   (a whisper.cpp server: http://127.0.0.1:8080/v1); a hosted one (https://api.openai.com/v1) receives it.",
      "",
    ].join("\n"),
  );
  const url = await askUntil<string | null>(
    prompter,
    `Transcription URL${current ? ` [${current}; "${NO_TRANSCRIPTION}" turns it off]` : " (Enter to skip)"}: `,
    (answer) => {
      if (answer === "" || answer.toLowerCase() === NO_TRANSCRIPTION) return { value: null };
      try {
        loadVoiceConfig({ PRESENCE_TRANSCRIBE_URL: answer });
        return { value: answer.replace(/\/+$/, "") };
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        return { problem: "Use an http(s) address, like http://127.0.0.1:8080/v1." };
      }
    },
    current ? { fallback: current } : {},
  );
  if (url === null) {
    if (current === undefined) return {};
    prompter.say("  Voice notes will not be heard.\n");
    return { PRESENCE_TRANSCRIBE_URL: "" };
  }
  const currentKey = env.PRESENCE_TRANSCRIBE_KEY?.trim() || undefined;
  const key = await askUntil<string>(
    prompter,
    `Its API key${currentKey ? " [keep current]" : " (Enter if it needs none)"}: `,
    (answer) => ({ value: answer }),
    { secret: true, ...(currentKey ? { fallback: currentKey } : {}) },
  );
  const modelDefault = env.PRESENCE_TRANSCRIBE_MODEL?.trim() || DEFAULT_TRANSCRIBE_MODEL;
  const model = await askUntil<string>(
    prompter,
    `Its model [${modelDefault}]: `,
    (answer) => ({ value: answer }),
    {
      fallback: modelDefault,
    },
  );
  // Checked with these three only: another voice setting that is wrong is start's to report.
  const { transcription } = loadVoiceConfig({
    PRESENCE_TRANSCRIBE_URL: url,
    PRESENCE_TRANSCRIBE_KEY: key,
    PRESENCE_TRANSCRIBE_MODEL: model,
  });
  if (transcription) {
    const client = new TranscriptionClient(transcription, { timers: run.timers });
    const warning = await whileWaiting(run, `Checking that ${url} answers`, (signal) =>
      client.checkEndpoint(signal),
    );
    prompter.say(
      warning
        ? `  Note: ${warning.message}. Kept; presence checks it again when it starts.\n`
        : "  It answered. Voice notes will be heard.\n",
    );
  }
  return { PRESENCE_TRANSCRIBE_URL: url, PRESENCE_TRANSCRIBE_KEY: key, PRESENCE_TRANSCRIBE_MODEL: model };
}

/**
 * Runs `work` under one line that says what setup is waiting on and, every few seconds, for how
 * long. Ctrl-C ends the wait at once, even if `work` were slow to notice its signal.
 */
async function whileWaiting<T>(
  run: SetupRun,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { prompter, timers } = run;
  const stopped = prompter.stopped;
  stopped.throwIfAborted();
  let waitedMs = 0;
  const show = () =>
    prompter.progress(`  ${what}…${waitedMs > 0 ? ` ${Math.round(waitedMs / 1000)} s` : ""}`);
  const tick = () => {
    waitedMs += PROGRESS_EVERY_MS;
    show();
    timer = timers.after(PROGRESS_EVERY_MS, tick, { keepAlive: false });
  };
  show();
  let timer = timers.after(PROGRESS_EVERY_MS, tick, { keepAlive: false });
  let onStop = () => {};
  const stoppedNow = new Promise<never>((_, reject) => {
    onStop = () => reject(stopped.reason);
  });
  stopped.addEventListener("abort", onStop, { once: true });
  try {
    return await Promise.race([work(stopped), stoppedNow]);
  } finally {
    timer.cancel();
    stopped.removeEventListener("abort", onStop);
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

/** What checking a token with Telegram found: the bot's name, or why it could not be used or checked. */
type TokenCheck = { kind: "known"; username: string } | { kind: "rejected" | "unreachable"; problem: string };

/** getMe with the token, bounded as at start, under the progress line; Ctrl-C stops it at once. */
async function checkToken(run: SetupRun, token: string, reach: TelegramReach): Promise<TokenCheck> {
  try {
    const me = await whileWaiting(
      run,
      `Checking the token with Telegram at ${reach.apiRoot ?? TELEGRAM_API_ROOT}`,
      (signal) => firstContact(token, { apiRoot: reach.apiRoot, timeoutMs: reach.connectTimeoutMs, signal }),
    );
    return { kind: "known", username: me.username };
  } catch (error) {
    if (error instanceof TelegramTokenRejectedError) {
      return {
        kind: "rejected",
        problem:
          "Telegram rejected this token. Copy it again from @BotFather (/mybots → your bot → API Token).",
      };
    }
    if (error instanceof TelegramUnreachableError) {
      return { kind: "unreachable", problem: `Could not check the token: ${error.message}` };
    }
    throw error;
  }
}

/**
 * The key checked as `start` checks it, under the progress line: one the API rejects is asked
 * for again; one that could not be checked (API down, a proxy without the models endpoint) is
 * kept, with a word on why.
 */
async function checkKey(run: SetupRun, apiKey: string, settings: ModelSettings): Promise<Checked<string>> {
  try {
    const client = new ModelClient({ ...settings, apiKey }, { clock: systemClock });
    const warning = await whileWaiting(
      run,
      `Checking the key with the Anthropic API${settings.baseURL ? ` at ${settings.baseURL}` : ""}`,
      (signal) => client.checkKey(signal),
    );
    if (warning)
      run.prompter.say(
        `  Note: ${warning.message}. The key is kept; presence checks it again when it starts.\n`,
      );
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
  signal: AbortSignal,
): Promise<{ id: number; name: string } | null> {
  const api = new Api(token, apiRoot ? { apiRoot } : {});
  // grammY types its signal as a polyfill's; it only adds an abort listener, which Node's has.
  const stop = signal as Parameters<Api["getUpdates"]>[1];
  const deadline = performance.now() + timeoutMs;
  let offset: number | undefined;
  while (performance.now() < deadline) {
    const waitSeconds = Math.max(1, Math.min(20, Math.floor((deadline - performance.now()) / 1000)));
    const updates = await api.getUpdates(
      { timeout: waitSeconds, allowed_updates: ["message"], ...(offset ? { offset } : {}) },
      stop,
    );
    for (const update of updates) {
      offset = update.update_id + 1;
      const from = update.message?.from;
      if (update.message?.chat.type === "private" && from && !from.is_bot) {
        await api.getUpdates({ offset, timeout: 0 }, stop);
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

/**
 * Questions on the terminal; secret answers are not echoed. Ctrl-C reaches it as readline's
 * SIGINT while a question holds the terminal in raw mode, and as the process's SIGINT
 * otherwise; both stop setup at once. The input ending (Ctrl-D) stops it too.
 */
export function terminalPrompter(input = process.stdin, output = process.stdout): SetupPrompter {
  let muted = false;
  let progressShown = false;
  let closing = false;
  const screen = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input, output: screen, terminal: Boolean(input.isTTY) });
  const stop = new AbortController();
  const cancel = () => stop.abort(new SetupCancelledError());
  rl.on("SIGINT", cancel);
  process.on("SIGINT", cancel);
  rl.on("close", () => {
    if (!closing) stop.abort(new SetupAbandonedError("the input ended; nothing was written."));
  });
  const clearProgress = () => {
    if (progressShown) output.write("\r\x1b[K");
    progressShown = false;
  };
  return {
    stopped: stop.signal,
    ask(question, options = {}) {
      return new Promise((resolve, reject) => {
        if (stop.signal.aborted) {
          reject(stop.signal.reason);
          return;
        }
        const onStop = () => {
          muted = false;
          reject(stop.signal.reason);
        };
        stop.signal.addEventListener("abort", onStop, { once: true });
        const done = (answer: string) => {
          stop.signal.removeEventListener("abort", onStop);
          if (muted) output.write("\n");
          muted = false;
          resolve(answer);
        };
        clearProgress();
        // Stopped, readline ends the question's line itself (and shows it, unmuted first).
        if (options.secret !== true) {
          rl.question(question, { signal: stop.signal }, done);
          return;
        }
        output.write(question);
        muted = true;
        rl.question("", { signal: stop.signal }, done);
      });
    },
    say(text) {
      clearProgress();
      output.write(text);
    },
    progress(text) {
      output.write(`\r\x1b[K${text}`);
      progressShown = true;
    },
    close() {
      closing = true;
      process.off("SIGINT", cancel);
      clearProgress();
      rl.close();
    },
  };
}
