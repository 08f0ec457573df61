import { DateTime } from "luxon";
import {
  effectiveSettings,
  formatQuietHours,
  type HeartbeatSettings,
  type HeartbeatState,
  type QuietHours,
} from "../core/checkin-settings.ts";
import type { HeartbeatDecision, HeartbeatReason } from "../core/decision.ts";
import { plural } from "../core/text.ts";
import { localDayNumber, localTime } from "../core/zones.ts";
import type { AwarenessContext } from "./awareness/context.ts";
import { isWeekend } from "./awareness/time.ts";
import { formatHourRanges, type LearnedTiming, momentOutlook } from "./timing.ts";

/**
 * The heartbeat pre-check: before any model is called, decide whether a check-in may go
 * out at all. Pure (no clock, no I/O), so every decision can be replayed, explained by
 * /why and tested at any instant. The rules are few and hard on purpose; everything
 * subtler (was it already answered? is the topic repeated?) is left to the model, which
 * sees the awareness block.
 */

/**
 * What the pre-check reads: the kept state, plus whether today's token spend has passed the
 * budget, which the caller computes from the usage ledger at each tick (never stored, so it
 * turns with the person's day by itself). Left out, the budget is taken as not spent.
 * `timing` is what the log says about when the person answers (conversation/timing.ts), also
 * computed by the caller; left out (PRESENCE_LEARN_TIMING=off), no moment is unlikely.
 */
export type PreCheckState = HeartbeatState & { budgetExceeded?: boolean; timing?: LearnedTiming };

/** However unlikely the hour, a check-in may go out once none has for this long. */
const UNLIKELY_MOMENT_OVERRIDE_HOURS = 24;

/** True when the local time of `now` in `zone` falls in quiet hours (start inclusive, end exclusive, may wrap midnight). */
export function isInQuietHours(now: Date, zone: string, quiet: QuietHours): boolean {
  const local = localTime(now.getTime(), zone);
  const minute = local.hour * 60 + local.minute;
  if (quiet.start === quiet.end) return false;
  return quiet.start < quiet.end
    ? minute >= quiet.start && minute < quiet.end
    : minute >= quiet.start || minute < quiet.end;
}

/** How many check-ins went out on the local day of `now`, up to `now`. */
export function checkinsToday(state: HeartbeatState, now: Date, zone: string): number {
  // Their times are UTC (isoUtc), which Date.parse reads as DateTime.fromISO does.
  const today = localDayNumber(now.getTime(), zone);
  return state.checkinsSent.filter((ts) => {
    const sentMs = Date.parse(ts);
    return sentMs <= now.getTime() && localDayNumber(sentMs, zone) === today;
  }).length;
}

/**
 * Records a check-in that went out. Sends older than two days are dropped: no local day
 * reaches further back, and the state must not grow for a year.
 */
export function withCheckinSent(state: HeartbeatState, at: Date): HeartbeatState {
  const horizon = at.getTime() - 2 * 24 * 60 * 60_000;
  const kept = state.checkinsSent.filter((ts) => Date.parse(ts) >= horizon);
  return { ...state, checkinsSent: [...kept, at.toISOString()] };
}

/** A decision that holds the check-in back, for `reason`. */
function hold(reason: HeartbeatReason, detail: string): HeartbeatDecision {
  return { fire: false, reason, detail };
}

/**
 * The first rules of shouldFireHeartbeat, which read no awareness: paused, blocked, quiet
 * hours. Their hold, or undefined when none holds. A check-in turn asks these first and builds
 * the awareness only when they let it through: a month's nights are some 300 ticks.
 */
export function heldWithoutAwareness(
  now: Date,
  configured: HeartbeatSettings,
  state: PreCheckState,
): HeartbeatDecision | undefined {
  const settings = effectiveSettings(configured, state, now);
  const zone = settings.timezone;
  const { paused } = settings;
  if (paused?.indefinitely) return hold("paused", "Check-ins are paused until /resume.");
  if (paused) {
    const until = DateTime.fromISO(paused.until, { zone });
    return hold("paused", `Check-ins are paused until ${until.toFormat("ccc d LLL HH:mm")} (${zone}).`);
  }
  if (state.blocked) {
    return hold("blocked", "The person blocked the bot; check-ins resume when they write again.");
  }
  const quiet = settings.quietHours;
  if (isInQuietHours(now, zone, quiet)) {
    const local = localTime(now.getTime(), zone);
    return hold(
      "quiet-hours",
      `It is ${local.toFormat("HH:mm")} in ${zone}, inside quiet hours ${formatQuietHours(quiet)}.`,
    );
  }
  return undefined;
}

