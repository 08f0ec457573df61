import { describe, expect, it } from "vitest";
import { ReplySettle, type SettleTimes } from "../../src/companion/reply-settle.ts";
import { SettableClock, VirtualTimers } from "../../src/core/clock.ts";

/** A settle over virtual time that counts the replies it starts and the "typing…" it shows. */
function settleOver(times: SettleTimes, options: { working?: boolean } = {}) {
  const clock = new SettableClock("2026-03-10T10:00:00Z");
  const timers = new VirtualTimers(clock);
  const start = clock.now().getTime();
  const replies: number[] = [];
  const working = { shown: 0, stopped: 0 };
  const settle = new ReplySettle({
    times,
    timers,
    reply: async () => undefined,
    ...(options.working === false
      ? {}
      : {
          showWorking: () => {
            working.shown += 1;
            return () => {
              working.stopped += 1;
            };
          },
        }),
    started: () => replies.push((clock.now().getTime() - start) / 1_000),
  });
  const at = (seconds: number) => timers.advanceTo(new Date(start + seconds * 1_000));
  return { settle, replies, working, at, timers };
}

describe("ReplySettle", () => {
  it("answers a burst once, the pause after its latest message, showing the companion working meanwhile", async () => {
    const { settle, replies, working, at } = settleOver({ pauseMs: 1_500, maxMs: 5_000 });
    settle.arrived();
    await at(1);
    settle.arrived();
    await at(2.4);
    expect(replies).toEqual([]);
    expect(working).toEqual({ shown: 1, stopped: 0 });
    await at(2.5);
    expect(replies).toEqual([2.5]);
    expect(working).toEqual({ shown: 1, stopped: 1 });
    // Alone, a later message waits the pause from itself.
    await at(10);
    settle.arrived();
    await at(11.5);
    expect(replies).toEqual([2.5, 11.5]);
    expect(working).toEqual({ shown: 2, stopped: 2 });
  });

  it("answers someone who keeps writing at the bound from the burst's first message", async () => {
    const { settle, replies, at } = settleOver({ pauseMs: 1_500, maxMs: 5_000 });
    for (let second = 0; second <= 7; second += 1) {
      await at(second);
      settle.arrived();
    }
    expect(replies).toEqual([5]);
    // The messages after the reply started are a new burst, with a bound of their own.
    await at(20);
    expect(replies).toEqual([5, 8.5]);
  });

  it("starts the reply a burst waits for when flushed (the channel stops), and then nothing more", async () => {
    const { settle, replies, working, at, timers } = settleOver({ pauseMs: 1_500, maxMs: 5_000 });
    settle.flush();
    expect(replies).toEqual([]);
    settle.arrived();
    await at(0.5);
    settle.flush();
    expect(replies).toEqual([0.5]);
    expect(working).toEqual({ shown: 1, stopped: 1 });
    expect(timers.next()).toBeNull();
  });

  it("answers each message at once with a pause of 0 (the terminal), on no timer and with no typing", () => {
    const { settle, replies, working, timers } = settleOver({ pauseMs: 0, maxMs: 0 });
    settle.arrived();
    settle.arrived();
    expect(replies).toEqual([0, 0]);
    expect(working).toEqual({ shown: 0, stopped: 0 });
    expect(timers.next()).toBeNull();
  });

  it("settles without showing anything on a channel that cannot show the companion working", async () => {
    const { settle, replies, at } = settleOver({ pauseMs: 1_500, maxMs: 5_000 }, { working: false });
    settle.arrived();
    await at(1.5);
    expect(replies).toEqual([1.5]);
  });
});
