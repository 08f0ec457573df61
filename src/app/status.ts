import { DateTime } from "luxon";
import { decisionSentence } from "../channels/reasons.ts";
import type { MindState, MindStore } from "../companion/mind-document.ts";
import { isWeekend } from "../conversation/awareness/time.ts";
import { checkinsToday, isInQuietHours, unlikelyMoment } from "../conversation/checkin-policy.ts";
import { isMessageSent } from "../conversation/pending-messages.ts";
import { type HeartbeatCron, nextFireTime } from "../conversation/schedule.ts";
import {
  bestHours,
  formatHourRanges,
  type HourRange,
  type LearnedTiming,
  LOOKBACK_DAYS,
  learnTiming,
  MIN_CHECKINS,
  timingLookbackStart,
} from "../conversation/timing.ts";
import { effectiveSettings } from "../core/checkin-settings.ts";
import type { Decision } from "../core/decision.ts";
import type { Message } from "../core/message.ts";
import { notHeardNote } from "../core/sound.ts";
import { plural } from "../core/text.ts";
import { tokensOnLocalDay } from "../core/usage.ts";
import { activeMemory } from "../mind/memory.ts";
import { type EndpointCheckWarning, transcriptionPlace } from "../model/transcription.ts";
import type { MessageLog } from "../store/messages.ts";
import { wrapWords } from "./commands/layout.ts";
import type { CoreConfig } from "./config.ts";

/**
 * What the companion's data says right now, in one place for the `status` command and
 * Telegram's /status: whether check-ins are on, how many messages wait for an answer,
 * when the next check-in could go out, and today's token spend against the budget.
 */
export interface Status {
  now: string;
  /** The person's zone: their /tz override, else the configured one. */
  timezone: string;
  /** Null when check-ins are not paused. */
  paused: { until: string | null; indefinitely: boolean } | null;
  /** Telegram said the person blocked the bot; check-ins wait until they write. */
  blocked: boolean;
  /** The companion's messages since the person last wrote. */
  unansweredCount: number;
  /**
   * The first tick of the schedule no rule is known to hold back: past quiet hours, the pause,
   * the minimum gap, the recent conversation, today's check-in and token limits, weekends
   * held by the weekend limit and hours the person rarely answers at (the model may still
   * decide against it); null when none.
   */
  nextCheckin: string | null;
  /** Check-ins wait for the person: the bot was blocked, or too many messages are unanswered. */
  awaitingYou: boolean;
  tokensToday: number;
  /** The daily token budget, when known. */
  budget: number | null;
  /**
   * When the person wiped everything today (their local day), else null: the token count
   * outlived the wipe on purpose, so the daily budget still holds, and status says so.
   */
  wipedToday: string | null;
  lastDecision: Decision | null;
  /** Exchanges still waiting for reflection. */
  pendingReflections: number;
  /** What the companion holds in episodic memory now (active items), so the person can see it remembers. */
  memory: { declaredPatterns: number; openLoops: number; milestones: number };
  /**
   * When the person answers best, learned from the log (local hours [from, to)), and how many
   * check-ins it rests on; null when learning is off (PRESENCE_LEARN_TIMING=off).
   */
  bestHours: { weekday: HourRange[]; weekend: HourRange[]; checkins: number } | null;
  /**
   * Whether voice notes are heard, and where they are transcribed (the service's host, and
   * whether that is this machine): `at` is null when PRESENCE_TRANSCRIBE_URL is not set, and
   * they are not. `trouble` says what is wrong with the service when something is: the newest
   * voice note it could not hear, or, until a note has been heard since, what the start check found.
   */
  voiceNotes: { at: string | null; trouble: string | null };
}

/** What buildStatus reads; all of it already loaded, so building is pure. */
export interface StatusInput {
  now: Date;
  core: CoreConfig;
  mind: MindState;
  /** At least every message since the person's last one (MessageLog.awarenessSlice gives that). */
  messages: readonly Message[];
  tokensToday: number;
  budget: number | null;
  /** What the log says about when the person answers; left out when learning is off. */
  timing?: LearnedTiming;
  /** Where voice notes are transcribed (PRESENCE_TRANSCRIBE_URL); left out when they are not. */
  transcribeUrl?: string;
  /** What the start check of this process found wrong with the service, and when (only `start` knows). */
  transcriptionAtStart?: TranscriptionAtStart;
}

