import { describe, expect, it } from "vitest";
import {
  detectMood,
  detectTone,
  exchangeTone,
  messageMood,
  messageTone,
  toneScore,
} from "../../../src/conversation/awareness/tone.ts";
import type { Message, Tone } from "../../../src/core/message.ts";
import { type AgreementRow, loadToneCorpus, reportAgreement } from "./corpora.ts";

const corpus = loadToneCorpus();

function message(role: Message["role"], text: string, extra: Partial<Message> = {}): Message {
  return { id: `${role}-${text}`, ts: "2026-02-07T10:00:00.000Z", role, text, channel: "telegram", ...extra };
}

describe("the tone corpus", () => {
  it("has at least 10 messages per tone", () => {
    for (const texts of Object.values(corpus.tones)) expect(new Set(texts).size).toBeGreaterThanOrEqual(10);
  });

  it("agrees with the labels at least 90% of the time", () => {
    const rows: AgreementRow[] = (Object.entries(corpus.tones) as [Tone, string[]][]).map(([tone, texts]) => {
      const misses = texts.filter((t) => detectTone(t) !== tone).map((t) => `${t} → ${detectTone(t)}`);
      return { label: tone, total: texts.length, agreed: texts.length - misses.length, misses };
    });
    expect(reportAgreement("tone agreement", rows)).toBeGreaterThanOrEqual(0.9);
  });
});

