import { describe, expect, it } from "vitest";
import {
  bestHours,
  formatHourRanges,
  isCheckin,
  learnTiming,
  MIN_CHECKINS,
  momentOutlook,
} from "../../src/conversation/timing.ts";
import type { Message } from "../../src/core/message.ts";
import { eveningAnswererLog } from "../support/evening-answerer.ts";

const ZONE = "Europe/Berlin";

const EVENING_ANSWERER = eveningAnswererLog();

/** Tuesday 24 Feb 2026 at this local time in Berlin. */
function tuesday(hhmm: string): Date {
  return new Date(`2026-02-24T${hhmm}:00+01:00`);
}

const HOURS = Array.from({ length: 24 }, (_, h) => h);

/** A log of check-ins at these local hours on each of `days` weekdays from Mon 2 Feb, each answered after `answerAfter` minutes (null: never). */
function checkinsAt(hours: number[], days: number, answerAfter: number | null): Message[] {
  const log: Message[] = [];
  for (let day = 0; day < days; day++) {
    for (const hour of hours) {
      const sent = new Date(
        `2026-02-${String(2 + day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:07:00+01:00`,
      );
      log.push(message(log.length, sent, "assistant", { trigger: "heartbeat" }));
      if (answerAfter !== null)
        log.push(message(log.length, new Date(sent.getTime() + answerAfter * 60_000), "user"));
    }
  }
  return log;
}

function message(n: number, at: Date, role: Message["role"], extra: Partial<Message> = {}): Message {
  return {
    id: `m${n}`,
    ts: at.toISOString(),
    role,
    text: role === "user" ? "hi" : "How are you?",
    channel: "telegram",
    ...extra,
  };
}

describe("learnTiming", () => {
  it("holds nothing for a new companion: no log, no hour is unlikely and none is best", () => {
    const timing = learnTiming([], tuesday("10:10"), ZONE);
    expect(timing.checkins).toBe(0);
    for (const hour of HOURS) {
      const at = tuesday(`${String(hour).padStart(2, "0")}:10`);
      expect(momentOutlook(timing, at).unlikely, `${hour}:10`).toBe(false);
    }
    expect(bestHours(timing, "weekday")).toEqual([]);
  });

  it("holds nothing below the floor, however one-sided the first days are", () => {
    const firstDays = EVENING_ANSWERER.filter((m) => m.ts < "2026-02-04T00:00:00Z");
    const now = new Date("2026-02-04T09:10:00Z");
    const timing = learnTiming(firstDays, now, ZONE);
    expect(timing.checkins).toBeLessThan(MIN_CHECKINS);
    for (const hour of HOURS) {
      const at = new Date(now.getTime() + hour * 3_600_000);
      expect(momentOutlook(timing, at).unlikely, `+${hour} h`).toBe(false);
    }
  });

  it("learns that an evening answerer rarely answers in the morning and best in the evening", () => {
    const timing = learnTiming(EVENING_ANSWERER, tuesday("10:10"), ZONE);
    expect(timing.checkins).toBe(66);
    for (const hhmm of ["08:30", "10:10", "13:07", "17:07"]) {
      expect(momentOutlook(timing, tuesday(hhmm)), hhmm).toMatchObject({ unlikely: true, kind: "weekday" });
    }
    for (const hhmm of ["19:07", "20:37", "21:07"]) {
      expect(momentOutlook(timing, tuesday(hhmm)).unlikely, hhmm).toBe(false);
    }
    expect(bestHours(timing, "weekday")).toEqual([{ from: 19, to: 22 }]);
    expect(formatHourRanges(bestHours(timing, "weekday"))).toBe("19–22");
  });

  it("leans on the weekdays for a weekend it has seen little of", () => {
    const weekdaysOnly = EVENING_ANSWERER.filter((m) => {
      const day = new Date(m.ts).getUTCDay();
      return day !== 0 && day !== 6;
    });
    const timing = learnTiming(weekdaysOnly, tuesday("10:10"), ZONE);
    const saturday = (hhmm: string) => new Date(`2026-02-28T${hhmm}:00+01:00`);
    expect(momentOutlook(timing, saturday("10:10"))).toMatchObject({ kind: "weekend", unlikely: true });
    expect(momentOutlook(timing, saturday("20:37")).unlikely).toBe(false);
  });

  it("holds no hour for someone who answers at every hour, nor for someone who answers at none", () => {
    const everywhere = learnTiming(
      checkinsAt([9, 11, 13, 15, 17, 19], 14, 10),
      new Date("2026-02-20T12:00:00Z"),
      ZONE,
    );
    const nowhere = learnTiming(
      checkinsAt([9, 11, 13, 15, 17, 19], 14, null),
      new Date("2026-02-20T12:00:00Z"),
      ZONE,
    );
    for (const hour of HOURS) {
      const at = tuesday(`${String(hour).padStart(2, "0")}:10`);
      expect(momentOutlook(everywhere, at).unlikely, `everywhere ${hour}:10`).toBe(false);
      expect(momentOutlook(nowhere, at).unlikely, `nowhere ${hour}:10`).toBe(false);
    }
    expect(bestHours(everywhere, "weekday")).toEqual([{ from: 8, to: 21 }]);
    expect(bestHours(nowhere, "weekday")).toEqual([]);
  });

  it("counts a late answer at the hour it came: the person writing on their own is evidence the hour is good", () => {
    // Morning check-ins answered only at 19:30, never a check-in in the evening.
    const log = checkinsAt([9], 14, 10 * 60 + 23);
    const timing = learnTiming(log, new Date("2026-02-20T12:00:00Z"), ZONE);
    expect(momentOutlook(timing, tuesday("10:10")).unlikely).toBe(true);
    // 20:00 borrows half of 19:00's evidence (the neighbouring hours' smoothing), and nothing contradicts it.
    expect(bestHours(timing, "weekday")).toEqual([{ from: 19, to: 21 }]);
  });

  it("ignores notices and reactions, the look-back's far side and check-ins too young to judge", () => {
    const notices = checkinsAt([9, 11], 14, null).map((m) =>
      m.role === "assistant" ? { ...m, notice: true as const } : m,
    );
    expect(learnTiming(notices, tuesday("10:10"), ZONE).checkins).toBe(0);
    const reaction = {
      ...message(0, tuesday("09:00"), "assistant", { trigger: "heartbeat" }),
      reaction: "👍",
    };
    expect(isCheckin(reaction)).toBe(false);
    expect(isCheckin(message(0, tuesday("09:00"), "assistant", { trigger: "reply" }))).toBe(false);
    // Nine weeks later the three weeks are past the eight-week look-back.
    expect(learnTiming(EVENING_ANSWERER, new Date("2026-04-27T10:00:00Z"), ZONE).checkins).toBe(0);
    // A check-in sent an hour ago may still be answered: not counted yet.
    const lastSent = EVENING_ANSWERER.findLast(isCheckin) as Message;
    const anHourOn = new Date(Date.parse(lastSent.ts) + 3_600_000);
    expect(learnTiming(EVENING_ANSWERER, anHourOn, ZONE).checkins).toBe(65);
  });
});

describe("formatHourRanges", () => {
  it("joins ranges as a person reads them", () => {
    expect(formatHourRanges([])).toBe("");
    expect(formatHourRanges([{ from: 19, to: 22 }])).toBe("19–22");
    expect(
      formatHourRanges([
        { from: 7, to: 9 },
        { from: 12, to: 13 },
        { from: 19, to: 22 },
      ]),
    ).toBe("7–9, 12–13 and 19–22");
  });
});
