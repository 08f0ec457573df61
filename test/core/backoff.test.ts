import { describe, expect, it } from "vitest";
import { Backoff, backoffDelay, waitToRetry } from "../../src/core/backoff.ts";
import { SettableClock, type Timers, VirtualTimers } from "../../src/core/clock.ts";

/** The waits a schedule gives for failures 1..n in a row. */
function waits(backoff: Backoff, n: number): number[] {
  return Array.from({ length: n }, () => backoff.next());
}

describe("backoffDelay", () => {
  it("reads a table by the count of failures, and repeats its last wait", () => {
    const table = { delaysMs: [30_000, 120_000, 600_000] };
    expect([1, 2, 3, 4, 10].map((n) => backoffDelay(table, n))).toEqual([
      30_000, 120_000, 600_000, 600_000, 600_000,
    ]);
  });

  it("doubles from the first wait and stops at the longest", () => {
    const doubling = { firstMs: 1_000, maxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((n) => backoffDelay(doubling, n))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it("keeps a first wait above the longest as it is, and caps the doubled ones", () => {
    expect([1, 2, 3].map((n) => backoffDelay({ firstMs: 50, maxMs: 40 }, n))).toEqual([50, 40, 40]);
  });

  it("refuses an empty table instead of waiting nothing", () => {
    expect(() => backoffDelay({ delaysMs: [] }, 1)).toThrow(RangeError);
  });
});

describe("Backoff", () => {
  it("counts its failures and starts over on reset", () => {
    const backoff = new Backoff({ delaysMs: [5_000, 15_000, 41_000] });
    expect(waits(backoff, 4)).toEqual([5_000, 15_000, 41_000, 41_000]);
    backoff.reset();
    expect(waits(backoff, 2)).toEqual([5_000, 15_000]);
  });

  it("gives the doubling waits one after another", () => {
    expect(waits(new Backoff({ firstMs: 500, maxMs: 5_000 }), 6)).toEqual([
      500, 1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
  });
});

describe("waitToRetry", () => {
  const start = new Date("2025-03-01T12:00:00Z");
  const at = (ms: number) => new Date(start.getTime() + ms);

  it("waits on the timers it is given: virtual time, not the machine's", async () => {
    const timers = new VirtualTimers(new SettableClock(start));
    let done = false;
    const waiting = waitToRetry(timers, 2_000).then(() => {
      done = true;
    });
    await timers.advanceTo(at(1_999));
    await Promise.resolve();
    expect(done).toBe(false);
    await timers.advanceTo(at(2_000));
    await waiting;
    expect(done).toBe(true);
  });

  it("rejects as soon as the signal aborts, and calls its timer off", async () => {
    const timers = new VirtualTimers(new SettableClock(start));
    const controller = new AbortController();
    const waiting = waitToRetry(timers, 60_000, controller.signal);
    expect(timers.next()).toEqual(at(60_000));
    controller.abort();
    await expect(waiting).rejects.toThrow("aborted while waiting to retry");
    expect(timers.next()).toBeNull();
  });

  it("rejects at once when the signal has already aborted, starting no timer", async () => {
    const timers = new VirtualTimers(new SettableClock(start));
    const controller = new AbortController();
    controller.abort();
    await expect(waitToRetry(timers, 1_000, controller.signal)).rejects.toThrow(
      "aborted while waiting to retry",
    );
    expect(timers.next()).toBeNull();
  });

  it("resolves when the timers fire at once, and a later abort changes nothing", async () => {
    const recorded: number[] = [];
    const immediate: Timers = {
      after(ms, fire) {
        recorded.push(ms);
        fire();
        return { cancel() {} };
      },
    };
    const controller = new AbortController();
    await waitToRetry(immediate, 300, controller.signal);
    controller.abort();
    expect(recorded).toEqual([300]);
  });
});
