import cron from "node-cron";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type HeartbeatSchedule, startHeartbeatSchedule } from "../../src/app/scheduler.ts";
import { fireTimes, parseCron } from "../../src/conversation/schedule.ts";

interface LogLine {
  level: number;
  msg: string;
  err?: { message: string };
  source?: string;
}

function recordingLogger() {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => lines.push(JSON.parse(line) as LogLine) },
  );
  return { logger, lines };
}

const PINO_ERROR = 50;
const PINO_WARN = 40;

describe("startHeartbeatSchedule", () => {
  let schedule: HeartbeatSchedule | undefined;

  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-02-10T10:06:58Z"));
  });

  afterEach(async () => {
    await schedule?.stop();
    schedule = undefined;
    vi.useRealTimers();
  });

  it("calls onTick at each fire time with the scheduled instant", async () => {
    const ticks: string[] = [];
    const { logger } = recordingLogger();
    schedule = startHeartbeatSchedule({
      cron: parseCron("7 * * * *"),
      timezone: "Europe/Berlin",
      onTick: (at) => {
        ticks.push(at.toISOString());
      },
      logger,
    });
    await vi.advanceTimersByTimeAsync(2 * 60 * 60 * 1000 + 5000);
    expect(ticks).toEqual([
      "2026-02-10T10:07:00.000Z",
      "2026-02-10T11:07:00.000Z",
      "2026-02-10T12:07:00.000Z",
    ]);
  });

  it("logs a tick that throws and keeps ticking", async () => {
    const { logger, lines } = recordingLogger();
    let calls = 0;
    schedule = startHeartbeatSchedule({
      cron: parseCron("7 * * * *"),
      timezone: "UTC",
      onTick: async () => {
        calls++;
        if (calls === 1) throw new Error("model unreachable");
      },
      logger,
    });
    await vi.advanceTimersByTimeAsync(60 * 60 * 1000 + 5000);
    expect(calls).toBe(2);
    const failures = lines.filter((l) => l.level === PINO_ERROR);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      msg: "heartbeat tick failed",
      err: { message: "model unreachable" },
    });
  });

  it("stop() waits for the tick in flight and no tick starts afterwards", async () => {
    const { logger } = recordingLogger();
    let finishTick: () => void = () => undefined;
    let calls = 0;
    schedule = startHeartbeatSchedule({
      cron: parseCron("7 * * * *"),
      timezone: "UTC",
      onTick: () => {
        calls++;
        return new Promise<void>((resolve) => {
          finishTick = resolve;
        });
      },
      logger,
    });
    await vi.advanceTimersByTimeAsync(3000);
    expect(calls).toBe(1);
    let stopped = false;
    const stopping = schedule.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(stopped).toBe(false);
    finishTick();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(3 * 60 * 60 * 1000);
    expect(calls).toBe(1);
  });

  it("never overlaps ticks: a slow tick makes the next one skip", async () => {
    const { logger } = recordingLogger();
    let running = 0;
    let most = 0;
    schedule = startHeartbeatSchedule({
      cron: parseCron("*/20 * * * * *"),
      timezone: "UTC",
      onTick: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 50_000));
        running--;
      },
      logger,
    });
    await vi.advanceTimersByTimeAsync(3 * 60 * 1000);
    expect(most).toBe(1);
  });

  it("does not make up ticks missed while the process was blocked or away", async () => {
    const { logger, lines } = recordingLogger();
    const ticks: string[] = [];
    schedule = startHeartbeatSchedule({
      cron: parseCron("7 * * * *"),
      timezone: "UTC",
      onTick: (at) => {
        ticks.push(at.toISOString());
      },
      logger,
    });
    vi.setSystemTime(new Date("2026-02-10T13:30:00Z"));
    await vi.advanceTimersByTimeAsync(5000);
    expect(ticks).toEqual([]);
    expect(lines.some((l) => l.level === PINO_WARN && l.source === "node-cron")).toBe(true);
    await vi.advanceTimersByTimeAsync(40 * 60 * 1000);
    expect(ticks).toEqual(["2026-02-10T14:07:00.000Z"]);
  });

  it("tells /status the next tick, and nothing once stopped", async () => {
    const { logger } = recordingLogger();
    schedule = startHeartbeatSchedule({
      cron: parseCron("7 * * * *"),
      timezone: "Europe/Berlin",
      onTick: () => {},
      logger,
    });
    expect(schedule.nextRun(new Date("2026-10-25T00:30:00Z"))?.toISOString()).toBe(
      "2026-10-25T01:07:00.000Z",
    );
    await schedule.stop();
    expect(schedule.nextRun(new Date("2026-10-25T00:30:00Z"))).toBeNull();
  });

  it("refuses an unknown zone before scheduling anything", () => {
    const { logger } = recordingLogger();
    const before = cron.getTasks().size;
    expect(() =>
      startHeartbeatSchedule({
        cron: parseCron("7 * * * *"),
        timezone: "Mars/Olympus",
        onTick: () => {},
        logger,
      }),
    ).toThrow(/unknown time zone "Mars\/Olympus"/);
    expect(cron.getTasks().size).toBe(before);
  });

  it.each([
    ["Europe/Berlin", "2026-10-24T20:00:00Z", "fall back"],
    ["Europe/Berlin", "2026-03-28T20:00:00Z", "spring forward"],
    ["America/New_York", "2026-11-01T02:00:00Z", "fall back"],
    ["Australia/Lord_Howe", "2026-04-04T10:00:00Z", "fall back by 30 minutes"],
  ])("ticks in %s from %s (%s) exactly when /status and the simulations say it will", async (zone, start) => {
    const { logger } = recordingLogger();
    const from = new Date(start);
    const to = new Date(from.getTime() + 10 * 60 * 60 * 1000);
    vi.setSystemTime(from);
    const ticks: string[] = [];
    const expression = parseCron("*/30 * * * *");
    schedule = startHeartbeatSchedule({
      cron: expression,
      timezone: zone,
      onTick: (at) => {
        ticks.push(at.toISOString());
      },
      logger,
    });
    await vi.advanceTimersByTimeAsync(to.getTime() - from.getTime());
    const computed = fireTimes(expression, zone, from, to).map((t) => t.toISOString());
    expect(computed.length).toBeGreaterThan(15);
    expect(ticks).toEqual(computed);
  });
});
