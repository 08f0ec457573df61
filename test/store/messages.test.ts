import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import {
  MESSAGE_LOG_VERSION,
  MessageLog,
  MessageLogError,
  type NewMessage,
} from "../../src/store/messages.ts";
import { countSyncs, modeOf, tempDataDir } from "./helpers.ts";

const START = "2026-02-07T08:00:00.000Z";

async function openLog(dataDir: string, clock = new SettableClock(START), windowDays = 2) {
  return MessageLog.open({ dataDir, clock, timeZone: "UTC", windowDays });
}

function user(text: string, extra: Partial<NewMessage> = {}): NewMessage {
  return { role: "user", text, channel: "telegram", ...extra };
}

function assistant(text: string, extra: Partial<NewMessage> = {}): NewMessage {
  return { role: "assistant", text, channel: "telegram", trigger: "heartbeat", ...extra };
}

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, "utf8"));
}

describe("opening", () => {
  it("starts empty without a file, in a directory only the owner can enter", async () => {
    const dataDir = await tempDataDir();
    const log = await openLog(dataDir);
    expect(await log.all()).toEqual([]);
    expect(await log.lastMessage()).toBeNull();
    expect(await modeOf(dataDir)).toBe(0o700);
  });

  it("tightens an existing data directory to owner-only", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { mode: 0o755 });
    await openLog(dataDir);
    expect(await modeOf(dataDir)).toBe(0o700);
  });

  it("refuses an invalid entry, naming the file, the entry and the problem, and leaves the file as it was", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir);
    const file = join(dataDir, "messages.json");
    const original = `{ "version": 1, "messages": [
      { "id": "a", "ts": "2026-02-07T08:00:00.000Z", "role": "user", "text": "hi", "channel": "telegram" },
      { "id": "b", "ts": "yesterday", "role": "user", "text": "hi", "channel": "telegram" }
    ] }`;
    await writeFile(file, original);
    const error = await openLog(dataDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessageLogError);
    expect((error as MessageLogError).kind).toBe("damaged-file");
    const message = (error as MessageLogError).message;
    expect(message).toContain(file);
    expect(message).toContain("entry 2 (index 1");
    expect(message).toContain('"b"');
    expect(message).toContain("ts");
    expect((error as MessageLogError).entryIndex).toBe(1);
    expect(await readFile(file, "utf8")).toBe(original);
    expect(await readdir(dataDir)).toEqual(["messages.json"]);
  });

  it.each([
    ["not JSON", "{ messages: [", "not valid JSON"],
    ["a newer format", '{ "version": 7, "messages": [] }', "newer presence"],
    ["the wrong shape", '{ "version": 1, "messages": {} }', '"messages" must be an array'],
    [
      "a bad role",
      '[{ "id": "x", "ts": "2026-02-07T08:00:00Z", "role": "bot", "text": "", "channel": "cli" }]',
      "role",
    ],
    [
      "a duplicate id",
      '[{ "id": "x", "ts": "2026-02-07T08:00:00Z", "role": "user", "text": "", "channel": "cli" },' +
        ' { "id": "x", "ts": "2026-02-07T08:01:00Z", "role": "user", "text": "", "channel": "cli" }]',
      "already used by entry 1",
    ],
  ])("refuses %s without touching it", async (_case, contents, problem) => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir);
    const file = join(dataDir, "messages.json");
    await writeFile(file, contents);
    const error = await openLog(dataDir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MessageLogError);
    expect((error as MessageLogError).kind).toBe("damaged-file");
    expect((error as Error).message.startsWith(`${file}: `)).toBe(true);
    expect((error as Error).message).toContain(problem);
    expect(await readFile(file, "utf8")).toBe(contents);
  });

  it("refuses a window too short to cover Telegram's redelivery, and an unknown zone", async () => {
    const dataDir = await tempDataDir();
    await expect(openLog(dataDir, new SettableClock(START), 1)).rejects.toThrow(RangeError);
    await expect(
      MessageLog.open({ dataDir, clock: new SettableClock(START), timeZone: "Mars/Olympus" }),
    ).rejects.toThrow("Mars/Olympus");
  });

  it("migrates a version 0 file (a bare array) in memory and writes today's version only with the next append", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir);
    const file = join(dataDir, "messages.json");
    const original = JSON.stringify([
      {
        id: "old",
        ts: "2026-02-07T07:00:00.000Z",
        role: "user",
        text: "morning",
        channel: "telegram",
        mood: "ok",
      },
    ]);
    await writeFile(file, original);
    const log = await openLog(dataDir);
    expect((await log.all()).map((m) => m.id)).toEqual(["old"]);
    expect(await readFile(file, "utf8")).toBe(original);

    await log.append(assistant("hello"));
    const written = (await readJson(file)) as { version: number; messages: Record<string, unknown>[] };
    expect(written.version).toBe(MESSAGE_LOG_VERSION);
    expect(written.messages.map((m) => m.text)).toEqual(["morning", "hello"]);
    expect(written.messages[0]?.mood).toBe("ok");
  });

  it("migrates a version 0 object without a version field", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir);
    await writeFile(
      join(dataDir, "messages.json"),
      JSON.stringify({
        messages: [{ id: "a", ts: "2026-02-07T07:00:00Z", role: "user", text: "x", channel: "cli" }],
      }),
    );
    const log = await openLog(dataDir);
    expect((await log.lastMessage())?.id).toBe("a");
  });
});

