import { describe, expect, it } from "vitest";
import { SettableClock, systemTimers, VirtualTimers } from "../../src/core/clock.ts";

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

describe("VirtualTimers", () => {
  const at = (iso: string) => new Date(iso);

  it("fires nothing until the clock is moved, then each timer at its own instant, in order", async () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    const timers = new VirtualTimers(clock);
    const fired: string[] = [];
    timers.after(30_000, () => fired.push(`30 s at ${clock.now().toISOString()}`));
    timers.after(5_000, () => fired.push(`5 s at ${clock.now().toISOString()}`));
    timers.after(5_000, () => fired.push(`second 5 s at ${clock.now().toISOString()}`));
    expect(fired).toEqual([]);
    expect(timers.next()?.toISOString()).toBe("2026-02-07T08:00:05.000Z");
    await timers.advanceTo(at("2026-02-07T08:00:10Z"));
    expect(fired).toEqual(["5 s at 2026-02-07T08:00:05.000Z", "second 5 s at 2026-02-07T08:00:05.000Z"]);
    expect(clock.now().toISOString()).toBe("2026-02-07T08:00:10.000Z");
    await timers.advanceTo(at("2026-02-07T09:00:00Z"));
    expect(fired.at(-1)).toBe("30 s at 2026-02-07T08:00:30.000Z");
    expect(timers.next()).toBeNull();
  });

  it("fires a timer that firing starts, when it is due before the target", async () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    const timers = new VirtualTimers(clock);
    const fired: string[] = [];
    const retry = () => {
      fired.push(clock.now().toISOString());
      if (fired.length < 5) timers.after(15_000, retry);
    };
    timers.after(15_000, retry);
    await timers.advanceTo(at("2026-02-07T08:01:00Z"));
    expect(fired).toEqual([
      "2026-02-07T08:00:15.000Z",
      "2026-02-07T08:00:30.000Z",
      "2026-02-07T08:00:45.000Z",
      "2026-02-07T08:01:00.000Z",
    ]);
    expect(timers.next()?.toISOString()).toBe("2026-02-07T08:01:15.000Z");
  });

  it("awaits the settle step after each firing, before time moves on", async () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    const timers = new VirtualTimers(clock);
    const seen: string[] = [];
    let work: Promise<void> = Promise.resolve();
    timers.after(1_000, () => {
      work = (async () => {
        await new Promise((r) => setImmediate(r));
        seen.push(`work done at ${clock.now().toISOString()}`);
      })();
    });
    timers.after(2_000, () => seen.push(`next timer at ${clock.now().toISOString()}`));
    await timers.advanceTo(at("2026-02-07T08:00:02Z"), () => work);
    expect(seen).toEqual(["work done at 2026-02-07T08:00:01.000Z", "next timer at 2026-02-07T08:00:02.000Z"]);
  });

  it("forgets a cancelled timer, and cancelling twice or after firing is harmless", async () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    const timers = new VirtualTimers(clock);
    const fired: string[] = [];
    const cancelled = timers.after(1_000, () => fired.push("cancelled"));
    const kept = timers.after(2_000, () => fired.push("kept"));
    cancelled.cancel();
    cancelled.cancel();
    await timers.advanceTo(at("2026-02-07T08:00:05Z"));
    kept.cancel();
    expect(fired).toEqual(["kept"]);
  });

  it("fires a timer that fell behind the clock at the current instant, never moving time back", async () => {
    const clock = new SettableClock("2026-02-07T08:00:00Z");
    const timers = new VirtualTimers(clock);
    const fired: string[] = [];
    timers.after(1_000, () => fired.push(clock.now().toISOString()));
    clock.set("2026-02-07T08:10:00Z");
    await timers.advanceTo(at("2026-02-07T08:10:00Z"));
    expect(fired).toEqual(["2026-02-07T08:10:00.000Z"]);
    await expect(timers.advanceTo(at("2026-02-07T08:00:00Z"))).rejects.toThrow(/backwards/);
  });
});

describe("systemTimers", () => {
  it("fires after real time passes, and not once cancelled", async () => {
    const fired: string[] = [];
    const cancelled = systemTimers.after(1, () => fired.push("cancelled"));
    cancelled.cancel();
    await new Promise<void>((resolve) => systemTimers.after(5, resolve, { keepAlive: false }));
    expect(fired).toEqual([]);
  });
});
