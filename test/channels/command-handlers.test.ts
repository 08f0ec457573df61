import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CommandHandlers, type CommandReply } from "../../src/channels/command-handlers.ts";
import { BOT_COMMANDS } from "../../src/channels/commands.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { MindStore } from "../../src/store/mind.ts";
import type { MemoryItem } from "../../src/store/mind-schema.ts";

let dir: string;
let clock: SettableClock;
let mind: MindStore;
let handlers: CommandHandlers;
let wiped: number;
let zoneChanges: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "presence-commands-"));
  clock = new SettableClock("2026-03-10T14:20:00Z");
  mind = await MindStore.open(dir, clock);
  wiped = 0;
  zoneChanges = [];
  handlers = new CommandHandlers({
    mind,
    clock,
    settings: { timezone: "Europe/Berlin", quietHours: { start: 22 * 60, end: 8 * 60 } },
    status: async () => "status text",
    exportAll: async () => ({ everything: true }),
    wipeAll: async () => {
      wiped += 1;
    },
    onTimezoneChange: (zone) => zoneChanges.push(zone),
    forgetCopies: async () => ({ traceRecords: 0, notes: 0, otherFiles: 0 }),
  });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function text(reply: CommandReply): string {
  if (!("text" in reply)) throw new Error("expected a text reply");
  return reply.text;
}

function item(kind: MemoryItem["kind"], itemText: string, extra: Partial<MemoryItem> = {}): MemoryItem {
  return {
    id: `m-${itemText.length}-${kind}`,
    kind,
    text: itemText,
    learnedAt: "2026-03-01T10:00:00.000Z",
    sourceMessageIds: [],
    importance: 3,
    topics: [],
    ...extra,
  };
}

