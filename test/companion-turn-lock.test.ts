import { describe, expect, it } from "vitest";
import { TurnLock } from "../src/turn-lock.ts";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("TurnLock", () => {
  it("runs turns one at a time, first in first out", async () => {
    const lock = new TurnLock();
    const events: string[] = [];
    const gate = deferred();
    const a = lock.run(async () => {
      events.push("a start");
      await gate.promise;
      events.push("a end");
    });
    const b = lock.run(async () => {
      events.push("b");
    });
    const c = lock.run(async () => {
      events.push("c");
    });
    await Promise.resolve();
    expect(events).toEqual(["a start"]);
    expect(lock.busy).toBe(true);
    gate.resolve();
    await Promise.all([a, b, c]);
    expect(events).toEqual(["a start", "a end", "b", "c"]);
    expect(lock.busy).toBe(false);
  });

  it("keeps going after a turn fails", async () => {
    const lock = new TurnLock();
    const failed = lock.run(async () => {
      throw new Error("boom");
    });
    const next = lock.run(async () => "fine");
    await expect(failed).rejects.toThrow("boom");
    await expect(next).resolves.toBe("fine");
  });

  it("coalesces calls of one kind while one is waiting, not while it runs", async () => {
    const lock = new TurnLock();
    const gate = deferred();
    let runs = 0;
    const blocker = lock.run(() => gate.promise);
    const first = lock.runCoalesced("reply", async () => ++runs);
    const joined = lock.runCoalesced("reply", async () => ++runs);
    const other = lock.runCoalesced("heartbeat", async () => "hb");
    expect(joined).toBe(first);
    gate.resolve();
    await blocker;
    expect(await first).toBe(1);
    expect(await other).toBe("hb");
    const later = await lock.runCoalesced("reply", async () => ++runs);
    expect(later).toBe(2);
  });

  it("idle() waits for everything queued", async () => {
    const lock = new TurnLock();
    const done: number[] = [];
    for (let i = 0; i < 3; i++) {
      void lock.run(async () => {
        await new Promise((r) => setTimeout(r, 5));
        done.push(i);
      });
    }
    await lock.idle();
    expect(done).toEqual([0, 1, 2]);
  });
});
