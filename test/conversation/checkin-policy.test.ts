import { describe, expect, it } from "vitest";
import { loadCoreConfig } from "../../src/app/config.ts";
import type { AwarenessContext } from "../../src/conversation/awareness/context.ts";
import {
  checkinsToday,
  heldWithoutAwareness,
  isInQuietHours,
  type PreCheckState,
  shouldFireHeartbeat,
  withCheckinSent,
} from "../../src/conversation/checkin-policy.ts";
import { learnTiming } from "../../src/conversation/timing.ts";
import {
  emptyHeartbeatState,
  type HeartbeatSettings,
  type HeartbeatState,
  heartbeatStateSchema,
} from "../../src/core/checkin-settings.ts";
import { type HeartbeatReason, heartbeatReasonSchema } from "../../src/core/decision.ts";
import type { Message } from "../../src/core/message.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";
import { eveningAnswererLog } from "../support/evening-answerer.ts";

const settings: HeartbeatSettings = BERLIN_CHECKIN_SETTINGS;

/** Tuesday 10 February 2026, 15:00 in Berlin. */
const TUESDAY_AFTERNOON = new Date("2026-02-10T14:00:00Z");
/** Saturday 7 February 2026, 15:00 in Berlin. */
const SATURDAY_AFTERNOON = new Date("2026-02-07T14:00:00Z");

interface Shape {
  unanswered?: number;
  /** Minutes since the person's last message; null when they never wrote. */
  sinceUser?: number | null;
  /** Minutes since the companion's last message; null when it never spoke. */
  sinceSelf?: number | null;
}

/** An awareness context with just the facts the pre-check reads. */
function awareness(
  now: Date,
  { unanswered = 0, sinceUser = 600, sinceSelf = 600 }: Shape = {},
): AwarenessContext {
  const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000).toISOString();
  const sent: Message[] = Array.from({ length: unanswered }, (_, i) => ({
    id: `a${i}`,
    ts: at((sinceSelf ?? 600) + (unanswered - 1 - i) * 60),
    role: "assistant",
    trigger: "heartbeat",
    text: "How is the day going?",
    channel: "telegram",
  }));
  const userMessage: Message | null =
    sinceUser === null
      ? null
      : { id: "u1", ts: at(sinceUser), role: "user", text: "Morning!", channel: "telegram" };
  return {
    now: now.toISOString(),
    timezone: settings.timezone,
    self: {
      messagesSent: sent,
      lastMessageTime: sinceSelf === null ? null : at(sinceSelf),
      timeSinceLastMessage: sinceSelf,
      topicsMentioned: [],
      questionsLeftOpen: [],
      repeatedTopics: [],
    },
    user: {
      lastMessage: userMessage,
      timeSinceLastMessage: sinceUser,
      recentMessages: userMessage ? [userMessage] : [],
      engagementLevel: sinceUser === null ? "silent" : sinceUser <= 30 ? "active" : "sporadic",
      topicsAddressed: [],
    },
    conversationState: {
      unansweredCount: unanswered,
      lastExchangeTone: "neutral",
      recentTopicShift: false,
      currentTopics: [],
      currentDomain: null,
      silenceDuration: Math.min(sinceUser ?? Number.POSITIVE_INFINITY, sinceSelf ?? Number.POSITIVE_INFINITY),
      timeOfDay: "afternoon",
      dayType: "weekday",
      waitingMinutes: null,
    },
    priorContext: { declaredPatterns: [], openLoops: [], recentMilestones: [] },
    observations: [],
    format: "full",
  };
}

function state(patch: Partial<PreCheckState> = {}): PreCheckState {
  return { ...emptyHeartbeatState, ...patch };
}

function sentAt(...isoTimes: string[]): Partial<HeartbeatState> {
  return { checkinsSent: isoTimes.map((t) => new Date(t).toISOString()) };
}

