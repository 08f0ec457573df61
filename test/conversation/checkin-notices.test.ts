import { describe, expect, it } from "vitest";
import {
  CHECKIN_NOTICE_TEXT,
  type NoticeRuleState,
  planCheckinNotice,
  withNoticeSaid,
} from "../../src/conversation/checkin-notices.ts";
import {
  type CheckinNoticeState,
  checkinNoticeStateSchema,
  emptyCheckinNoticeState,
  emptyHeartbeatState,
  type HeartbeatSettings,
} from "../../src/core/checkin-settings.ts";
import { type DecisionReason, heartbeatReasonSchema } from "../../src/core/decision.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";

const settings: HeartbeatSettings = BERLIN_CHECKIN_SETTINGS;

/** Tuesday 10 February 2026, in Berlin (UTC+1). */
const at = (berlinTime: string, day = "2026-02-10") => new Date(`${day}T${berlinTime}:00+01:00`);

function rule(notices: Partial<CheckinNoticeState> = {}, heartbeat = {}): NoticeRuleState {
  return {
    notices: { ...structuredClone(emptyCheckinNoticeState), ...notices },
    heartbeat: { ...emptyHeartbeatState, ...heartbeat },
    decisions: [],
  };
}

/** Runs the rule over a day of check-in turns, keeping what it plans and recording each notice as sent. */
function replay(turns: [string, DecisionReason][], start = rule(), day = "2026-02-10") {
  let state = start;
  const said: [string, string][] = [];
  for (const [time, reason] of turns) {
    const now = at(time, day);
    // As the companion does: the turn's decision is recorded before the rule reads the decisions.
    state = { ...state, decisions: [...state.decisions, { ts: now.toISOString(), reason }] };
    const plan = planCheckinNotice(state, { reason }, now, settings);
    let notices = plan.state;
    if (plan.say) {
      said.push([time, plan.say.text]);
      notices = withNoticeSaid(notices, plan.say.said, now);
    }
    state = { ...state, notices };
  }
  return { said, state: state.notices, ruleState: state };
}

describe("planCheckinNotice: the budget", () => {
  it("says once per local day that the budget is spent, and that check-ins are back the next day", () => {
    const today = replay([
      ["14:07", "budget"],
      ["15:07", "budget"],
      ["21:07", "budget"],
    ]);
    expect(today.said).toEqual([["14:07", CHECKIN_NOTICE_TEXT.budget]]);
    const tomorrow = replay(
      [
        ["09:07", "model-declined"],
        ["10:07", "model-declined"],
      ],
      rule(today.state),
      "2026-02-11",
    );
    expect(tomorrow.said).toEqual([["09:07", CHECKIN_NOTICE_TEXT.back]]);
  });

  it("says it again on a later day the budget is spent, even with no resume between", () => {
    const first = replay([["14:07", "budget"]]);
    const next = replay([["13:07", "budget"]], rule(first.state), "2026-02-11");
    expect(next.said).toEqual([["13:07", CHECKIN_NOTICE_TEXT.budget]]);
  });

  it("counts the day in the person's /tz zone", () => {
    // 20:30 UTC on the 10th is already the 11th in Tokyo (a new day there), still the 10th in Berlin.
    const told = withNoticeSaid(
      emptyCheckinNoticeState,
      { kind: "stopped", causes: ["budget"] },
      new Date("2026-02-10T05:00:00Z"),
    );
    const tokyo = rule(told, { timezone: "Asia/Tokyo", quietHours: { start: 0, end: 0 } });
    const later = new Date("2026-02-10T20:30:00Z");
    expect(planCheckinNotice(tokyo, { reason: "budget" }, later, settings).say?.text).toBe(
      CHECKIN_NOTICE_TEXT.budget,
    );
    const berlin = rule(told, { quietHours: { start: 0, end: 0 } });
    expect(planCheckinNotice(berlin, { reason: "budget" }, later, settings).say).toBeNull();
  });
});