/**
 * May a check-in go out now? The first rule that holds gives the reason: paused, blocked,
 * quiet-hours, unanswered-limit, weekend-limit, recent-conversation, too-soon, daily-limit,
 * budget, unlikely-moment; otherwise `ok`. The rules read the settings in force now
 * (effectiveSettings: the person's pause, /tz and /quiet over the configured ones); local times
 * (quiet hours, weekend, "today") are in the person's zone.
 */
export function shouldFireHeartbeat(
  awareness: AwarenessContext,
  now: Date,
  configured: HeartbeatSettings,
  state: PreCheckState,
): HeartbeatDecision {
  const early = heldWithoutAwareness(now, configured, state);
  if (early !== undefined) return early;
  const settings = effectiveSettings(configured, state, now);
  const zone = settings.timezone;
  const local = localTime(now.getTime(), zone);
  const unanswered = awareness.conversationState.unansweredCount;
  if (unanswered >= settings.maxUnanswered) {
    return hold(
      "unanswered-limit",
      `${plural(unanswered, "message is", "messages are")} unanswered (limit ${settings.maxUnanswered}).`,
    );
  }
  const weekend = isWeekend(local);
  if (weekend && unanswered >= settings.weekendMaxUnanswered) {
    return hold(
      "weekend-limit",
      `It is ${local.toFormat("cccc")} and ${plural(unanswered, "message is", "messages are")} unanswered (weekend limit ${settings.weekendMaxUnanswered}).`,
    );
  }
  const sinceUser = awareness.user.timeSinceLastMessage;
  if (sinceUser !== null && sinceUser < settings.recentMinutes) {
    return hold(
      "recent-conversation",
      `The person wrote ${plural(sinceUser, "minute", "minutes")} ago (a conversation counts as recent for ${settings.recentMinutes}).`,
    );
  }
  const sinceSelf = awareness.self.timeSinceLastMessage;
  if (sinceSelf !== null && sinceSelf < settings.minGapMinutes) {
    return hold(
      "too-soon",
      `The last message went out ${plural(sinceSelf, "minute", "minutes")} ago (minimum gap ${settings.minGapMinutes}).`,
    );
  }
  const sentToday = checkinsToday(state, now, zone);
  if (sentToday >= settings.maxCheckinsPerDay) {
    return hold(
      "daily-limit",
      `${plural(sentToday, "check-in", "check-ins")} already sent today (limit ${settings.maxCheckinsPerDay}).`,
    );
  }
  if (state.budgetExceeded) return hold("budget", "Today's token budget is spent.");
  const unlikely = state.timing === undefined ? null : unlikelyMoment(state.timing, state, now);
  if (unlikely !== null) return unlikely;
  return { fire: true, reason: "ok", detail: "Nothing holds a check-in back." };
}

/**
 * The `unlikely-moment` hold, or null: the person rarely answers at this hour and answers
 * better at others, and a check-in went out less than UNLIKELY_MOMENT_OVERRIDE_HOURS ago
 * (after that long, any allowed hour beats none, so a person whose good hours the schedule
 * never reaches still hears from the companion once a day). Exported for status, which skips
 * such ticks when it looks for the next check-in.
 */
export function unlikelyMoment(
  timing: LearnedTiming,
  state: HeartbeatState,
  now: Date,
): HeartbeatDecision | null {
  const outlook = momentOutlook(timing, now);
  if (!outlook.unlikely) return null;
  const sent = state.checkinsSent.map(Date.parse).filter((ms) => ms <= now.getTime());
  const overrideMs = UNLIKELY_MOMENT_OVERRIDE_HOURS * 3_600_000;
  if (sent.length === 0 || now.getTime() - Math.max(...sent) >= overrideMs) return null;
  const local = DateTime.fromJSDate(now, { zone: timing.zone }).toFormat("HH:mm");
  const best = formatHourRanges(outlook.bestHours);
  return {
    fire: false,
    reason: "unlikely-moment",
    detail: `It is ${local} on a ${outlook.kind} in ${timing.zone}; the person answered check-ins around this hour ${Math.round(outlook.rate * 100)}% of the time lately, best hours ${best}.`,
    moment: { local, weekend: outlook.kind === "weekend", bestHours: outlook.bestHours },
  };
}
