import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callRecordSchema, simEventSchema } from "../../simulations/events.ts";
import { carriesInternalText, checkExpectations, computeMetrics } from "../../simulations/metrics.ts";
import { expectationsSchema } from "../../simulations/scenario.ts";
import { ZoneTimeline } from "../../simulations/zones.ts";
import { parseQuietHours } from "../../src/core/checkin-settings.ts";
import { shippedPriceTable } from "../../src/model/prices.ts";
import { fakeDollars } from "../../testkit/prices.ts";

const fixture = z
  .object({
    quietHours: z.string(),
    answeredTopicHours: z.number(),
    events: z.array(simEventSchema),
    calls: z.array(callRecordSchema),
  })
  .parse(JSON.parse(readFileSync(new URL("./fixtures/tiny-day.json", import.meta.url), "utf8")));

const zones = new ZoneTimeline("Europe/Berlin", [{ at: "2026-02-11T16:00", timezone: "Europe/London" }]);
const options = {
  quietHours: parseQuietHours(fixture.quietHours) ?? { start: 0, end: 0 },
  answeredTopicHours: fixture.answeredTopicHours,
  cost: {
    prices: shippedPriceTable(),
    zoneAt: (at: Date) => zones.zoneAt(at),
    baseline: { system: "You are a companion. ".repeat(300), heartbeat: "Check in now and then." },
  },
};

describe("computeMetrics on a hand-made day", () => {
  const m = computeMetrics(fixture.events, fixture.calls, options);

  it("counts every heartbeat tick as considered, and splits fired from held by reason and step", () => {
    expect(m.considered).toBe(8);
    expect(m.fired).toBe(5);
    expect(m.held).toBe(3);
    expect(m.heldByReason).toEqual({ "already-answered": 1, "unanswered-limit": 1, "quiet-hours": 1 });
    expect(m.heldByStage).toEqual({ "topic-guard": 1, "pre-check": 2 });
  });

  it("finds the longest run of check-ins with no word from the person in between", () => {
    expect(m.longestUnansweredRun).toBe(3);
  });

  it("counts a topic asked again while the first ask is unanswered", () => {
    expect(m.repeatedTopicAsks).toBe(1);
  });

  it("counts a re-ask inside the answered-topic window as a failure, and one later that day apart", () => {
    expect(m.reasksOfAnswered).toBe(1);
    expect(m.reasksAfterWindow).toBe(0);
    expect(m.reasks).toEqual([
      {
        at: "2026-02-11T11:07:00.000Z",
        topic: "hydration",
        answeredAt: "2026-02-11T07:20:00.000Z",
        withinWindow: true,
      },
    ]);
    const narrow = computeMetrics(fixture.events, fixture.calls, { ...options, answeredTopicHours: 3 });
    expect(narrow.reasksOfAnswered).toBe(0);
    expect(narrow.reasksAfterWindow).toBe(1);
    expect(narrow.reasks.map((r) => r.withinWindow)).toEqual([false]);
  });

  it("counts a re-ask inside the window across midnight, and none for an answer from an earlier day", () => {
    const answer = simEventSchema.parse({
      kind: "person",
      at: "2026-02-11T21:30:00.000Z",
      zone: "Europe/Berlin",
      text: "Ate well.",
      cause: "script",
      answers: ["food"],
    });
    const ask = (at: string) =>
      simEventSchema.parse({
        kind: "checkin-sent",
        at,
        zone: "Europe/Berlin",
        text: "Eaten?",
        topic: "food",
        tone: "neutral",
      });
    const night = computeMetrics([answer, ask("2026-02-12T01:00:00.000Z")], [], options);
    expect([night.reasksOfAnswered, night.reasksAfterWindow]).toEqual([1, 0]);
    const nextDay = computeMetrics([answer, ask("2026-02-12T09:00:00.000Z")], [], options);
    expect([nextDay.reasksOfAnswered, nextDay.reasksAfterWindow, nextDay.reasks.length]).toEqual([0, 0, 0]);
  });

  it("compares topics by the lexicon's labels, so a model's own word for a topic still counts", () => {
    const [answer, , , , , waterAsk] = fixture.events;
    if (!answer || !waterAsk || waterAsk.kind !== "checkin-sent") throw new Error("fixture changed");
    const reworded = [answer, { ...waterAsk, topic: "drinking water" }];
    expect(computeMetrics(reworded, [], options).reasksOfAnswered).toBe(1);
  });

  it("reads quiet hours in the zone the person is in at the time", () => {
    expect(m.quietHourCheckins).toBe(1);
  });

  it("tells delivered leaks from stripped ones", () => {
    expect(m.leaksDelivered).toBe(1);
    expect(m.leaksStripped).toBe(1);
  });

  it("groups messages by the person's local day", () => {
    expect(m.perDay).toEqual([
      { date: "2026-02-11", personMessages: 2, replies: 1, checkinsSent: 5, checkinsHeld: 2 },
      { date: "2026-02-12", personMessages: 0, replies: 0, checkinsSent: 0, checkinsHeld: 1 },
    ]);
  });

  it("adds up tokens and prompt sizes per call and per purpose", () => {
    expect(m.tokens.total).toEqual({
      calls: 3,
      input: 1150,
      output: 75,
      cacheRead: 2400,
      cacheWrite: 1200,
      promptAvg: 1583,
      promptMax: 1650,
    });
    expect(m.tokens.calls.map((c) => c.prompt)).toEqual([1500, 1600, 1650]);
    expect(m.tokens.byPurpose["heartbeat-write"]?.calls).toBe(1);
  });

  it("prices every call, and sums the dollars per local day and per purpose", () => {
    const priced = fixture.calls.map(fakeDollars);
    expect(m.tokens.calls.map((c) => c.dollars)).toEqual(priced.map((d) => expect.closeTo(d, 12)));
    // 300 in, 20 out, 1,200 written at Sonnet's prices.
    expect(priced[0]).toBeCloseTo((300 * 2 + 20 * 10 + 1_200 * 2.5) / 1e6, 12);
    const total = priced.reduce((a, b) => a + b, 0);
    expect(m.cost.dollars).toBeCloseTo(total, 6);
    expect(m.cost.perDay).toEqual([
      { date: "2026-02-11", dollars: expect.closeTo(total, 6) },
      { date: "2026-02-12", dollars: 0 },
    ]);
    expect(m.cost.byPurpose).toEqual({
      reply: expect.closeTo(priced[0] ?? 0, 6),
      "heartbeat-decide": expect.closeTo(priced[1] ?? 0, 6),
      "heartbeat-write": expect.closeTo(priced[2] ?? 0, 6),
    });
  });

  it("replays both baselines over the same timeline: a call per message sent, and one more per held tick", () => {
    expect(m.cost.baselines.transcript).toMatchObject({ calls: 6, compactions: 0 });
    expect(m.cost.baselines.everyTick).toMatchObject({ calls: 9, compactions: 0 });
    expect(m.cost.baselines.transcript.dollars).toBeGreaterThan(0);
    expect(m.cost.baselines.everyTick.dollars).toBeGreaterThan(m.cost.baselines.transcript.dollars);
  });
});

