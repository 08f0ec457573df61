import { describe, expect, it } from "vitest";
import { SettableClock, systemTimers, VirtualTimers } from "../../src/core/clock.ts";
import { InFlight, settledWithin } from "../../src/core/in-flight.ts";

function deferred<T = void>(): {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (e: unknown) => void;
} {
  let resolve: (value: T) => void = () => undefined;
  let reject: (e: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("InFlight", () => {
  it("is busy while tracked work runs, and settled() waits for all of it", async () => {
    const work = new InFlight();
    const a = deferred();
    const b = deferred();
    work.track(a.promise);
    work.track(b.promise);
    expect(work.busy).toBe(true);
    let settled = false;
    const waiting = work.settled().then(() => {
      settled = true;
    });
    a.resolve();
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    b.resolve();
    await waiting;
    expect(work.busy).toBe(false);
  });

  it("hands each failure to onError instead of rejecting, and keeps tracking the rest", async () => {
    const failures: unknown[] = [];
    const work = new InFlight((error) => failures.push(error));
    const failing = deferred();
    const fine = deferred();
    work.track(failing.promise);
    work.track(fine.promise);
    failing.reject(new Error("reply failed"));
    fine.resolve();
    await work.settled();
    expect(failures).toEqual([new Error("reply failed")]);
    expect(work.busy).toBe(false);
  });

  it("drops a failure quietly when no onError is given (no unhandled rejection)", async () => {
    const work = new InFlight();
    work.track(Promise.reject(new Error("ignored")));
    await work.settled();
    expect(work.busy).toBe(false);
  });

  it("settled() also waits for work tracked while it waits", async () => {
    const work = new InFlight();
    const first = deferred();
    const second = deferred();
    work.track(first.promise.then(() => work.track(second.promise)));
    let settled = false;
    const waiting = work.settled().then(() => {
      settled = true;
    });
    first.resolve();
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    second.resolve();
    await waiting;
  });

  it("settledWithin() gives up at the bound, on the timers it is given", async () => {
    const clock = new SettableClock("2026-03-04T09:00:00Z");
    const timers = new VirtualTimers(clock);
    const work = new InFlight();
    const stuck = deferred();
    work.track(stuck.promise);
    let result: boolean | undefined;
    const waiting = work.settledWithin(5_000, timers).then((r) => {
      result = r;
    });
    await timers.advanceTo(new Date("2026-03-04T09:00:04.999Z"));
    await new Promise((r) => setImmediate(r));
    expect(result).toBeUndefined();
    await timers.advanceTo(new Date("2026-03-04T09:00:05Z"));
    await waiting;
    expect(result).toBe(false);
    expect(work.busy).toBe(true);
    stuck.resolve();
  });

  it("settledWithin() says true and leaves no timer behind when the work ends first", async () => {
    const clock = new SettableClock("2026-03-04T09:00:00Z");
    const timers = new VirtualTimers(clock);
    const work = new InFlight();
    const quick = deferred();
    work.track(quick.promise);
    const waiting = work.settledWithin(5_000, timers);
    expect(timers.next()?.toISOString()).toBe("2026-03-04T09:00:05.000Z");
    quick.resolve();
    expect(await waiting).toBe(true);
    expect(timers.next()).toBeNull();
    expect(await new InFlight().settledWithin(0, systemTimers)).toBe(true);
  });
});

describe("settledWithin", () => {
  it("counts a rejection as settled", async () => {
    expect(await settledWithin(Promise.reject(new Error("no")), 1_000, systemTimers)).toBe(true);
  });
});