describe("shouldFireHeartbeat", () => {
  it("fires when nothing holds it back", () => {
    expect(shouldFireHeartbeat(awareness(TUESDAY_AFTERNOON), TUESDAY_AFTERNOON, settings, state())).toEqual({
      fire: true,
      reason: "ok",
      detail: "Nothing holds a check-in back.",
    });
  });

  /**
   * Each row makes exactly one rule hold at `now`. Listed in precedence order: the
   * precedence test switches them all on and takes them away from the top, one at a time.
   */
  const rules: {
    reason: HeartbeatReason;
    shape?: Shape;
    state?: (now: Date) => Partial<PreCheckState>;
    weekend?: boolean;
  }[] = [
    {
      reason: "paused",
      state: (now) => ({ pausedUntil: new Date(now.getTime() + 3_600_000).toISOString() }),
    },
    { reason: "blocked", state: () => ({ blocked: true }) },
    { reason: "quiet-hours", state: () => ({ quietHours: { start: 14 * 60, end: 16 * 60 } }) },
    { reason: "unanswered-limit", shape: { unanswered: 3 } },
    { reason: "weekend-limit", shape: { unanswered: 1 }, weekend: true },
    { reason: "recent-conversation", shape: { sinceUser: 29 } },
    { reason: "too-soon", shape: { sinceSelf: 44 } },
    { reason: "daily-limit", state: (now) => sentAt(...Array.from({ length: 8 }, () => now.toISOString())) },
    { reason: "budget", state: () => ({ budgetExceeded: true }) },
    {
      reason: "unlikely-moment",
      state: (now) => ({
        timing: learnTiming(eveningAnswererLog(), now, settings.timezone),
        ...sentAt(new Date(now.getTime() - 4 * 3_600_000).toISOString()),
      }),
    },
  ];

  /** The decision with the given rules switched on; where two shape one fact, the earlier row's value wins. */
  function decideWith(active: typeof rules) {
    const now = active.some((r) => r.weekend) ? SATURDAY_AFTERNOON : TUESDAY_AFTERNOON;
    const shape: Shape = Object.assign({}, ...active.map((r) => r.shape ?? {}).reverse());
    const patches = active.map((r) => r.state?.(now) ?? {});
    const patch: Partial<PreCheckState> = Object.assign({}, ...patches, {
      checkinsSent: patches.flatMap((p) => p.checkinsSent ?? []),
    });
    return shouldFireHeartbeat(awareness(now, shape), now, settings, state(patch));
  }

  it.each(rules)("holds for $reason", (rule) => {
    const decision = decideWith([rule]);
    expect(decision.fire).toBe(false);
    expect(decision.reason).toBe(rule.reason);
    expect(decision.detail.length).toBeGreaterThan(10);
  });

  it("gives the first rule that holds, in the documented order", () => {
    const order = heartbeatReasonSchema.options.filter((r) => r !== "ok");
    expect(rules.map((r) => r.reason)).toEqual(order);
    for (let first = 0; first <= rules.length; first++) {
      const active = rules.slice(first);
      expect(decideWith(active).reason).toBe(active[0]?.reason ?? "ok");
    }
  });

  it("decides paused, blocked and quiet hours without awareness, as it decides them with it", () => {
    for (const [i, rule] of rules.entries()) {
      const now = rule.weekend ? SATURDAY_AFTERNOON : TUESDAY_AFTERNOON;
      const early = heldWithoutAwareness(now, settings, state(rule.state?.(now) ?? {}));
      expect(early).toEqual(i < 3 ? decideWith([rule]) : undefined);
    }
    expect(heldWithoutAwareness(TUESDAY_AFTERNOON, settings, state())).toBeUndefined();
  });

  it("explains itself in a sentence for /why", () => {
    const decide = (shape: Shape, patch: Partial<HeartbeatState> = {}, now = TUESDAY_AFTERNOON) =>
      shouldFireHeartbeat(awareness(now, shape), now, settings, state(patch)).detail;
    expect(decide({ unanswered: 3 })).toBe("3 messages are unanswered (limit 3).");
    expect(decide({ unanswered: 1 }, {}, SATURDAY_AFTERNOON)).toBe(
      "It is Saturday and 1 message is unanswered (weekend limit 1).",
    );
    expect(decide({ sinceUser: 12 })).toBe(
      "The person wrote 12 minutes ago (a conversation counts as recent for 30).",
    );
    expect(decide({ sinceSelf: 20 })).toBe("The last message went out 20 minutes ago (minimum gap 45).");
    expect(decide({}, { pausedUntil: "2026-02-10T17:00:00.000Z" })).toBe(
      "Check-ins are paused until Tue 10 Feb 18:00 (Europe/Berlin).",
    );
    expect(decide({}, { pausedIndefinitely: true })).toBe("Check-ins are paused until /resume.");
    const night = new Date("2026-02-10T22:14:00Z");
    expect(decide({}, {}, night)).toBe("It is 23:14 in Europe/Berlin, inside quiet hours 22:00-08:00.");
  });

  it("takes every threshold from the settings", () => {
    const now = TUESDAY_AFTERNOON;
    const loose: HeartbeatSettings = {
      ...settings,
      maxUnanswered: 5,
      recentMinutes: 10,
      minGapMinutes: 15,
      maxCheckinsPerDay: 9,
    };
    const busy = awareness(now, { unanswered: 3, sinceUser: 20, sinceSelf: 20 });
    const eight = state(sentAt(...Array.from({ length: 8 }, () => now.toISOString())));
    expect(shouldFireHeartbeat(busy, now, settings, eight).reason).toBe("unanswered-limit");
    expect(shouldFireHeartbeat(busy, now, loose, eight).reason).toBe("ok");
    const saturday = awareness(SATURDAY_AFTERNOON, { unanswered: 1 });
    expect(
      shouldFireHeartbeat(saturday, SATURDAY_AFTERNOON, { ...settings, weekendMaxUnanswered: 2 }, state())
        .fire,
    ).toBe(true);
    expect(
      shouldFireHeartbeat(
        awareness(SATURDAY_AFTERNOON),
        SATURDAY_AFTERNOON,
        { ...settings, weekendMaxUnanswered: 0 },
        state(),
      ).reason,
    ).toBe("weekend-limit");
  });

  it("counts a limit as reached at the threshold, not one past it", () => {
    const now = TUESDAY_AFTERNOON;
    const reason = (shape: Shape) =>
      shouldFireHeartbeat(awareness(now, shape), now, settings, state()).reason;
    expect(reason({ unanswered: 2 })).toBe("ok");
    expect(reason({ sinceUser: 30 })).toBe("ok");
    expect(reason({ sinceSelf: 45 })).toBe("ok");
    expect(reason({ sinceUser: null, sinceSelf: null })).toBe("ok");
  });

  it("ends a timed pause at its instant", () => {
    const until = "2026-02-10T14:00:00.000Z";
    const at = (iso: string) => {
      const now = new Date(iso);
      return shouldFireHeartbeat(awareness(now), now, settings, state({ pausedUntil: until })).reason;
    };
    expect(at("2026-02-10T13:59:59Z")).toBe("paused");
    expect(at("2026-02-10T14:00:00Z")).toBe("ok");
  });

  it("reads quiet hours, weekend and today in the person's zone, their /tz override first", () => {
    const lateInBerlin = new Date("2026-02-10T23:30:00Z"); // 00:30 Wednesday in Berlin, 18:30 Tuesday in New York
    const decide = (patch: Partial<HeartbeatState>, now = lateInBerlin) =>
      shouldFireHeartbeat(awareness(now), now, settings, state(patch)).reason;
    expect(decide({})).toBe("quiet-hours");
    expect(decide({ timezone: "America/New_York" })).toBe("ok");
    expect(decide({ quietHours: { start: 1 * 60, end: 6 * 60 } })).toBe("ok");
    const fridayEveningInBerlin = new Date("2026-02-06T19:00:00Z"); // already Saturday 04:00 in Tokyo
    const noQuiet = { quietHours: { start: 0, end: 0 } };
    const oneUnanswered = awareness(fridayEveningInBerlin, { unanswered: 1 });
    const weekend = (patch: Partial<HeartbeatState>) =>
      shouldFireHeartbeat(oneUnanswered, fridayEveningInBerlin, settings, state({ ...noQuiet, ...patch }))
        .reason;
    expect(weekend({})).toBe("ok");
    expect(weekend({ timezone: "Asia/Tokyo" })).toBe("weekend-limit");
  });

  it("counts check-ins of the local day only, across midnight", () => {
    const zoned: HeartbeatSettings = { ...settings, timezone: "America/New_York", maxCheckinsPerDay: 2 };
    const now = new Date("2026-02-10T15:00:00Z"); // 10:00 in New York
    // 23:30 yesterday and 00:30 today in New York, but the same UTC day.
    const yesterdayAndToday = state(sentAt("2026-02-10T04:30:00Z", "2026-02-10T05:30:00Z"));
    expect(checkinsToday(yesterdayAndToday, now, "America/New_York")).toBe(1);
    expect(shouldFireHeartbeat(awareness(now), now, zoned, yesterdayAndToday).reason).toBe("ok");
    const twoToday = state(sentAt("2026-02-10T05:30:00Z", "2026-02-10T13:00:00Z"));
    expect(shouldFireHeartbeat(awareness(now), now, zoned, twoToday)).toMatchObject({
      reason: "daily-limit",
      detail: "2 check-ins already sent today (limit 2).",
    });
  });
});

