import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../../src/core/clock.ts";
import { MessageLog } from "../../../src/store/messages.ts";
import { MindStore } from "../../../src/store/mind.ts";
import { runInProcess } from "../../cli/run.ts";

let root: string;
let dataDir: string;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-status-"));
  dataDir = join(root, "data");
  // A Sunday with two messages unanswered: a weekend limit of 3 lets the next tick through.
  env = {
    PRESENCE_DATA_DIR: dataDir,
    PRESENCE_TIMEZONE: "UTC",
    PRESENCE_DAILY_TOKEN_BUDGET: "5000",
    PRESENCE_WEEKEND_MAX_UNANSWERED: "3",
  };
  const clock = new SettableClock("2026-11-22T08:00:00.000Z");
  const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
  await log.append({ role: "user", text: "morning", channel: "cli" });
  clock.advanceMinutes(60);
  await log.append({ role: "assistant", trigger: "heartbeat", text: "how did you sleep?", channel: "cli" });
  clock.advanceMinutes(60);
  await log.append({ role: "assistant", trigger: "heartbeat", text: "water?", channel: "cli" });
  const mind = await MindStore.open(dataDir, clock);
  await mind.recordUsage([
    {
      ts: "2026-11-22T09:00:00.000Z",
      purpose: "heartbeat-decide",
      model: "m",
      input: 1000,
      output: 20,
      cacheWrite: 0,
      cacheRead: 0,
    },
  ]);
  await mind.recordDecision({
    ts: "2026-11-22T10:07:00.000Z",
    fire: true,
    reason: "ok",
    detail: "sent",
    topic: "hydration",
  });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("status", () => {
  it("reports the data as JSON with core settings only (no API key)", async () => {
    const result = await runInProcess(["status", "--json", "--now", "2026-11-22T10:30:00Z"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      paused: null,
      blocked: false,
      unansweredCount: 2,
      nextCheckin: "2026-11-22T11:07:00.000Z",
      tokensToday: 1020,
      budget: 5000,
      awaitingYou: false,
      lastDecision: { fire: true, reason: "ok", topic: "hydration" },
      running: null,
    });
  });

  it("prints it for a person", async () => {
    const result = await runInProcess(["status", "--now", "2026-11-22T10:30:00Z"], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Check-ins: on");
    expect(result.stdout).toContain("Unanswered: 2 messages since you last wrote");
    expect(result.stdout).toContain("Tokens today: 1,020 of 5,000");
    expect(result.stdout).toContain(
      "Last check-in decision: Sun 22 Nov 10:07, I checked in about hydration.",
    );
    expect(result.stdout).toContain("Running: no");
  });

  it("changes nothing in the data directory", async () => {
    const before = await readdir(dataDir);
    await runInProcess(["status"], env);
    expect(await readdir(dataDir)).toEqual(before);
  });

  it("does not create a data directory that is not there", async () => {
    const missing = join(root, "never-ran");
    const result = await runInProcess(["status"], { ...env, PRESENCE_DATA_DIR: missing });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("No data yet");
    expect(existsSync(missing)).toBe(false);
  });

  it("a bad setting is one clear error, exit 2", async () => {
    const result = await runInProcess(["status"], { ...env, PRESENCE_TIMEZONE: "Mars/Olympus" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("PRESENCE_TIMEZONE");
  });

  it("names a malformed model setting, though status never needs the API key", async () => {
    const result = await runInProcess(["status"], { ...env, PRESENCE_DAILY_TOKEN_BUDGET: "lots" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("PRESENCE_DAILY_TOKEN_BUDGET");
    expect(result.stderr).not.toContain("ANTHROPIC_API_KEY");
  });

  it("reads a budget of 0 as no budget, not as spent", async () => {
    const result = await runInProcess(["status", "--json", "--now", "2026-11-22T10:30:00Z"], {
      ...env,
      PRESENCE_DAILY_TOKEN_BUDGET: "0",
    });
    expect(JSON.parse(result.stdout)).toMatchObject({
      budget: null,
      nextCheckin: "2026-11-22T11:07:00.000Z",
    });
  });
});
