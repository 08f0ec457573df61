import { describe, expect, it } from "vitest";
import { SerialQueue } from "../../src/core/serial-queue.ts";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("SerialQueue", () => {
  it("runs jobs one at a time, first in first out", async () => {
    const queue = new SerialQueue();
    const events: string[] = [];
    const gate = deferred();
    const a = queue.run(async () => {
      events.push("a start");
      await gate.promise;
      events.push("a end");
    });
    const b = queue.run(async () => {
      events.push("b");
    });
    const c = queue.run(async () => {
      events.push("c");
    });
    await Promise.resolve();
    expect(events).toEqual(["a start"]);
    expect(queue.busy).toBe(true);
    gate.resolve();
    await Promise.all([a, b, c]);
    expect(events).toEqual(["a start", "a end", "b", "c"]);
    expect(queue.busy).toBe(false);
  });

  it("keeps going after a job fails, which rejects only its own promise", async () => {
    const queue = new SerialQueue();
    const failed = queue.run(async () => {
      throw new Error("boom");
    });
    const thrownSync = queue.run(() => {
      throw new Error("thrown before any await");
    });
    const next = queue.run(async () => "fine");
    await expect(failed).rejects.toThrow("boom");
    await expect(thrownSync).rejects.toThrow("thrown before any await");
    await expect(next).resolves.toBe("fine");
    expect(queue.busy).toBe(false);
  });

  it("never starts a job inside run(), even when idle", async () => {
    const queue = new SerialQueue();
    let started = false;
    const job = queue.run(async () => {
      started = true;
    });
    expect(started).toBe(false);
    await job;
    expect(started).toBe(true);
  });

  it("runs a job added by a running job after it, and after those added before", async () => {
    const queue = new SerialQueue();
    const order: string[] = [];
    let inner: Promise<void> | undefined;
    const outer = queue.run(async () => {
      order.push("outer");
      inner = queue.run(async () => {
        order.push("added while running");
      });
    });
    const second = queue.run(async () => {
      order.push("added before");
    });
    await outer;
    await second;
    await inner;
    expect(order).toEqual(["outer", "added before", "added while running"]);
  });

  it("coalesces calls of one key while one is waiting, not while it runs", async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    let runs = 0;
    const blocker = queue.run(() => gate.promise);
    const first = queue.runCoalesced("reply", async () => ++runs);
    const joined = queue.runCoalesced("reply", async () => ++runs);
    const other = queue.runCoalesced("heartbeat", async () => "hb");
    expect(joined).toBe(first);
    gate.resolve();
    await blocker;
    expect(await first).toBe(1);
    expect(await other).toBe("hb");
    const later = await queue.runCoalesced("reply", async () => ++runs);
    expect(later).toBe(2);
  });

  it("does not coalesce with a job of the same key that already started", async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    const started = deferred();
    let runs = 0;
    const running = queue.runCoalesced("reply", async () => {
      runs += 1;
      started.resolve();
      await gate.promise;
      return runs;
    });
    await started.promise;
    const queued = queue.runCoalesced("reply", async () => ++runs);
    expect(queued).not.toBe(running);
    gate.resolve();
    expect(await running).toBe(1);
    expect(await queued).toBe(2);
  });

  it("lets a failed coalesced job's callers see the failure, and the key be used again", async () => {
    const queue = new SerialQueue();
    const gate = deferred();
    const blocker = queue.run(() => gate.promise);
    const first = queue.runCoalesced("reply", async () => {
      throw new Error("model away");
    });
    const joined = queue.runCoalesced("reply", async () => "never runs");
    gate.resolve();
    await blocker;
    await expect(first).rejects.toThrow("model away");
    await expect(joined).rejects.toThrow("model away");
    await expect(queue.runCoalesced("reply", async () => "next")).resolves.toBe("next");
  });

  it("idle() waits for everything queued, jobs added meanwhile included", async () => {
    const queue = new SerialQueue();
    const done: string[] = [];
    for (let i = 0; i < 3; i++) {
      void queue.run(async () => {
        await new Promise((r) => setImmediate(r));
        done.push(String(i));
        if (i === 2) {
          void queue.run(async () => {
            done.push("added by the last");
          });
        }
      });
    }
    const failed = queue.run(async () => {
      throw new Error("a failure does not end idle() early");
    });
    failed.catch(() => undefined);
    await queue.idle();
    expect(done).toEqual(["0", "1", "2", "added by the last"]);
    expect(queue.busy).toBe(false);
  });
});
