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

  it("asked again and again, answers for each moment's own local day, after a midnight a clock change skips too", async () => {
    const mind = await openMind(dataDir, new SettableClock("2026-09-07T12:00:00.000Z"));
    // Santiago's clocks jump from 00:00 to 01:00 on 6 September 2026; the 7th starts at 00:00 (03:00Z).
    const sixth = usageRecord("2026-09-06T23:00:00.000Z", 100);
    const seventh = usageRecord("2026-09-07T03:10:00.000Z", 1000);
    await recordUsage(mind, [sixth, seventh], new Date("2026-09-07T12:00:00.000Z"));
    const each = (input: number) => input + 10 + 5;
    const onDayOf = (iso: string) => tokensOnLocalDay(mind.read(), new Date(iso), "America/Santiago");
    // The 6th runs from its 01:00 to the 7th's 00:00 (23 hours): the 7th's record is not the 6th's.
    expect(onDayOf("2026-09-06T15:00:00.000Z")).toBe(each(100));
    expect(onDayOf("2026-09-07T03:30:00.000Z")).toBe(each(1000));
    expect(onDayOf("2026-09-06T15:00:00.000Z")).toBe(each(100));
    expect(onDayOf("2026-09-07T02:59:59.999Z")).toBe(each(100));
    expect(tokensOnLocalDay(mind.read(), new Date("2026-09-07T03:30:00.000Z"), "UTC")).toBe(each(1000));
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
