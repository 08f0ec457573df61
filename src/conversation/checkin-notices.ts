import { DateTime } from "luxon";
import {
  type CheckinNoticeState,
  checkinNoticeStateSchema,
  effectiveSettings,
  emptyCheckinNoticeState,
  type HeartbeatSettings,
  type HeartbeatState,
  type NoticeCause,
  type NoticeCauseState,
  type NoticeSaid,
  noticeCauseSchema,
} from "../core/checkin-settings.ts";
import { type Decision, type DecisionReason, modelAnsweredReasonSchema } from "../core/decision.ts";
import { mindRecord } from "../core/mind-record.ts";
import { isInQuietHours } from "./checkin-policy.ts";

/**
 * When check-ins stop for a reason the person cannot see from their side — the day's token
 * budget is spent, or the model has not answered for over an hour — the companion says so once,
 * and again when they resume. Reasons the person chose (a pause, quiet hours, their own silence,
 * the limits they live with) are never announced: the pre-check names those first, so a tick
 * they hold back never reaches these rules. Pure, like the pre-check: the companion applies the
 * plan and says the words through its outbox (companion/checkin-turn.ts).
 */

/**
 * What the person was told about check-ins stopping, kept in mind.json between ticks: the
 * state these rules read and change, and the outbox records a notice in as said.
 */
export const checkinNoticesRecord = mindRecord({
  key: "checkinNotices",
  schema: checkinNoticeStateSchema.default(() => structuredClone(emptyCheckinNoticeState)),
  initial: () => structuredClone(emptyCheckinNoticeState),
});

/** Model failures on check-in turns spanning longer than this (by the injected clock) are an outage worth telling. */
const MODEL_OUTAGE_MS = 60 * 60_000;

/** The fixed words, never generated: warm, short, and true whatever the model is doing. */
export const CHECKIN_NOTICE_TEXT = {
  budget: "I've used today's budget, so I'll stay quiet until tomorrow — you can still write to me.",
  model: "I can't reach my model right now, so I've stopped checking in; I'll say when I'm back.",
  back: "I'm back, and checking in again.",
} as const satisfies Record<NoticeCause | "back", string>;

/** Check-in turns that reached the model and failed. */
const MODEL_FAILED: ReadonlySet<DecisionReason> = new Set(["model-unavailable", "model-error"]);

/**
 * Check-in turns where the model answered, so the pre-check had passed (no budget hold) and the
 * model is reachable. `blocked` is left out: nothing is said to a person who blocked the bot.
 */
const MODEL_ANSWERED: ReadonlySet<DecisionReason> = new Set(modelAnsweredReasonSchema.options);

/**
 * What the rule reads from the kept state: what was told, the person's /tz and /quiet
 * overrides, and the check-in decisions recorded so far, this turn's last (when the model
 * started failing is read from them, not kept twice).
 */
export interface NoticeRuleState {
  notices: CheckinNoticeState;
  heartbeat: HeartbeatState;
  decisions: readonly Pick<Decision, "ts" | "reason">[];
}

/** A notice to say: its fixed words, and what it records as told once it is sent. */
interface NoticeToSay {
  text: string;
  said: NoticeSaid;
}

/**
 * The rule's answer: the state to keep now (a run of model failures began or ended; a resume the
 * check-in itself showed), and the notice to say, if any. Saying it is not recorded here: the
 * outbox records it (withNoticeSaid) in the write that logs it as sent, so a notice that never
 * went out is planned again at the next tick while its cause still holds.
 */
export interface NoticePlan {
  state: CheckinNoticeState;
  say: NoticeToSay | null;
}

