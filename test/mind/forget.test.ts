import { readFile } from "node:fs/promises";
import { beforeEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import { forget } from "../../src/mind/forget.ts";
import { tempDataDir } from "../store/helpers.ts";
import { rememberingMind } from "../support/mind-fixtures.ts";

let dataDir: string;
let clock: SettableClock;

beforeEach(async () => {
  dataDir = await tempDataDir();
  clock = new SettableClock("2026-11-22T10:00:00.000Z");
});

describe("forgetting", () => {
  it("forget deletes matching items, lines and notes for real and says which", async () => {
    const mind = await rememberingMind(dataDir, clock);
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
    const mind = await rememberingMind(dataDir, clock);
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