describe("appending", () => {
  it("fills in a sortable id and the clock's time, and writes a private file before resolving", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    const log = await openLog(dataDir, clock);
    const first = await log.append(user("Good morning."));
    clock.advanceMinutes(1);
    const second = await log.append(assistant("Morning!"));
    expect(first.ts).toBe(START);
    expect(first.id < second.id).toBe(true);

    const file = join(dataDir, "messages.json");
    expect(await modeOf(file)).toBe(0o600);
    const onDisk = (await readJson(file)) as { version: number; messages: { id: string }[] };
    expect(onDisk.version).toBe(MESSAGE_LOG_VERSION);
    expect(onDisk.messages.map((m) => m.id)).toEqual([first.id, second.id]);
    expect((await readdir(dataDir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("flushes each append to disk unless opened with fsync: false (simulations only)", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    const flushed = await countSyncs(async () => {
      await (await openLog(dataDir, clock)).append(user("Good morning."));
    });
    expect(flushed).toBeGreaterThanOrEqual(2); // the temp file and the directory
    const unflushed = await countSyncs(async () => {
      const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC", windowDays: 2, fsync: false });
      await log.append(user("Still there?"));
    });
    expect(unflushed).toBe(0);
    expect((await (await openLog(dataDir, clock)).recent()).map((m) => m.text)).toEqual([
      "Good morning.",
      "Still there?",
    ]);
  });

  it("with writeOnFlush (simulations only), appends and edits land in memory and messages.json follows at flush()", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    await (await openLog(dataDir, clock)).append(user("Good morning."));
    const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC", windowDays: 2, writeOnFlush: true });
    const later = await log.append(user("Still there?"));
    await log.update(later.id, { text: "Still there??" });
    expect(log.recent().map((m) => m.text)).toEqual(["Good morning.", "Still there??"]);
    expect((await openLog(dataDir, clock)).recent().map((m) => m.text)).toEqual(["Good morning."]);
    await log.flush();
    expect((await openLog(dataDir, clock)).recent().map((m) => m.text)).toEqual([
      "Good morning.",
      "Still there??",
    ]);
  });

  it("keeps unknown fields", async () => {
    const dataDir = await tempDataDir();
    const log = await openLog(dataDir);
    await log.append(user("hi", { futureField: { nested: [1, 2] } }));
    const reopened = await openLog(dataDir);
    expect((await reopened.lastMessage())?.futureField).toEqual({ nested: [1, 2] });
  });

  it("never loses or reorders 200 appends started at once", async () => {
    const dataDir = await tempDataDir();
    const log = await openLog(dataDir);
    const texts = Array.from({ length: 200 }, (_, i) => `message ${i}`);
    const appended = await Promise.all(texts.map((text) => log.append(user(text))));
    expect(new Set(appended.map((m) => m.id)).size).toBe(200);
    const reopened = await openLog(dataDir);
    expect((await reopened.all()).map((m) => m.text)).toEqual(texts);
  });

  it("places a message with an earlier time in time order", async () => {
    const dataDir = await tempDataDir();
    const log = await openLog(dataDir);
    await log.append(user("second", { ts: "2026-02-07T07:30:00.000Z" }));
    await log.append(user("first", { ts: "2026-02-07T07:00:00.000Z" }));
    expect((await log.all()).map((m) => m.text)).toEqual(["first", "second"]);
  });

  it("refuses invalid messages, duplicate ids and an update logged twice, and writes nothing for them", async () => {
    const dataDir = await tempDataDir();
    const log = await openLog(dataDir);
    await log.append(user("once", { id: "x", external: { chatId: 1, messageId: 5, updateId: 900 } }));
    const duplicate = { kind: "duplicate" };
    const invalid = { kind: "invalid-message" };
    await expect(log.append(user("again", { id: "x" }))).rejects.toMatchObject(duplicate);
    await expect(
      log.append(user("same update", { external: { chatId: 1, messageId: 6, updateId: 900 } })),
    ).rejects.toMatchObject(duplicate);
    await expect(log.append(user("bad", { trigger: "reply" }))).rejects.toMatchObject(invalid);
    await expect(log.append(user("bad", { ts: "2026-02-07 08:00" }))).rejects.toMatchObject(invalid);
    const reopened = await openLog(dataDir);
    expect((await reopened.all()).map((m) => m.text)).toEqual(["once"]);
  });
});

describe("lookups and edits", () => {
  it("finds a message by its channel's ids and knows which of the channel's updates were processed", async () => {
    const dataDir = await tempDataDir();
    const log = await openLog(dataDir);
    const logged = await log.append(user("hi", { external: { chatId: 42, messageId: 7, updateId: 1001 } }));
    expect(await log.findByExternal("telegram", { chatId: 42, messageId: 7 })).toEqual(logged);
    expect(await log.findByExternal("telegram", { chatId: 42, messageId: 8 })).toBeNull();
    expect(await log.findByExternal("cli", { chatId: 42, messageId: 7 })).toBeNull();
    expect(log.hasUpdate("telegram", 1001)).toBe(true);
    expect(log.hasUpdate("telegram", 1002)).toBe(false);
    expect(log.hasUpdate("cli", 1001)).toBe(false);
    expect((await openLog(dataDir)).hasUpdate("telegram", 1001)).toBe(true);
  });

  it("edits text with editedAt from the clock and adds annotations, keeping every other field", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    const log = await openLog(dataDir, clock);
    const logged = await log.append(user("I drank two glases", { custom: "kept" }));
    clock.advanceMinutes(3);
    await log.update(logged.id, { text: "I drank two glasses" });
    await log.update(logged.id, { annotations: { topics: ["water"], question: false, tone: "neutral" } });

    const reopened = await openLog(dataDir, clock);
    const edited = await reopened.get(logged.id);
    expect(edited).toMatchObject({
      text: "I drank two glasses",
      editedAt: "2026-02-07T08:03:00.000Z",
      custom: "kept",
      ts: START,
      annotations: { topics: ["water"], question: false, tone: "neutral" },
    });
    expect(await reopened.update("missing", { text: "x" })).toBeNull();
    await expect(reopened.update(logged.id, { role: "assistant" } as never)).rejects.toThrow();
  });

  it("applies a change given as a function to the message as it is when written, after the writes before it", async () => {
    const log = await openLog(await tempDataDir());
    const logged = await log.append(user("[voice note, 0:42]", { media: { kind: "voice", caption: "hi" } }));
    const edit = log.update(logged.id, { media: { kind: "voice", caption: "hi, Ada" } });
    const heard = log.update(
      logged.id,
      (current) => ({ text: "the words", media: { ...current.media, kind: "voice", transcribed: true } }),
      { edit: false },
    );
    await Promise.all([edit, heard]);
    expect(await log.get(logged.id)).toMatchObject({
      text: "the words",
      media: { kind: "voice", caption: "hi, Ada", transcribed: true },
    });
    await expect(log.update(logged.id, () => ({ ts: START }))).rejects.toThrow(/cannot be changed/);
  });
});

describe("growth: the window and the archive", () => {
  /** Two messages a day for 70 days, the clock following along. */
  async function seventyDays(dataDir: string) {
    const clock = new SettableClock("2026-01-01T09:00:00.000Z");
    const log = await openLog(dataDir, clock);
    const ids: string[] = [];
    for (let day = 0; day < 70; day++) {
      ids.push((await log.append(user(`day ${day} question`))).id);
      clock.advanceMinutes(60);
      ids.push((await log.append(assistant(`day ${day} answer`, { trigger: "reply" }))).id);
      clock.advanceMinutes(23 * 60);
    }
    await log.flush();
    return { clock, log, ids };
  }

  it("keeps only recent days in messages.json and rolls older ones into private monthly archives", async () => {
    const dataDir = await tempDataDir();
    const { log } = await seventyDays(dataDir);
    const window = (await readJson(join(dataDir, "messages.json"))) as { messages: { ts: string }[] };
    expect(window.messages.map((m) => m.ts.slice(0, 10))).toEqual([
      "2026-03-10",
      "2026-03-10",
      "2026-03-11",
      "2026-03-11",
    ]);
    expect(log.recent()).toHaveLength(4);
    const archive = join(dataDir, "archive");
    expect((await readdir(archive)).sort()).toEqual(["2026-01.json", "2026-02.json", "2026-03.json"]);
    expect(await modeOf(archive)).toBe(0o700);
    expect(await modeOf(join(archive, "2026-02.json"))).toBe(0o600);
    const february = (await readJson(join(archive, "2026-02.json"))) as {
      version: number;
      messages: unknown[];
    };
    expect(february.version).toBe(MESSAGE_LOG_VERSION);
    expect(february.messages).toHaveLength(56);
  });

  it("says whether anything lies in the archive, before the window's first message", async () => {
    const fresh = await openLog(await tempDataDir(), new SettableClock("2026-01-01T09:00:00.000Z"));
    await fresh.append(user("first ever"));
    expect(await fresh.hasArchived()).toBe(false);
    const { log } = await seventyDays(await tempDataDir());
    expect(await log.hasArchived()).toBe(true);
  });

  it("reads back one continuous, time-sorted log across archive and window, also after reopening", async () => {
    const dataDir = await tempDataDir();
    const { log, ids, clock } = await seventyDays(dataDir);
    expect((await log.all()).map((m) => m.id)).toEqual(ids);
    const reopened = await openLog(dataDir, clock);
    const all = await reopened.all();
    expect(all.map((m) => m.id)).toEqual(ids);
    expect(all.map((m) => m.ts)).toEqual([...all.map((m) => m.ts)].sort());
  });

  it("reads a bounded stretch (between) across archive and window, nothing before or after it", async () => {
    const dataDir = await tempDataDir();
    const { log, clock } = await seventyDays(dataDir);
    const reopened = await openLog(dataDir, clock);
    const from = new Date("2026-02-27T09:00:00.000Z");
    const until = new Date("2026-03-10T10:00:00.000Z");
    const stretch = await reopened.between(from, until);
    expect(stretch.map((m) => m.text)).toEqual(
      Array.from({ length: 12 }, (_, i) => [`day ${57 + i} question`, `day ${57 + i} answer`])
        .flat()
        .slice(0, 24),
    );
    expect((await log.between(new Date("2026-03-10T09:30:00.000Z"), clock.now())).map((m) => m.text)).toEqual(
      ["day 68 answer", "day 69 question", "day 69 answer"],
    );
  });

  it("getMany finds ids in the window and in every archive month at once, and leaves out unknown ids", async () => {
    const dataDir = await tempDataDir();
    const { ids, clock } = await seventyDays(dataDir);
    const reopened = await openLog(dataDir, clock);
    const wanted = [ids[0], ids[60], ids[139], "no-such-id"] as string[];
    const found = await reopened.getMany(wanted);
    expect([...found.keys()].sort()).toEqual([ids[0], ids[60], ids[139]].sort());
    expect(found.get(ids[0] as string)?.text).toBe("day 0 question");
    expect(found.get(ids[60] as string)?.text).toBe("day 30 question");
    expect(found.get(ids[139] as string)?.text).toBe("day 69 answer");
  });

  it("finds and edits archived messages", async () => {
    const dataDir = await tempDataDir();
    const { log, ids, clock } = await seventyDays(dataDir);
    const oldest = ids[0] as string;
    expect((await log.get(oldest))?.text).toBe("day 0 question");
    await log.update(oldest, { annotations: { topics: ["greeting"], question: true, tone: "warm" } });
    expect((await (await openLog(dataDir, clock)).get(oldest))?.annotations?.topics).toEqual(["greeting"]);
  });

  it("an archived edit that cannot be written is neither on disk nor in memory", async () => {
    const dataDir = await tempDataDir();
    const { log, ids } = await seventyDays(dataDir);
    const oldest = ids[0] as string;
    expect((await log.get(oldest))?.text).toBe("day 0 question");
    // January was just read, and is kept; a directory where its file was makes the write fail.
    const january = join(dataDir, "archive", "2026-01.json");
    const contents = await readFile(january, "utf8");
    await rm(january);
    await mkdir(join(january, "in-the-way"), { recursive: true });
    await expect(log.update(oldest, { text: "changed" })).rejects.toThrow(/2026-01\.json/);
    await rm(january, { recursive: true });
    await writeFile(january, contents);
    expect((await log.get(oldest))?.text).toBe("day 0 question");
  });

  it("counts a message once when a crash left it in both the archive and the window", async () => {
    const dataDir = await tempDataDir();
    await mkdir(join(dataDir, "archive"), { recursive: true });
    const message = { id: "twice", ts: "2026-02-01T10:00:00.000Z", role: "user", text: "hi", channel: "cli" };
    await writeFile(
      join(dataDir, "archive", "2026-02.json"),
      JSON.stringify({ version: 1, messages: [message] }),
    );
    await writeFile(join(dataDir, "messages.json"), JSON.stringify({ version: 1, messages: [message] }));
    const clock = new SettableClock("2026-02-10T10:00:00.000Z");
    const log = await openLog(dataDir, clock);
    expect((await log.all()).map((m) => m.id)).toEqual(["twice"]);

    await log.append(user("later"));
    await log.flush();
    const archived = (await readJson(join(dataDir, "archive", "2026-02.json"))) as { messages: unknown[] };
    expect(archived.messages).toHaveLength(1);
    expect((await log.all()).map((m) => m.id)).toEqual(["twice", (await log.lastMessage())?.id]);
  });

  it("refuses to open with a damaged archive month, naming it and the entry, and leaves it as it was", async () => {
    const dataDir = await tempDataDir();
    await mkdir(join(dataDir, "archive"), { recursive: true });
    const damaged = join(dataDir, "archive", "2026-01.json");
    const contents = JSON.stringify({
      version: 1,
      messages: [{ id: "x", ts: "2026-01-03T08:00:00Z", role: "person", text: "hi", channel: "cli" }],
    });
    await writeFile(damaged, contents);
    const error = await openLog(dataDir, new SettableClock("2026-02-05T08:00:00.000Z")).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MessageLogError);
    expect((error as MessageLogError).kind).toBe("damaged-file");
    expect((error as Error).message).toMatch(/2026-01\.json: entry 1 \(index 0, id "x"\): role/);
    expect(await readFile(damaged, "utf8")).toBe(contents);
  });

  it("keeps older days in the window, and a damaged archive file as it is, when archiving fails", async () => {
    const dataDir = await tempDataDir();
    await mkdir(join(dataDir, "archive"), { recursive: true });
    const damaged = join(dataDir, "archive", "2026-01.json");
    const clock = new SettableClock("2026-01-05T08:00:00.000Z");
    const log = await openLog(dataDir, clock);
    await writeFile(damaged, "{ not json");
    await log.append(user("january"));
    clock.advanceMinutes(10 * 24 * 60);
    await log.append(user("ten days later"));
    await log.flush();
    expect(log.recent().map((m) => m.text)).toEqual(["january", "ten days later"]);
    expect(await readFile(damaged, "utf8")).toBe("{ not json");
    await expect(log.all()).rejects.toMatchObject({ kind: "damaged-file" });
    await expect(log.all()).rejects.toThrow(damaged);
  });

  it("answers lastMessage and lastUserMessage when everything has been archived", async () => {
    const dataDir = await tempDataDir();
    const { clock, ids } = await seventyDays(dataDir);
    clock.advanceMinutes(10 * 24 * 60);
    const log = await openLog(dataDir, clock);
    await log.append(assistant("still there?"));
    clock.advanceMinutes(5 * 24 * 60);
    await log.append(assistant("checking in"));
    await log.flush();
    expect(log.recent().map((m) => m.text)).toEqual(["checking in"]);
    expect((await log.lastUserMessage())?.id).toBe(ids[ids.length - 2]);
    expect((await log.lastMessage())?.text).toBe("checking in");
  });
});

