import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { Message } from "../../../src/core/message.ts";

const lenientEntry = z.object({
  role: z.enum(["user", "assistant"]),
  text: z.string(),
  ts: z.iso.datetime({ offset: true }),
});
const lenientLog = z.object({ messages: z.array(lenientEntry) });

const situationsDir = fileURLToPath(new URL("../../fixtures/situations/", import.meta.url));

/**
 * A situation fixture as the command line reads it (role, text, ts with any offset) turned
 * into log entries: ids m1, m2… in file order, channel telegram, ts in UTC.
 */
export function toMessages(entries: readonly z.infer<typeof lenientEntry>[]): Message[] {
  return entries.map((entry, i) => ({
    id: `m${i + 1}`,
    role: entry.role,
    text: entry.text,
    ts: new Date(entry.ts).toISOString(),
    channel: "telegram",
  }));
}

/** Reads test/fixtures/situations/<file> and converts it with {@link toMessages}. */
export function loadSituationLog(file: string): Message[] {
  const raw: unknown = JSON.parse(readFileSync(`${situationsDir}${file}`, "utf8"));
  return toMessages(lenientLog.parse(raw).messages);
}

const situation = z.object({
  name: z.string(),
  log: z.string(),
  now: z.iso.datetime({ offset: true }),
  timezone: z.string(),
  trigger: z.enum(["heartbeat", "reply"]),
  expect: z.looseObject({
    unansweredCount: z.number().int(),
    engagementLevel: z.enum(["active", "sporadic", "silent"]),
    lastExchangeTone: z.enum(["warm", "neutral", "tense", "unknown"]).optional(),
    repeatedTopics: z.array(z.object({ topic: z.string(), count: z.number().int() })).optional(),
    format: z.enum(["full", "slim"]).optional(),
    timeOfDay: z.enum(["morning", "afternoon", "evening", "night"]).optional(),
    dayType: z.enum(["weekday", "weekend"]).optional(),
    recentTopicShift: z.boolean().optional(),
    currentDomain: z.string().optional(),
    waitingMinutes: z.number().int().optional(),
    silenceDuration: z.number().int().optional(),
    userMinutesSinceLastMessage: z.number().int().optional(),
    observationsInclude: z.array(z.string()).optional(),
    heartbeat: z.object({ fire: z.boolean(), reason: z.string() }),
  }),
});
export type Situation = z.infer<typeof situation>;

/** The table of situations every awareness and heartbeat test runs through. */
export function loadSituations(): Situation[] {
  const raw: unknown = JSON.parse(readFileSync(`${situationsDir}situations.json`, "utf8"));
  return z.array(situation).parse(raw);
}