describe("detectTone", () => {
  it("reads tone from emoji stuck to words or with variation selectors", () => {
    expect(toneScore("thanks❤️")).toBeGreaterThan(toneScore("thanks"));
    expect(detectTone("🥰")).toBe("warm");
    expect(detectTone("🙄")).toBe("tense");
  });

  it("keeps the person's own bad day out of the tone: friction is aimed at the companion", () => {
    expect(detectTone("Terrible day, everything went wrong")).toBe("neutral");
    expect(detectTone("Exhausted. Long shift, but we closed the quarter.")).toBe("neutral");
    expect(detectTone("sorry for the late answer, got the job!!")).toBe("neutral");
    expect(detectTone("your questions are annoying")).toBe("tense");
    expect(detectTone("you keep asking the same thing")).toBe("tense");
  });

  it("makes intensified, shouted and exclaimed feelings stronger", () => {
    expect(toneScore("very good")).toBeGreaterThan(toneScore("good"));
    expect(toneScore("THIS IS BAD")).toBeLessThan(toneScore("this is bad"));
    expect(toneScore("great!")).toBeGreaterThan(toneScore("great"));
  });

  it("reads curt replies as tense whatever their words score", () => {
    expect(toneScore("fine.")).toBeGreaterThan(0);
    expect(detectTone("fine.")).toBe("tense");
    expect(detectTone("Ok.")).toBe("tense");
    expect(detectTone("ok")).toBe("neutral");
    expect(detectTone("ok thanks")).toBe("warm");
  });

  it("reads sarcasm at being reminded as friction, and the same words said warmly as warm", () => {
    expect(
      detectTone("Will do! Thank you so much for the reminder, I'd never have thought of dinner on my own."),
    ).toBe("tense");
    expect(detectTone("No. Wonderful of you to circle back on that, though.")).toBe("tense");
    expect(detectTone("Thanks, captain obvious")).toBe("tense");
    expect(detectTone("thank you so much!")).toBe("warm");
    expect(detectTone("Thanks for the reminder!")).toBe("warm");
    expect(detectTone("I'd never have thought of that on my own, thanks")).toBe("warm");
    expect(detectTone("Lovely of you to ask! I'm good")).toBe("neutral");
  });

  it("reads being told to hold off as friction, and a reassurance or a joke's warning as none", () => {
    expect(detectTone("pls dont start with the water thing on shift")).toBe("tense");
    expect(detectTone("you dont have to comment on everything")).toBe("tense");
    expect(detectTone("I'm drinking the tea, you don't need to manage me.")).toBe("tense");
    expect(detectTone("and the app keeps buzzing me at 6am, can u turn that off")).toBe("tense");
    expect(detectTone("i know how to plan a sprint, thanks")).toBe("tense");
    expect(detectTone("You asked me about food this morning, love.")).toBe("tense");
    expect(detectTone("don't worry, I'm fine")).toBe("neutral");
    expect(detectTone("you don't have to apologise")).toBe("neutral");
    expect(detectTone("a pie from the garage. don't judge")).toBe("neutral");
    expect(detectTone("it's the swell box now. don't ask")).toBe("neutral");
    expect(detectTone("my knee keeps waking me up")).toBe("neutral");
    // Only what the companion does is told to stop: an answer that opens with "don't" is none.
    expect(detectTone("Don't know yet, maybe a hike")).toBe("neutral");
    expect(detectTone("Don't think so.")).toBe("neutral");
    expect(detectTone("you keep making me laugh")).toBe("neutral");
    expect(detectTone("can i eat now?")).toBe("neutral");
    expect(detectTone("Can I go now")).toBe("tense");
  });

  it("reads a lifetime's practice, mock praise of advice and 'I said so, didn't I' as friction", () => {
    expect(detectTone("Had a ham sandwich at noon. I've been feeding myself for 66 years, you know.")).toBe(
      "tense",
    );
    expect(detectTone("wow. groundbreaking advice. thanks.")).toBe("tense");
    expect(detectTone("I said goodnight at 10 didn't I. I slept.")).toBe("tense");
    expect(detectTone("I've been running for 3 years now and still love it")).not.toBe("tense");
    expect(detectTone("I said yes to the job!")).toBe("neutral");
    expect(
      detectTone(
        "I have managed my own medication for fifteen years, and I would ask you not to enquire after them twice a day.",
      ),
    ).toBe("tense");
    expect(detectTone("I literally told you this morning I was going to bed. I slept. the end.")).toBe(
      "tense",
    );
    expect(detectTone("oh wow groundbreaking. never thought of that")).toBe("tense");
    expect(detectTone("aye ok mum")).toBe("tense");
    expect(detectTone("ok mum is picking me up at 5")).toBe("neutral");
    expect(detectTone("Yes. Two glasses, same as I told you on Friday.")).toBe("tense");
    expect(detectTone("This program woke me at 5:40. I do not appreciate being woken on a Saturday.")).toBe(
      "tense",
    );
    expect(detectTone("walao can u stop. im going")).toBe("tense");
    expect(detectTone("oh great, the water bot is back. yes.")).toBe("tense");
    expect(detectTone("and before you start, no water, three coffees, I don't need the lecture")).toBe(
      "tense",
    );
    expect(detectTone("Kelsey says I was rude to you earlier. She may be right.")).not.toBe("tense");
    expect(detectTone("She said the sleeve is tight. Madam, you told me size 12 😑")).not.toBe("tense");
    expect(detectTone("5am gym streak day 41. don't talk to me until I've had coffee")).not.toBe("tense");
  });

  it("reads thanks for checking in every night as warm, not as being asked every day", () => {
    expect(detectTone("4 days off 🥳 honestly thanks for checking in every night this week")).toBe("warm");
    expect(detectTone("you check in every single day and it's exhausting")).toBe("tense");
  });

  it("reads an eye-roll at someone else, or a sentence of thanks, as no friction", () => {
    expect(detectTone("yes mum 🙄")).toBe("tense");
    expect(detectTone("home. the cat is on my pillow like she pays rent 🙄")).toBe("neutral");
    expect(detectTone("These days would have been lonely without you to talk to.")).not.toBe("tense");
  });

  it("reads pointed repetition as friction, a story of days in a row as neutral", () => {
    expect(detectTone("Prep is on track. Lunch is noted, as it was yesterday. And the day before. 🙂")).toBe(
      "tense",
    );
    expect(detectTone("for the hundredth time, I drank my water")).toBe("tense");
    expect(detectTone("as i said earlier, it's handled")).toBe("tense");
    // "Like I said" opens good news as often as a rebuke: alone it is no edge.
    expect(detectTone("like i said, it's handled")).toBe("neutral");
    expect(detectTone("I ran monday and the day before")).toBe("neutral");
  });

  it("reads retorts as friction: a one-word rebuff, their age, a rhetorical tag, their doing denied in quotes", () => {
    expect(detectTone("sleep? lol. don't.")).toBe("tense");
    expect(detectTone("im 52 not 5. no naps")).toBe("tense");
    expect(detectTone("if i knew i wouldn't be stressed would i")).toBe("tense");
    expect(detectTone("and i wasnt 'out late' i was at jas's. thats different")).toBe("tense");
    expect(detectTone("don't ask")).toBe("neutral");
    expect(detectTone("I don't have to go, do I?")).toBe("neutral");
    expect(detectTone("I didn't 'forget', she never told me")).toBe("neutral");
  });

  it("keeps anger at someone else out of friction, even when it says 'you' to them", () => {
    expect(
      detectTone(
        "also priya STOLE my grey hoodie again and said she 'borrowed' it. shes 19 get ur own clothes 😤",
      ),
    ).toBe("neutral");
    expect(detectTone("mum just said 'sort it out yourselves' like ok thanks for nothing")).not.toBe("tense");
    expect(detectTone("you're useless")).toBe("tense");
  });

  it.each([
    ["How many times do I need to water the basil?", "neutral"],
    ["Ran 10k for the 2nd time ever!!", "neutral"],
    ["Like I said, the interview went great!", "neutral"],
    ["Slept 5 hours last night. And the night before, 4.", "neutral"],
    ["I'd never have remembered to eat lunch without the reminder, thank you!!", "warm"],
    ["So kind of you to ask again, I'm feeling much better today", "warm"],
    ["That's sweet of you to check again ❤️", "warm"],
  ])("reads counting, a sincere thanks or kindness as no friction: %s → %s", (text, tone) => {
    expect(detectTone(text)).toBe(tone);
  });

  it.each([
    "How many times do I have to tell you, I'm fine",
    "for the hundredth time, I ate",
    "Will do! Thank you so much for the reminder, I'd never have thought of dinner on my own.",
    "No. Wonderful of you to circle back on that, though.",
  ])("reads repetition and mock thanks aimed at the companion as friction: %s", (text) => {
    expect(detectTone(text)).toBe("tense");
  });

  it("gives a message in another language a tone only from its emoji", () => {
    expect(detectTone("Ya te dije que estoy bien, déjame en paz")).toBe("neutral");
    expect(detectTone("Gracias por preguntar ❤️")).toBe("warm");
  });
});

