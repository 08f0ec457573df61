import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { guardOutgoing } from "../../src/model/leak-guard.ts";
import { sentTimeStamp } from "../../src/model/sent-time.ts";

const MESSAGE = "How did the interview go? I've been thinking about you all morning.";

describe("guardOutgoing", () => {
  it("leaves a clean message untouched, including a horizontal rule inside it", () => {
    const text =
      "Here's the plan we sketched:\n\n---\n\n1. Walk at 7\n2. Lights out by 11\n\n**You've got this.**";
    expect(guardOutgoing(text)).toEqual({ text, removed: [] });
    expect(guardOutgoing(`  ${MESSAGE}\n`)).toEqual({ text: MESSAGE, removed: [] });
  });

  it.each([
    ["closed thinking tag", `<thinking>He hasn't answered in 3 hours. Keep it light.</thinking>\n${MESSAGE}`],
    ["reasoning tag with attributes", `<reasoning type="plan">ask about the interview</reasoning>${MESSAGE}`],
    ["scratchpad tag mid-text", `${MESSAGE}<scratchpad>note: interview today</scratchpad>`],
    ["internal tag", `<internal>topic=work</internal>\n\n${MESSAGE}`],
    ["namespaced thinking tag", `<ns:thinking>weighing it</ns:thinking>${MESSAGE}`],
    ["unclosed thinking tag at the end", `${MESSAGE}\n<thinking>I should also mention the water goal`],
    ["stray closing tag", `the user seems busy, one short question.</thinking>\n${MESSAGE}`],
    ["thinking code fence", `\`\`\`thinking\nshould I send? yes\n\`\`\`\n${MESSAGE}`],
  ])("strips a %s", (_kind, leaky) => {
    const result = guardOutgoing(leaky);
    expect(result.text).toBe(MESSAGE);
    expect(result.removed.length).toBeGreaterThan(0);
  });

  it.each([
    ["YES_MESSAGE", `YES_MESSAGE\n${MESSAGE}`],
    ["NO_MESSAGE after text", `${MESSAGE} NO_MESSAGE`],
    ["[SEND]", `[SEND] ${MESSAGE}`],
    ["HEARTBEAT_OK", `${MESSAGE}\n\nHEARTBEAT_OK`],
  ])("strips the protocol token %s", (_token, leaky) => {
    expect(guardOutgoing(leaky).text).toBe(MESSAGE);
  });

  it("strips decision header lines and a reply label", () => {
    const leaky = `Decision: send\nTopic: interview\n**Why:** he mentioned it yesterday\n\nMessage: ${MESSAGE}`;
    const result = guardOutgoing(leaky);
    expect(result.text).toBe(MESSAGE);
    expect(result.removed).toEqual(
      expect.arrayContaining([
        expect.stringContaining("Decision: send"),
        expect.stringContaining("Topic: interview"),
        expect.stringContaining("Why:"),
        expect.stringContaining("Message:"),
      ]),
    );
  });

  it("strips a labelled reasoning paragraph wherever it stands", () => {
    const leaky = `Reasoning: the person answered about sleep already,\nso I'll ask about the interview.\n\n${MESSAGE}`;
    expect(guardOutgoing(leaky).text).toBe(MESSAGE);
    const bold = `**Reply:** ${MESSAGE}`;
    expect(guardOutgoing(bold).text).toBe(MESSAGE);
  });

  it("strips a line that only announces the message", () => {
    expect(guardOutgoing(`Here's a gentle check-in message:\n\n${MESSAGE}`).text).toBe(MESSAGE);
    const real = "Here's what I found about the trains:\n\nThe 8:15 runs on Sundays.";
    expect(guardOutgoing(real).text).toBe(real);
  });

  it("strips a leading block of reasoning set apart with a --- line", () => {
    const leaky = `Looking at the awareness block, the user hasn't replied since 8:39. I should keep it short.\n\n---\n\n${MESSAGE}`;
    const result = guardOutgoing(leaky);
    expect(result.text).toBe(MESSAGE);
    expect(result.removed[0]).toMatch(/^leading reasoning block/);
  });

  it("strips front-matter style reasoning between two rules at the start", () => {
    const leaky = `---\ndecided: check-in about the interview\n---\n${MESSAGE}`;
    expect(guardOutgoing(leaky).text).toBe(MESSAGE);
  });

  it("keeps an opening paragraph before a rule when it is part of the message", () => {
    const text = "Good morning! Quick recap of yesterday:\n\n---\n\nYou walked 5k and slept by 11.";
    expect(guardOutgoing(text).text).toBe(text);
  });

  it("keeps ordinary words that merely resemble labels inside the message", () => {
    const text =
      "We talked about why it matters.\nTopic for tonight: nothing serious, just rest.\nSleep well.";
    expect(guardOutgoing(text).text).toBe(text);
  });

  it.each([
    [
      "an opening that says 'let me'",
      "Let me think about that with you.\n\nMoving is a lot.\n\n---\n\nTake it one box at a time.",
    ],
    ["an opening that says 'decide'", "If you decide to take the job, great.\n\n---\n\nHere are the steps."],
    ["an opening about their draft", "Your draft is great!\n\n---\n\nOne suggestion: shorten the intro."],
    ["a protocol word inside a code block", "The stream ends with:\n\n```\ndata: [DONE]\n```"],
    ["protocol words in inline code", "Use `NO_MESSAGE` as the sentinel, and `[SEND]` for the other case."],
    ["a bracketed token quoted in prose", "The server prints data: [DONE] at the end."],
    ["a last bullet that starts with Why:", "Good plan:\n- Start early\n- Why: mornings are calmer"],
    [
      "an Analysis: paragraph about their code",
      "**Analysis:**\nYour code has a race in the loop.\nFix: await it.\n\nHope that helps!",
    ],
    ["a first line that starts with Topic:", "Topic: sleep hygiene\n\nTry a fixed wake time."],
    ["a reasoning tag name inside a code fence", "Try this:\n\n```html\n<plan>Mon 5k</plan>\n```"],
  ])("keeps a real reply whole: %s", (_kind, text) => {
    expect(guardOutgoing(text)).toEqual({ text, removed: [] });
  });

  it("strips lines that are plainly the protocol from a reply, and every decision label from a check-in", () => {
    expect(guardOutgoing(`DECISION: SEND\n\n${MESSAGE}`).text).toBe(MESSAGE);
    expect(guardOutgoing(`${MESSAGE}\n\nSEND: yes`).text).toBe(MESSAGE);
    expect(guardOutgoing(`Topic: interview\n\n${MESSAGE}`, "checkin").text).toBe(MESSAGE);
    expect(guardOutgoing(`${MESSAGE}\n- Why: he mentioned it`, "checkin").text).toBe(MESSAGE);
  });

  it("strips an Analysis: paragraph when it reasons about the person", () => {
    const leaky = `**Analysis:** the user seems tired, I should keep it short.\n\n${MESSAGE}`;
    expect(guardOutgoing(leaky).text).toBe(MESSAGE);
  });

  it("returns null when nothing but leakage is left, and says what was removed", () => {
    const result = guardOutgoing("<thinking>nothing worth saying now</thinking>\nNO_MESSAGE");
    expect(result.text).toBeNull();
    expect(result.removed).toHaveLength(2);
    expect(guardOutgoing("Decision: don't send\nWhy: he is asleep").text).toBeNull();
    expect(guardOutgoing("   ").text).toBeNull();
  });

  it("leaves any ordinary message as it is, and strips any reasoning wrapped around it", () => {
    const word = fc.constantFrom(
      "the",
      "walk",
      "felt",
      "good",
      "today",
      "you",
      "slept",
      "well",
      "bread",
      "Sunday",
      "🙂",
      "café",
    );
    const sentence = fc.array(word, { minLength: 1, maxLength: 12 }).map((w) => `${w.join(" ")}.`);
    const message = fc.array(sentence, { minLength: 1, maxLength: 6 }).map((s) => s.join("\n"));
    fc.assert(
      fc.property(message, fc.string({ maxLength: 40 }), (text, thought) => {
        expect(guardOutgoing(text)).toEqual({ text, removed: [] });
        expect(guardOutgoing(`<thinking>${thought.replace(/</g, "")}</thinking>\n${text}`).text).toBe(text);
      }),
    );
  });

  it("strips a time stamp of the prompt's own format at the head of the message, and no other bracket", () => {
    const now = new Date("2026-03-05T18:30:00.000Z");
    const stamps = [
      sentTimeStamp(new Date("2026-03-05T18:05:00.000Z"), now, "Europe/Berlin"),
      sentTimeStamp(new Date("2026-03-04T22:10:00.000Z"), now, "Europe/Berlin"),
      sentTimeStamp(new Date("2026-02-12T18:05:00.000Z"), now, "Europe/Berlin"),
    ];
    expect(stamps).toEqual(["[19:05]", "[Wed 23:10]", "[12 Feb 19:05]"]);
    for (const stamp of stamps) {
      for (const path of ["reply", "checkin"] as const) {
        expect(guardOutgoing(`${stamp} ${MESSAGE}`, path)).toEqual({
          text: MESSAGE,
          removed: [`time stamp: ${stamp}`],
        });
      }
      expect(guardOutgoing(`<thinking>a pause since</thinking>\n${stamp}\n${MESSAGE}`).text).toBe(MESSAGE);
    }
    for (const kept of [
      `Meet at [19:05] ${MESSAGE}`,
      `[Thursday 19:05] ${MESSAGE}`,
      `[25:00] ${MESSAGE}`,
      `[1] ${MESSAGE}`,
      `${MESSAGE}\n[19:05] is when the train leaves`,
    ]) {
      expect(guardOutgoing(kept)).toEqual({ text: kept, removed: [] });
    }
  });

  it("handles every leak at once", () => {
    const leaky = [
      "<thinking>",
      "The user answered about water at 9. Do not repeat.",
      "</thinking>",
      "Decision: send",
      "Topic: interview",
      "Considering the check-in, I should ask one thing only.",
      "---",
      `[SEND] ${MESSAGE}`,
      "<reasoning>unclosed and trailing",
    ].join("\n");
    expect(guardOutgoing(leaky).text).toBe(MESSAGE);
  });
});
