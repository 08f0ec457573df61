import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { awarenessContextSchema } from "../../src/conversation/awareness/context.ts";
import { heartbeatReasonSchema } from "../../src/core/decision.ts";
import { ROOT, runInProcess } from "./run.ts";

/**
 * The situations of the context-assembly design, driven through the command line: the
 * same table the awareness tests use, so the commands and the functions cannot drift apart.
 */
const FOLDER = join(ROOT, "test/fixtures/situations");

const situationSchema = z.object({
  name: z.string(),
  log: z.string(),
  now: z.string(),
  timezone: z.string(),
  trigger: z.enum(["heartbeat", "reply"]),
  expect: z.looseObject({
    unansweredCount: z.number(),
    engagementLevel: z.string(),
    lastExchangeTone: z.string().optional(),
    format: z.enum(["full", "slim"]).optional(),
    timeOfDay: z.string().optional(),
    dayType: z.string().optional(),
    currentDomain: z.string().optional(),
    recentTopicShift: z.boolean().optional(),
    waitingMinutes: z.number().optional(),
    silenceDuration: z.number().optional(),
    userMinutesSinceLastMessage: z.number().optional(),
    observationsInclude: z.array(z.string()).optional(),
    heartbeat: z.object({ fire: z.boolean(), reason: heartbeatReasonSchema }),
  }),
});

const situations = z
  .array(situationSchema)
  .parse(JSON.parse(readFileSync(join(FOLDER, "situations.json"), "utf8")));

const baseArgs = (s: z.infer<typeof situationSchema>) => [
  "--log",
  join(FOLDER, s.log),
  "--now",
  s.now,
  "--tz",
  s.timezone,
];

describe("the situations through the command line", () => {
  it("has every situation the issue names", () => {
    expect(situations.length).toBeGreaterThanOrEqual(9);
  });

  describe.each(situations.map((s) => [s.name, s] as const))("%s", (_name, situation) => {
    const want = situation.expect;

    it("heartbeat-check --json gives the expected decision", async () => {
      const result = await runInProcess(["heartbeat-check", ...baseArgs(situation), "--json"]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      const decision = JSON.parse(result.stdout);
      expect({ fire: decision.fire, reason: decision.reason }).toEqual(want.heartbeat);
      expect(decision.detail).toEqual(expect.any(String));
    });

    it("heartbeat-check prints the same decision as one line", async () => {
      const result = await runInProcess(["heartbeat-check", ...baseArgs(situation)]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        new RegExp(`^${want.heartbeat.fire ? "fire" : "hold"} \\(${want.heartbeat.reason}\\): .+\\n$`),
      );
    });

    it("awareness --json gives the expected structure", async () => {
      const result = await runInProcess([
        "awareness",
        ...baseArgs(situation),
        "--trigger",
        situation.trigger,
        "--json",
      ]);
      expect(result).toMatchObject({ code: 0, stderr: "" });
      const context = awarenessContextSchema.parse(JSON.parse(result.stdout));
      const state = context.conversationState;
      expect(state.unansweredCount).toBe(want.unansweredCount);
      expect(context.user.engagementLevel).toBe(want.engagementLevel);
      if (want.lastExchangeTone) expect(state.lastExchangeTone).toBe(want.lastExchangeTone);
      if (want.format) expect(context.format).toBe(want.format);
      if (want.timeOfDay) expect(state.timeOfDay).toBe(want.timeOfDay);
      if (want.dayType) expect(state.dayType).toBe(want.dayType);
      if (want.currentDomain) expect(state.currentDomain).toBe(want.currentDomain);
      if (want.recentTopicShift !== undefined) expect(state.recentTopicShift).toBe(want.recentTopicShift);
      if (want.waitingMinutes !== undefined) expect(state.waitingMinutes).toBe(want.waitingMinutes);
      if (want.silenceDuration !== undefined) expect(state.silenceDuration).toBe(want.silenceDuration);
      if (want.userMinutesSinceLastMessage !== undefined) {
        expect(context.user.timeSinceLastMessage).toBe(want.userMinutesSinceLastMessage);
      }
      for (const line of want.observationsInclude ?? []) expect(context.observations).toContain(line);
    });

    it("awareness prints the block with the same observations", async () => {
      const result = await runInProcess([
        "awareness",
        ...baseArgs(situation),
        "--trigger",
        situation.trigger,
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^## /);
      for (const line of want.observationsInclude ?? []) expect(result.stdout).toContain(line);
    });
  });
});
