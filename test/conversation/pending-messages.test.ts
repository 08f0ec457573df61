import { describe, expect, it } from "vitest";
import { openQuestions } from "../../src/conversation/pending-messages.ts";
import type { Message } from "../../src/core/message.ts";

const start = Date.parse("2026-02-10T08:00:00.000Z");
const now = new Date(start + 10 * 3_600_000);

/** A message `hours` after 08:00 UTC on 10 February. */
function at(
  id: string,
  role: Message["role"],
  text: string,
  hours: number,
  extra: Partial<Message> = {},
): Message {
  return {
    id,
    ts: new Date(start + hours * 3_600_000).toISOString(),
    role,
    text,
    channel: "telegram",
    ...(role === "assistant" ? { trigger: "heartbeat" as const } : {}),
    ...extra,
  };
}

const ids = (messages: readonly Message[]) => messages.map((m) => m.id);

describe("openQuestions", () => {
  it("lists the companion's questions, oldest first, until a later message of the person's names one it answers", () => {
    const log = [
      at("q1", "assistant", "How did you sleep?", 1),
      at("q2", "assistant", "Have you had some water today?", 2),
      at("a1", "user", "fine, a long night", 3, {
        annotations: { topics: ["sleep"], question: false, tone: "neutral", answers: ["q1"] },
      }),
      at("r1", "assistant", "Glad to hear it.", 3.1, { trigger: "reply" }),
      at("q3", "assistant", "Lunch plans?", 4),
    ];
    expect(ids(openQuestions(log, now, 48))).toEqual(["q2", "q3"]);
  });

  it("reads whether a message asks from its annotation first, then from its words", () => {
    const log = [
      at("said", "assistant", "Tell me how the interview goes", 1, {
        annotations: { topics: ["work"], question: true, tone: "warm" },
      }),
      at("not", "assistant", "Why not, it's Friday?", 2, {
        annotations: { topics: [], question: false, tone: "warm" },
      }),
      at("plain", "assistant", "Enjoy the walk.", 3),
    ];
    expect(ids(openQuestions(log, now, 48))).toEqual(["said"]);
  });

  it("counts only messages sent: not a notice or a reaction, nor the person's own questions", () => {
    const log = [
      at("notice", "assistant", "I can't reach my model right now, is it urgent?", 1, { notice: true }),
      at("person", "user", "are you there?", 2),
      at("reaction", "assistant", "", 2.1, { trigger: "reply", reaction: "👍", replyTo: "person" }),
      at("sent", "assistant", "Still there?", 3),
    ];
    expect(ids(openQuestions(log, now, 48))).toEqual(["sent"]);
  });

  it("keeps to the window ending at now: older questions and messages after now are not read", () => {
    const log = [
      at("old", "assistant", "How was the weekend?", -30),
      at("inside", "assistant", "How was the meeting?", -10),
      at("q", "assistant", "Dinner sorted?", 9),
      at("later-answer", "user", "yes", 11, {
        annotations: { topics: [], question: false, tone: "neutral", answers: ["q"] },
      }),
      at("later-question", "assistant", "What did you cook?", 11.5),
    ];
    expect(ids(openQuestions(log, now, 24))).toEqual(["inside", "q"]);
  });

  it("does not count an answer the person gave before the question was asked", () => {
    const log = [
      at("early", "user", "slept well", 1, {
        annotations: { topics: [], question: false, tone: "neutral", answers: ["q"] },
      }),
      at("q", "assistant", "How did you sleep?", 2),
    ];
    expect(ids(openQuestions(log, now, 48))).toEqual(["q"]);
  });
});
