import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { initialMindState, openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { mindLogRecord, mindRecord } from "../../src/core/mind-record.ts";
import { DataFileError } from "../../src/store/files.ts";
import { MIND_VERSION, MindStore as MindFileStore } from "../../src/store/mind.ts";
import { rememberingMind, usageRecord } from "../support/mind-fixtures.ts";
import { countSyncs } from "./helpers.ts";

let root: string;
let dataDir: string;
let clock: SettableClock;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-mind-"));
  dataDir = join(root, "data");
  clock = new SettableClock("2026-11-22T10:00:00.000Z");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("MindStore", () => {
  it("starts fresh without a file and writes owner-only files durably", async () => {
    const mind = await openMind(dataDir, clock);
    expect(mind.read()).toEqual(initialMindState(clock.now()));
    await mind.update((m) => {
      m.scratchpad.trajectory_now = "Talking about the garden";
    });
    expect((await stat(mind.file)).mode & 0o777).toBe(0o600);
    expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    const again = await openMind(dataDir, clock);
    expect(again.read().scratchpad.trajectory_now).toBe("Talking about the garden");
    expect(JSON.parse(await readFile(mind.file, "utf8")).version).toBe(MIND_VERSION);
  });

  it("read() is a snapshot: frozen, and an update replaces it instead of changing it", async () => {
    const mind = await openMind(dataDir, clock);
    const held = mind.read();
    expect(() => held.memory.push({} as never)).toThrow(TypeError);
    await mind.update((m) => {
      m.usage.push({ ...usageRecord("2026-11-22T10:00:00.000Z", 100) });
    });
    expect(held.usage).toEqual([]);
    expect(mind.read().usage).toHaveLength(1);
    // What the update did not touch is the same record, not a copy of it.
    expect(mind.read().memory).toBe(held.memory);
    expect(Object.isFrozen(mind.read().usage[0])).toBe(true);
  });

  it("writes the document as indented JSON, whichever records an update touched", async () => {
    const mind = await openMind(dataDir, clock);
    await mind.update((m) => {
      m.usage.push({ ...usageRecord("2026-11-22T10:00:00.000Z", 100) });
    });
    await mind.update((m) => {
      m.scratchpad.trajectory_now = "Talking about the garden";
      m.wipedAt = "2026-11-22T10:00:00.000Z";
    });
    await mind.update((m) => {
      delete m.wipedAt;
    });
    expect(mind.read().wipedAt).toBeUndefined();
    expect(await readFile(mind.file, "utf8")).toBe(`${JSON.stringify(mind.read(), null, 2)}\n`);
    expect((await openMind(dataDir, clock)).read()).toEqual(mind.read());
  });

  it("flushes every write to disk unless opened with fsync: false (simulations only)", async () => {
    const syncs = await countSyncs(async () => {
      const mind = await openMind(dataDir, clock);
      await mind.update((m) => {
        m.scratchpad.trajectory_now = "flushed";
      });
    });
    expect(syncs).toBeGreaterThanOrEqual(2); // the temp file and the directory
    const unflushed = await countSyncs(async () => {
      const mind = await openMind(dataDir, clock, { fsync: false });
      await mind.update((m) => {
        m.scratchpad.trajectory_now = "not flushed";
      });
    });
    expect(unflushed).toBe(0);
    expect((await openMind(dataDir, clock)).read().scratchpad.trajectory_now).toBe("not flushed");
  });

  it("with writeOnFlush (simulations only), updates land in memory and the file follows at flush()", async () => {
    const mind = await openMind(dataDir, clock, { fsync: false, writeOnFlush: true });
    await mind.update((m) => {
      m.scratchpad.trajectory_now = "first";
    });
    await mind.update((m) => {
      m.usage.push({ ...usageRecord("2026-11-22T10:00:00.000Z", 100) });
    });
    expect(mind.read().scratchpad.trajectory_now).toBe("first");
    await expect(stat(mind.file)).rejects.toThrow(/ENOENT/);
    await mind.flush();
    expect(await readFile(mind.file, "utf8")).toBe(`${JSON.stringify(mind.read(), null, 2)}\n`);
    await mind.update((m) => {
      m.scratchpad.trajectory_now = "second";
    });
    expect((await openMind(dataDir, clock)).read().scratchpad.trajectory_now).toBe("first");
    await mind.flush();
    expect((await openMind(dataDir, clock)).read().scratchpad.trajectory_now).toBe("second");
    // A wipe reaches the file at once, whatever the option.
    await mind.deleteAll();
    expect((await openMind(dataDir, clock)).read()).toEqual(mind.read());
    expect(mind.read().scratchpad.trajectory_now).not.toBe("second");
  });

  it("updates started together all land, in order", async () => {
    const mind = await openMind(dataDir, clock);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        mind.update((m) => {
          m.scratchpad.self_flags += `${i},`;
        }),
      ),
    );
    const expected = Array.from({ length: 20 }, (_, i) => `${i},`).join("");
    expect((await openMind(dataDir, clock)).read().scratchpad.self_flags).toBe(expected);
  });

  it("an update that throws or would write an invalid state changes nothing", async () => {
    const mind = await openMind(dataDir, clock);
    await mind.update((m) => {
      m.scratchpad.trajectory_now = "before";
    });
    const fileBefore = await readFile(mind.file, "utf8");
    await expect(
      mind.update((m) => {
        m.scratchpad.trajectory_now = "during";
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await expect(
      mind.update((m) => {
        (m.scratchpad as Record<string, unknown>).trajectory_now = 42;
      }),
    ).rejects.toThrow(/invalid state: scratchpad.trajectory_now/);
    expect(mind.read().scratchpad.trajectory_now).toBe("before");
    expect(await readFile(mind.file, "utf8")).toBe(fileBefore);
  });

  it.each([
    ["not JSON", "{ nope", /mind\.json: is not valid JSON/],
    ["a newer version", JSON.stringify({ version: 7 }), /written by a newer presence \(format version 7/],
    ["no version", JSON.stringify({ scratchpad: {} }), /"version" must be a whole number/],
    [
      "a bad field",
      JSON.stringify({ ...initialMindState(new Date("2026-01-01T00:00:00Z")), memory: [{ id: "x" }] }),
      /mind\.json: memory entry 1 \(index 0, id "x"\): kind: .*left as it is/,
    ],
    [
      "an outbox entry it could not send",
      JSON.stringify({
        ...initialMindState(new Date("2026-01-01T00:00:00Z")),
        outbox: [{ id: "o-broken", kind: "letter", text: "Sister's wedding speech" }],
      }),
      /mind\.json: outbox entry 1 \(index 0, id "o-broken"\): kind: .*left as it is/,
    ],
  ])(
    "refuses %s, naming the file and the problem, and leaves it as it was",
    async (_name, contents, message) => {
      await openMind(dataDir, clock);
      const file = join(dataDir, "mind.json");
      await writeFile(file, contents);
      const error = await openMind(dataDir, clock).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DataFileError);
      expect((error as DataFileError).file).toBe(file);
      expect(String((error as Error).message)).toMatch(message);
      expect(await readFile(file, "utf8")).toBe(contents);
    },
  );

  it("fills in fields a file written before them lacks", async () => {
    await openMind(dataDir, clock);
    const { heartbeat: _h, decisions: _d, outbox: _o, ...older } = initialMindState(clock.now());
    await writeFile(join(dataDir, "mind.json"), JSON.stringify({ ...older, futureField: { kept: true } }));
    const mind = await openMind(dataDir, clock);
    expect(mind.read().decisions).toEqual([]);
    expect(mind.read().heartbeat.blocked).toBe(false);
    await mind.update(() => undefined);
    expect(JSON.parse(await readFile(mind.file, "utf8")).futureField).toEqual({ kept: true });
  });

  it("loads a heartbeat state that still holds budgetExceeded, and drops it on the next write", async () => {
    await openMind(dataDir, clock);
    const older = initialMindState(clock.now());
    const heartbeat = { ...older.heartbeat, blocked: true, budgetExceeded: true };
    await writeFile(join(dataDir, "mind.json"), JSON.stringify({ ...older, heartbeat }));
    const mind = await openMind(dataDir, clock);
    expect(mind.read().heartbeat.blocked).toBe(true);
    expect(mind.read().heartbeat).not.toHaveProperty("budgetExceeded");
    await mind.update(() => undefined);
    const written = JSON.parse(await readFile(mind.file, "utf8"));
    expect(written.heartbeat.blocked).toBe(true);
    expect(written.heartbeat).not.toHaveProperty("budgetExceeded");
  });
});

describe("the store knows no record's shape", () => {
  // Two records of a room made up for the test: the store takes whatever records it is given.
  const tally = mindRecord({
    key: "tally",
    schema: z.object({ count: z.number() }),
    initial: () => ({ count: 0 }),
    migrations: {
      2: (old) => ({ count: Number(old) }),
      3: (old) => ({ count: (old as { count: number }).count * 10 }),
    },
    afterWipe: (kept) => kept,
  });
  const note = mindRecord({ key: "note", schema: z.string().optional(), initial: () => undefined });

  it("runs each record's migration steps from the file's version up, and keeps what a record says outlives a wipe", async () => {
    const dir = join(root, "generic");
    await MindFileStore.open(dir, clock, [tally, note]);
    await writeFile(join(dir, "mind.json"), JSON.stringify({ version: 1, tally: "4", note: "hello" }));
    const store = await MindFileStore.open(dir, clock, [tally, note]);
    expect(store.read()).toEqual({ version: MIND_VERSION, tally: { count: 40 }, note: "hello" });
    await store.deleteAll();
    expect(store.read()).toEqual({ version: MIND_VERSION, tally: { count: 40 } });
  });

  // A record whose schema fills in a field, and one that keeps whatever it is given.
  const length = mindRecord({
    key: "length",
    schema: z.object({ count: z.number(), unit: z.string().default("cm") }),
    initial: () => ({ count: 0 }) as { count: number; unit: string },
  });
  const bag = mindRecord({ key: "bag", schema: z.array(z.unknown()), initial: () => [] as unknown[] });

  it("a record an update reads but leaves equal stays the one checked; changed, or never checked, it is checked", async () => {
    const dir = join(root, "unchanged");
    const store = await MindFileStore.open(dir, clock, [length, note]);
    // A fresh install's record was never checked: reading it is enough for the schema's default.
    await store.update((m) => {
      void m.length.count;
    });
    const checked = store.read().length;
    expect(checked).toEqual({ count: 0, unit: "cm" });
    await store.update((m) => {
      void m.length.count;
      m.note = "read the length";
    });
    expect(store.read().length).toBe(checked);
    await expect(
      store.update((m) => {
        m.length.count = "many" as never;
      }),
    ).rejects.toThrow(/invalid state: length\.count/);
  });

  it("an update copies a record as JSON holds it, and the same data in another key order is a change", async () => {
    const dir = join(root, "bag");
    await MindFileStore.open(dir, clock, [bag]);
    await writeFile(
      join(dir, "mind.json"),
      `{ "version": ${MIND_VERSION}, "bag": [{ "__proto__": { "x": 1 } }] }`,
    );
    const store = await MindFileStore.open(dir, clock, [bag]);
    await store.update((m) => {
      m.bag.push({ first: 1, second: 2 });
    });
    const inFile = async () => JSON.parse(await readFile(store.file, "utf8")).bag;
    expect(await inFile()).toEqual(JSON.parse('[{ "__proto__": { "x": 1 } }, { "first": 1, "second": 2 }]'));
    await store.update((m) => {
      m.bag[1] = { second: 2, first: 1 };
    });
    expect(Object.keys((await inFile())[1])).toEqual(["second", "first"]);
  });

  // A log of a made-up room: entries are added and dropped, never changed in place.
  const readings = mindLogRecord({
    key: "readings",
    entry: z.object({ at: z.string(), values: z.object({ low: z.number(), high: z.number() }) }),
  });

  it("a log keeps the entries it held, checks only new ones and writes the file JSON.stringify would", async () => {
    const dir = join(root, "log");
    const store = await MindFileStore.open(dir, clock, [readings, note]);
    for (let i = 0; i < 4; i++) {
      await store.update((m) => {
        m.readings.push({ at: `day ${i}`, values: { low: i, high: i * 2 } });
      });
    }
    const held = store.read().readings;
    await store.update((m) => {
      m.readings = m.readings.filter((r) => r.at !== "day 0");
      m.readings.push({ at: "day 4", values: { low: 4, high: 8 } });
      m.note = "dropped day 0";
    });
    const after = store.read().readings;
    expect(after.map((r) => r.at)).toEqual(["day 1", "day 2", "day 3", "day 4"]);
    expect(after.slice(0, 3).every((r, i) => r === held[i + 1])).toBe(true);
    expect(await readFile(store.file, "utf8")).toBe(`${JSON.stringify(store.read(), null, 2)}\n`);
    await store.update((m) => {
      m.readings = [];
    });
    expect(await readFile(store.file, "utf8")).toBe(`${JSON.stringify(store.read(), null, 2)}\n`);
    expect((await MindFileStore.open(dir, clock, [readings, note])).read()).toEqual(store.read());
  });

  it("a log refuses a new entry that breaks its schema, or an entry changed in place, and changes nothing", async () => {
    const dir = join(root, "log-refusals");
    const store = await MindFileStore.open(dir, clock, [readings]);
    await store.update((m) => {
      m.readings.push({ at: "day 0", values: { low: 0, high: 1 } });
    });
    const fileBefore = await readFile(store.file, "utf8");
    await expect(
      store.update((m) => {
        m.readings.push({ at: "day 1", values: { low: "cold" as never, high: 1 } });
      }),
    ).rejects.toThrow(/invalid state: readings\.1\.values\.low/);
    await expect(
      store.update((m) => {
        (m.readings[0] as { at: string }).at = "changed";
      }),
    ).rejects.toThrow(TypeError);
    expect(store.read().readings).toEqual([{ at: "day 0", values: { low: 0, high: 1 } }]);
    expect(await readFile(store.file, "utf8")).toBe(fileBefore);
  });
});

describe("wiping and export", () => {
  it("deleteAll rewrites the file as a fresh mind, keeping only the token ledger", async () => {
    const mind = await rememberingMind(dataDir, clock);
    const leftover = join(dataDir, ".mind.json.0123ab.tmp");
    await writeFile(leftover, "Dr Alvarez, from a write a crash interrupted");
    await mind.deleteAll();
    await expect(stat(leftover)).rejects.toThrow(/ENOENT/);
    const file = await readFile(mind.file, "utf8");
    expect(file).not.toMatch(/alvarez|dog/i);
    expect(mind.read().memory).toEqual([]);
    expect(mind.read().usage).toHaveLength(1);
    expect(mind.read().wipedAt).toBe(clock.now().toISOString());
    expect((await openMind(dataDir, clock)).read().memory).toEqual([]);
  });

  it("exportAll hands over everything kept", async () => {
    const mind = await rememberingMind(dataDir, clock);
    const exported = mind.exportAll();
    expect(exported.memory).toHaveLength(2);
    expect(exported.scratchpad.understanding_known.map((i) => i.text).join("\n")).toContain("dog");
  });
});