/** What the start check found wrong with the transcription service, and when it looked. */
interface TranscriptionAtStart {
  warning: EndpointCheckWarning;
  checkedAt: Date;
}

/** How far back the log is read for the unanswered count: the awareness window. */
const STATUS_WINDOW_HOURS = 48;

/**
 * Reads the stores and builds the status, the same way for `/status` in Telegram and the
 * `status` command, so both always tell the person the same thing.
 */
export async function readStatus(input: {
  now: Date;
  core: CoreConfig;
  mind: MindStore;
  log: MessageLog;
  budget: number | null;
  /** PRESENCE_TRANSCRIBE_URL, when set. */
  transcribeUrl?: string;
  transcriptionAtStart?: TranscriptionAtStart;
}): Promise<Status> {
  const { now, core, mind, log, budget } = input;
  const state = mind.read();
  const { timezone } = effectiveSettings(core, state.heartbeat, now);
  return buildStatus({
    now,
    core,
    mind: state,
    messages: await log.awarenessSlice(now, STATUS_WINDOW_HOURS),
    tokensToday: tokensOnLocalDay(state, now, timezone),
    budget,
    ...(core.learnTiming && {
      timing: learnTiming(await log.between(timingLookbackStart(now), now), now, timezone),
    }),
    ...(input.transcribeUrl ? { transcribeUrl: input.transcribeUrl } : {}),
    ...(input.transcriptionAtStart ? { transcriptionAtStart: input.transcriptionAtStart } : {}),
  });
}

/** How far ahead the next check-in is looked for. */
const LOOKAHEAD_TICKS = 2_000;

/** Puts the companion's state together. */
export function buildStatus(input: StatusInput): Status {
  const { now, core, mind, timing } = input;
  const heartbeat = mind.heartbeat;
  const { timezone, quietHours, paused } = effectiveSettings(core, heartbeat, now);
  const unanswered = unansweredCount(input.messages);
  const awaitingYou = !paused?.indefinitely && (heartbeat.blocked || unanswered >= core.maxUnanswered);
  const sentToday = checkinsToday(heartbeat, now, timezone);
  const overBudget = input.budget !== null && input.tokensToday >= input.budget;
  const notBefore = latest([
    paused?.until ? Date.parse(paused.until) : null,
    lastAt(input.messages, "assistant", core.minGapMinutes),
    lastAt(input.messages, "user", core.recentMinutes),
  ]);
  const weekendHeld = unanswered >= core.weekendMaxUnanswered;
  const next =
    paused?.indefinitely || awaitingYou
      ? null
      : nextCheckin({
          cron: core.heartbeatCron,
          timezone,
          quiet: quietHours,
          now,
          notBefore: notBefore === null ? null : new Date(notBefore),
          skipToday: overBudget || sentToday >= core.maxCheckinsPerDay,
          skipWeekend: weekendHeld,
          unlikely: (at) => timing !== undefined && unlikelyMoment(timing, heartbeat, at) !== null,
        });
  return {
    now: now.toISOString(),
    timezone,
    paused,
    blocked: heartbeat.blocked,
    unansweredCount: unanswered,
    nextCheckin: next,
    // A weekend-only schedule held by the weekend limit also waits for the person's message.
    awaitingYou: awaitingYou || (next === null && weekendHeld && unanswered > 0 && !paused?.indefinitely),
    tokensToday: input.tokensToday,
    budget: input.budget,
    wipedToday:
      mind.wipedAt !== undefined &&
      DateTime.fromISO(mind.wipedAt, { zone: timezone }).hasSame(
        DateTime.fromJSDate(now, { zone: timezone }),
        "day",
      )
        ? mind.wipedAt
        : null,
    lastDecision: mind.decisions.at(-1) ?? null,
    pendingReflections: mind.reflectionQueue.length,
    memory: memoryCounts(mind),
    bestHours:
      timing === undefined
        ? null
        : {
            weekday: bestHours(timing, "weekday"),
            weekend: bestHours(timing, "weekend"),
            checkins: timing.checkins,
          },
    voiceNotes: voiceNotesStatus(
      input.transcribeUrl,
      hearingTrouble(input.messages, input.transcriptionAtStart),
    ),
  };
}

