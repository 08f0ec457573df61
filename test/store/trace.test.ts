import { appendFile, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import { createLogger } from "../../src/core/log.ts";
import { type NewTraceRecord, Trace, type TraceLine } from "../../src/store/trace.ts";
import { modeOf, tempDataDir } from "./helpers.ts";

const DAY = 24 * 60;

/** A small record of a kind the trace writes; `error` carries what a test reads back. */
const failure = (error: string): NewTraceRecord => ({ kind: "reply-error", error });
const errors = (records: readonly TraceLine[]) => records.map((record) => record.error);

describe("Trace", () => {
  it("appends one private JSON line per record and reads the newest back in order", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const trace = new Trace({ dataDir, clock });
    await trace.append({
      kind: "reply",
      outcome: "sent",
      input: [{ id: "u1", ts: "2026-02-07T07:59:00.000Z", text: "hi" }],
      sent: { id: "a1", text: "Hello!" },
    });
    clock.advanceMinutes(1);
    const preCheck = { fire: false, reason: "quiet-hours", detail: "inside quiet hours" } as const;
    await trace.append({ kind: "heartbeat", stage: "pre-check", preCheck });
    await trace.append({ kind: "reflect", outcome: "dropped", ts: "2026-02-07T08:05:00.000Z" });

    const lines = (await readFile(trace.file, "utf8")).trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line).kind)).toEqual(["reply", "heartbeat", "reflect"]);
    expect(await modeOf(trace.file)).toBe(0o600);
    expect(await modeOf(dataDir)).toBe(0o700);
    expect(await trace.last(2)).toEqual([
      { ts: "2026-02-07T08:01:00.000Z", kind: "heartbeat", stage: "pre-check", preCheck },
      { ts: "2026-02-07T08:05:00.000Z", kind: "reflect", outcome: "dropped" },
    ]);
    expect(await new Trace({ dataDir, clock }).last(10)).toHaveLength(3);
  });

  it("reads the newest records back from any text: blank and unreadable lines skipped, a first line included", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const line = (error: string) =>
      JSON.stringify({ ts: "2026-02-07T07:00:00.000Z", kind: "reply-error", error });
    const trace = new Trace({ dataDir, clock });
    await mkdir(dataDir, { recursive: true });
    await writeFile(trace.file, `\n${line("first")}\n\nnot json\n${line("second")}`);
    expect(errors(await trace.last(10))).toEqual(["first", "second"]);
    expect(errors(await trace.last(1))).toEqual(["second"]);
    await writeFile(trace.file, `${line("only")}\n`);
    expect(errors(await trace.last(10))).toEqual(["only"]);
    await writeFile(trace.file, "");
    expect(await trace.last(10)).toEqual([]);
  });

  it("with writeOnFlush (simulations only), records wait in memory until flushed or read", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const trace = new Trace({ dataDir, clock, writeOnFlush: true });
    await trace.append(failure("first"));
    await trace.append(failure("second"));
    expect(errors(await new Trace({ dataDir, clock }).last(10))).toEqual([]);
    expect(errors(await trace.last(10))).toEqual(["first", "second"]);
    expect(errors(await new Trace({ dataDir, clock }).last(10))).toEqual(["first", "second"]);
    await trace.append(failure("third"));
    await trace.flush();
    expect(errors(await new Trace({ dataDir, clock }).last(10))).toEqual(["first", "second", "third"]);
  });

  it("note never throws: a trace it cannot write is logged once, without the record's words", async () => {
    const parent = await tempDataDir();
    // The data directory is a file, so no trace can be written under it.
    const dataDir = join(parent, "not-a-directory");
    await mkdir(parent, { recursive: true });
    await writeFile(dataDir, "");
    const said: string[] = [];
    const logger = createLogger("info", false, { write: (line: string) => void said.push(line) });
    const trace = new Trace({ dataDir, clock: new SettableClock("2026-02-07T08:00:00.000Z"), logger });

    await expect(trace.append(failure("Sister's wedding"))).rejects.toThrow();
    await expect(trace.note(failure("Sister's wedding"))).resolves.toBeUndefined();
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("could not write the trace");
    expect(said[0]).not.toContain("wedding");
  });

  it("keeps records in call order when many are appended at once", async () => {
    const dataDir = await tempDataDir();
    const trace = new Trace({ dataDir, clock: new SettableClock("2026-02-07T08:00:00.000Z") });
    await Promise.all(Array.from({ length: 50 }, (_, i) => trace.append(failure(`turn ${i}`))));
    expect(errors(await trace.last(50))).toEqual(Array.from({ length: 50 }, (_, i) => `turn ${i}`));
  });

  it.each([
    ["", false],
    [", also when records wait for a flush", true],
  ])(
    "rotates at half the size budget, keeping the total bounded and the newest lines readable%s",
    async (_, writeOnFlush) => {
      const dataDir = await tempDataDir();
      const trace = new Trace({
        dataDir,
        clock: new SettableClock("2026-02-07T08:00:00.000Z"),
        maxBytes: 4000,
        writeOnFlush,
      });
      for (let i = 0; i < 100; i++) await trace.append(failure(`turn ${i} ${"x".repeat(50)}`));
      await trace.flush();
      const files = (await readdir(dataDir)).sort();
      expect(files).toEqual(["trace.1.jsonl", "trace.jsonl"]);
      const total = (await stat(trace.file)).size + (await stat(trace.rotatedFile)).size;
      expect(total).toBeLessThanOrEqual(4000);
      expect(await modeOf(trace.rotatedFile)).toBe(0o600);
      const last = await trace.last(20);
      expect(errors(last)).toEqual(Array.from({ length: 20 }, (_, i) => `turn ${80 + i} ${"x".repeat(50)}`));
    },
  );

  it("deletes lines older than the age limit for real, from the current and the rotated file", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-01-01T08:00:00.000Z");
    const trace = new Trace({ dataDir, clock, maxAgeDays: 30, maxBytes: 3000 });
    for (let i = 0; i < 40; i++) await trace.append(failure(`january ${i} ${"y".repeat(40)}`));
    expect((await readdir(dataDir)).sort()).toEqual(["trace.1.jsonl", "trace.jsonl"]);
    clock.advanceMinutes(20 * DAY);
    await trace.append(failure("recent"));
    clock.advanceMinutes(11 * DAY);
    await trace.append(failure("new"));

    const onDisk = (
      await Promise.all((await readdir(dataDir)).map((f) => readFile(join(dataDir, f), "utf8")))
    ).join("");
    expect(onDisk).not.toContain("january");
    expect(errors(await trace.last(10))).toEqual(["recent", "new"]);
  });

  it("sweeps expired lines left by an earlier process on its first write", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-01-01T08:00:00.000Z");
    await new Trace({ dataDir, clock }).append(failure("old"));
    clock.advanceMinutes(31 * DAY);
    const trace = new Trace({ dataDir, clock });
    await trace.append(failure("new"));
    expect(errors(await trace.last(10))).toEqual(["new"]);
  });

  it("drops a line torn by a crash instead of gluing the next record to it", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    await new Trace({ dataDir, clock }).append(failure("whole"));
    await appendFile(join(dataDir, "trace.jsonl"), '{"ts":"2026-02-07T08:00:00.000Z","ki');
    const trace = new Trace({ dataDir, clock });
    await trace.append(failure("after"));
    const lines = (await readFile(trace.file, "utf8")).trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line).error)).toEqual(["whole", "after"]);
    expect((await readdir(dataDir)).sort()).toEqual(["trace.jsonl", "trace.jsonl.damaged-20260207T080000Z"]);
  });

  it("keeps a damaged file whole beside it, owner-only, and says so once without its text, before repairing it", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const good = JSON.stringify({ ts: "2026-02-07T07:00:00.000Z", kind: "reply" });
    const original = `${good}\nnot a record: the secret toast\n${good}\n`;
    await writeFile(join(dataDir, "trace.jsonl"), original);
    await writeFile(join(dataDir, "trace.1.jsonl"), `${good}\n`);
    const said: string[] = [];
    const logger = createLogger("info", false, { write: (line: string) => void said.push(line) });

    const trace = new Trace({ dataDir, clock, logger });
    await trace.append(failure("after"));
    const copy = join(dataDir, "trace.jsonl.damaged-20260207T080000Z");
    expect(await readFile(copy, "utf8")).toBe(original);
    expect(await modeOf(copy)).toBe(0o600);
    expect((await readFile(trace.file, "utf8")).split("\n").filter(Boolean)).toHaveLength(3);
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0] as string)).toMatchObject({
      level: 40,
      file: trace.file,
      copy,
      unreadableLines: 1,
    });
    expect(said[0]).not.toContain("toast");

    // A second damaged copy in the same second does not overwrite the first.
    await appendFile(trace.file, "torn again");
    await new Trace({ dataDir, clock, logger }).append(failure("later"));
    expect(await readFile(copy, "utf8")).toBe(original);
    expect(await readFile(`${copy}-2`, "utf8")).toContain("torn again");
  });

  it("deletes damaged copies once they are as old as the age limit, like the lines they hold", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    await writeFile(join(dataDir, "trace.jsonl"), "damaged\n");
    await new Trace({ dataDir, clock }).append(failure("first"));
    expect(await readdir(dataDir)).toContain("trace.jsonl.damaged-20260207T080000Z");

    clock.advanceMinutes(29 * DAY);
    await new Trace({ dataDir, clock }).append(failure("second"));
    expect(await readdir(dataDir)).toContain("trace.jsonl.damaged-20260207T080000Z");
    clock.advanceMinutes(2 * DAY);
    await new Trace({ dataDir, clock }).append(failure("third"));
    expect((await readdir(dataDir)).filter((name) => name.includes("damaged"))).toEqual([]);
  });

  it("deleteWhere removes the records it picks from both files and says how many", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const trace = new Trace({ dataDir, clock, maxBytes: 1200 });
    const turn = (n: number) => failure(`${n} ${"z".repeat(40)}`);
    const numbers = (records: readonly TraceLine[]) =>
      errors(records).map((e) => Number.parseInt(String(e), 10));
    for (let i = 0; i < 8; i++) await trace.append(turn(i));
    expect(await readdir(dataDir)).toContain("trace.1.jsonl");
    expect(await trace.deleteWhere((record) => Number.parseInt(String(record.error), 10) % 2 === 0)).toBe(4);
    expect(numbers(await trace.last(10))).toEqual([1, 3, 5, 7]);
    await trace.append(turn(8));
    expect(numbers(await trace.last(10))).toEqual([1, 3, 5, 7, 8]);
  });

  it("deleteAll removes every trace file", async () => {
    const dataDir = await tempDataDir();
    const trace = new Trace({
      dataDir,
      clock: new SettableClock("2026-02-07T08:00:00.000Z"),
      maxBytes: 1000,
    });
    for (let i = 0; i < 30; i++) await trace.append(failure("z".repeat(50)));
    await writeFile(join(dataDir, ".trace.jsonl.crashed.tmp"), "a sweep cut short by a crash");
    await trace.deleteAll();
    expect(await readdir(dataDir)).toEqual([]);
    expect(await trace.last(5)).toEqual([]);
  });
});
