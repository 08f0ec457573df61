import { performance } from "node:perf_hooks";
import { buildAwarenessContext } from "../src/conversation/awareness/build.ts";
import { type AwarenessSettings, defaultAwarenessSettings } from "../src/conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../src/conversation/awareness/format.ts";
import type { Message } from "../src/core/message.ts";
import { awarenessSliceStart } from "../src/store/messages.ts";
import type { BenchRow } from "./types.ts";

/**
 * The awareness engine on a day, a month and a year of heavy use (~100k messages a year).
 * The companion builds from the slice the store hands over (the 48 h window plus the
 * person's last turn, the message before it and everything after), so its cost should follow
 * the window, not the history; building over the whole history is timed beside it to show
 * the gap. Topics are cached per message object and the store hands back the same objects
 * turn after turn, so the warm figure is the production one; the cold row shows the price
 * of reading every message afresh.
 */

const MESSAGES_PER_DAY = 274;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const END = Date.parse("2027-02-06T16:00:00.000Z");
const SIZES = [
  { size: "day (274 msgs)", days: 1 },
  { size: "month (8.2k msgs)", days: 30 },
  { size: "year (100k msgs)", days: 365 },
] as const;
const TARGET_MS = 2;

const SETTINGS: AwarenessSettings = {
  ...defaultAwarenessSettings,
  timezone: "Europe/Berlin",
  trigger: "heartbeat",
};

const USER_TEXTS = [
  "Good morning. Just waking up now, slept badly again.",
  "Two glasses of water so far, and a coffee I probably should not count.",
  "Presentation is at three, I'm nervous but I practised twice.",
  "Had a big lunch, skipped the walk though 😅",
  "Honestly tired. Long day, lots of meetings.",
  "Dinner with Sam tonight, looking forward to it!",
  "fine",
  "I finished the draft of the report, finally.",
];
const ASSISTANT_TEXTS = [
  "How's the water intake looking this morning?",
  "Good luck with the presentation. What's the part you feel least sure about?",
  "A walk after lunch might still fit in. How's your energy?",
  "That sounds like a full day. Did you get a moment to yourself?",
  "Enjoy dinner with Sam! Anything you're hoping to talk about?",
  "Nice work on the draft. How does it feel to have it done?",
];

/** Runs the awareness benchmarks; each size gets its own generated log. */
export async function runAwarenessBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const { size, days } of SIZES) {
    const history = generateHistory(days);
    const now = new Date(END + 30 * MINUTE);
    const slice = storeSlice(history, now, SETTINGS.windowHours);
    const context = buildAwarenessContext(slice, now, SETTINGS);
    const fromSlice = measure(() => buildAwarenessContext(slice, now, SETTINGS));
    rows.push({
      suite: "awareness",
      name: "build from the store's slice",
      size,
      ...fromSlice,
      ...(days === 365 ? { target: `median < ${TARGET_MS} ms`, met: fromSlice.median_ms < TARGET_MS } : {}),
      note: `${slice.length} of ${history.length} msgs; warm: the store hands back the same objects every turn, so this is the production figure`,
    });
    rows.push({
      suite: "awareness",
      name: "build from the store's slice, cold",
      size,
      ...measureEach(
        () => structuredClone(slice),
        (copy) => buildAwarenessContext(copy, now, SETTINGS),
      ),
      note: "fresh copies of the slice each run: no topic read before is reused (the first turn after a start)",
    });
    rows.push({
      suite: "awareness",
      name: "build from the whole history",
      size,
      ...measure(() => buildAwarenessContext(history, now, SETTINGS)),
      note: "for comparison: what the slice saves",
    });
    rows.push({
      suite: "awareness",
      name: "format the prompt block",
      size,
      ...measure(() => formatAwarenessForPrompt(context, "heartbeat")),
    });
  }
  return rows;
}

/** What MessageLog.awarenessSlice hands over, from the same rule. The history is sorted. */
function storeSlice(history: readonly Message[], now: Date, windowHours: number): Message[] {
  const nowMs = now.getTime();
  const fromMs = awarenessSliceStart(history, nowMs, windowHours) ?? Number.NEGATIVE_INFINITY;
  let first = history.length;
  while (first > 0 && Date.parse(history[first - 1]?.ts ?? "") >= fromMs) first--;
  return history.slice(first).filter((m) => Date.parse(m.ts) <= nowMs);
}

/**
 * A history of heavy use ending at END: waking hours (07:00–23:00 UTC) filled evenly,
 * exchanges of the person and the companion, an hourly-ish check-in now and then, and the
 * last hour one-sided (two unanswered check-ins), as on a busy afternoon.
 */
function generateHistory(days: number): Message[] {
  const count = days * MESSAGES_PER_DAY;
  const perDay = MESSAGES_PER_DAY;
  const waking = 16 * 60 * MINUTE;
  const firstDay = Math.floor(END / DAY) * DAY - (days - 1) * DAY;
  const messages: Message[] = [];
  for (let i = 0; i < count; i++) {
    const day = Math.floor(i / perDay);
    const slot = i % perDay;
    const ms = firstDay + day * DAY + 7 * 60 * MINUTE + Math.floor((slot * waking) / perDay);
    const checkIn = slot % 23 === 0 || i >= count - 2;
    const user = !checkIn && slot % 2 === 0;
    const texts = user ? USER_TEXTS : ASSISTANT_TEXTS;
    messages.push({
      id: `b${i}`,
      ts: new Date(Math.min(ms, END)).toISOString(),
      role: user ? "user" : "assistant",
      text: texts[(i * 7 + day) % texts.length] ?? "",
      channel: "telegram",
      ...(user ? {} : { trigger: checkIn ? ("heartbeat" as const) : ("reply" as const) }),
    });
  }
  return messages;
}

/**
 * Median and 95th percentile of repeated runs: warm-up runs first (up to 200 ms, so the JIT
 * has settled before the first size is timed), then samples until about a second has passed
 * (at least 15, at most 400), so slow cases still finish.
 */
function measure(run: () => unknown): { median_ms: number; p95_ms: number } {
  return measureEach(
    () => undefined,
    () => run(),
  );
}

/**
 * Like measure, but every run gets its own input, made by `prepare` outside the timing: for
 * figures that must not profit from what an earlier run left behind in caches.
 */
function measureEach<T>(prepare: () => T, run: (input: T) => unknown): { median_ms: number; p95_ms: number } {
  const warmupEnd = performance.now() + 200;
  for (let i = 0; i < 50 && performance.now() < warmupEnd; i++) run(prepare());
  const samples: number[] = [];
  const budgetEnd = performance.now() + 1000;
  while (samples.length < 15 || (samples.length < 400 && performance.now() < budgetEnd)) {
    const input = prepare();
    const start = performance.now();
    run(input);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { median_ms: round(at(0.5)), p95_ms: round(at(0.95)) };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