describe("detectMood", () => {
  it("agrees with the mood examples, and shows none where none is clear", () => {
    for (const [mood, texts] of Object.entries(corpus.moods)) {
      for (const text of texts) expect(detectMood(text), text).toBe(mood === "none" ? null : mood);
    }
  });

  it("reads a negated mood as none, and only the person's messages", () => {
    expect(detectMood("not tired at all")).toBeNull();
    // Someone else's mood is not theirs; their own, and a thing's news, still are.
    expect(detectMood("she's so excited, her fiancé's family is huge")).toBeNull();
    expect(detectMood("my mum is already stressing about samosas")).toBeNull();
    expect(detectMood("I'm stressing about the exam")).toBe("stressed");
    expect(detectMood("so excited for tonight!")).toBe("upbeat");
    expect(detectMood("that's great news!!")).toBe("upbeat");
    expect(messageMood(message("assistant", "You must be exhausted"))).toBeNull();
    const annotated = message("user", "Estoy agotada", {
      annotations: { topics: [], question: false, tone: "neutral", mood: "tired" },
    });
    expect(messageMood(annotated)).toBe("tired");
  });
});

describe("messageTone and exchangeTone", () => {
  it("prefer reflection's annotation", () => {
    const m = message("user", "fine.", { annotations: { topics: [], question: false, tone: "warm" } });
    expect(messageTone(m)).toBe("warm");
  });

  it("take the person's tone: any tense message of theirs makes the exchange tense", () => {
    const asked = message("assistant", "How did the presentation go? 😊");
    expect(exchangeTone([asked, message("user", "Went great, thank you!")])).toBe("warm");
    expect(exchangeTone([asked, message("user", "Went great"), message("user", "k")])).toBe("tense");
    expect(exchangeTone([asked, message("user", "It happened")])).toBe("neutral");
  });

  it("is unknown when the person is not in the exchange", () => {
    expect(exchangeTone([])).toBe("unknown");
    expect(exchangeTone([message("assistant", "Love this!")])).toBe("unknown");
  });
});
