import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type MindStore, openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import type { UsageRecord } from "../../src/core/usage.ts";
import { forget } from "../../src/mind/forget.ts";
import { lines } from "./items.ts";

let root: string;
let dataDir: string;
let clock: SettableClock;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-forget-"));
  dataDir = join(root, "data");
  clock = new SettableClock("2026-11-22T10:00:00.000Z");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const usage = (ts: string, input: number): UsageRecord => ({
  ts,
  purpose: "reply",
  model: "claude-test",
  input,
  output: 10,
  cacheWrite: 0,
  cacheRead: 5,
});

describe("forgetting", () => {
  async function remembering(): Promise<MindStore> {
    const mind = await openMind(dataDir, clock);
    await mind.update((m) => {
      m.memory.push(
        {
          id: "m1",
          kind: "open_loop",
          text: "Waiting to hear from Dr Alvarez about the scan",
          learnedAt: "2026-11-20T10:00:00.000Z",
          sourceMessageIds: ["x"],
          importance: 4,
          topics: ["health"],
        },
        {
          id: "m2",
          kind: "pattern",
          text: "Walks the dog at seven",
          learnedAt: "2026-11-20T10:00:00.000Z",
          sourceMessageIds: [],
          importance: 2,
          topics: [],
        },
      );
      m.scratchpad.understanding_known = lines("- (user) sees dr alvarez monthly\n- (user) has a dog");
      m.threads.list[0]?.notes.push({
        ts: "2026-11-20T10:00:00.000Z",
        text: "Dr Alvarez called",
        kind: "note",
      });
      m.usage.push({ ...usage("2026-11-22T09:00:00.000Z", 10) });
    });
    return mind;
  }

  it("forget deletes matching items, lines and notes for real and says which", async () => {
    const mind = await remembering();
    const result = await forget(mind, "dr  ALVAREZ");
    expect(result.memory.map((i) => i.id)).toEqual(["m1"]);
    expect(result.scratchpadLines).toEqual(["UNDERSTANDING.Known: - (user) sees dr alvarez monthly"]);
    expect(result.threadNotes).toEqual(["Dr Alvarez called"]);
    const file = await readFile(mind.file, "utf8");
    expect(file.toLowerCase()).not.toContain("alvarez");
    expect(file).toContain("Walks the dog at seven");
    expect(mind.read().scratchpad.understanding_known.map((i) => i.text)).toEqual(["- (user) has a dog"]);
  });

  it("forget takes retired items too, and a blank text forgets nothing", async () => {
    const mind = await remembering();
    await mind.update((m) => {
      const scan = m.memory.find((item) => item.id === "m1");
      if (scan) Object.assign(scan, { retiredAt: "2026-11-21T10:00:00.000Z", retiredWhy: "closed" });
    });
    expect((await forget(mind, " \n ")).memory).toEqual([]);
    expect(mind.read().memory).toHaveLength(2);
    const result = await forget(mind, "SCAN");
    expect(result.memory.map((i) => i.id)).toEqual(["m1"]);
    expect(mind.read().memory.map((i) => i.id)).toEqual(["m2"]);
  });
});
