import { existsSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_MODEL } from "../../src/model/settings.ts";
import { LOCK_FILE } from "../../src/store/person-files.ts";
import {
  createWorld,
  OWNER_ID,
  type Presence,
  startPresence,
  stopPresence,
  untilListening,
  type World,
  waitFor,
} from "./harness.ts";

/**
 * What `npm start` does before it listens and when it is told twice to stop: the API key
 * checked once (no tokens spent), Telegram's first contact bounded, a stop signal during
 * start-up obeyed at once, and a second signal while stopping. The real process, over the
 * loopback fakes (and, for an unreachable Telegram, a closed port or a server that never answers).
 */

let world: World;
let servers: { close(): Promise<void> }[];

beforeEach(async () => {
  world = await createWorld();
  servers = [];
});

afterEach(async () => {
  await world.close();
  for (const server of servers) await server.close();
});

const launch = (env: Record<string, string> = {}): Presence => startPresence(world, env);

const lockLeft = () => existsSync(join(world.dataDir, LOCK_FILE));
const polls = () => world.bot.calls.filter((c) => c.method === "getUpdates").length;

/** A loopback address where nothing listens: connections are refused at once. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

/** A loopback server that takes connections and never answers: each request hangs. */
async function silentServer(): Promise<{ url: string; connections: () => number }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, connections: () => sockets.length };
}

