import { describe, expect, it } from "vitest";
import type { Message } from "../../src/core/message.ts";
import {
  applyThreadOps,
  flushMarkAfter,
  initialThreads,
  recentThreadNotes,
  type Threads,
  threadAt,
  workingMessages,
  workingMessageTokens,
} from "../../src/mind/threads.ts";

const t0 = new Date("2026-11-22T08:00:00.000Z");
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

function msg(id: string, minutes: number, text: string, role: Message["role"] = "user"): Message {
  return { id, ts: at(minutes).toISOString(), role, text, channel: "cli" };
}

function ok(result: ReturnType<typeof applyThreadOps>): Threads {
  if (!result.ok) throw new Error(result.reason);
  return result.threads;
}

describe("thread operations", () => {
  it("scope leaves its note in the origin and moves the conversation", () => {
    const threads = ok(
      applyThreadOps(
        initialThreads(t0),
        [{ op: "scope", name: "work", note: "they want to plan the launch" }],
        {
          now: at(10),
          switchAt: at(9),
        },
      ),
    );
    expect(threads.current).toBe("work");
    expect(threads.list.map((t) => t.name)).toEqual(["main", "work"]);
    expect(threads.list[0]?.notes).toEqual([
      { ts: at(10).toISOString(), text: "[→ work] they want to plan the launch", kind: "left" },
    ]);
    expect(threads.list[1]?.notes).toEqual([]);
    expect(threads.switches).toEqual([{ at: at(9).toISOString(), thread: "work" }]);
  });

  it("goto places its note in the destination", () => {
    const inWork = ok(
      applyThreadOps(initialThreads(t0), [{ op: "scope", name: "work", note: "launch plan" }], {
        now: at(10),
        switchAt: at(10),
      }),
    );
    const back = ok(
      applyThreadOps(inWork, [{ op: "goto", name: "Main", note: "launch moved to Friday" }], {
        now: at(30),
        switchAt: at(29),
      }),
    );
    expect(back.current).toBe("main");
    expect(back.list[0]?.notes.map((n) => n.text)).toEqual([
      "[→ work] launch plan",
      "[← work] launch moved to Friday",
    ]);
    expect(back.list[1]?.notes).toEqual([]);
    expect(recentThreadNotes(back).map((n) => n.kind)).toEqual(["left", "arrived"]);
  });

  it("note stays in the current thread; only the last five are recent", () => {
    let threads = initialThreads(t0);
    for (let i = 1; i <= 7; i++) {
      threads = ok(applyThreadOps(threads, [{ op: "note", note: `n${i}` }], { now: at(i), switchAt: at(i) }));
    }
    expect(recentThreadNotes(threads).map((n) => n.text)).toEqual(["n3", "n4", "n5", "n6", "n7"]);
  });

  it.each([
    [
      "goto to a thread that does not exist",
      [{ op: "goto" as const, name: "habits", note: "x" }],
      /no thread "habits"/,
    ],
    ["a name with a slash", [{ op: "scope" as const, name: "a/b", note: "x" }], /not a thread name/],
    ["a scope without a name", [{ op: "scope" as const, note: "x" }], /not a thread name/],
  ])("refuses %s, changing nothing", (_name, ops, reason) => {
    const before = initialThreads(t0);
    const result = applyThreadOps(before, ops, { now: at(1), switchAt: at(1) });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
    expect(before).toEqual(initialThreads(t0));
  });
});

describe("working messages", () => {
  const log = [
    msg("a1", 0, "Morning! Slept badly again."),
    msg("a2", 1, "Sorry to hear that. What kept you up?", "assistant"),
    msg("b1", 10, "Can we talk about the launch deck?"),
    msg("b2", 11, "Of course. Where are you stuck?", "assistant"),
    msg("a3", 40, "Back to sleep: I'll try no screens tonight."),
  ];
  const base = initialThreads(t0);
  const toWork = ok(
    applyThreadOps(base, [{ op: "scope", name: "work", note: "launch deck" }], {
      now: at(12),
      switchAt: at(10),
    }),
  );
  const backToMain = ok(
    applyThreadOps(toWork, [{ op: "goto", name: "main", note: "deck done" }], {
      now: at(41),
      switchAt: at(40),
    }),
  );

  it("a message belongs to the thread entered by the last switch at or before it", () => {
    expect(log.map((m) => threadAt(backToMain, m.ts))).toEqual(["main", "main", "work", "work", "main"]);
  });

  it("shows the current thread's messages only; other threads' are hidden", () => {
    expect(workingMessages(log, { threads: backToMain }, 10_000).kept.map((m) => m.id)).toEqual([
      "a1",
      "a2",
      "a3",
    ]);
    expect(workingMessages(log.slice(0, 4), { threads: toWork }, 10_000).kept.map((m) => m.id)).toEqual([
      "b1",
      "b2",
    ]);
  });

  it("sizes a message by its text, again when the text changes", () => {
    const message = msg("m", 1, "short");
    const before = workingMessageTokens(message);
    expect(workingMessageTokens(message)).toBe(before);
    message.text = "much longer ".repeat(20);
    expect(workingMessageTokens(message)).toBeGreaterThan(before + 30);
  });

  it("keeps the most recent messages within the budget", () => {
    const budget = workingMessageTokens(log[4] as Message) + workingMessageTokens(log[1] as Message);
    expect(workingMessages(log, { threads: backToMain }, budget).kept.map((m) => m.id)).toEqual(["a2", "a3"]);
  });

  it("tells reflection once which messages are leaving: out of the window or in its oldest quarter", () => {
    const big = Array.from({ length: 10 }, (_, i) => msg(`m${i}`, i, "word ".repeat(14)));
    const each = workingMessageTokens(big[0] as Message);
    const window = workingMessages(big, { threads: base }, each * 8);
    expect(window.kept.map((m) => m.id)).toEqual(["m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]);
    expect(window.evicting.map((m) => m.id)).toEqual(["m0", "m1", "m2", "m3"]);

    const flushedThrough = flushMarkAfter(undefined, window.evicting);
    expect(flushedThrough).toEqual({ messageId: "m3", ts: at(3).toISOString() });
    const next = workingMessages(big, { threads: base, flushedThrough }, each * 8);
    expect(next.evicting).toEqual([]);

    const more = [...big, msg("m10", 10, "word ".repeat(14)), msg("m11", 11, "word ".repeat(14))];
    expect(
      workingMessages(more, { threads: base, flushedThrough }, each * 8).evicting.map((m) => m.id),
    ).toEqual(["m4", "m5"]);
  });

  it("messages of other threads are never evicting", () => {
    expect(
      workingMessages(log, { threads: backToMain }, 30).evicting.every((m) => m.id.startsWith("a")),
    ).toBe(true);
  });
});
