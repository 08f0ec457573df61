import { describe, expect, it } from "vitest";
import { buildAwarenessContext, unansweredAskedTopics } from "../../../src/conversation/awareness/build.ts";
import {
  type AwarenessSettings,
  defaultAwarenessSettings,
} from "../../../src/conversation/awareness/context.ts";
import type { Message } from "../../../src/core/message.ts";
import { toMessages } from "./lenient.ts";

const madrid: AwarenessSettings = {
  ...defaultAwarenessSettings,
  timezone: "Europe/Madrid",
  trigger: "reply",
};
const heartbeat: AwarenessSettings = { ...madrid, trigger: "heartbeat" };

function log(...entries: [Message["role"], string, string][]): Message[] {
  return toMessages(entries.map(([role, ts, text]) => ({ role, ts, text })));
}

describe("buildAwarenessContext: what the assistant said", () => {
  it("counts its messages since the person's last one however old, beyond the window", () => {
    const messages = log(
      ["user", "2026-02-01T09:00:00Z", "see you"],
      ["assistant", "2026-02-01T09:01:00Z", "bye!"],
      ["assistant", "2026-02-05T09:00:00Z", "How's the water today?"],
      ["assistant", "2026-02-06T09:00:00Z", "Drinking enough water?"],
    );
    const ctx = buildAwarenessContext(messages, new Date("2026-02-07T12:00:00Z"), heartbeat);
    expect(ctx.self.messagesSent.map((m) => m.id)).toEqual(["m2", "m3", "m4"]);
    expect(ctx.conversationState.unansweredCount).toBe(3);
    expect(ctx.user.recentMessages).toEqual([]);
    expect(ctx.user.engagementLevel).toBe("silent");
    expect(ctx.self.repeatedTopics).toEqual([{ topic: "hydration", count: 2 }]);
    expect(ctx.observations).toContain("You have sent 3 messages since they last spoke, 6d 3h ago");
  });

  it("sorts an unsorted log stably and ignores what happens after now", () => {
    const messages = log(
      ["assistant", "2026-02-07T10:00:00Z", "second"],
      ["user", "2026-02-07T09:00:00Z", "first"],
      ["assistant", "2026-02-07T10:00:00Z", "second again, same instant"],
      ["user", "2026-02-07T13:00:00Z", "from the future"],
    );
    const ctx = buildAwarenessContext(messages, new Date("2026-02-07T12:00:00Z"), heartbeat);
    expect(ctx.user.lastMessage?.text).toBe("first");
    expect(ctx.self.messagesSent.map((m) => m.text)).toEqual(["second", "second again, same instant"]);
  });
});

describe("buildAwarenessContext: the companion's questions their replies left open", () => {
  const asked = () =>
    log(
      ["user", "2026-02-11T07:20:00Z", "Morning! Water and a mug of tea already."],
      ["assistant", "2026-02-11T07:20:30Z", "Good start! What kind of tea is it?"],
      ["user", "2026-02-11T12:40:00Z", "Just refilled my water bottle, on track."],
      ["assistant", "2026-02-11T12:40:30Z", "Nice, keeping it going."],
    );
  const at = new Date("2026-02-11T15:07:00Z");

  it("are not known while a later message of theirs waits for reflection", () => {
    expect(buildAwarenessContext(asked(), at, heartbeat).self.questionsLeftOpen).toEqual([]);
  });

  it("are the questions no later message of theirs answers, as reflection read them", () => {
    const messages = asked().map(
      (m): Message =>
        m.role === "user"
          ? { ...m, annotations: { topics: ["hydration"], question: false, tone: "neutral" } }
          : m,
    );
    const ctx = buildAwarenessContext(messages, at, heartbeat);
    expect(ctx.self.questionsLeftOpen.map((m) => m.id)).toEqual(["m2"]);
    // Answered, as reflection read the reply: no longer open.
    const answered = messages.map(
      (m): Message =>
        m.id === "m3"
          ? { ...m, annotations: { topics: ["tea"], question: false, tone: "neutral", answers: ["m2"] } }
          : m,
    );
    expect(buildAwarenessContext(answered, at, heartbeat).self.questionsLeftOpen).toEqual([]);
  });

  it("leave out a question asked since their last message: it is among the messages sent", () => {
    const messages = log(
      ["user", "2026-02-11T07:20:00Z", "Morning!"],
      ["assistant", "2026-02-11T07:20:30Z", "Morning! Big day?"],
    ).map(
      (m): Message =>
        m.role === "user" ? { ...m, annotations: { topics: [], question: false, tone: "neutral" } } : m,
    );
    const ctx = buildAwarenessContext(messages, at, heartbeat);
    expect(ctx.self.questionsLeftOpen).toEqual([]);
    expect(ctx.self.messagesSent.map((m) => m.id)).toEqual(["m2"]);
  });
});

