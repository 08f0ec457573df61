import { describe, expect, it } from "vitest";
import { SettableClock } from "../src/clock.ts";

describe("SettableClock", () => {
  it("moves only when told, and never backwards", () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    expect(clock.now().toISOString()).toBe("2026-02-07T08:00:00.000Z");
    clock.advanceMinutes(90);
    expect(clock.now().toISOString()).toBe("2026-02-07T09:30:00.000Z");
    expect(() => clock.set("2026-02-07T09:00:00Z")).toThrow(/backwards/);
    expect(() => new SettableClock("yesterday")).toThrow(/not a valid instant/);
  });

  it("hands out copies, so callers cannot move time by mutating a Date", () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    clock.now().setUTCFullYear(1999);
    expect(clock.now().getUTCFullYear()).toBe(2026);
  });
});
