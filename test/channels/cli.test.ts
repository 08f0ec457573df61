import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliOutbound, runCliChat } from "../../src/channels/cli.ts";
import { CommandHandlers } from "../../src/channels/command-handlers.ts";
import { openMind } from "../../src/companion/mind-document.ts";
import { ReplySettle, type SettleTimes } from "../../src/companion/reply-settle.ts";
import { SettableClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { IncomingInput } from "../../src/core/port.ts";
import { checkinControlsFor, dataRightsFor } from "./helpers.ts";

let dir: string;
let output: string;
let outbound: CliOutbound;
let received: IncomingInput[];
let handlers: CommandHandlers;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "presence-cli-"));
  output = "";
  received = [];
  outbound = new CliOutbound((text) => {
    output += text;
  }, "Claire");
  const clock = new SettableClock("2026-03-10T10:00:00Z");
  const mind = await openMind(dir, clock);
  handlers = new CommandHandlers({
    rights: await dataRightsFor(dir, clock, mind, undefined, {
      exportAll: async () => ({ hello: "world" }),
      wipeAll: async () => {},
    }),
    checkins: checkinControlsFor(mind, clock, { timezone: "UTC", quietHours: { start: 1320, end: 480 } }),
    clock,
    status: async () => "check-ins: on",
  });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Receives and answers every line after a short think, like the companion would. */
const companion = {
  async receive(input: IncomingInput) {
    received.push(input);
    return { id: `m${received.length}`, ts: "2026-03-10T10:00:00.000Z", role: "user" as const, ...input };
  },
  async reply() {
    await new Promise((r) => setTimeout(r, 5));
    await outbound.send({ text: `you said ${received.at(-1)?.text}`, kind: "reply" });
  },
  settleReplies(times: SettleTimes, started: (reply: Promise<unknown>) => void) {
    return new ReplySettle({ times, timers: systemTimers, reply: () => this.reply(), started });
  },
};

async function chat(lines: string[]): Promise<void> {
  const input = new PassThrough();
  const done = runCliChat({
    companion,
    commands: handlers,
    input,
    write: (t) => (output += t),
    logger: silentLogger,
    exportDir: dir,
  });
  for (const line of lines) input.write(`${line}\n`);
  input.end();
  await done;
}

describe("the terminal chat", () => {
  it("hands each line to the companion on channel cli and prints the answer", async () => {
    await chat(["hello there", "", "  "]);
    expect(received).toEqual([{ text: "hello there", channel: "cli" }]);
    expect(output).toContain("Claire: you said hello there");
  });

  it("runs slash commands without sending them to the companion", async () => {
    await chat(["/status", "/pause 2h"]);
    expect(received).toEqual([]);
    expect(output).toContain("check-ins: on");
    expect(output).toContain("Check-ins paused until 12:00 (UTC).");
  });

  it("writes /export to a private file", async () => {
    await chat(["/export"]);
    const path = /Written to (\S+)/.exec(output)?.[1] ?? "";
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ hello: "world" });
  });

  it("stops at /quit, leaving later lines unread", async () => {
    await chat(["/quit", "not read"]);
    expect(received).toEqual([]);
  });

  it("labels check-ins so they read as the companion speaking first", async () => {
    await outbound.send({ text: "How did it go?", kind: "heartbeat" });
    expect(output).toContain("Claire (checking in): How did it go?");
  });

  it("prints a reaction as one, since a terminal line cannot carry it", async () => {
    await outbound.react({ emoji: "👍", to: { id: "m1" } });
    expect(output).toBe("\nClaire: (reacted 👍)\n\n");
  });
});