describe("the API key, checked before listening", () => {
  it("exits 2 with one line naming ANTHROPIC_API_KEY when the API rejects the key (401), and never listens", async () => {
    const presence = launch({ ANTHROPIC_API_KEY: "sk-ant-api03-not-the-right-key" });
    expect(await presence.exited).toBe(2);
    const lines = presence.stderr().trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^presence: the Anthropic API rejected ANTHROPIC_API_KEY \(401: invalid x-api-key\)/,
    );
    expect(lines[0]).toContain("Anthropic Console");
    expect(lines[0]).not.toContain("not-the-right-key");
    expect(presence.stdout()).not.toContain("listening on Telegram");
    expect(world.model.modelLookups).toEqual([DEFAULT_MODEL]);
    expect(world.model.requests).toHaveLength(0);
    expect(polls()).toBe(0);
    expect(lockLeft()).toBe(false);
  });

  it("exits 2 the same way when the key may not use the API (403)", async () => {
    world.model.failLookups("403");
    const presence = launch();
    expect(await presence.exited).toBe(2);
    expect(presence.stderr()).toMatch(/^presence: the Anthropic API rejected ANTHROPIC_API_KEY \(403: /);
    expect(presence.stderr().trimEnd().split("\n")).toHaveLength(1);
    expect(presence.stdout()).not.toContain("listening on Telegram");
  });

  it("warns naming PRESENCE_MODEL when the models endpoint does not know the model (404), and starts", async () => {
    const presence = launch({ PRESENCE_MODEL: "claude-sonet-5-5" });
    await untilListening(world, presence);
    expect(world.model.modelLookups).toEqual(["claude-sonet-5-5"]);
    const warnings = presence
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"level":40'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"setting":"PRESENCE_MODEL"');
    expect(warnings[0]).toContain('PRESENCE_MODEL \\"claude-sonet-5-5\\" (404');
    expect(presence.stdout()).toContain("listening on Telegram");
    expect((await stopPresence(presence)).code).toBe(0);
  });

  it("warns once and starts when the API is overloaded at start; the person's message is still answered", async () => {
    world.model.failLookups("529");
    const presence = launch();
    await untilListening(world, presence);
    const warnings = presence
      .stdout()
      .split("\n")
      .filter((line) => line.includes('"level":40'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("could not check ANTHROPIC_API_KEY");
    expect(warnings[0]).toContain("529");
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Hello there" });
    await world.bot.waitForSent(1, 15_000);
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    expect((await stopPresence(presence)).code).toBe(0);
  });
});

describe("Telegram's first contact", () => {
  it("gives up after TELEGRAM_CONNECT_TIMEOUT_MS when the port is closed: exit 1 naming TELEGRAM_API_ROOT", async () => {
    const apiRoot = await closedPort();
    const presence = launch({ TELEGRAM_API_ROOT: apiRoot, TELEGRAM_CONNECT_TIMEOUT_MS: "2000" });
    expect(await presence.exited).toBe(1);
    const lines = presence.stderr().trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^presence: could not reach Telegram at ${apiRoot} \\(network error ECONNREFUSED; tried \\d+ times in [01]\\.\\d s\\)\\. Check the network and TELEGRAM_API_ROOT\\.$`,
      ),
    );
    expect(presence.stdout()).not.toContain("listening on Telegram");
    expect(lockLeft()).toBe(false);
  });

  it("bounds each attempt, so a Bot API that never answers also ends in exit 1", async () => {
    const silent = await silentServer();
    const presence = launch({ TELEGRAM_API_ROOT: silent.url, TELEGRAM_CONNECT_TIMEOUT_MS: "1500" });
    expect(await presence.exited).toBe(1);
    expect(presence.stderr()).toContain(
      `could not reach Telegram at ${silent.url} (no answer within 1.5 s; tried once`,
    );
    expect(presence.stderr()).toContain("TELEGRAM_API_ROOT");
    expect(lockLeft()).toBe(false);
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "a %s while it is still trying exits 0 within 2 s and leaves no lock",
    async (signal) => {
      const silent = await silentServer();
      const presence = launch({ TELEGRAM_API_ROOT: silent.url, TELEGRAM_CONNECT_TIMEOUT_MS: "60000" });
      await waitFor(
        () => silent.connections() > 0,
        20_000,
        () => presence.stdout() + presence.stderr(),
      );
      const { code, ms } = await stopPresence(presence, signal);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(2_000);
      expect(presence.stderr()).toBe("");
      expect(presence.stdout()).not.toContain("listening on Telegram");
      expect(lockLeft()).toBe(false);
    },
  );
});

describe("a stop before listening", () => {
  it("abandons the recovery in flight (nothing sent, no lock) and the next start answers once", async () => {
    // A run killed mid-turn leaves the person's message unanswered, for the next start to recover.
    const killed = launch();
    await untilListening(world, killed);
    world.model.failNext("slow", 1, { delayMs: 30_000 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Still up?" });
    await waitFor(() => world.model.requests.length === 1, 15_000);
    killed.child.kill("SIGKILL");
    await killed.exited;

    // The next start is stopped while its recovery waits for the model and Telegram is slow to let it listen.
    world.model.failNext("slow", 1, { delayMs: 10_000 });
    world.bot.failNext("deleteWebhook", { type: "slow", ms: 20_000 });
    const stopped = launch();
    const webhookCalls = () => world.bot.calls.filter((c) => c.method === "deleteWebhook").length;
    await waitFor(() => world.model.requests.length === 2 && webhookCalls() === 2, 20_000, stopped.stdout);
    const { code, ms } = await stopPresence(stopped, "SIGTERM");
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2_000);
    expect(stopped.stdout()).not.toContain("listening on Telegram");
    expect(lockLeft()).toBe(false);
    expect(world.bot.sent).toEqual([]);

    const answering = launch();
    await untilListening(world, answering);
    await world.bot.waitForSent(1, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(world.bot.sent.map((s) => s.text)).toEqual(["Answer 1."]);
    expect((await stopPresence(answering)).code).toBe(0);
  });
});

describe("stopping", () => {
  it("exits 130 on a second SIGTERM while stopping, and removes its lock first", async () => {
    const presence = launch();
    await untilListening(world, presence);
    world.model.failNext("slow", 1, { delayMs: 5_000 });
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Are you there?" });
    await waitFor(() => world.model.requests.length === 1, 15_000);
    expect(lockLeft()).toBe(true);
    presence.child.kill("SIGTERM");
    await waitFor(() => presence.stdout().includes('"msg":"stopping"'), 5_000, presence.stdout);
    const { code, ms } = await stopPresence(presence, "SIGTERM");
    expect(code).toBe(130);
    expect(ms).toBeLessThan(2_000);
    expect(lockLeft()).toBe(false);
  });
});
