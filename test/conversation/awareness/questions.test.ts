import { describe, expect, it } from "vitest";
import {
  isQuestion,
  messageIsQuestion,
  onlyWishesWell,
} from "../../../src/conversation/awareness/questions.ts";
import type { Message } from "../../../src/core/message.ts";

function message(text: string, extra: Partial<Message> = {}): Message {
  return { id: "m1", ts: "2026-02-07T10:00:00.000Z", role: "user", text, channel: "telegram", ...extra };
}

describe("onlyWishesWell", () => {
  it.each([
    ["Good luck at physio!", true],
    ["Good luck at physio! 🤞", true],
    ["Enjoy the concert 🎶", true],
    ["Have a great time in Lisbon. Safe travels!", true],
    ["Fingers crossed for the interview.", true],
    ["Good luck! Did you sleep at all?", false],
    ["Don't skip physio today.", false],
    ["Had water yet?", false],
    ["Hope it went well?", false],
    ["Hope the interview went well!", false],
    ["Hope you're drinking enough water today 💧", false],
    ["Have a good morning, and don't forget your meds!", false],
    ["Enjoy lunch, and drink a glass of water with it", false],
    ["All the best with the move, ping me when you're in", false],
  ])("%s → %s", (text, expected) => {
    expect(onlyWishesWell(text)).toBe(expected);
  });
});

describe("isQuestion", () => {
  it.each([
    ["How's the water intake looking this morning?", true],
    ["how's the water going", true],
    ["did you sleep ok", true],
    ["Tell me how the meeting went", true],
    ["Have a great day.", false],
    ["What a day.", false],
    ["Two glasses so far", false],
    ["Do the dishes later", false],
    ["toast in the car lol does that count", true],
    ["10 mins. hands are sweating. why did I wear the silk blouse", false],
    ["up at 5 for 12k with the running club. who even am I 🙃", false],
    ["why do you think that is", true],
    ["Honestly? Relieved. At least now there's a plan.", false],
    ["Honestly?", true],
    ["Love that 😄 Tell me how it goes when you hear.", true],
    ["like 6? the school called at 9 tho so more like 4 + 2", false],
    ["Maybe a nap around 8?", true],
    ["This program woke me at 5:40. I do not appreciate it. Is there a way to stop that?", true],
    ["why do you keep asking?", false],
    ["she thinks im buying one from tesco 😂 should i tell her or keep it a surprise", true],
    ["ok rankine. explain the 4 processes like i'm 5", true],
    ["ok question. is the clausius inequality gonna be on it or is that just derivation stuff", true],
    ["did the walk btw. he insisted", false],
    ["was the best day in ages", false],
  ])("%s → %s", (text, expected) => {
    expect(isQuestion(text, "user")).toBe(expected);
  });

  it("prefers the annotation", () => {
    const m = message("Two glasses so far", { annotations: { topics: [], question: true, tone: "neutral" } });
    expect(messageIsQuestion(m)).toBe(true);
    expect(messageIsQuestion(message("Two glasses so far"))).toBe(false);
  });
});