/**
 * Whether voice notes are heard, and where, from PRESENCE_TRANSCRIBE_URL: the one place the
 * words of /status and /help are built from; `trouble` only counts where they are heard.
 */
export function voiceNotesStatus(
  transcribeUrl: string | undefined,
  trouble: string | null = null,
): Status["voiceNotes"] {
  return transcribeUrl === undefined
    ? { at: null, trouble: null }
    : { at: transcriptionPlace(transcribeUrl), trouble };
}

/** Why a sound was not heard when the service, not the sound, was the cause. */
const SERVICE_FAILURES: ReadonlySet<string> = new Set(["refused", "failed", "timeout", "unreachable"]);

/**
 * What is wrong with the transcription service, as the log and the start check tell it: the
 * newest voice note the service either heard (nothing is wrong) or failed; failing that, the
 * start check's warning, unless a note that arrived after it was heard.
 */
function hearingTrouble(
  messages: readonly Message[],
  atStart: TranscriptionAtStart | undefined,
): string | null {
  const last = messages.findLast(
    (m) => m.media?.transcribed === true || SERVICE_FAILURES.has(m.media?.notHeard ?? ""),
  );
  const reason = last?.media?.notHeard;
  if (reason !== undefined) {
    const setting = last?.media?.notHeardSetting;
    return `the last voice note was ${notHeardNote(reason)}${setting ? ` (check ${setting})` : ""}`;
  }
  if (atStart === undefined) return null;
  const heardSince = last !== undefined && Date.parse(last.ts) >= atStart.checkedAt.getTime();
  return heardSince ? null : atStart.warning.summary;
}

/** When the last message of `role` (not a notice or a reaction) plus `minutes` ends, in ms; null when there is none in view. */
function lastAt(messages: readonly Message[], role: Message["role"], minutes: number): number | null {
  const last = messages.findLast((m) => (role === "user" ? m.role === "user" : isMessageSent(m)));
  return last === undefined || minutes === 0 ? null : Date.parse(last.ts) + minutes * 60_000;
}

function latest(instants: (number | null)[]): number | null {
  const known = instants.filter((ms): ms is number => ms !== null);
  return known.length === 0 ? null : Math.max(...known);
}

function memoryCounts(mind: MindState): Status["memory"] {
  const active = activeMemory(mind.memory);
  const count = (kind: string) => active.filter((item) => item.kind === kind).length;
  return {
    declaredPatterns: count("pattern"),
    openLoops: count("open_loop"),
    milestones: count("milestone"),
  };
}

/** The companion's messages after the person's last one, notices and reactions left out: the awareness engine's unanswered count. */
export function unansweredCount(messages: readonly Message[]): number {
  let count = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Message;
    if (message.role === "user") break;
    if (isMessageSent(message)) count += 1;
  }
  return count;
}

function nextCheckin(options: {
  cron: HeartbeatCron;
  timezone: string;
  quiet: CoreConfig["quietHours"];
  now: Date;
  notBefore: Date | null;
  skipToday: boolean;
  skipWeekend: boolean;
  /** A tick the learned timing holds back (an hour the person rarely answers at). */
  unlikely: (at: Date) => boolean;
}): string | null {
  const today = DateTime.fromJSDate(options.now, { zone: options.timezone }).toISODate();
  // Held stretches are jumped over, not walked tick by tick, so a frequent schedule still
  // reaches past a pause, quiet hours, the rest of today or a weekend within the lookahead.
  const justBefore = (instant: DateTime | Date) => new Date(instant.valueOf() - 1);
  let after = options.now;
  for (let i = 0; i < LOOKAHEAD_TICKS; i++) {
    const next = nextFireTime(options.cron, options.timezone, after);
    if (next === null) return null;
    after = next;
    const local = DateTime.fromJSDate(next, { zone: options.timezone });
    if (options.notBefore !== null && next < options.notBefore) after = justBefore(options.notBefore);
    else if (options.skipToday && local.toISODate() === today)
      after = justBefore(local.startOf("day").plus({ days: 1 }));
    else if (options.skipWeekend && isWeekend(local))
      after = justBefore(local.startOf("week").plus({ weeks: 1 }));
    else if (isInQuietHours(next, options.timezone, options.quiet))
      after = justBefore(quietEnd(local, options.quiet));
    else if (!options.unlikely(next)) return next.toISOString();
  }
  return null;
}