describe("planCheckinNotice: the model", () => {
  it("says nothing for an hour of failures, once after more than an hour, and not again", () => {
    const { said, state } = replay([
      ["10:07", "model-unavailable"],
      ["10:37", "model-error"],
      ["11:07", "model-unavailable"],
      ["11:08", "model-unavailable"],
      ["12:07", "model-unavailable"],
      ["13:07", "model-error"],
    ]);
    expect(said).toEqual([["11:08", CHECKIN_NOTICE_TEXT.model]]);
    expect(state.model).toEqual({ announcedAt: at("11:08").toISOString(), resumedAt: null });
  });

  it("counts only an unbroken run of failures: a model answer in between starts it again", () => {
    const { said } = replay([
      ["10:07", "model-unavailable"],
      ["10:50", "model-declined"],
      ["11:07", "model-unavailable"],
      ["11:30", "model-unavailable"],
      ["12:08", "model-unavailable"],
    ]);
    expect(said).toEqual([["12:08", CHECKIN_NOTICE_TEXT.model]]);
  });

  it("ignores holds that never reached the model: the run goes on across them", () => {
    const { said } = replay([
      ["10:07", "model-unavailable"],
      ["10:40", "recent-conversation"],
      ["11:00", "too-soon"],
      ["11:20", "model-unavailable"],
    ]);
    expect(said).toEqual([["11:20", CHECKIN_NOTICE_TEXT.model]]);
  });

  it("says it is back at the first model answer, with one notice, and a later outage is told again", () => {
    const { said } = replay([
      ["09:00", "model-unavailable"],
      ["10:30", "model-unavailable"],
      ["11:00", "model-declined"],
      ["12:00", "model-declined"],
      ["13:00", "model-unavailable"],
      ["14:30", "model-unavailable"],
    ]);
    expect(said).toEqual([
      ["10:30", CHECKIN_NOTICE_TEXT.model],
      ["11:00", CHECKIN_NOTICE_TEXT.back],
    ]);
  });

  it("lets a check-in that went out stand for the 'back' notice", () => {
    const outage = replay([
      ["09:00", "model-unavailable"],
      ["10:30", "model-unavailable"],
    ]);
    const plan = planCheckinNotice(rule(outage.state), { reason: "sent" }, at("11:00"), settings);
    expect(plan.say).toBeNull();
    expect(plan.state.model.resumedAt).toBe(at("11:00").toISOString());
  });

  it("does not say anything to a person who blocked the bot", () => {
    const outage = replay([
      ["09:00", "model-unavailable"],
      ["10:30", "model-unavailable"],
    ]);
    expect(
      planCheckinNotice(rule(outage.state), { reason: "blocked" }, at("11:00"), settings).say,
    ).toBeNull();
  });

  it("does not repeat an outage that lasts into the next day: the person waits for 'back'", () => {
    const day1 = replay([
      ["09:00", "model-unavailable"],
      ["10:30", "model-unavailable"],
    ]);
    const day2 = replay([["09:07", "model-unavailable"]], rule(day1.state), "2026-02-11");
    expect(day2.said).toEqual([]);
  });
});

describe("planCheckinNotice: what is never said", () => {
  it("never announces a reason the person chose or a limit of the conversation", () => {
    const chosen = heartbeatReasonSchema.options.filter((r) => r !== "budget" && r !== "ok");
    for (const reason of chosen) {
      const { said } = replay([
        ["10:00", "model-unavailable"],
        ["12:00", reason],
        ["13:00", reason],
      ]);
      expect(said, reason).toEqual([]);
    }
  });

  it("says nothing in quiet hours, and decides again from what holds once they end", () => {
    const evening = replay([
      ["21:00", "model-unavailable"],
      ["22:30", "model-unavailable"],
      ["23:30", "budget"],
    ]);
    expect(evening.said).toEqual([]);
    const morning = replay(
      [
        ["07:59", "model-unavailable"],
        ["08:00", "model-unavailable"],
      ],
      // Decisions carry over the night, as mind.json keeps them.
      evening.ruleState,
      "2026-02-11",
    );
    expect(morning.said).toEqual([["08:00", CHECKIN_NOTICE_TEXT.model]]);
  });

  it("reads the person's own /quiet hours", () => {
    const quietAfternoon = rule({}, { quietHours: { start: 13 * 60, end: 16 * 60 } });
    expect(planCheckinNotice(quietAfternoon, { reason: "budget" }, at("14:00"), settings).say).toBeNull();
    expect(planCheckinNotice(quietAfternoon, { reason: "budget" }, at("16:00"), settings).say).not.toBeNull();
  });

  it("holds a 'back' notice through quiet hours until a turn outside them", () => {
    const outage = replay([
      ["09:00", "model-unavailable"],
      ["10:30", "model-unavailable"],
    ]);
    const late = planCheckinNotice(rule(outage.state), { reason: "model-declined" }, at("22:30"), settings);
    expect(late.say).toBeNull();
    expect(late.state.model.resumedAt).toBeNull();
    const next = planCheckinNotice(
      rule(late.state),
      { reason: "model-declined" },
      at("08:30", "2026-02-11"),
      settings,
    );
    expect(next.say?.text).toBe(CHECKIN_NOTICE_TEXT.back);
  });
});

describe("withNoticeSaid and the kept state", () => {
  it("opens a cause on a stop and closes every cause a 'back' names", () => {
    const stopped = withNoticeSaid(
      emptyCheckinNoticeState,
      { kind: "stopped", causes: ["budget"] },
      at("14:00"),
    );
    const both = withNoticeSaid(stopped, { kind: "stopped", causes: ["model"] }, at("15:00"));
    const back = withNoticeSaid(both, { kind: "back", causes: ["budget", "model"] }, at("16:00"));
    expect(back.budget).toEqual({
      announcedAt: at("14:00").toISOString(),
      resumedAt: at("16:00").toISOString(),
    });
    expect(back.model).toEqual({
      announcedAt: at("15:00").toISOString(),
      resumedAt: at("16:00").toISOString(),
    });
  });

  it("loads from nothing, as a mind.json written before notices existed", () => {
    expect(checkinNoticeStateSchema.parse({})).toEqual({
      budget: { announcedAt: null, resumedAt: null },
      model: { announcedAt: null, resumedAt: null },
    });
  });

  it("one 'back' notice covers both causes when both were told", () => {
    const told = withNoticeSaid(
      withNoticeSaid(emptyCheckinNoticeState, { kind: "stopped", causes: ["budget"] }, at("14:00")),
      { kind: "stopped", causes: ["model"] },
      at("15:00"),
    );
    const plan = planCheckinNotice(rule(told), { reason: "model-declined" }, at("16:00"), settings);
    expect(plan.say).toEqual({
      text: CHECKIN_NOTICE_TEXT.back,
      said: { kind: "back", causes: ["budget", "model"] },
    });
  });
});
