import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildAwarenessContext } from "../../src/conversation/awareness/build.ts";
import { defaultAwarenessSettings } from "../../src/conversation/awareness/context.ts";
import { SettableClock } from "../../src/core/clock.ts";
import type { Message } from "../../src/core/message.ts";
import {
  awarenessSliceStart,
  MESSAGE_LOG_VERSION,
  MessageLog,
  serializeMessageLog,
} from "../../src/store/messages.ts";
import { tempDataDir } from "./helpers.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const NOW = Date.parse("2026-02-20T12:00:00.000Z");

function at(
  role: Message["role"],
  ms: number,
  text: string = role,
  channel: Message["channel"] = "telegram",
): Message {
  return { id: `${role}-${ms}`, ts: new Date(ms).toISOString(), role, text, channel };
}

describe("awarenessSliceStart", () => {
  it("is the window's start when the person's turn and the message before it are inside it", () => {
    const log = [at("assistant", NOW - 5 * HOUR), at("user", NOW - 4 * HOUR), at("assistant", NOW - HOUR)];
    expect(awarenessSliceStart(log, NOW, 48)).toBe(NOW - 48 * HOUR);
  });

  it("reaches back to the message before the person's last turn, however old", () => {
    const before = NOW - 10 * 24 * HOUR;
    const log = [
      at("user", before - HOUR),
      at("assistant", before),
      at("user", before + HOUR),
      at("user", before + 2 * HOUR),
      at("assistant", NOW - HOUR),
    ];
    expect(awarenessSliceStart(log, NOW, 48)).toBe(before);
  });

  it("ignores what comes after now", () => {
    const log = [at("assistant", NOW - 60 * HOUR), at("user", NOW - 50 * HOUR), at("user", NOW + HOUR)];
    expect(awarenessSliceStart(log, NOW, 48)).toBe(NOW - 60 * HOUR);
  });

  it("cannot tell when the person's turn or the search for it reaches the first message", () => {
    expect(awarenessSliceStart([at("user", NOW - HOUR), at("assistant", NOW)], NOW, 48)).toBeUndefined();
    expect(awarenessSliceStart([at("assistant", NOW - HOUR)], NOW, 48)).toBeUndefined();
    expect(awarenessSliceStart([], NOW, 48)).toBeUndefined();
  });
});

const TEXTS = [
  "How's the water intake today?",
  "Two glasses so far 💧",
  "Slept badly again.",
  "The presentation went great, thanks!",
  "fine",
  "Dinner with Sam tonight?",
  "ugh. stop.",
  "Did you get a walk in?",
];

/** Up to 40 messages over ten days before NOW, sorted, with distinct ids. */
const history: fc.Arbitrary<Message[]> = fc
  .array(
    fc.record({
      minutesBefore: fc.integer({ min: 0, max: 10 * 24 * 60 }),
      role: fc.constantFrom("user" as const, "assistant" as const),
      text: fc.constantFrom(...TEXTS),
      channel: fc.constantFrom("telegram" as const, "cli" as const),
    }),
    { maxLength: 40 },
  )
  .map((entries) =>
    entries
      .map((e, i) => ({ ...at(e.role, NOW - e.minutesBefore * MINUTE, e.text, e.channel), id: `m${i}` }))
      .sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts)),
  );

const moment = fc.record({
  minutesBefore: fc.integer({ min: 0, max: 3 * 24 * 60 }),
  timezone: fc.constantFrom("UTC", "Europe/Madrid", "Pacific/Auckland"),
  trigger: fc.constantFrom("reply" as const, "heartbeat" as const),
});

function contextOf(
  log: readonly Message[],
  nowMs: number,
  m: { timezone: string; trigger: "reply" | "heartbeat" },
) {
  return buildAwarenessContext(log, new Date(nowMs), { ...defaultAwarenessSettings, ...m });
}

describe("the slice the store hands the awareness engine", () => {
  it("gives the same context as the whole history", () => {
    fc.assert(
      fc.property(history, moment, (log, m) => {
        const nowMs = NOW - m.minutesBefore * MINUTE;
        const from = awarenessSliceStart(log, nowMs, defaultAwarenessSettings.windowHours);
        const slice = log.filter((msg) => Date.parse(msg.ts) >= (from ?? Number.NEGATIVE_INFINITY));
        expect(contextOf(slice, nowMs, m)).toEqual(contextOf(log, nowMs, m));
      }),
      { numRuns: 400 },
    );
  });

  it("is what MessageLog.awarenessSlice serves, across the window and the archive", async () => {
    await fc.assert(
      fc.asyncProperty(history, moment, async (log, m) => {
        const dataDir = await tempDataDir();
        await mkdir(dataDir, { recursive: true });
        await writeFile(
          join(dataDir, "messages.json"),
          serializeMessageLog({ version: MESSAGE_LOG_VERSION, messages: log }),
        );
        const store = await MessageLog.open({
          dataDir,
          clock: new SettableClock(new Date(NOW)),
          timeZone: "UTC",
          windowDays: 2,
        });
        await store.append(at("assistant", NOW, "the latest"));
        await store.flush();
        const whole = await store.all();
        const nowMs = NOW - m.minutesBefore * MINUTE;
        const slice = await store.awarenessSlice(new Date(nowMs), defaultAwarenessSettings.windowHours);
        expect(contextOf(slice, nowMs, m)).toEqual(contextOf(whole, nowMs, m));
      }),
      { numRuns: 25 },
    );
  });
});
