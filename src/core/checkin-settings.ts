import { z } from "zod";
import { isoUtc } from "./message.ts";
import { mindRecord } from "./mind-record.ts";
import { zoneSchema } from "./zones.ts";

/**
 * What the check-in rules read: the configured settings (quiet hours, limits) and the state
 * kept between ticks (the person's pause, /quiet and /tz overrides, what was sent). At the
 * core level, below both the configuration that fills the settings and the pre-check that
 * reads them (conversation/checkin-policy.ts), and below the store that keeps the state in mind.json.
 */

const minuteOfDay = z
  .number()
  .int()
  .min(0)
  .max(24 * 60 - 1);

/** Quiet hours: minutes after local midnight, start inclusive, end exclusive; may wrap midnight, equal ends mean none. */
const quietHoursSchema = z.object({ start: minuteOfDay, end: minuteOfDay });
export type QuietHours = z.infer<typeof quietHoursSchema>;

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Parses "22:00-08:00"; null when malformed. A range may wrap past midnight; equal ends mean none. */
export function parseQuietHours(text: string): QuietHours | null {
  const [from, to, ...rest] = text.trim().split("-");
  if (from === undefined || to === undefined || rest.length > 0) return null;
  const a = HHMM.exec(from.trim());
  const b = HHMM.exec(to.trim());
  if (!a || !b) return null;
  return { start: Number(a[1]) * 60 + Number(a[2]), end: Number(b[1]) * 60 + Number(b[2]) };
}

/** Renders quiet hours back as "HH:MM-HH:MM". */
export function formatQuietHours(q: QuietHours): string {
  const hhmm = (m: number) =>
    `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
  return `${hhmm(q.start)}-${hhmm(q.end)}`;
}

/**
 * The configured rules; the person's overrides in HeartbeatState win over zone and quiet hours
 * (effectiveSettings). CoreConfig satisfies it by its shape, so the configuration is passed
 * as it is, never copied field by field.
 */
export interface HeartbeatSettings {
  timezone: string;
  quietHours: QuietHours;
  /** Hold check-ins once this many messages are unanswered. */
  maxUnanswered: number;
  /** On Saturday and Sunday, hold once this many are unanswered (0: no weekend check-ins). */
  weekendMaxUnanswered: number;
  /** Hold while the person wrote less than this many minutes ago: they are talking, not waiting. */
  recentMinutes: number;
  /** Hold while the companion's last message is younger than this. */
  minGapMinutes: number;
  maxCheckinsPerDay: number;
  /**
   * Learn from the log at which hours the person answers and hold check-ins at hours they
   * rarely do (PRESENCE_LEARN_TIMING); the caller of the pre-check reads the log when it is on.
   */
  learnTiming: boolean;
}

/**
 * What the person set and what was sent, kept in the mind's data between ticks. Every field
 * has a default, so state written by an older version (or none at all) still loads.
 */
export const heartbeatStateSchema = z.object({
  /** Check-ins are paused until this instant (`/pause 2h`, `/pause until 18:00`); null when not. */
  pausedUntil: isoUtc.nullable().default(null),
  /** `/pause` with no time: paused until `/resume`. */
  pausedIndefinitely: z.boolean().default(false),
  /** `/quiet HH:MM-HH:MM`: replaces the configured quiet hours. */
  quietHours: quietHoursSchema.nullable().default(null),
  /** `/tz Area/City` while travelling: replaces the configured zone. */
  timezone: zoneSchema.nullable().default(null),
  /** When recent check-ins went out; the daily limit counts those in the person's local day. */
  checkinsSent: z.array(isoUtc).default([]),
  /** Telegram said the person blocked the bot; cleared when they write again. */
  blocked: z.boolean().default(false),
  // `budgetExceeded`, kept here by earlier versions, is computed at each tick from the usage
  // ledger instead (PreCheckState in conversation/checkin-policy.ts); an old file still holding it loads,
  // and the key is dropped.
});
export type HeartbeatState = z.infer<typeof heartbeatStateSchema>;

/** Nothing set, nothing sent: a fresh install. */
export const emptyHeartbeatState: HeartbeatState = heartbeatStateSchema.parse({});

/** A pause in force: until an instant (`/pause 2h`), or until `/resume`. */
type Pause = { until: null; indefinitely: true } | { until: string; indefinitely: false };

/** The check-in settings in force at one moment. */
export interface EffectiveSettings extends HeartbeatSettings {
  /** The pause that holds check-ins at that moment, or null. */
  paused: Pause | null;
}

/**
 * The settings in force at `now`: the configured ones with the person's `/tz` and `/quiet`
 * over them, and their pause while it lasts. Every reader of the person's zone, quiet hours
 * or pause (the pre-check, notices, prompts, reflection, /status, the slash commands, the
 * heartbeat schedule) asks this one function, so they can never disagree.
 */
export function effectiveSettings(
  configured: HeartbeatSettings,
  state: HeartbeatState,
  now: Date,
): EffectiveSettings {
  const until =
    state.pausedUntil !== null && now.getTime() < Date.parse(state.pausedUntil) ? state.pausedUntil : null;
  return {
    ...configured,
    timezone: state.timezone ?? configured.timezone,
    quietHours: state.quietHours ?? configured.quietHours,
    paused: state.pausedIndefinitely
      ? { until: null, indefinitely: true }
      : until !== null
        ? { until, indefinitely: false }
        : null,
  };
}

/** The heartbeat state's record in mind.json. */
export const heartbeatRecord = mindRecord({
  key: "heartbeat",
  schema: heartbeatStateSchema.default(() => ({ ...emptyHeartbeatState })),
  initial: () => ({ ...emptyHeartbeatState }),
});

/*
 * What the companion told the person about check-ins that stopped for a reason they cannot
 * see from their side (the day's token budget is spent; the model has been unreachable), kept
 * in mind.json between ticks beside the heartbeat state, below the pure rule that reads and
 * changes it (conversation/checkin-notices.ts), the outbox that records a notice as said, and the store.
 */

/** The causes worth telling: neither is the person's choice, and neither shows from their side. */
export const noticeCauseSchema = z.enum(["budget", "model"]);
export type NoticeCause = z.infer<typeof noticeCauseSchema>;

/** One cause's last notice: when the person was told check-ins stopped, and when that they resumed. */
const noticeCauseStateSchema = z.object({
  announcedAt: isoUtc.nullable().default(null),
  resumedAt: isoUtc.nullable().default(null),
});
export type NoticeCauseState = z.infer<typeof noticeCauseStateSchema>;

/** Every field has a default, so a mind.json written before notices existed still loads. */
export const checkinNoticeStateSchema = z.object({
  budget: noticeCauseStateSchema.default({ announcedAt: null, resumedAt: null }),
  model: noticeCauseStateSchema.default({ announcedAt: null, resumedAt: null }),
});
export type CheckinNoticeState = z.infer<typeof checkinNoticeStateSchema>;

/** Nothing told yet, no failure seen: a fresh install. */
export const emptyCheckinNoticeState: CheckinNoticeState = checkinNoticeStateSchema.parse({});

/**
 * What a notice said, carried on its outbox entry so the write that records it as sent also
 * records it as told (also when a crash cut the bookkeeping off and recovery finishes it).
 */
export const noticeSaidSchema = z.object({
  kind: z.enum(["stopped", "back"]),
  causes: z.array(noticeCauseSchema).min(1),
});
export type NoticeSaid = z.infer<typeof noticeSaidSchema>;
