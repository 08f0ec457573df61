import { afterEach, beforeEach } from "vitest";
import {
  loadConfigParts,
  loadCoreConfig,
  loadModelConfig,
  loadTelegramConfig,
  loadVoiceConfig,
} from "../../src/app/config.ts";
import { type BotEnvironment, type RunningBot, startBot } from "../../src/app/main.ts";
import { createWorld, type World, worldEnv } from "./harness.ts";

/**
 * The whole wiring of `start` run in the test's own process (startBot over the loopback fakes),
 * for what the real process does not show from outside, such as its heartbeat schedule.
 */
export interface InProcessBot {
  /** This test's fakes and data directory. */
  readonly world: World;
  /** Starts the bot with the world's settings plus `env`, loaded as `start` loads them. */
  start(env: Record<string, string>, environment: BotEnvironment): Promise<RunningBot>;
}

/** Gives every test of the file a fresh world, and stops its bot and removes the world after it. */
export function inProcessBotPerTest(): InProcessBot {
  let world: World | undefined;
  let running: RunningBot | undefined;
  beforeEach(async () => {
    world = await createWorld();
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    await world?.close();
  });
  const current = (): World => {
    if (!world) throw new Error("the world exists only while a test runs");
    return world;
  };
  return {
    get world() {
      return current();
    },
    async start(env, environment) {
      const config = loadConfigParts(
        {
          core: loadCoreConfig,
          model: loadModelConfig,
          telegram: loadTelegramConfig,
          voice: loadVoiceConfig,
        },
        { ...worldEnv(current()), ...env },
      );
      running = await startBot(config, environment);
      return running;
    },
  };
}