describe("the learned timing in the pre-check", () => {
  const log = eveningAnswererLog();
  /** Tuesday 24 Feb 2026 in Berlin, after three weeks of the evening answerer. */
  const at = (hhmm: string) => new Date(`2026-02-24T${hhmm}:00+01:00`);
  const decide = (now: Date, lastSentHoursAgo: number | null, withTiming = true) =>
    shouldFireHeartbeat(
      awareness(now),
      now,
      settings,
      state({
        ...(withTiming && { timing: learnTiming(log, now, settings.timezone) }),
        ...(lastSentHoursAgo === null
          ? {}
          : sentAt(new Date(now.getTime() - lastSentHoursAgo * 3_600_000).toISOString())),
      }),
    );

  it("holds a check-in at an hour the person rarely answers, and says when they do", () => {
    expect(decide(at("10:07"), 13)).toEqual({
      fire: false,
      reason: "unlikely-moment",
      detail:
        "It is 10:07 on a weekday in Europe/Berlin; the person answered check-ins around this hour 0% of the time lately, best hours 19–22.",
      moment: { local: "10:07", weekend: false, bestHours: [{ from: 19, to: 22 }] },
    });
  });

  it("lets it out at a good hour", () => {
    expect(decide(at("20:07"), 23)).toMatchObject({ fire: true, reason: "ok" });
  });

  it("lets it out at any hour once no check-in has gone out for 24 hours", () => {
    expect(decide(at("10:07"), 23.9).reason).toBe("unlikely-moment");
    expect(decide(at("10:07"), 24)).toMatchObject({ fire: true, reason: "ok" });
    expect(decide(at("10:07"), null)).toMatchObject({ fire: true, reason: "ok" });
  });

  it("holds nothing when learning is off (no timing passed)", () => {
    expect(decide(at("10:07"), 13, false)).toMatchObject({ fire: true, reason: "ok" });
  });
});

