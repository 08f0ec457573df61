import { beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { recordUsage, tokensOnLocalDay } from "../../src/core/usage.ts";
import { tempDataDir } from "../store/helpers.ts";
import { usageRecord } from "../support/mind-fixtures.ts";

let dataDir: string;
let clock: SettableClock;

beforeEach(async () => {
  dataDir = await tempDataDir();
  clock = new SettableClock("2026-11-22T10:00:00.000Z");
});

describe("the usage ledger", () => {
  it("counts tokens on the person's local day, not the UTC day", async () => {
    const mind = await openMind(dataDir, clock);
    // 23:30 on the 21st in New York is 04:30Z on the 22nd; 01:00Z on the 22nd is still the 21st there.
    await recordUsage(mind, [usageRecord("2026-11-22T04:30:00.000Z", 100)], clock.now());
    await recordUsage(mind, [usageRecord("2026-11-22T01:00:00.000Z", 1000)], clock.now());
    await recordUsage(mind, [usageRecord("2026-11-22T09:00:00.000Z", 50)], clock.now());
    const each = (input: number) => input + 10 + 5;
    expect(tokensOnLocalDay(mind.read(), clock.now(), "UTC")).toBe(each(100) + each(1000) + each(50));
    expect(tokensOnLocalDay(mind.read(), clock.now(), "America/New_York")).toBe(each(50));
    expect(tokensOnLocalDay(mind.read(), new Date("2026-11-21T12:00:00Z"), "America/New_York")).toBe(
      each(100) + each(1000),
    );
  });

  it("places a time spelled otherwise (a file edited by hand) on its day, the day's first millisecond included", async () => {
    const mind = await openMind(dataDir, clock);
    const calls = [
      usageRecord("2026-11-21T23:59:59Z", 1),
      usageRecord("2026-11-22T00:00:00.000Z", 10),
      usageRecord("2026-11-22T00:00:00Z", 100),
      usageRecord("2026-11-22T23:59:59.9999Z", 1000),
      usageRecord("2026-11-23T00:00:00.000Z", 10000),
    ];
    await recordUsage(mind, calls, clock.now());
    const each = (input: number) => input + 10 + 5;
    expect(tokensOnLocalDay(mind.read(), clock.now(), "UTC")).toBe(each(10) + each(100) + each(1000));
  });

  it("drops detailed records after eight days and keeps the daily totals", async () => {
    const mind = await openMind(dataDir, clock);
    await recordUsage(mind, [usageRecord("2026-11-10T10:00:00.000Z", 300)], clock.now());
    await recordUsage(mind, [usageRecord("2026-11-22T09:00:00.000Z", 20)], clock.now());
    const state = mind.read();
    expect(state.usage.map((u) => u.ts)).toEqual(["2026-11-22T09:00:00.000Z"]);
    expect(state.usageDaily["2026-11-10"]).toEqual({
      calls: 1,
      input: 300,
      output: 10,
      cacheWrite: 0,
      cacheRead: 5,
    });
  });
});
