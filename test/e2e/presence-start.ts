import { systemClock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { type Presence, startPresence, untilListening, type World } from "./harness.ts";

/**
 * What the presence.e2e files share: starting the real process and waiting until it listens,
 * reading the log it wrote, and seeding one before it starts. The end-to-end cases are split
 * over several files so vitest runs them side by side (each case has its own world).
 */

/** pm2's kill_timeout in ecosystem.config.cjs: a stop must finish well within it. */
export const KILL_TIMEOUT_MS = 10_000;

/** Starts presence in `world` and waits until it listens. */
export async function start(world: World, env: Record<string, string> = {}): Promise<Presence> {
  const presence = startPresence(world, env);
  await untilListening(world, presence);
  return presence;
}

/** Every message the process logged, read from its data directory. */
export async function loggedMessages(world: World) {
  const log = await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" });
  return log.all();
}

/** How many requests reached the Messages API fake. */
export const replyRequests = (world: World) => world.model.requests.length;

/** Writes an earlier conversation into the log before the bot starts, each entry some hours back. */
export async function seedLog(
  world: World,
  ...entries: {
    hoursAgo: number;
    role: "user" | "assistant";
    trigger?: "reply" | "heartbeat";
    text: string;
  }[]
): Promise<void> {
  const log = await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" });
  for (const { hoursAgo, ...entry } of entries) {
    const ts = new Date(systemClock.now().getTime() - hoursAgo * 3_600_000).toISOString();
    await log.append({ ...entry, channel: "telegram", ts });
  }
}
