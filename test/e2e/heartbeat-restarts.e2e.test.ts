import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SettableClock } from "../../src/clock.ts";
import { loadConfigParts, loadCoreConfig, loadModelConfig, loadTelegramConfig } from "../../src/config.ts";
import type { HeartbeatScheduleOptions } from "../../src/heartbeat/scheduler.ts";
import { silentLogger } from "../../src/log.ts";
import { type RunningBot, startBot } from "../../src/main.ts";
import { type BotApiFake, startBotApiFake } from "../fakes/bot-api.ts";
import { type MessagesApiFake, startMessagesApiFake } from "../fakes/messages-api.ts";
import { OWNER_ID, waitFor } from "./harness.ts";

/**
 * Two /tz in quick succession, while stopping a schedule takes a moment (a tick finishing):
 * the restarts must not overlap, or one of the schedules they start is never stopped and the
 * heartbeat fires twice per tick for the rest of the process.
 */

const schedules = vi.hoisted(() => ({ started: 0, live: new Set<number>() }));

vi.mock("../../src/heartbeat/scheduler.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/heartbeat/scheduler.ts")>();
  return {
    ...real,
    startHeartbeatSchedule(options: HeartbeatScheduleOptions) {
      const schedule = real.startHeartbeatSchedule(options);
      schedules.started += 1;
      const id = schedules.started;
      schedules.live.add(id);
      return {
        nextRun: (now: Date) => schedule.nextRun(now),
        async stop() {
          await new Promise((resolve) => setTimeout(resolve, 150));
          await schedule.stop();
          schedules.live.delete(id);
        },
      };
    },
  };
});

let bot: BotApiFake;
let model: MessagesApiFake;
let dir: string;
let running: RunningBot | undefined;

beforeEach(async () => {
  bot = await startBotApiFake();
  model = await startMessagesApiFake();
  dir = await mkdtemp(join(tmpdir(), "presence-restarts-"));
});

afterEach(async () => {
  await running?.stop();
  await bot.close();
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the heartbeat schedule across quick /tz changes", () => {
  it("leaves exactly one live schedule, and none after stopping", async () => {
    const config = loadConfigParts(
      { core: loadCoreConfig, model: loadModelConfig, telegram: loadTelegramConfig },
      {
        TELEGRAM_BOT_TOKEN: bot.token,
        TELEGRAM_OWNER_ID: String(OWNER_ID),
        TELEGRAM_API_ROOT: bot.apiRoot,
        ANTHROPIC_API_KEY: model.apiKey,
        ANTHROPIC_BASE_URL: model.url,
        PRESENCE_DATA_DIR: join(dir, "data"),
        PRESENCE_TIMEZONE: "UTC",
        PRESENCE_HEARTBEAT_CRON: "0 9 * * *",
      },
    );
    running = await startBot(config, {
      clock: new SettableClock("2026-03-10T10:30:00Z"),
      logger: silentLogger,
    });
    expect(schedules.live.size).toBe(1);

    const owner = bot.user(OWNER_ID, "Ada");
    bot.message(owner, { text: "/tz Asia/Tokyo" });
    bot.message(owner, { text: "/tz Europe/Lisbon" });
    await bot.waitForSent(2);
    await waitFor(
      () => schedules.started === 3,
      5_000,
      () => `${schedules.started} schedules started`,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(schedules.live.size).toBe(1);
    expect(running.nextHeartbeat(new Date("2026-03-10T10:30:00Z"))?.toISOString()).toBe(
      "2026-03-11T09:00:00.000Z",
    );

    await running.stop();
    running = undefined;
    expect(schedules.live.size).toBe(0);
  });
});
