import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { SettableClock } from "../src/core/clock.ts";
import type { Message } from "../src/core/message.ts";
import { ensurePrivateDir, writeFileDurable } from "../src/store/files.ts";
import {
  DEFAULT_WINDOW_DAYS,
  MESSAGE_LOG_VERSION,
  MessageLog,
  serializeMessageLog,
} from "../src/store/messages.ts";
import type { BenchRow } from "./types.ts";

/** Heavy use: about 100k messages a year, spread evenly. */
const MESSAGES_PER_DAY = 274;
/** The same sizes as the awareness suite, so their rows line up. */
const SIZES = [
  { label: "day (274 msgs)", days: 1 },
  { label: "month (8.2k msgs)", days: 30 },
  { label: "year (100k msgs)", days: 365 },
] as const;
const APPENDS = 200;
const APPEND_TARGET_MS = 5;
const ROLLOVERS = 15;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Noon UTC: appends during the measurement stay within one day, so rollover is measured apart. */
const NOW = Date.parse("2027-02-07T12:00:00.000Z");

/**
 * The message log's costs on histories of a day, a month and a year: one durable append
 * (written, flushed and renamed before it resolves), the awareness slice, and the once-a-day
 * append whose older day then moves into the archive. Runs in a temp directory under tmpdir().
 */
export async function runStoreBench(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of SIZES) {
    const dir = await mkdtemp(join(tmpdir(), "presence-bench-store-"));
    try {
      const dataDir = join(dir, "data");
      const count = await writeHistory(dataDir, size.days, DEFAULT_WINDOW_DAYS);
      const clock = new SettableClock(new Date(NOW));
      const log = await MessageLog.open({ dataDir, clock, timeZone: "UTC" });
      const note = `${count} msgs, ${log.recent().length} in the window (${DEFAULT_WINDOW_DAYS} days)`;

      const appends: number[] = [];
      for (let i = 0; i < APPENDS; i++) {
        clock.advanceMinutes(1);
        appends.push(await timed(() => log.append(sample(i, clock.now().getTime()))));
      }
      const append = summarize("durable append", size.label, appends, note);
      rows.push(
        size.days === 365
          ? {
              ...append,
              target: `median < ${APPEND_TARGET_MS} ms`,
              met: (append.median_ms ?? 0) < APPEND_TARGET_MS,
            }
          : append,
      );

      const slices: number[] = [];
      for (let i = 0; i < APPENDS; i++) slices.push(await timed(() => log.awarenessSlice(clock.now(), 48)));
      rows.push(summarize("awareness slice (48 h)", size.label, slices));

      if (size.days >= 30) {
        const rollovers: number[] = [];
        for (let i = 0; i < ROLLOVERS; i++) {
          clock.advanceMinutes(24 * 60);
          rollovers.push(
            await timed(async () => {
              await log.append(sample(i, clock.now().getTime()));
              await log.flush();
            }),
          );
        }
        rows.push(
          summarize(
            "first append of a day + archiving",
            size.label,
            rollovers,
            "once a day; archiving runs after the append resolves",
          ),
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

/**
 * Lays out a history ending at NOW the way the log itself would have: days before the
 * window in UTC-month archive files, the window in messages.json. Writing it directly takes
 * seconds, where appending 100k messages one by one would take minutes.
 */
async function writeHistory(dataDir: string, days: number, windowDays: number): Promise<number> {
  const count = Math.round(days * MESSAGES_PER_DAY);
  const spacing = (days * DAY) / count;
  const messages = Array.from({ length: count }, (_, i) => sample(i, NOW - days * DAY + i * spacing));
  const cutoff = Math.floor(NOW / DAY) * DAY - (windowDays - 1) * DAY;
  const months = new Map<string, Message[]>();
  const window: Message[] = [];
  for (const message of messages) {
    if (Date.parse(message.ts) >= cutoff) {
      window.push(message);
      continue;
    }
    const month = message.ts.slice(0, 7);
    const group = months.get(month);
    if (group) group.push(message);
    else months.set(month, [message]);
  }
  await ensurePrivateDir(join(dataDir, "archive"));
  for (const [month, archived] of months) {
    await writeFileDurable(
      join(dataDir, "archive", `${month}.json`),
      serializeMessageLog({ version: MESSAGE_LOG_VERSION, messages: archived }),
    );
  }
  await writeFileDurable(
    join(dataDir, "messages.json"),
    serializeMessageLog({ version: MESSAGE_LOG_VERSION, messages: window }),
  );
  return count;
}

const TEXTS = [
  "Good morning. Just waking up now, slept badly again.",
  "How's the water intake looking this morning?",
  "Two glasses so far, and a coffee I probably should not count.",
  "That's a start. Is the presentation still on for this afternoon?",
  "Yes, at three. I'm nervous but I practised twice yesterday evening.",
];

/** Every sample message gets its own id and Telegram update, as real ones do. */
let sequence = 0;

function sample(i: number, ms: number): Message {
  const user = i % 2 === 0;
  sequence += 1;
  return {
    id: `bench-${sequence}`,
    ts: new Date(Math.floor(ms)).toISOString(),
    role: user ? "user" : "assistant",
    text: TEXTS[i % TEXTS.length] ?? "",
    channel: "telegram",
    ...(user
      ? { external: { chatId: 1, messageId: sequence, updateId: sequence } }
      : {
          trigger: "reply" as const,
          annotations: { topics: ["water"], question: true, tone: "warm" as const },
        }),
  };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await run();
  return performance.now() - start;
}

function summarize(name: string, size: string, samples: number[], note?: string): BenchRow {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    suite: "store",
    name,
    size,
    median_ms: round(at(0.5)),
    p95_ms: round(at(0.95)),
    ...(note === undefined ? {} : { note }),
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