/** When the quiet hours that hold `local` end. */
function quietEnd(local: DateTime, quiet: CoreConfig["quietHours"]): DateTime {
  const end = local.set({
    hour: Math.floor(quiet.end / 60),
    minute: quiet.end % 60,
    second: 0,
    millisecond: 0,
  });
  return end > local ? end : end.plus({ days: 1 });
}

/**
 * The status as a few lines for a person, times in their zone; given a `width` (a
 * terminal's), a longer line wraps between words, its continuation indented.
 */
export function formatStatus(status: Status, timezone: string = status.timezone, width?: number): string {
  const local = (iso: string) => DateTime.fromISO(iso, { zone: timezone }).toFormat("ccc d LLL HH:mm");
  const checkins = status.blocked
    ? "stopped: the bot was blocked; they resume when you write"
    : status.paused?.indefinitely
      ? "paused until /resume"
      : status.paused?.until
        ? `paused until ${local(status.paused.until)}`
        : "on";
  const tokens =
    status.budget === null
      ? `${status.tokensToday.toLocaleString("en-US")}`
      : `${status.tokensToday.toLocaleString("en-US")} of ${status.budget.toLocaleString("en-US")}${
          status.tokensToday >= status.budget ? " (over budget: no check-ins until tomorrow)" : ""
        }`;
  const keptThroughWipe =
    status.wipedToday === null
      ? ""
      : `; the count was kept through your /wipe at ${DateTime.fromISO(status.wipedToday, { zone: timezone }).toFormat("HH:mm")} (a number, no words), so today's budget still holds`;
  const decision = status.lastDecision;
  const next = status.awaitingYou
    ? "after you write"
    : status.nextCheckin === null
      ? "none scheduled"
      : `${local(status.nextCheckin)} at the earliest (${timezone})`;
  const lines = [
    `Check-ins: ${checkins}`,
    `Unanswered: ${status.unansweredCount === 0 ? "none" : `${plural(status.unansweredCount, "message")} since you last wrote`}`,
    `Next check-in: ${next}`,
    `Tokens today: ${tokens}${keptThroughWipe}`,
    `Last check-in decision: ${decision === null ? "none yet" : `${local(decision.ts)}, ${decisionSentence(decision)}`}`,
  ];
  const { declaredPatterns, openLoops, milestones } = status.memory;
  if (declaredPatterns + openLoops + milestones > 0) {
    lines.push(
      `Memory: ${plural(declaredPatterns, "declared pattern")}, ${plural(openLoops, "open loop")}, ${plural(milestones, "milestone")}`,
    );
  }
  if (status.bestHours !== null) lines.push(`Best hours: ${bestHoursWords(status.bestHours)}`);
  lines.push(`Voice notes: ${voiceNotesWords(status.voiceNotes)}`);
  if (status.pendingReflections > 0) lines.push(`Reflections waiting: ${status.pendingReflections}`);
  return (width === undefined ? lines : lines.flatMap((line) => wrapWords(line, width))).join("\n");
}

/** Whether voice notes are heard, in words: where they are transcribed (and what is wrong there), or the setting that would hear them. */
export function voiceNotesWords(voiceNotes: Status["voiceNotes"]): string {
  if (voiceNotes.at === null)
    return "not heard (no transcription service: PRESENCE_TRANSCRIBE_URL is not set)";
  const heard = `heard, transcribed at ${voiceNotes.at}`;
  return voiceNotes.trouble === null ? heard : `${heard}, but ${voiceNotes.trouble}`;
}

/** The learned best hours in words: "weekdays 19–22, weekends 10–12 (learned from 24 check-ins)". */
function bestHoursWords(best: NonNullable<Status["bestHours"]>): string {
  if (best.checkins < MIN_CHECKINS) {
    return `still learning when you answer (${best.checkins} of ${MIN_CHECKINS} check-ins so far)`;
  }
  const kind = (ranges: HourRange[]) =>
    ranges.length === 0 ? "no clear favourite yet" : formatHourRanges(ranges);
  return `weekdays ${kind(best.weekday)}, weekends ${kind(best.weekend)} (learned from ${plural(best.checkins, "check-in")} in the last ${LOOKBACK_DAYS / 7} weeks)`;
}
