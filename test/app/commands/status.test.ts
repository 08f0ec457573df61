import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../../src/companion/mind-document.ts";
import { SettableClock } from "../../../src/core/clock.ts";
import { recordDecision } from "../../../src/core/decision.ts";
import { recordUsage } from "../../../src/core/usage.ts";
import { MessageLog } from "../../../src/store/messages.ts";
import { lines, runInProcess } from "../../cli/run.ts";
import { eveningAnswererLog } from "../../support/evening-answerer.ts";

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
  const mind = await openMind(dataDir, clock);
  await recordUsage(
    mind,
    [
      {
        ts: "2026-11-22T09:00:00.000Z",
        purpose: "heartbeat-decide",
        model: "m",
        input: 1000,
        output: 20,
        cacheWrite: 0,
        cacheRead: 0,
      },
    ],
    clock.now(),
  );
  await recordDecision(mind, {
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

  it("with nothing set up says so first, and what to run", async () => {
    const result = await runInProcess(["status", "--now", "2026-11-22T10:30:00Z"], env);
    expect(result.code).toBe(0);
    expect(lines(result.stdout).slice(0, 3)).toEqual([
      "Not set up yet: TELEGRAM_BOT_TOKEN, TELEGRAM_OWNER_ID, ANTHROPIC_API_KEY are not set.",
      "Run `npm run setup` in a terminal. Nothing runs until then; below is what the data says.",
      "Check-ins: on",
    ]);
    const json = JSON.parse((await runInProcess(["status", "--json"], env)).stdout);
    expect(json.unset).toEqual(["TELEGRAM_BOT_TOKEN", "TELEGRAM_OWNER_ID", "ANTHROPIC_API_KEY"]);

    const never = await runInProcess(["status"], { ...env, PRESENCE_DATA_DIR: join(root, "never-ran") });
    expect(lines(never.stdout)[0]).toMatch(/^Not set up yet: /);

    const partly = await runInProcess(["status"], {
      ...env,
      TELEGRAM_BOT_TOKEN: "123:abc",
      ANTHROPIC_API_KEY: "k",
    });
    expect(lines(partly.stdout)[0]).toBe("Not set up yet: TELEGRAM_OWNER_ID is not set.");

    const setUp = { ...env, TELEGRAM_BOT_TOKEN: "123:abc", TELEGRAM_OWNER_ID: "5", ANTHROPIC_API_KEY: "k" };
    const ready = await runInProcess(["status", "--now", "2026-11-22T10:30:00Z"], setUp);
    expect(lines(ready.stdout)[0]).toBe("Check-ins: on");
  });

  it("names every bad setting at once, the core ones and the model's", async () => {
    const result = await runInProcess(["status"], {
      ...env,
      PRESENCE_TIMEZONE: "Mars/Olympus",
      PRESENCE_QUIET_HOURS: "late",
      PRESENCE_DAILY_TOKEN_BUDGET: "-1",
    });
    expect(result.code).toBe(2);
    for (const variable of ["PRESENCE_TIMEZONE", "PRESENCE_QUIET_HOURS", "PRESENCE_DAILY_TOKEN_BUDGET"]) {
      expect(result.stderr).toContain(`  - ${variable}: `);
    }
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

  it("shows the hours the person answers best, learned from the log, and skips the others for the next check-in", async () => {
    // Three weeks of evenings, most of them in archive months by now; the last check-in Monday 20:37.
    const evenings = join(root, "evenings");
    const clock = new SettableClock("2026-02-24T09:30:00.000Z");
    const log = await MessageLog.open({ dataDir: evenings, clock, timeZone: "Europe/Berlin" });
    for (const { id: _, ...message } of eveningAnswererLog()) await log.append(message);
    const mind = await openMind(evenings, clock);
    await mind.update((m) => {
      m.heartbeat.checkinsSent = ["2026-02-23T19:37:00.000Z"];
    });
    const lived = { PRESENCE_DATA_DIR: evenings, PRESENCE_TIMEZONE: "Europe/Berlin" };
    const at = ["--now", "2026-02-24T10:30:00+01:00"];

    const text = await runInProcess(["status", ...at], lived);
    expect(text.stdout).toContain(
      "Best hours: weekdays 19–22, weekends 19–22 (learned from 66 check-ins in the last 8 weeks)",
    );
    // 11:07 to 17:07 are hours the person never answers at; 18:07 is not clear-cut, so it is next.
    expect(text.stdout).toContain("Next check-in: Tue 24 Feb 18:07 at the earliest (Europe/Berlin)");
    const json = JSON.parse((await runInProcess(["status", "--json", ...at], lived)).stdout);
    expect(json).toMatchObject({
      nextCheckin: "2026-02-24T17:07:00.000Z",
      bestHours: { weekday: [{ from: 19, to: 22 }], weekend: [{ from: 19, to: 22 }], checkins: 66 },
    });

    const off = await runInProcess(["status", "--json", ...at], { ...lived, PRESENCE_LEARN_TIMING: "off" });
    expect(JSON.parse(off.stdout)).toMatchObject({
      nextCheckin: "2026-02-24T10:07:00.000Z",
      bestHours: null,
    });
  });

  it("says it is still learning while few check-ins have gone out", async () => {
    const result = await runInProcess(["status", "--now", "2026-11-22T13:30:00Z"], env);
    expect(result.stdout).toContain("Best hours: still learning when you answer (2 of 10 check-ins so far)");
    const off = await runInProcess(["status", "--now", "2026-11-22T13:30:00Z"], {
      ...env,
      PRESENCE_LEARN_TIMING: "off",
    });
    expect(off.stdout).not.toContain("Best hours");
  });

  it("keeps every line within 100 columns, or a narrower terminal's, wrapping a long one between words", async () => {
    const mind = await openMind(dataDir, new SettableClock("2026-11-22T10:00:00.000Z"));
    await mind.update((m) => {
      m.wipedAt = "2026-11-22T09:30:00.000Z";
    });
    const kept =
      "Tokens today: 1,020 of 5,000; the count was kept through your /wipe at 09:30 (a number, no words), so today's budget still holds";
    const at = ["status", "--now", "2026-11-22T10:30:00Z"];
    for (const columns of [undefined, 120, 80]) {
      const result = await runInProcess(at, env, columns === undefined ? {} : { columns });
      const printed = result.stdout.trimEnd().split("\n");
      expect(Math.max(...printed.map((line) => line.length)), `columns ${columns}`).toBeLessThanOrEqual(
        Math.min(columns ?? 100, 100),
      );
      expect(printed).toContain("Check-ins: on");
      // A wrapped line goes on indented, and reads the same joined up again.
      expect(result.stdout.replace(/\n {2}/g, " ")).toContain(kept);
    }
  });
});
