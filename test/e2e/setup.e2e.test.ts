import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mergeEnvFile, runSetup, type SetupPrompter } from "../../src/app/setup.ts";
import { type BotApiFake, startBotApiFake } from "../../testkit/bot-api.ts";
import { type MessagesApiFake, startMessagesApiFake } from "../../testkit/messages-api.ts";

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

/** Answers questions from a script, in order, and keeps the conversation for assertions. */
function scripted(
  answers: (string | ((question: string) => string | Promise<string>))[],
): SetupPrompter & { transcript: string } {
  const queue = [...answers];
  const prompter = {
    transcript: "",
    async ask(question: string) {
      prompter.transcript += question;
      const next = queue.shift();
      if (next === undefined) throw new Error(`unexpected question: ${question}`);
      return typeof next === "function" ? next(question) : next;
    },
    say(text: string) {
      prompter.transcript += text;
    },
    close() {},
  };
  return prompter;
}

describe("setup", () => {
  it("checks the token with getMe, finds the id from a message to the bot, and writes a private .env", async () => {
    const envPath = join(dir, ".env");
    await writeFile(envPath, "# mine\nPRESENCE_MODEL=claude-x\n");
    const prompter = scripted([
      "123:definitelynotthetokenatall",
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

  it("writes nothing when the person gives up", async () => {
    const envPath = join(dir, ".env");
    const prompter = scripted(Array.from({ length: 5 }, () => "not a token"));
    expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(2);
    await expect(stat(envPath)).rejects.toThrow();
  });

  it("keeps a key it could not check (the API overloaded, a model the endpoint does not know), saying why", async () => {
    const envPath = join(dir, ".env");
    model.failLookups("529");
    const prompter = scripted([fake.token, "4242", "sk-ant-test-key", "UTC", ""]);
    expect(await runSetup({ prompter, env: fakesEnv(), envPath })).toBe(0);
    expect(prompter.transcript).toContain(
      "Note: could not check ANTHROPIC_API_KEY: the model API is unavailable right now (529",
    );
    expect(await readFile(envPath, "utf8")).toContain("ANTHROPIC_API_KEY=sk-ant-test-key\n");

    model.failLookups(undefined);
    const again = scripted([fake.token, "4242", "", "UTC", ""]);
    const env = { ...fakesEnv(), ANTHROPIC_API_KEY: "sk-ant-test-key", PRESENCE_MODEL: "claude-sonet-5-5" };
    expect(await runSetup({ prompter: again, env, envPath })).toBe(0);
    expect(again.transcript).toContain(
      'Note: the models endpoint does not know PRESENCE_MODEL "claude-sonet-5-5" (404',
    );
  });

  it("gives up on an unreachable Telegram within TELEGRAM_CONNECT_TIMEOUT_MS and asks again, naming TELEGRAM_API_ROOT", async () => {
    const envPath = join(dir, ".env");
    const apiRoot = await closedPort();
    const prompter = scripted(Array.from({ length: 5 }, () => fake.token));
    const started = performance.now();
    const env = { ...fakesEnv(), TELEGRAM_API_ROOT: apiRoot, TELEGRAM_CONNECT_TIMEOUT_MS: "1000" };
    expect(await runSetup({ prompter, env, envPath })).toBe(2);
    expect(performance.now() - started).toBeLessThan(5 * 1_000 + 2_000);
    expect(
      prompter.transcript.split(`Could not check the token: could not reach Telegram at ${apiRoot}`),
    ).toHaveLength(6);
    expect(prompter.transcript).toContain("Check the network and TELEGRAM_API_ROOT.");
    await expect(stat(envPath)).rejects.toThrow();
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
});