describe("buildAwarenessContext: notices", () => {
  it("leaves the companion's fixed notices out of what it said: not unanswered, not its last message", () => {
    const messages: Message[] = [
      ...log(
        ["user", "2026-02-07T09:00:00Z", "off to the gym"],
        ["assistant", "2026-02-07T09:01:00Z", "Enjoy the workout!"],
      ),
      {
        id: "n1",
        role: "assistant",
        ts: "2026-02-07T11:50:00.000Z",
        text: "I can't reach my model right now, so I've stopped checking in; I'll say when I'm back.",
        channel: "telegram",
        trigger: "heartbeat",
        notice: true,
      },
    ];
    const ctx = buildAwarenessContext(messages, new Date("2026-02-07T12:00:00Z"), heartbeat);
    expect(ctx.conversationState.unansweredCount).toBe(1);
    expect(ctx.self.messagesSent.map((m) => m.id)).toEqual(["m2"]);
    expect(ctx.self.lastMessageTime).toBe("2026-02-07T09:01:00.000Z");
    expect(ctx.self.timeSinceLastMessage).toBe(179);
    expect(ctx.self.recentMessages?.map((m) => m.id)).toEqual(["m2"]);
  });
});

describe("buildAwarenessContext: the person and the conversation", () => {
  it("grades engagement by the age of their last message", () => {
    const messages = log(["user", "2026-02-07T10:00:00Z", "hi"]);
    const at = (iso: string) => buildAwarenessContext(messages, new Date(iso), madrid).user.engagementLevel;
    expect(at("2026-02-07T10:30:00Z")).toBe("active");
    expect(at("2026-02-07T10:31:00Z")).toBe("sporadic");
    expect(at("2026-02-08T10:00:00Z")).toBe("sporadic");
    expect(at("2026-02-08T10:01:00Z")).toBe("silent");
  });

  it("tells how long their unanswered turn has waited, from its first message, only for replies", () => {
    const messages = log(
      ["assistant", "2026-02-07T09:00:00Z", "How did it go?"],
      ["user", "2026-02-07T10:00:00Z", "Long story"],
      ["user", "2026-02-07T10:05:00Z", "The client hated it"],
    );
    const now = new Date("2026-02-07T12:10:00Z");
    const reply = buildAwarenessContext(messages, now, madrid);
    expect(reply.conversationState.waitingMinutes).toBe(130);
    expect(reply.observations).toContain("Their message has waited 2h 10m for your answer");
    expect(buildAwarenessContext(messages, now, heartbeat).conversationState.waitingMinutes).toBeNull();
  });

  it("keeps the time of day and day type in the person's zone", () => {
    const messages = log(["user", "2026-02-06T23:30:00Z", "night"]);
    const ctx = buildAwarenessContext(messages, new Date("2026-02-06T23:30:00Z"), {
      ...madrid,
      timezone: "Asia/Tokyo",
    });
    expect(ctx.conversationState.timeOfDay).toBe("morning");
    expect(ctx.conversationState.dayType).toBe("weekend");
  });

  it("says whose message the latest topic came from and when, not the newest message's", () => {
    const messages = log(
      ["user", "2026-02-07T08:05:00Z", "Slept badly"],
      ["assistant", "2026-02-07T08:06:00Z", "Ugh, sorry."],
    );
    const ctx = buildAwarenessContext(messages, new Date("2026-02-07T10:00:00Z"), heartbeat);
    expect(ctx.conversationState.currentTopics).toEqual(["sleep"]);
    expect(ctx.conversationState.currentTopicAt).toEqual({ role: "user", ts: "2026-02-07T08:05:00.000Z" });
  });

  it("knows what was answered and what still waits", () => {
    const messages = log(
      ["assistant", "2026-02-07T08:00:00Z", "How did you sleep?"],
      ["user", "2026-02-07T08:05:00Z", "Slept badly, but had lots of water"],
      ["assistant", "2026-02-07T09:00:00Z", "Did you get a walk in today?"],
    );
    const ctx = buildAwarenessContext(messages, new Date("2026-02-07T10:00:00Z"), heartbeat);
    expect([...unansweredAskedTopics(ctx)]).toEqual(["movement"]);
    expect(ctx.user.topicsAddressed).toEqual(["sleep", "hydration"]);
  });

  it("does not count a reply that asked nothing as a topic still waiting for an answer", () => {
    const messages = log(
      ["user", "2026-02-07T09:00:00Z", "Heading to the gym for a workout now"],
      ["assistant", "2026-02-07T09:01:00Z", "Enjoy your workout!"],
    );
    const ctx = buildAwarenessContext(messages, new Date("2026-02-07T16:07:00Z"), heartbeat);
    expect(ctx.conversationState.unansweredCount).toBe(1);
    expect([...unansweredAskedTopics(ctx)]).toEqual([]);
    const asked = log(
      ["user", "2026-02-07T09:00:00Z", "Heading to the gym for a workout now"],
      ["assistant", "2026-02-07T09:01:00Z", "Enjoy it! How long will the workout be?"],
    );
    const askedCtx = buildAwarenessContext(asked, new Date("2026-02-07T16:07:00Z"), heartbeat);
    expect([...unansweredAskedTopics(askedCtx)]).toEqual(["movement"]);
  });

  it("calls no change of subject on an answer to the companion's question about nothing the lexicon knows", () => {
    const asked = (question: string) =>
      log(
        ["user", "2026-02-07T04:20:00Z", "sleeping finally. the recovery is rough"],
        ["assistant", "2026-02-07T04:21:00Z", question],
        ["user", "2026-02-07T04:30:00Z", "my mom lands thursday"],
      );
    const now = new Date("2026-02-07T04:30:00Z");
    const led = buildAwarenessContext(asked("Is anyone coming to help during the day?"), now, madrid);
    expect(led.conversationState.recentTopicShift).toBe(false);
    // A remark that asks nothing leaves the change to them.
    const own = buildAwarenessContext(asked("You're carrying a lot."), now, madrid);
    expect(own.conversationState.recentTopicShift).toBe(true);
    expect(own.observations).toContain("At 5:30 AM they moved from sleep to family");
  });

  it("passes episodic memory through as prior context", () => {
    const memory = {
      declaredPatterns: ["weekends are loose"],
      openLoops: ["tax forms"],
      recentMilestones: [],
    };
    const ctx = buildAwarenessContext([], new Date("2026-02-07T10:00:00Z"), heartbeat, memory);
    expect(ctx.priorContext).toEqual(memory);
  });
});

