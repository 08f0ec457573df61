import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mergeEnvFile, runSetup, type SetupPrompter } from "../../src/setup.ts";
import { type BotApiFake, startBotApiFake } from "../fakes/bot-api.ts";

const ROOT = join(import.meta.dirname, "..", "..");

let fake: BotApiFake;
let dir: string;

beforeEach(async () => {
  fake = await startBotApiFake();
  dir = await mkdtemp(join(tmpdir(), "presence-setup-"));
});

afterEach(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

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
      "sk-ant-test-key",
      "Mars/Base",
      "Europe/Lisbon",
      "",
    ]);
    const code = await runSetup({
      prompter,
      env: { TELEGRAM_API_ROOT: fake.apiRoot },
      envPath,
      detectIdTimeoutMs: 10_000,
    });
    expect(code).toBe(0);
    expect(prompter.transcript).toContain("Telegram rejected this token");
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
    expect(await runSetup({ prompter, env: { TELEGRAM_API_ROOT: fake.apiRoot }, envPath })).toBe(2);
    await expect(stat(envPath)).rejects.toThrow();
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