describe("CommandHandlers", () => {
  it("pauses until /resume, for a while, or until a local time, and resumes", async () => {
    expect(text(await handlers.run("pause", ""))).toContain("/resume");
    expect(mind.read().heartbeat).toMatchObject({ pausedIndefinitely: true, pausedUntil: null });
    expect(text(await handlers.run("pause", "until 18:00"))).toBe(
      "Check-ins paused until 18:00 (Europe/Berlin).",
    );
    expect(mind.read().heartbeat).toMatchObject({
      pausedIndefinitely: false,
      pausedUntil: "2026-03-10T17:00:00.000Z",
    });
    await handlers.run("resume", "");
    expect(mind.read().heartbeat).toMatchObject({ pausedIndefinitely: false, pausedUntil: null });
  });

  it("answers a pause it cannot read with the ways to say it, changing nothing", async () => {
    expect(text(await handlers.run("pause", "for a bit"))).toContain("/pause 2h");
    expect(mind.read().heartbeat.pausedUntil).toBeNull();
  });

  it("sets and clears the quiet hours and zone overrides", async () => {
    expect(text(await handlers.run("quiet", "23:00-07:30"))).toContain("23:00-07:30");
    expect(mind.read().heartbeat.quietHours).toEqual({ start: 1380, end: 450 });
    expect(text(await handlers.run("tz", "asia/tokyo"))).toContain("Asia/Tokyo");
    expect(mind.read().heartbeat.timezone).toBe("Asia/Tokyo");
    expect(text(await handlers.run("pause", "until 18:00"))).toContain("(Asia/Tokyo)");
    await handlers.run("tz", "off");
    await handlers.run("tz", "Nowhere/Special");
    expect(zoneChanges).toEqual(["Asia/Tokyo", "Europe/Berlin"]);
    await handlers.run("quiet", "off");
    expect(mind.read().heartbeat).toMatchObject({ timezone: null, quietHours: null });
  });

  it("shows what it knows: Known, patterns and open loops, not retired items", async () => {
    expect(text(await handlers.run("memory", ""))).toContain("don't know much");
    await mind.update((m) => {
      m.scratchpad.understanding_known = "- works nights at the hospital";
      m.memory = [
        item("pattern", "weekends are loose"),
        item("open_loop", "finishing the thesis chapter"),
        item("open_loop", "old loop", { retiredAt: "2026-03-05T10:00:00.000Z", retiredWhy: "closed" }),
      ];
    });
    const memory = text(await handlers.run("memory", ""));
    expect(memory).toContain("works nights at the hospital");
    expect(memory).toContain("• weekends are loose");
    expect(memory).toContain("• finishing the thesis chapter");
    expect(memory).not.toContain("old loop");
  });

  it("forgets for real and says what went", async () => {
    await mind.update((m) => {
      m.memory = [item("open_loop", "visit my sister in May"), item("pattern", "runs on Sundays")];
    });
    const reply = text(await handlers.run("forget", "sister"));
    expect(reply).toContain("visit my sister in May");
    expect(reply).toContain("(1 memory)");
    expect(reply).toContain("Our past messages still contain it; /wipe removes everything.");
    expect(reply).not.toContain("for good");
    expect(mind.read().memory.map((i) => i.text)).toEqual(["runs on Sundays"]);
    expect(text(await handlers.run("forget", "sister"))).toContain("nothing");
  });

  it("asks on a bare /wipe and wipes on /wipe yes, asked or not", async () => {
    const question = text(await handlers.run("wipe", ""));
    expect(question).toContain("To go ahead, send /wipe yes.");
    expect(question).toContain("keeps only the count of tokens");
    expect(wiped).toBe(0);
    expect(text(await handlers.run("wipe", "yes"))).toContain("Everything is deleted");
    expect(wiped).toBe(1);
    expect(text(await handlers.run("wipe", "YES"))).toContain("Everything is deleted");
    expect(wiped).toBe(2);
  });

  it("cancels on /wipe no or any other answer and says so", async () => {
    await handlers.run("wipe", "");
    for (const answer of ["no", "NO", "nope", "yes please"]) {
      expect(text(await handlers.run("wipe", answer))).toBe(
        "Cancelled: nothing was deleted. (/wipe yes deletes everything.)",
      );
    }
    expect(wiped).toBe(0);
  });

  it("puts the check-in schedule back in the configured zone when a wipe drops the /tz", async () => {
    const wiping = new CommandHandlers({
      mind,
      clock,
      settings: { timezone: "Europe/Berlin", quietHours: { start: 22 * 60, end: 8 * 60 } },
      status: async () => "status text",
      exportAll: async () => ({}),
      wipeAll: () => mind.deleteAll(),
      onTimezoneChange: (zone) => zoneChanges.push(zone),
      forgetCopies: async () => ({ traceRecords: 0, notes: 0, otherFiles: 0 }),
    });
    await wiping.run("tz", "Asia/Tokyo");
    await wiping.run("wipe", "");
    await wiping.run("wipe", "yes");
    expect(zoneChanges).toEqual(["Asia/Tokyo", "Europe/Berlin"]);
    expect(mind.read().heartbeat.timezone).toBeNull();
    expect(mind.read().wipedAt).toBe(clock.now().toISOString());
  });

  it("lists every command of the menu for /help, and points an unknown command at /help", async () => {
    const help = text(await handlers.answer({ name: "help", args: "" }));
    expect(help.split("\n").filter((line) => line.startsWith("/"))).toEqual(
      BOT_COMMANDS.map((c) => `/${c.command} — ${c.description}`),
    );
    expect(text(await handlers.answer({ name: null, typed: "dance" }))).toBe(
      "I don't know the command /dance. /help lists the ones I do.",
    );
  });

  it("explains the last check-in decision in local time, to you and in plain words", async () => {
    expect(text(await handlers.run("why", ""))).toContain("haven't");
    await mind.recordDecision({
      ts: "2026-03-10T13:07:00.000Z",
      fire: false,
      reason: "reply-pending",
      detail: "The person's messages are still waiting for a reply; that comes first.",
    });
    expect(text(await handlers.run("why", ""))).toBe(
      "At 14:07 I didn't check in: you had written to me, and answering you comes first.",
    );
    await mind.recordDecision({
      ts: "2026-03-10T13:22:00.000Z",
      fire: false,
      reason: "already-answered",
      detail: "the person already talked about other:move 3h ago (within 6h)",
      topic: "other:move",
    });
    const why = text(await handlers.run("why", ""));
    expect(why).toBe(
      "At 14:22 I didn't check in: I meant to ask about move, but you had already talked about it recently.",
    );
    expect(why).not.toMatch(/person|other:|already-answered/);
    await mind.recordDecision({
      ts: "2026-03-10T13:37:00.000Z",
      fire: true,
      reason: "sent",
      detail: "She mentioned poor sleep.",
      topic: "the move",
    });
    expect(text(await handlers.run("why", ""))).toBe("At 14:37 I checked in about the move.");
  });

  it("exports everything as a dated JSON file", async () => {
    const reply = await handlers.run("export", "");
    if (!("document" in reply)) throw new Error("expected a document");
    expect(reply.document.fileName).toBe("presence-export-2026-03-10.json");
    expect(JSON.parse(new TextDecoder().decode(reply.document.contents))).toEqual({ everything: true });
  });
});