describe("isInQuietHours", () => {
  const berlin = (hhmm: string) => new Date(`2026-02-10T${hhmm}:00+01:00`);
  it("includes the start and excludes the end, across midnight", () => {
    const night = { start: 22 * 60, end: 8 * 60 };
    expect(isInQuietHours(berlin("21:59"), "Europe/Berlin", night)).toBe(false);
    expect(isInQuietHours(berlin("22:00"), "Europe/Berlin", night)).toBe(true);
    expect(isInQuietHours(berlin("03:00"), "Europe/Berlin", night)).toBe(true);
    expect(isInQuietHours(berlin("07:59"), "Europe/Berlin", night)).toBe(true);
    expect(isInQuietHours(berlin("08:00"), "Europe/Berlin", night)).toBe(false);
  });

  it("handles a range within one day, and equal ends as no quiet hours", () => {
    const lunch = { start: 12 * 60 + 30, end: 13 * 60 + 30 };
    expect(isInQuietHours(berlin("12:29"), "Europe/Berlin", lunch)).toBe(false);
    expect(isInQuietHours(berlin("13:00"), "Europe/Berlin", lunch)).toBe(true);
    expect(isInQuietHours(berlin("13:30"), "Europe/Berlin", lunch)).toBe(false);
    expect(isInQuietHours(berlin("13:00"), "Europe/Berlin", { start: 600, end: 600 })).toBe(false);
  });
});

describe("heartbeat state", () => {
  it("loads from nothing, so older data without these fields still works", () => {
    expect(heartbeatStateSchema.parse({})).toEqual({
      pausedUntil: null,
      pausedIndefinitely: false,
      quietHours: null,
      timezone: null,
      checkinsSent: [],
      blocked: false,
    });
    expect(emptyHeartbeatState).toEqual(heartbeatStateSchema.parse({}));
  });

  it("refuses an unknown zone and quiet hours outside the day", () => {
    expect(heartbeatStateSchema.safeParse({ timezone: "Mars/Olympus" }).success).toBe(false);
    expect(heartbeatStateSchema.safeParse({ quietHours: { start: 0, end: 1440 } }).success).toBe(false);
    expect(heartbeatStateSchema.safeParse({ pausedUntil: "tomorrow" }).success).toBe(false);
  });

  it("records a check-in and forgets those older than two days", () => {
    const old = state(sentAt("2026-02-07T10:00:00Z", "2026-02-09T10:00:00Z"));
    const next = withCheckinSent(old, new Date("2026-02-10T12:00:00Z"));
    expect(next.checkinsSent).toEqual(["2026-02-09T10:00:00.000Z", "2026-02-10T12:00:00.000Z"]);
    expect(old.checkinsSent).toHaveLength(2);
  });
});

describe("the configured settings", () => {
  it("are the configuration as it is, with the configured rules and their documented defaults", () => {
    const core = loadCoreConfig({ PRESENCE_TIMEZONE: "Europe/Berlin", PRESENCE_MAX_UNANSWERED: "4" });
    const configured: HeartbeatSettings = core;
    expect(configured).toMatchObject({ ...settings, maxUnanswered: 4 });
  });
});
