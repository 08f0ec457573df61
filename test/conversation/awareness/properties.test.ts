import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildAwarenessContext } from "../../../src/conversation/awareness/build.ts";
import {
  awarenessContextSchema,
  defaultAwarenessSettings,
} from "../../../src/conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../../../src/conversation/awareness/format.ts";
import type { Message } from "../../../src/core/message.ts";

const start = Date.parse("2026-03-27T00:00:00Z");
const end = Date.parse("2026-03-31T00:00:00Z");
const zones = [
  "UTC",
  "Europe/Madrid",
  "America/New_York",
  "Asia/Kolkata",
  "Pacific/Chatham",
  "Australia/Lord_Howe",
];

const text = fc.oneof(
  fc.constantFrom("", "k", "fine.", "How's the water?", "slept badly 😴", "Working out later 💪", "ok"),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
);

const message: fc.Arbitrary<Message> = fc
  .record(
    {
      id: fc.constantFrom("a", "b", "c", "d"),
      ms: fc.integer({ min: start, max: end }),
      role: fc.constantFrom("user" as const, "assistant" as const),
      text,
      channel: fc.constantFrom("telegram" as const, "cli" as const, "simulation" as const),
      annotations: fc.record({
        topics: fc.array(fc.constantFrom("hydration", "Water intake", "other:guitar", "something new"), {
          maxLength: 2,
        }),
        question: fc.boolean(),
        tone: fc.constantFrom("warm" as const, "neutral" as const, "tense" as const),
      }),
      media: fc.record({
        kind: fc.constantFrom("photo" as const, "voice" as const),
        caption: fc.string({ maxLength: 10 }),
      }),
    },
    { requiredKeys: ["id", "ms", "role", "text", "channel"] },
  )
  .map(({ ms, ...rest }) => ({ ...rest, ts: new Date(ms).toISOString() }));

const scenario = fc.record({
  log: fc.array(message, { maxLength: 30 }),
  now: fc.integer({ min: start, max: end + 86_400_000 }),
  timezone: fc.constantFrom(...zones),
  trigger: fc.constantFrom("reply" as const, "heartbeat" as const),
  activeMinutes: fc.integer({ min: 0, max: 120 }),
  windowHours: fc.integer({ min: 0, max: 72 }),
});

/**
 * The definition, said another way: an assistant message (visible at `now`) is unanswered
 * when no visible message of the person's comes after it, a tie in time going to the one
 * later in the log.
 */
function unansweredByDefinition(log: readonly Message[], nowMs: number): number {
  const visible = log.map((m, i) => ({ m, i, ms: Date.parse(m.ts) })).filter((e) => e.ms <= nowMs);
  return visible.filter(
    (a) =>
      a.m.role === "assistant" &&
      !visible.some((u) => u.m.role === "user" && (u.ms > a.ms || (u.ms === a.ms && u.i > a.i))),
  ).length;
}

describe("buildAwarenessContext on any log", () => {
  it("never throws, always fits its schema, and renders both blocks", () => {
    fc.assert(
      fc.property(scenario, ({ log, now, timezone, trigger, activeMinutes, windowHours }) => {
        const ctx = buildAwarenessContext(log, new Date(now), {
          timezone,
          trigger,
          activeMinutes,
          windowHours,
        });
        awarenessContextSchema.parse(ctx);
        expect(formatAwarenessForPrompt(ctx, "heartbeat")).toContain("## Conversational awareness");
        expect(formatAwarenessForPrompt({ ...ctx, format: "slim" }, "reply")).toContain("## Recent context");
      }),
      { numRuns: 300 },
    );
  });

  it("counts as unanswered exactly the assistant messages after the person's last", () => {
    fc.assert(
      fc.property(scenario, ({ log, now, timezone, trigger }) => {
        const ctx = buildAwarenessContext(log, new Date(now), {
          ...defaultAwarenessSettings,
          timezone,
          trigger,
        });
        const expected = unansweredByDefinition(log, now);
        expect(ctx.conversationState.unansweredCount).toBe(expected);
        expect(ctx.self.messagesSent).toHaveLength(expected);
        expect(ctx.self.messagesSent.every((m) => m.role === "assistant")).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("measures durations as elapsed time whatever the zone", () => {
    fc.assert(
      fc.property(scenario, ({ log, now, timezone }) => {
        const a = buildAwarenessContext(log, new Date(now), {
          ...defaultAwarenessSettings,
          timezone,
          trigger: "reply",
        });
        const b = buildAwarenessContext(log, new Date(now), {
          ...defaultAwarenessSettings,
          timezone: "UTC",
          trigger: "reply",
        });
        expect(a.user.timeSinceLastMessage).toBe(b.user.timeSinceLastMessage);
        expect(a.conversationState.silenceDuration).toBe(b.conversationState.silenceDuration);
        expect(a.self.timeSinceLastMessage).toBe(b.self.timeSinceLastMessage);
      }),
      { numRuns: 100 },
    );
  });
});
