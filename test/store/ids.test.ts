import { describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import { createIdGenerator } from "../../src/store/ids.ts";

describe("createIdGenerator", () => {
  it("makes unique ids that sort in creation order while the clock stands still", () => {
    const next = createIdGenerator(new SettableClock("2026-02-07T08:00:00.000Z"));
    const ids = Array.from({ length: 1000 }, () => next());
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort()).toEqual(ids);
  });

  it("sorts ids by the clock's time across milliseconds", () => {
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const next = createIdGenerator(clock);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      ids.push(next());
      clock.advanceMinutes(1 / 60_000);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  });
});