describe("buildAwarenessContext: full or slim", () => {
  const active = log(
    ["user", "2026-02-10T09:00:00Z", "Morning!"],
    ["assistant", "2026-02-10T09:01:00Z", "Morning! How did you sleep?"],
    ["user", "2026-02-10T09:03:00Z", "Pretty well"],
  );
  const now = new Date("2026-02-10T09:04:00Z");

  it("is slim in an active conversation, full for a heartbeat", () => {
    expect(buildAwarenessContext(active, now, madrid).format).toBe("slim");
    expect(buildAwarenessContext(active, now, heartbeat).format).toBe("full");
  });

  it("is full for the person's first message of their day", () => {
    expect(buildAwarenessContext(active.slice(0, 1), new Date("2026-02-10T09:01:00Z"), madrid).format).toBe(
      "full",
    );
  });

  it("is full after a silence over two hours", () => {
    const late = [...active, ...log(["user", "2026-02-10T11:04:00Z", "back"])].map((m, i) => ({
      ...m,
      id: `x${i}`,
    }));
    expect(buildAwarenessContext(late, new Date("2026-02-10T11:05:00Z"), madrid).format).toBe("full");
  });

  it("is full when the person switches channel", () => {
    const switched = active.map((m, i) => (i === 2 ? { ...m, channel: "cli" as const } : m));
    expect(buildAwarenessContext(switched, now, madrid).format).toBe("full");
  });
});

describe("buildAwarenessContext: settings it cannot work with", () => {
  it("names the bad zone", () => {
    expect(() => buildAwarenessContext([], new Date(), { ...madrid, timezone: "Mars/Olympus" })).toThrow(
      'timezone "Mars/Olympus" is not a known IANA zone (for example "Europe/Madrid" or "UTC")',
    );
    expect(() => buildAwarenessContext([], new Date(), { ...madrid, timezone: "Mars/Olympus" })).toThrow(
      /Mars\/Olympus/,
    );
  });

  it("refuses an invalid now", () => {
    expect(() => buildAwarenessContext([], new Date(Number.NaN), madrid)).toThrow(/now/);
  });
});
