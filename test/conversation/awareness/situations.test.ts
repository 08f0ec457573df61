import { describe, expect, it } from "vitest";
import { buildAwarenessContext } from "../../../src/conversation/awareness/build.ts";
import {
  awarenessContextSchema,
  defaultAwarenessSettings,
} from "../../../src/conversation/awareness/context.ts";
import { loadSituationLog, loadSituations } from "./lenient.ts";

const situations = loadSituations();

describe("awareness in the situations of the context-assembly design", () => {
  it("covers every situation the issue names", () => {
    expect(situations.length).toBeGreaterThanOrEqual(9);
  });

  it.each(situations.map((s) => [s.name, s] as const))("%s", (_name, situation) => {
    const log = loadSituationLog(situation.log);
    const context = buildAwarenessContext(log, new Date(situation.now), {
      ...defaultAwarenessSettings,
      timezone: situation.timezone,
      trigger: situation.trigger,
    });
    const want = situation.expect;
    const state = context.conversationState;

    expect(awarenessContextSchema.parse(context)).toEqual(context);
    expect(state.unansweredCount).toBe(want.unansweredCount);
    expect(context.self.messagesSent).toHaveLength(want.unansweredCount);
    expect(context.user.engagementLevel).toBe(want.engagementLevel);
    if (want.lastExchangeTone) expect(state.lastExchangeTone).toBe(want.lastExchangeTone);
    if (want.repeatedTopics)
      expect(context.self.repeatedTopics).toEqual(expect.arrayContaining(want.repeatedTopics));
    if (want.format) expect(context.format).toBe(want.format);
    if (want.timeOfDay) expect(state.timeOfDay).toBe(want.timeOfDay);
    if (want.dayType) expect(state.dayType).toBe(want.dayType);
    if (want.recentTopicShift !== undefined) expect(state.recentTopicShift).toBe(want.recentTopicShift);
    if (want.currentDomain) expect(state.currentDomain).toBe(want.currentDomain);
    if (want.waitingMinutes !== undefined) expect(state.waitingMinutes).toBe(want.waitingMinutes);
    if (want.silenceDuration !== undefined) expect(state.silenceDuration).toBe(want.silenceDuration);
    if (want.userMinutesSinceLastMessage !== undefined) {
      expect(context.user.timeSinceLastMessage).toBe(want.userMinutesSinceLastMessage);
    }
    for (const line of want.observationsInclude ?? []) expect(context.observations).toContain(line);
  });
});
