import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planScenario, reactionText, reactionTo } from "../../simulations/plan.ts";
import {
  loadScenarioFile,
  parseScenario,
  ScenarioError,
  type ScenarioInput,
} from "../../simulations/scenario.ts";
import { readIn } from "../../simulations/zones.ts";

/** Scenario files are data people write: mistakes must be caught before a run, and named. */

const base: ScenarioInput = {
  name: "test-day",
  description: "A day for tests.",
  timezone: "Europe/Berlin",
  start: "2026-03-02T07:00",
  end: "2026-03-02T23:00",
};
const plan = (overrides: Partial<ScenarioInput>) =>
  planScenario(parseScenario({ ...base, ...overrides }, "test"));
const local = (date: Date, zone: string) => {
  const r = readIn(date, zone);
  return `${r.date} ${r.time}`;
};

describe("scenario files", () => {
  it("fill in the shared guarantees and the default schedule", () => {
    const scenario = parseScenario(base, "test");
    expect(scenario.heartbeatCron).toBe("7 * * * *");
    expect(scenario.quietHours).toEqual({ start: 22 * 60, end: 8 * 60 });
    expect(scenario.expect).toMatchObject({
      maxUnansweredRun: 3,
      maxQuietHourCheckins: 0,
      maxReasks: 0,
      maxRepeatedTopicAsks: 0,
      maxLeaksDelivered: 0,
    });
  });

  it("name every problem with its field", () => {
    const attempt = () =>
      parseScenario(
        { ...base, timezone: "Mars/Olympus", start: "8am", reactions: [{ react: { kind: "shrug" } }] },
        "x.json",
      );
    expect(attempt).toThrow(ScenarioError);
    expect(attempt).toThrow(/x\.json[\s\S]*timezone[\s\S]*start[\s\S]*reactions\.0\.react/);
  });

  it("must be named like their file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "presence-scenario-"));
    try {
      const file = join(dir, "other-name.json");
      await writeFile(file, JSON.stringify(base));
      await expect(loadScenarioFile(file)).rejects.toThrow(
        /"name" is "test-day" but the file is named other-name\.json/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("planScenario", () => {
  it("ticks 23 times on the day the clocks spring forward, skipping 02:07", () => {
    const p = plan({ start: "2026-03-29T00:00", end: "2026-03-29T23:59" });
    const wall = p.ticks.map((t) => readIn(t, "Europe/Berlin").time);
    expect(p.ticks).toHaveLength(23);
    expect(wall).not.toContain("02:07");
    expect(wall.slice(0, 3)).toEqual(["00:07", "01:07", "03:07"]);
  });

  it("follows a /tz change: the schedule and the wall times switch to the new zone", () => {
    const p = plan({
      start: "2026-03-02T20:00",
      end: "2026-03-03T12:00 Asia/Tokyo",
      timezoneChanges: [{ at: "2026-03-02T23:30", timezone: "Asia/Tokyo" }],
      messages: [{ at: "2026-03-03T09:00", text: "Landed." }],
    });
    expect(p.timezoneChanges).toEqual([
      { at: new Date("2026-03-02T22:30:00.000Z"), from: "Europe/Berlin", to: "Asia/Tokyo" },
    ]);
    expect(p.messages[0]?.at.toISOString()).toBe("2026-03-03T00:00:00.000Z");
    const after = p.ticks.filter((t) => t > new Date("2026-03-02T22:30:00.000Z"));
    expect(after.map((t) => local(t, "Asia/Tokyo"))[0]).toBe("2026-03-03 08:07");
    expect(p.end.toISOString()).toBe("2026-03-03T03:00:00.000Z");
  });

  it("refuses a wall time a /tz change makes ambiguous or skips, and says how to write it", () => {
    // 12:00 in Berlin is 06:00 in New York: the walls from 06:00 to 12:00 are lived twice.
    const westward = {
      start: "2026-03-02T05:00",
      timezoneChanges: [{ at: "2026-03-02T12:00", timezone: "America/New_York" }],
    };
    expect(() => plan({ ...westward, messages: [{ at: "2026-03-02T13:00", text: "x" }] })).not.toThrow();
    expect(() =>
      plan({ ...westward, messages: [{ at: "2026-03-02T10:00 America/New_York", text: "x" }] }),
    ).not.toThrow();
    expect(() => plan({ ...westward, messages: [{ at: "2026-03-02T10:00", text: "x" }] })).toThrow(
      /happens both in Europe\/Berlin and in America\/New_York.*"2026-03-02T10:00 America\/New_York"/,
    );
    // 12:00 in Berlin is 20:00 in Tokyo: the walls from 12:00 to 20:00 are skipped.
    const eastward = { timezoneChanges: [{ at: "2026-03-02T12:00", timezone: "Asia/Tokyo" }] };
    expect(() => plan({ ...eastward, messages: [{ at: "2026-03-02T14:00", text: "x" }] })).toThrow(
      /not a time the person lives through/,
    );
  });

  it("refuses times outside the scenario and an end before the start", () => {
    expect(() => plan({ messages: [{ at: "2026-03-03T09:00", text: "late" }] })).toThrow(/outside start…end/);
    expect(() => plan({ end: "2026-03-02T06:00" })).toThrow(/end must come after start/);
  });
});

describe("reactions", () => {
  const rules = parseScenario(
    {
      ...base,
      reactions: [
        { when: { days: ["sat", "sun"] }, react: { kind: "ignore" } },
        { when: { between: "09:00-12:00" }, react: { kind: "terse", afterMinutes: 5, text: "busy" } },
        {
          react: {
            kind: "answer",
            afterMinutes: 10,
            text: "Fine on {topic}.",
            byTopic: { sleep: "Slept well." },
          },
        },
      ],
    },
    "test",
  ).reactions;

  it("take the first rule whose window, weekday and date match", () => {
    const at = (iso: string) => readIn(new Date(iso), "UTC");
    expect(reactionTo(rules, at("2026-03-07T10:00:00Z")).kind).toBe("ignore");
    expect(reactionTo(rules, at("2026-03-02T10:00:00Z")).kind).toBe("terse");
    expect(reactionTo(rules, at("2026-03-02T15:00:00Z")).kind).toBe("answer");
    expect(reactionTo([], at("2026-03-02T15:00:00Z")).kind).toBe("ignore");
  });

  it("say the topic, or the more natural words given for it", () => {
    const answer = reactionTo(rules, readIn(new Date("2026-03-02T15:00:00Z"), "UTC"));
    if (answer.kind === "ignore") throw new Error("expected an answer");
    expect(reactionText(answer, "food")).toBe("Fine on food.");
    expect(reactionText(answer, "sleep")).toBe("Slept well.");
  });
});