describe("checkExpectations", () => {
  const m = computeMetrics(fixture.events, fixture.calls, options);

  it("fails each default guarantee the hand-made day breaks, and passes the rest", () => {
    const results = checkExpectations(expectationsSchema.parse({}), m, fixture.events, zones);
    const failed = results.filter((r) => !r.ok).map((r) => r.name);
    expect(failed).toEqual([
      "check-ins in quiet hours",
      "re-asks of answered topics within 6 h",
      "repeated-topic asks while unanswered",
      "leaks delivered",
    ]);
  });

  it("checks windows, held-back reasons and counts", () => {
    const results = checkExpectations(
      expectationsSchema.parse({
        maxUnansweredRun: 2,
        fired: { min: 6 },
        firedBetween: [{ from: "2026-02-11T10:00", to: "2026-02-11T12:30", max: 1 }],
        heldBack: [
          { reason: "quiet-hours", min: 1 },
          { reason: "weekend-limit", min: 1 },
        ],
      }),
      m,
      fixture.events,
      zones,
    );
    const byName = Object.fromEntries(results.map((r) => [r.name, r]));
    expect(byName["longest unanswered run"]).toMatchObject({ ok: false, got: "3" });
    expect(byName["check-ins fired"]).toMatchObject({ ok: false, got: "5" });
    expect(byName["check-ins 2026-02-11T10:00 → 2026-02-11T12:30"]).toMatchObject({ ok: false, got: "3" });
    expect(byName["held back for quiet-hours"]?.ok).toBe(true);
    expect(byName["held back for weekend-limit"]).toMatchObject({ ok: false, got: "0" });
  });
});

describe("carriesInternalText", () => {
  it.each([
    "<thinking>they are quiet</thinking>\nHow are you?",
    "Reasoning: rotate topics\n---\nHow are you?",
    "decision: send=true",
    "NO_REPLY",
  ])("flags %j", (text) => {
    expect(carriesInternalText(text)).toBe(true);
  });

  it.each(["How are you?", "I was thinking of you today.", "A list:\n---\nthat is all"])(
    "lets %j through",
    (text) => {
      expect(carriesInternalText(text)).toBe(false);
    },
  );
});
