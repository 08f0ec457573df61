import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lines, runInProcess } from "./run.ts";

const COMMANDS = ["awareness", "heartbeat-check", "bench"];

describe("presence --help", () => {
  it("lists every command with its summary", async () => {
    const result = await runInProcess(["--help"]);
    expect(result.code).toBe(0);
    for (const name of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
  });

  it("shows the overview and exits 2 when no command is given", async () => {
    const result = await runInProcess([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Commands:");
  });

  it.each(COMMANDS)("%s --help shows its usage and every option", async (name) => {
    const result = await runInProcess([name, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: npm run cli -- ${name} `));
    const usage = lines(result.stdout)[0] ?? "";
    for (const flag of usage.match(/--[a-z-]+/g) ?? []) {
      expect(result.stdout.split("Options:")[1]).toContain(flag);
    }
  });
});

describe("mistakes on the command line", () => {
  it("names an unknown command in one line and exits 2", async () => {
    const result = await runInProcess(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      "npm run cli -- frobnicate: unknown command (run `npm run cli -- --help` to see the commands)",
    ]);
    expect(result.stdout).toBe("");
  });

  it.each(COMMANDS)("%s: names an unknown flag in one line and exits 2", async (name) => {
    const result = await runInProcess([name, "--frobnicate"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `npm run cli -- ${name}: unknown option "--frobnicate" (see \`npm run cli -- ${name} --help\`)`,
    ]);
  });

  it("names an option given without its value in one line and exits 2", async () => {
    const result = await runInProcess(["awareness", "--now", "2026-02-07T14:22:00Z", "--log"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      "npm run cli -- awareness: Option '--log <value>' argument missing (see `npm run cli -- awareness --help`)",
    ]);
  });
});

describe("settings with several problems", () => {
  const BAD = {
    PRESENCE_TIMEZONE: "Mars/Olympus",
    PRESENCE_QUIET_HOURS: "late",
    PRESENCE_DAILY_TOKEN_BUDGET: "-1",
  };
  const CORE = ["PRESENCE_TIMEZONE", "PRESENCE_QUIET_HOURS"];
  const WITH_MODEL = [...CORE, "PRESENCE_DAILY_TOKEN_BUDGET"];
  const log = join(import.meta.dirname, "../fixtures/situations/hydration-pings.log.json");
  const cases: [string, string[], string[]][] = [
    ["status", ["status"], WITH_MODEL],
    ["awareness", ["awareness", "--log", log, "--now", "2026-02-07T14:22:00Z"], CORE],
    ["heartbeat-check", ["heartbeat-check", "--log", log, "--now", "2026-02-07T14:22:00Z"], CORE],
    ["inject", ["inject", "Known", "works nights"], CORE],
    ["trace", ["trace"], CORE],
    ["chat", ["chat"], [...WITH_MODEL, "ANTHROPIC_API_KEY"]],
    ["start", ["start"], [...WITH_MODEL, "ANTHROPIC_API_KEY", "TELEGRAM_BOT_TOKEN", "TELEGRAM_OWNER_ID"]],
  ];

  it.each(cases)("%s names every one at once, exit 2", async (_name, args, variables) => {
    const dataDir = await mkdtemp(join(tmpdir(), "presence-settings-"));
    try {
      const result = await runInProcess(args, { ...BAD, PRESENCE_DATA_DIR: dataDir });
      expect(result.code).toBe(2);
      for (const variable of variables) expect(result.stderr).toContain(variable);
      expect(result.stdout).toBe("");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
