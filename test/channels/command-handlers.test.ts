import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CommandHandlers, type CommandReply } from "../../src/channels/command-handlers.ts";
import { BOT_COMMANDS } from "../../src/channels/commands.ts";
import { TELEGRAM_TEXT_LIMIT } from "../../src/channels/telegram/split.ts";
import { type MindStore, openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { recordDecision } from "../../src/core/decision.ts";
import type { MemoryItem } from "../../src/mind/memory.ts";
import { forgottenHash } from "../../src/mind/refusals.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { lines } from "../mind/items.ts";
import { checkinControlsFor, dataRightsFor } from "./helpers.ts";

/** The configured zone and quiet hours the commands start from. */
const BERLIN = { timezone: "Europe/Berlin", quietHours: { start: 22 * 60, end: 8 * 60 } };

let dir: string;
let clock: SettableClock;
let mind: MindStore;
let handlers: CommandHandlers;
let wiped: number;
let zoneChanges: string[];
let log: MessageLog;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "presence-commands-"));
  clock = new SettableClock("2026-03-10T14:20:00Z");
  mind = await openMind(dir, clock);
  log = await MessageLog.open({ dataDir: dir, clock, timeZone: "UTC" });
  wiped = 0;
  zoneChanges = [];
  handlers = new CommandHandlers({
    rights: await dataRightsFor(dir, clock, mind, log, {
      exportAll: async () => ({ everything: true }),
      wipeAll: async () => {
        wiped += 1;
      },
    }),
    checkins: checkinControlsFor(mind, clock, BERLIN, (zone) => zoneChanges.push(zone)),
    clock,
    status: async () => "status text",
    textLimit: TELEGRAM_TEXT_LIMIT,
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

  it("lists every item numbered, with when it was learned and a quote of where from", async () => {
    await mind.update((m) => {
      m.scratchpad.understanding_unknown = [];
    });
    expect(text(await handlers.run("memory", ""))).toContain("don't know much");
    const said = await log.append({
      role: "user",
      text: "I work nights at the hospital, so mornings are my evenings really",
      channel: "telegram",
    });
    await mind.update((m) => {
      m.scratchpad.understanding_known = [
        ...lines("- (user) has a dog"),
        {
          id: "k1",
          text: "- (user) works nights at the hospital",
          learnedAt: "2026-03-09T20:00:00.000Z",
          sourceMessageIds: [said.id],
        },
      ];
      m.scratchpad.understanding_unknown = [];
      m.memory = [
        item("pattern", "weekends are loose"),
        item("open_loop", "finishing the thesis chapter", { sourceMessageIds: ["gone-from-log"] }),
        item("open_loop", "old loop", { retiredAt: "2026-03-05T10:00:00.000Z", retiredWhy: "closed" }),
      ];
    });
    const memory = text(await handlers.run("memory", ""));
    expect(memory).toContain("What I know\n1. - (user) has a dog\n    source unknown\n");
    expect(memory).toContain(
      '2. - (user) works nights at the hospital\n    learned Mon 9 Mar · from your message "I work nights at the hospital, so mornings are my evenings…"',
    );
    expect(memory).toContain(
      "Patterns you've told me about\n3. weekends are loose\n    learned Sun 1 Mar · source unknown",
    );
    expect(memory).toContain(
      "Things still open\n4. finishing the thesis chapter\n    learned Sun 1 Mar · its messages are no longer kept",
    );
    expect(memory).not.toContain("old loop");
    expect(memory).toContain("/forget 3 deletes number 3; /fix 3 new words corrects it.");
    expect(mind.read().memoryListing?.ids).toEqual(["k-1", "k1", "m-18-pattern", "m-28-open_loop"]);
  });

  it("pages a long list under Telegram's 4096 characters, /memory 2 continuing the numbers", async () => {
    await mind.update((m) => {
      m.scratchpad.understanding_unknown = [];
      m.memory = Array.from({ length: 40 }, (_, i) =>
        item("pattern", `pattern number ${i + 1}: ${"something they said about their week. ".repeat(7)}`, {
          id: `m${i + 1}`,
        }),
      );
    });
    const first = text(await handlers.run("memory", ""));
    expect(first.length).toBeLessThanOrEqual(4096);
    const pages = Number(/page 1 of (\d+)/.exec(first)?.[1]);
    expect(pages).toBeGreaterThan(2);
    expect(first).toContain("/memory 2 for the next page.");
    const shown: number[] = [];
    for (let page = 1; page <= pages; page++) {
      const body = text(await handlers.run("memory", String(page)));
      expect(body.length).toBeLessThanOrEqual(4096);
      shown.push(
        ...[...body.matchAll(/^(\d+)\. pattern number (\d+):/gm)].map((m) => {
          expect(m[1]).toBe(m[2]);
          return Number(m[1]);
        }),
      );
    }
    expect(shown).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(text(await handlers.run("memory", String(pages + 1)))).toBe(
      `Your /memory list has ${pages} pages; /memory ${pages} is the last.`,
    );
    expect(text(await handlers.run("memory", "two"))).toContain("not a page number");
  });

  it("pages by the channel's own text limit, and lists everything at once for a channel without one", async () => {
    await mind.update((m) => {
      m.scratchpad.understanding_unknown = [];
      m.memory = Array.from({ length: 12 }, (_, i) =>
        item("pattern", `pattern number ${i + 1}: ${"something they said about their week. ".repeat(7)}`, {
          id: `m${i + 1}`,
        }),
      );
    });
    const rights = await dataRightsFor(dir, clock, mind, log);
    const commands = (textLimit?: number) =>
      new CommandHandlers({
        rights,
        checkins: checkinControlsFor(mind, clock, { timezone: "UTC", quietHours: { start: 0, end: 0 } }),
        clock,
        status: async () => "",
        ...(textLimit === undefined ? {} : { textLimit }),
      });
    const narrow = text(await commands(1_000).run("memory", ""));
    expect(narrow.length).toBeLessThanOrEqual(1_000);
    expect(narrow).toMatch(/page 1 of \d+/);
    const whole = text(await commands().run("memory", ""));
    expect(whole).toMatch(/^What I remember about you:\n/);
    expect(whole).toContain("12. pattern number 12:");
  });

  it("/forget N deletes exactly that item, by the last listing's numbers, also after a restart", async () => {
    await mind.update((m) => {
      m.scratchpad.understanding_known = lines(
        "- (user) has a sister\n- (user) has a sister named Ana in Porto",
      );
      m.scratchpad.understanding_unknown = [];
      m.memory = [item("pattern", "runs on Sundays", { id: "m1" })];
    });
    await handlers.run("memory", "");
    // A restart: the stores and the commands are opened again from the files.
    const reopened = await openMind(dir, clock);
    const again = new CommandHandlers({
      rights: await dataRightsFor(dir, clock, reopened, log),
      checkins: checkinControlsFor(reopened, clock, BERLIN),
      clock,
      status: async () => "",
    });
    const reply = text(await again.run("forget", "1"));
    expect(reply).toContain('Forgotten: "- (user) has a sister".');
    expect(reply).toContain("The other numbers stay as they were until you send /memory again.");
    expect(reopened.read().scratchpad.understanding_known.map((i) => i.text)).toEqual([
      "- (user) has a sister named Ana in Porto",
    ]);
    const file = await readFile(reopened.file, "utf8");
    expect(file).not.toMatch(/has a sister"/);
    expect(reopened.read().forgottenHashes).toEqual([forgottenHash("- (user) has a sister")]);
    // Number 3 still means "runs on Sundays", as the person saw it.
    expect(text(await again.run("forget", "3"))).toContain('Forgotten: "runs on Sundays".');
    expect(reopened.read().memory).toEqual([]);
    expect(text(await again.run("forget", "3"))).toBe(
      "Number 3 in your last /memory list is gone already (forgotten or changed since). Send /memory to see the list as it is now.",
    );
    expect(text(await again.run("forget", "7"))).toBe(
      'There is no 7 in your last /memory list (it had 3). Send /memory to see the list. To forget the words "7", send /forget "7".',
    );
  });

  it('/forget "1234" forgets the digits as words; bare digits are a list number, and the answer says how to ask for the words', async () => {
    await mind.update((m) => {
      m.scratchpad.understanding_known = lines("- (user) locker code is 4711\n- (user) works nights");
      m.scratchpad.understanding_unknown = [];
    });
    await handlers.run("memory", "");
    expect(text(await handlers.run("forget", "4711"))).toBe(
      'There is no 4711 in your last /memory list (it had 2). Send /memory to see the list. To forget the words "4711", send /forget "4711".',
    );
    expect(mind.read().scratchpad.understanding_known).toHaveLength(2);
    const reply = text(await handlers.run("forget", '"4711"'));
    expect(reply).toContain('Forgotten: "4711" (1 memory).');
    expect(reply).toContain("• - (user) locker code is 4711");
    expect(mind.read().scratchpad.understanding_known.map((i) => i.text)).toEqual(["- (user) works nights"]);
    expect(await readFile(mind.file, "utf8")).not.toContain("4711");
  });

  it("/forget N before any /memory says where the numbers come from", async () => {
    expect(text(await handlers.run("forget", "2"))).toBe(
      'There is no list to take 2 from yet. Send /memory to see the list. To forget the words "2", send /forget "2".',
    );
  });

  it("/fix N replaces the words, marks the item corrected, and keeps the old words only as a hash", async () => {
    await mind.update((m) => {
      m.scratchpad.understanding_known = lines("- (user) works nights");
      m.scratchpad.understanding_unknown = [];
    });
    await handlers.run("memory", "");
    const reply = text(await handlers.run("fix", "1   I work days now,\n since March"));
    expect(reply).toBe(
      'Corrected 1: "I work days now, since March" (it said "- (user) works nights"). I\'ll keep it as you wrote it.',
    );
    const [fixed] = mind.read().scratchpad.understanding_known;
    expect(fixed).toMatchObject({
      id: "k-1",
      text: "I work days now, since March",
      correctedAt: clock.now().toISOString(),
    });
    expect(mind.read().forgottenHashes).toEqual([forgottenHash("- (user) works nights")]);
    expect(text(await handlers.run("memory", ""))).toContain(
      "1. I work days now, since March\n    source unknown · corrected by you",
    );
    expect(text(await handlers.run("fix", "1"))).toContain(
      "Tell me the number from /memory and the right words",
    );
    expect(text(await handlers.run("fix", `1 ${"x".repeat(301)}`))).toContain("at most 300");
    expect(text(await handlers.run("fix", "4 something"))).toBe(
      "There is no 4 in your last /memory list (it had 1). Send /memory to see the list.",
    );
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

  it("lists every command of the menu for /help, and points an unknown command at /help", async () => {
    const help = text(await handlers.answer({ name: "help", args: "" }));
    expect(help.split("\n").filter((line) => line.startsWith("/"))).toEqual(
      BOT_COMMANDS.map((c) => `/${c.command} — ${c.description}`),
    );
    expect(text(await handlers.answer({ name: null, typed: "dance" }))).toBe(
      "I don't know the command /dance. /help lists the ones I do.",
    );
  });

  it("says in /help whether voice notes are heard, in the words it is given", async () => {
    expect(text(await handlers.run("help", ""))).not.toContain("Voice notes");
    const hearing = new CommandHandlers({
      rights: await dataRightsFor(dir, clock, mind, log),
      checkins: checkinControlsFor(mind, clock, BERLIN),
      clock,
      status: async () => "status text",
      voiceNotes: "heard, transcribed at 127.0.0.1:8080, on this machine",
    });
    expect(
      text(await hearing.run("help", ""))
        .split("\n")
        .at(-1),
    ).toBe("Voice notes: heard, transcribed at 127.0.0.1:8080, on this machine.");
  });

  it("explains the last check-in decision in local time, to you and in plain words", async () => {
    expect(text(await handlers.run("why", ""))).toContain("haven't");
    await recordDecision(mind, {
      ts: "2026-03-10T13:07:00.000Z",
      fire: false,
      reason: "reply-pending",
      detail: "The person's messages are still waiting for a reply; that comes first.",
    });
    expect(text(await handlers.run("why", ""))).toBe(
      "At 14:07 I didn't check in: you had written to me, and answering you comes first.",
    );
    await recordDecision(mind, {
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
    await recordDecision(mind, {
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
