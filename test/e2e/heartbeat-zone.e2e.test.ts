import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../src/clock.ts";
import { loadConfigParts, loadCoreConfig, loadModelConfig, loadTelegramConfig } from "../../src/config.ts";
import { silentLogger } from "../../src/log.ts";
import { type RunningBot, startBot } from "../../src/main.ts";
import { type BotApiFake, startBotApiFake } from "../fakes/bot-api.ts";
import { type MessagesApiFake, startMessagesApiFake } from "../fakes/messages-api.ts";
import { OWNER_ID, waitFor } from "./harness.ts";

/**
 * The whole wiring of `start` in this process (startBot over the loopback fakes), for what the
 * real process does not show from outside: the heartbeat schedule following the person's /tz.
 */

let bot: BotApiFake;
let model: MessagesApiFake;
let dir: string;
let running: RunningBot | undefined;

beforeEach(async () => {
  bot = await startBotApiFake();
  model = await startMessagesApiFake();
  dir = await mkdtemp(join(tmpdir(), "presence-zone-"));
});

afterEach(async () => {
  await running?.stop();
  await bot.close();
  await model.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the heartbeat schedule", () => {
  it("moves to the person's zone on /tz, and back on /tz off", async () => {
    const clock = new SettableClock("2026-03-10T10:30:00Z");
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
    running = await startBot(config, { clock, logger: silentLogger });
    const now = clock.now();
    const next = () => running?.nextHeartbeat(now)?.toISOString();
    const untilNextHeartbeat = (expected: string) =>
      waitFor(
        () => next() === expected,
        5_000,
        () => `next heartbeat still ${next()}`,
      );
    expect(next()).toBe("2026-03-11T09:00:00.000Z");

    const owner = bot.user(OWNER_ID, "Ada");
    bot.message(owner, { text: "/tz Asia/Tokyo" });
    await bot.waitForSent(1);
    await untilNextHeartbeat("2026-03-11T00:00:00.000Z");

    bot.message(owner, { text: "/tz off" });
    await bot.waitForSent(2);
    await untilNextHeartbeat("2026-03-11T09:00:00.000Z");
    expect(bot.sent.map((s) => s.text)).toEqual([
      expect.stringContaining("Asia/Tokyo"),
      expect.stringContaining("home zone, UTC"),
    ]);
  });
});