describe("awarenessSlice", () => {
  it("is the window's messages when the person wrote within it", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const log = await openLog(dataDir, clock);
    await log.append(user("three days ago"));
    clock.advanceMinutes(3 * 24 * 60);
    await log.append(assistant("morning check-in"));
    clock.advanceMinutes(30);
    await log.append(user("today"));
    clock.advanceMinutes(30);
    await log.append(assistant("reply", { trigger: "reply" }));
    const slice = await log.awarenessSlice(clock.now(), 48);
    expect(slice.map((m) => m.text)).toEqual(["morning check-in", "today", "reply"]);
  });

  it("reaches back to the person's last turn 10 days ago, the message before it and everything since, through the archive", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-01T08:00:00.000Z");
    const log = await openLog(dataDir, clock);
    await log.append(user("long before"));
    clock.advanceMinutes(60);
    await log.append(assistant("How did the talk go?", { trigger: "reply" }));
    clock.advanceMinutes(60);
    await log.append(user("Well, I think."));
    clock.advanceMinutes(1);
    await log.append(user("the last thing I said"));
    for (let day = 0; day < 10; day++) {
      clock.advanceMinutes(24 * 60);
      await log.append(assistant(`check-in ${day}`));
    }
    await log.flush();
    expect(log.recent().some((m) => m.role === "user")).toBe(false);

    const reopened = await openLog(dataDir, clock);
    const slice = await reopened.awarenessSlice(clock.now(), 48);
    expect(slice.map((m) => m.text)).toEqual([
      "How did the talk go?",
      "Well, I think.",
      "the last thing I said",
      ...Array.from({ length: 10 }, (_, day) => `check-in ${day}`),
    ]);
  });

  it("leaves out messages after the moment asked about", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const log = await openLog(dataDir, clock);
    await log.append(user("earlier"));
    clock.advanceMinutes(60);
    await log.append(user("later"));
    const slice = await log.awarenessSlice(new Date("2026-02-07T08:30:00.000Z"), 48);
    expect(slice.map((m) => m.text)).toEqual(["earlier"]);
  });

  it("is the whole log when the person never wrote: everything the assistant sent is unanswered", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-01T08:00:00.000Z");
    const log = await openLog(dataDir, clock);
    await log.append(assistant("hello?"));
    clock.advanceMinutes(5 * 24 * 60);
    await log.append(assistant("anyone?"));
    await log.flush();
    expect(log.recent().map((m) => m.text)).toEqual(["anyone?"]);
    expect((await log.awarenessSlice(clock.now(), 48)).map((m) => m.text)).toEqual(["hello?", "anyone?"]);
  });
});

describe("deleteAll", () => {
  it("deletes the window and the archive for real", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-01-01T08:00:00.000Z");
    const log = await openLog(dataDir, clock);
    await log.append(user("old"));
    clock.advanceMinutes(40 * 24 * 60);
    await log.append(user("new", { external: { chatId: 1, messageId: 2, updateId: 3 } }));
    await log.flush();
    expect(await readdir(dataDir)).toContain("archive");

    await log.deleteAll();
    expect(await readdir(dataDir)).toEqual([]);
    expect(await log.all()).toEqual([]);
    expect(await log.lastUserMessage()).toBeNull();
    expect(log.hasUpdate("telegram", 3)).toBe(false);
    expect(await (await openLog(dataDir, clock)).all()).toEqual([]);
  });
});