/**
 * After a check-in turn recorded `decision`: is there something to tell the person?
 *
 * - The budget held the check-in back: say so, at most once per local day.
 * - The model failed, and every check-in turn since the first failure of this run failed too,
 *   over more than MODEL_OUTAGE_MS: say so, unless already said today or not yet taken back.
 * - The model answered after a notice of either cause: check-ins are back. When the turn sent
 *   a check-in, that message shows it and nothing else is said (two messages in a row from the
 *   companion are what the check-in rules avoid); otherwise a short "back" notice says it.
 *
 * Never in quiet hours: the notice is not kept for later, the next tick after quiet hours
 * decides again from what holds then (a budget spent yesterday is a new day's budget by then).
 * Days are the person's local days (their /tz first).
 */
export function planCheckinNotice(
  state: NoticeRuleState,
  decision: Pick<Decision, "reason">,
  now: Date,
  settings: HeartbeatSettings,
): NoticePlan {
  const next = structuredClone(state.notices);
  const failed = MODEL_FAILED.has(decision.reason);
  const answered = MODEL_ANSWERED.has(decision.reason);

  const { timezone: zone, quietHours } = effectiveSettings(settings, state.heartbeat, now);
  if (isInQuietHours(now, zone, quietHours)) {
    return { state: next, say: null };
  }
  if (decision.reason === "budget" && !announcedOnDay(next.budget, now, zone)) {
    return { state: next, say: stopped("budget") };
  }
  const failingSince = failed ? modelFailingSince(state.decisions) : null;
  if (
    failed &&
    failingSince !== null &&
    now.getTime() - failingSince > MODEL_OUTAGE_MS &&
    !isOutstanding(next.model) &&
    !announcedOnDay(next.model, now, zone)
  ) {
    return { state: next, say: stopped("model") };
  }
  if (answered) {
    const owed = noticeCauseSchema.options.filter((cause) => isOutstanding(next[cause]));
    if (owed.length === 0) return { state: next, say: null };
    if (decision.reason === "sent") {
      return { state: withNoticeSaid(next, { kind: "back", causes: owed }, now), say: null };
    }
    return {
      state: next,
      say: { text: CHECKIN_NOTICE_TEXT.back, said: { kind: "back", causes: owed } },
    };
  }
  return { state: next, say: null };
}

/**
 * When the current unbroken run of model failures began: the first failed turn after the
 * model last answered (holds that never reached the model neither break nor start it).
 */
function modelFailingSince(decisions: readonly Pick<Decision, "ts" | "reason">[]): number | null {
  let since: number | null = null;
  for (let i = decisions.length - 1; i >= 0; i--) {
    const { reason, ts } = decisions[i] as Pick<Decision, "ts" | "reason">;
    if (MODEL_ANSWERED.has(reason)) break;
    if (MODEL_FAILED.has(reason)) since = Date.parse(ts);
  }
  return since;
}

/** Records a notice as told at `at`: a stop opens its causes' announcements, a "back" closes them. */
export function withNoticeSaid(state: CheckinNoticeState, said: NoticeSaid, at: Date): CheckinNoticeState {
  const next = structuredClone(state);
  const ts = at.toISOString();
  for (const cause of said.causes) {
    next[cause] =
      said.kind === "stopped" ? { announcedAt: ts, resumedAt: null } : { ...next[cause], resumedAt: ts };
  }
  return next;
}

function stopped(cause: NoticeCause): NoticeToSay {
  return { text: CHECKIN_NOTICE_TEXT[cause], said: { kind: "stopped", causes: [cause] } };
}

/** Told check-ins stopped, and not yet told they are back. */
function isOutstanding(cause: NoticeCauseState): boolean {
  if (cause.announcedAt === null) return false;
  return cause.resumedAt === null || Date.parse(cause.resumedAt) < Date.parse(cause.announcedAt);
}

function announcedOnDay(cause: NoticeCauseState, now: Date, zone: string): boolean {
  if (cause.announcedAt === null) return false;
  const day = (date: DateTime) => date.setZone(zone).toISODate();
  return day(DateTime.fromISO(cause.announcedAt)) === day(DateTime.fromJSDate(now));
}
