import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mergeEnvFile, runSetup, SetupCancelledError, type SetupPrompter } from "../../src/app/setup.ts";
import { SettableClock, VirtualTimers } from "../../src/core/clock.ts";
import { type BotApiFake, startBotApiFake } from "../../testkit/bot-api.ts";
import { type MessagesApiFake, startMessagesApiFake } from "../../testkit/messages-api.ts";
import { startTranscriptionFake } from "../../testkit/transcription-api.ts";
import { waitFor } from "./harness.ts";

const ROOT = join(import.meta.dirname, "..", "..");

let fake: BotApiFake;
let model: MessagesApiFake;
let dir: string;

beforeEach(async () => {
  fake = await startBotApiFake();
  model = await startMessagesApiFake({ apiKey: "sk-ant-test-key" });
  dir = await mkdtemp(join(tmpdir(), "presence-setup-"));
});

afterEach(async () => {
  await fake.close();
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

/** Where setup finds Telegram and the model API: the fakes. */
const fakesEnv = () => ({ TELEGRAM_API_ROOT: fake.apiRoot, ANTHROPIC_BASE_URL: model.url });

/** A loopback address where nothing listens. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** A loopback server that takes connections and never answers: each request hangs until it is closed. */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

type Scripted = SetupPrompter & {
  transcript: string;
  /** Every progress line, in order. */
  progressLines: string[];
  /** What Ctrl-C does to the terminal prompter. */
  cancel(): void;
};

/** Answers questions from a script, in order, and keeps the conversation for assertions. */
function scripted(answers: (string | ((question: string) => string | Promise<string>))[]): Scripted {
  const queue = [...answers];
  const stop = new AbortController();
  const prompter: Scripted = {
    transcript: "",
    progressLines: [],
    stopped: stop.signal,
    async ask(question: string) {
      stop.signal.throwIfAborted();
      prompter.transcript += question;
      const next = queue.shift();
      if (next === undefined) throw new Error(`unexpected question: ${question}`);
      return typeof next === "function" ? next(question) : next;
    },
    say(text: string) {
      prompter.transcript += text;
    },
    progress(text: string) {
      prompter.progressLines.push(text);
      prompter.transcript += `${text}\n`;
    },
    cancel: () => stop.abort(new SetupCancelledError()),
    close() {},
  };
  return prompter;
}

/** Whether util-linux `script` is here to give the real process a terminal. */
const HAS_SCRIPT = spawnSync("script", ["--version"]).status === 0;

/**
 * `setup` run as a person runs it in a terminal: the real process on a pseudo-terminal (util-linux
 * `script`), through a shell so that `setup && …` is what the shell decides. Keys are typed into
 * the terminal, Ctrl-C as the byte the terminal sends (\x03).
 */
function setupInTerminal(env: Record<string, string>, after = "") {
  const quote = (path: string) => `'${path.replaceAll("'", "'\\''")}'`;
  const command = `${quote(process.execPath)} --import ${quote(join(ROOT, "node_modules/tsx/dist/loader.mjs"))} ${quote(join(ROOT, "src/cli.ts"))} setup${after}`;
  const child = spawn("script", ["--quiet", "--return", "--command", command, "/dev/null"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", SHELL: "/bin/sh", TERM: "xterm", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stdin.on("error", () => undefined);
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  return {
    output: () => output,
    /** Waits until the screen shows `text`. */
    until: (text: string) =>
      waitFor(
        () => output.includes(text),
        15_000,
        () => output,
      ),
    type: (keys: string) => child.stdin.write(keys),
    exited,
    kill: () => child.kill("SIGKILL"),
  };
}

/** How many times `part` occurs in `text`. */
const count = (text: string, part: string) => text.split(part).length - 1;

describe("setup", () => {
  it("checks the token with getMe, finds the id from a message to the bot, and writes a private .env", async () => {
    const envPath = join(dir, ".env");
    await writeFile(envPath, "# mine\nPRESENCE_MODEL=claude-x\n");
    const prompter = scripted([
      "123:definitelynotthetokenatall",
      "",
      fake.token,
      () => {
        setTimeout(() => fake.message(fake.user(4242, "Ada"), { text: "hi" }), 200);
        return "";
      },
      "sk-ant-mistyped-key",
      "sk-ant-test-key",
      "Mars/Base",
      "Europe/Lisbon",
      "",
      "",
    ]);
    const code = await runSetup({
      prompter,
      env: fakesEnv(),
      envPath,
      detectIdTimeoutMs: 10_000,
    });
    expect(code).toBe(0);
    expect(prompter.transcript).toContain("Telegram rejected this token");
    expect(prompter.transcript).toContain(
      "Anthropic rejected this key (401: invalid x-api-key). Copy it again from the Anthropic Console",
    );
    expect(prompter.transcript).not.toContain("sk-ant-mistyped-key");
    expect(model.modelLookups).toEqual(["claude-sonnet-5-5", "claude-sonnet-5-5"]);
    expect(model.requests).toHaveLength(0);
    expect(prompter.transcript).toContain("Got it: Ada (4242)");
    expect(prompter.transcript).toContain("Use a zone name");
    const written = await readFile(envPath, "utf8");
    expect(written).toBe(
      `# mine\nPRESENCE_MODEL=claude-x\nTELEGRAM_BOT_TOKEN=${fake.token}\nTELEGRAM_OWNER_ID=4242\nANTHROPIC_API_KEY=sk-ant-test-key\nPRESENCE_TIMEZONE=Europe/Lisbon\nPRESENCE_QUIET_HOURS=22:00-08:00\n`,
    );
    expect((await stat(envPath)).mode & 0o777).toBe(0o600);
    expect(fake.pendingUpdates()).toBe(0);
  });

  describe("offers voice notes, optionally", () => {
    /** Answers up to the voice step, which the rest of `answers` answer. */
    const upToVoice = () => [fake.token, "4242", "sk-ant-test-key", "UTC", ""];

    it("checks that the service answers (no sound sent) and writes its address, key and model", async () => {
      const envPath = join(dir, ".env");
      const transcription = await startTranscriptionFake();
      try {
        const prompter = scripted([...upToVoice(), "localhost:8080", `${transcription.url}/`, "tr-key", ""]);
        expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(0);
        expect(prompter.transcript).toContain("Use an http(s) address, like http://127.0.0.1:8080/v1.");
        expect(prompter.transcript).toContain("It answered. Voice notes will be heard.");
        expect(transcription.lookups).toEqual([{ path: "/v1/models", authorization: "Bearer tr-key" }]);
        expect(transcription.requests).toEqual([]);
        expect(await readFile(envPath, "utf8")).toContain(
          `PRESENCE_TRANSCRIBE_URL=${transcription.url}\nPRESENCE_TRANSCRIBE_KEY=tr-key\nPRESENCE_TRANSCRIBE_MODEL=whisper-1\n`,
        );
        expect(prompter.transcript).not.toContain("tr-key");
      } finally {
        await transcription.close();
      }
    });

    it("keeps a service that does not answer yet, saying so; and turns hearing off with none", async () => {
      const envPath = join(dir, ".env");
      const down = `${await closedPort()}/v1`;
      const prompter = scripted([...upToVoice(), down, "", "whisper-large-v3"]);
      expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(0);
      expect(prompter.transcript).toContain(
        "Note: the transcription service at PRESENCE_TRANSCRIBE_URL did not answer",
      );
      expect(await readFile(envPath, "utf8")).toContain(`PRESENCE_TRANSCRIBE_URL=${down}\n`);

      const off = scripted([fake.token, "4242", "", "UTC", "", "none"]);
      const env = { ...fakesEnv(), ANTHROPIC_API_KEY: "sk-ant-test-key", PRESENCE_TRANSCRIBE_URL: down };
      expect(await runSetup({ prompter: off, env, envPath })).toBe(0);
      expect(off.transcript).toContain(`Transcription URL [${down}; "none" turns it off]: `);
      expect(off.transcript).toContain("Voice notes will not be heard.");
      expect(await readFile(envPath, "utf8")).toContain("PRESENCE_TRANSCRIBE_URL=\n");
    });
  });

  it("writes nothing when the person gives up", async () => {
    const envPath = join(dir, ".env");
    const prompter = scripted(Array.from({ length: 5 }, () => "not a token"));
    expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(2);
    await expect(stat(envPath)).rejects.toThrow();
  });

  it("keeps a key it could not check (the API overloaded, a model the endpoint does not know), saying why", async () => {
    const envPath = join(dir, ".env");
    model.failLookups("529");
    const prompter = scripted([fake.token, "4242", "sk-ant-test-key", "UTC", "", ""]);
    expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(0);
    expect(prompter.transcript).toContain(
      "Note: could not check ANTHROPIC_API_KEY: the model API is unavailable right now (529",
    );
    expect(await readFile(envPath, "utf8")).toContain("ANTHROPIC_API_KEY=sk-ant-test-key\n");

    model.failLookups(undefined);
    const again = scripted([fake.token, "4242", "", "UTC", "", ""]);
    const env = { ...fakesEnv(), ANTHROPIC_API_KEY: "sk-ant-test-key", PRESENCE_MODEL: "claude-sonet-5-5" };
    expect(await runSetup({ prompter: again, env, envPath })).toBe(0);
    expect(again.transcript).toContain(
      'Note: the models endpoint does not know PRESENCE_MODEL "claude-sonet-5-5" (404',
    );
  });

  it("gives up on an unreachable Telegram within TELEGRAM_CONNECT_TIMEOUT_MS, naming TELEGRAM_API_ROOT, and checks again on Enter", async () => {
    const envPath = join(dir, ".env");
    const apiRoot = await closedPort();
    const prompter = scripted([fake.token, "", "q"]);
    const started = performance.now();
    const env = { ...fakesEnv(), TELEGRAM_API_ROOT: apiRoot, TELEGRAM_CONNECT_TIMEOUT_MS: "1000" };
    expect(await runSetup({ prompter, env, envPath })).toBe(2);
    expect(performance.now() - started).toBeLessThan(2 * 1_000 + 2_000);
    expect(
      count(prompter.transcript, `Could not check the token: could not reach Telegram at ${apiRoot}`),
    ).toBe(2);
    expect(prompter.transcript).toContain("Check the network and TELEGRAM_API_ROOT.");
    expect(
      count(prompter.transcript, "Check again (Enter), keep this one unchecked (k), or quit (q)? "),
    ).toBe(2);
    expect(count(prompter.transcript, "Bot token: ")).toBe(1);
    await expect(stat(envPath)).rejects.toThrow();
  });

  describe("after a token Telegram rejects, the person chooses", () => {
    const rejected = "123:definitelynotthetokenatall";

    it("to type another (Enter)", async () => {
      const envPath = join(dir, ".env");
      const prompter = scripted([rejected, "", fake.token, "4242", "sk-ant-test-key", "UTC", "", ""]);
      expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(0);
      expect(prompter.transcript).toContain(
        "Telegram rejected this token. Copy it again from @BotFather (/mybots → your bot → API Token).\n  Type another token (Enter), keep this one unchecked (k), or quit (q)? Bot token: ",
      );
      expect(await readFile(envPath, "utf8")).toContain(`TELEGRAM_BOT_TOKEN=${fake.token}\n`);
    });

    it("to keep it unchecked, then types the id, which cannot be learned", async () => {
      const envPath = join(dir, ".env");
      const prompter = scripted([rejected, "maybe", "k", "", "4242", "sk-ant-test-key", "UTC", "", ""]);
      expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(0);
      expect(prompter.transcript).toContain("Press Enter, or type k or q.");
      expect(prompter.transcript).toContain(
        "With the token unchecked it cannot be read from your message: type it",
      );
      expect(prompter.transcript).not.toContain("Enter to detect");
      expect(prompter.transcript).toContain("The id is a number, like 123456789.");
      expect(prompter.transcript).toContain("The bot token is unchecked: `npm start` checks it first.");
      expect(fake.calls.filter((c) => c.method === "getUpdates")).toHaveLength(0);
      const written = await readFile(envPath, "utf8");
      expect(written).toContain(`TELEGRAM_BOT_TOKEN=${rejected}\nTELEGRAM_OWNER_ID=4242\n`);
    });

    it("to quit (q): exit 2, nothing written", async () => {
      const envPath = join(dir, ".env");
      const prompter = scripted([rejected, "q"]);
      expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(2);
      expect(prompter.transcript).toMatch(
        /Setup stopped: nothing was written\. Run `npm run setup` again when ready\.\n$/,
      );
      await expect(stat(envPath)).rejects.toThrow();
    });
  });

  it("says what it checks while Telegram does not answer, and every few seconds for how long; Ctrl-C stops it at once", async () => {
    const silent = await silentServer();
    try {
      const envPath = join(dir, ".env");
      const clock = new SettableClock("2026-03-01T12:00:00Z");
      const timers = new VirtualTimers(clock);
      const prompter = scripted([fake.token]);
      const env = { ...fakesEnv(), TELEGRAM_API_ROOT: silent.url, TELEGRAM_CONNECT_TIMEOUT_MS: "60000" };
      const running = runSetup({ prompter, env, envPath, timers });
      await waitFor(() => prompter.progressLines.length > 0, 5_000);
      await timers.advanceTo(new Date(clock.now().getTime() + 15_000));
      const checking = `  Checking the token with Telegram at ${silent.url}…`;
      expect(prompter.progressLines).toEqual([
        checking,
        `${checking} 5 s`,
        `${checking} 10 s`,
        `${checking} 15 s`,
      ]);
      const cancelled = performance.now();
      prompter.cancel();
      expect(await running).toBe(130);
      expect(performance.now() - cancelled).toBeLessThan(500);
      expect(prompter.transcript).toMatch(/15 s\nSetup cancelled; nothing was written\.\n$/);
      expect(timers.next()).toBeNull();
      await expect(stat(envPath)).rejects.toThrow();
    } finally {
      await silent.close();
    }
  });

  it("says which settings to fix first when the ones it checks with are wrong, and asks nothing", async () => {
    const prompter = scripted([]);
    const env = {
      ...fakesEnv(),
      TELEGRAM_CONNECT_TIMEOUT_MS: "soon",
      ANTHROPIC_BASE_URL: "api.anthropic.com",
    };
    expect(await runSetup({ prompter, env, envPath: join(dir, ".env") })).toBe(2);
    expect(prompter.transcript).toContain("TELEGRAM_CONNECT_TIMEOUT_MS: must be a whole number");
    expect(prompter.transcript).toContain("ANTHROPIC_BASE_URL: must be an http(s) URL");
    expect(prompter.transcript).toContain("fix them first");
  });

  it("keeps other lines and replaces only the keys it sets", () => {
    expect(
      mergeEnvFile("A=1\nexport TELEGRAM_OWNER_ID=5\n# note\n", { TELEGRAM_OWNER_ID: "7", B: "two words" }),
    ).toBe('A=1\nTELEGRAM_OWNER_ID=7\n# note\nB="two words"\n');
  });

  it("never waits for a terminal that isn't there: exit 2 with what to do", async () => {
    const child = spawn(
      process.execPath,
      ["--import", join(ROOT, "node_modules/tsx/dist/loader.mjs"), join(ROOT, "src/cli.ts"), "setup"],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "" },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("needs a terminal");
    expect(stderr).toContain("@BotFather");
  });

  describe.skipIf(!HAS_SCRIPT)("in a terminal, Ctrl-C", () => {
    it("at a question ends setup at once with one line, as SIGINT does: `setup && …` goes no further", async () => {
      const terminal = setupInTerminal(fakesEnv(), " && echo CARRIED ON");
      try {
        await terminal.until("Bot token: ");
        terminal.type("\x03");
        expect(await terminal.exited).toBe(130);
        const shown = terminal.output().replaceAll("\r", "").split("\n");
        expect(shown.slice(-3)).toEqual(["Bot token: ", "Setup cancelled; nothing was written.", ""]);
        expect(terminal.output()).not.toContain("CARRIED ON");
        await expect(stat(join(dir, ".env"))).rejects.toThrow();
      } finally {
        terminal.kill();
      }
    });

    it("while Telegram never answers the token check stops it at once", async () => {
      const silent = await silentServer();
      const terminal = setupInTerminal(
        { ...fakesEnv(), TELEGRAM_API_ROOT: silent.url, TELEGRAM_CONNECT_TIMEOUT_MS: "60000" },
        " && echo CARRIED ON",
      );
      try {
        await terminal.until("Bot token: ");
        terminal.type(`${fake.token}\r`);
        await terminal.until(`Checking the token with Telegram at ${silent.url}…`);
        const pressed = performance.now();
        terminal.type("\x03");
        expect(await terminal.exited).toBe(130);
        expect(performance.now() - pressed).toBeLessThan(2_000);
        // The progress line is cleared, and the one line takes its place.
        expect(terminal.output().endsWith("\x1b[KSetup cancelled; nothing was written.\r\n")).toBe(true);
        expect(count(terminal.output(), "Setup cancelled")).toBe(1);
        expect(terminal.output()).not.toContain("CARRIED ON");
      } finally {
        terminal.kill();
        await silent.close();
      }
    });
  });
});
