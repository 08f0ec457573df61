import { describe, expect, it } from "vitest";
import { decisionSentence, describeDecision, topicWords } from "../../src/channels/reasons.ts";
import { decisionReasonSchema } from "../../src/core/decision.ts";

describe("describeDecision", () => {
  it("words every held-back reason as a sentence to you, never as its code", () => {
    for (const reason of decisionReasonSchema.options.filter((r) => r !== "ok" && r !== "sent")) {
      const sentence = decisionSentence({ fire: false, reason, topic: "other:move" });
      expect(sentence, reason).toMatch(/^I didn't check in: [a-zI].*\.$/);
      if (reason.includes("-")) expect(sentence, reason).not.toContain(reason);
      expect(sentence, reason).not.toMatch(/the person|the user|other:/i);
    }
  });

  it("speaks to you about the limits only you can lift", () => {
    expect(describeDecision({ fire: false, reason: "weekend-limit" }).because).toMatch(/\bmy last message\b/);
    expect(describeDecision({ fire: false, reason: "unanswered-limit" }).because).toMatch(/^you hadn't/);
    expect(describeDecision({ fire: false, reason: "blocked" }).because).toMatch(/until you write/);
  });

  it("says at which hour you rarely answer and when you do, for a check-in held for the moment", () => {
    const moment = { local: "10:07", weekend: false, bestHours: [{ from: 19, to: 22 }] };
    expect(decisionSentence({ fire: false, reason: "unlikely-moment", moment })).toBe(
      "I didn't check in: it was 10:07 on a weekday, and you've rarely answered at this hour; your best hours lately are 19–22.",
    );
    const weekend = {
      local: "09:07",
      weekend: true,
      bestHours: [
        { from: 11, to: 13 },
        { from: 19, to: 21 },
      ],
    };
    expect(describeDecision({ fire: false, reason: "unlikely-moment", moment: weekend }).because).toBe(
      "it was 09:07 on a weekend day, and you've rarely answered at this hour; your best hours lately are 11–13 and 19–21.",
    );
  });

  it("names the topic in the decision's own words", () => {
    expect(decisionSentence({ fire: true, reason: "sent", topic: "the move" })).toBe(
      "I checked in about the move.",
    );
    expect(decisionSentence({ fire: true, reason: "sent" })).toBe("I checked in.");
    expect(decisionSentence({ fire: false, reason: "repeated-topic", topic: "other:move" })).toBe(
      "I didn't check in: I had already asked you about move and you hadn't answered yet.",
    );
  });
});

describe("topicWords", () => {
  it("drops the lexicon's other: prefix and empty topics", () => {
    expect(topicWords("other:move")).toBe("move");
    expect(topicWords("sleep")).toBe("sleep");
    expect(topicWords("  ")).toBeNull();
    expect(topicWords(undefined)).toBeNull();
  });
});
