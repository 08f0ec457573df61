import { describe, expect, it } from "vitest";
import { readText } from "../../../src/conversation/awareness/reading.ts";
import {
  canonicalTopic,
  detectTopics,
  knownTopics,
  messageTopics,
  topicDomain,
  topicSubject,
} from "../../../src/conversation/awareness/topics.ts";
import type { Message } from "../../../src/core/message.ts";
import { type AgreementRow, loadTopicCorpus, reportAgreement } from "./corpora.ts";

const corpus = loadTopicCorpus();

function message(text: string, extra: Partial<Message> = {}): Message {
  return { id: "m1", ts: "2026-02-07T10:00:00.000Z", role: "user", text, channel: "telegram", ...extra };
}

describe("the topic corpus", () => {
  it("has at least 10 differently worded messages for every topic the lexicon knows", () => {
    for (const topic of knownTopics()) {
      const texts = corpus.topics[topic] ?? [];
      expect(new Set(texts).size, topic).toBeGreaterThanOrEqual(10);
    }
    expect(corpus.other.length).toBeGreaterThanOrEqual(10);
  });

  it("agrees with the labels at least 90% of the time", () => {
    const rows: AgreementRow[] = Object.entries(corpus.topics).map(([topic, texts]) => {
      const misses = texts.filter((t) => !detectTopics(t).some((label) => topicSubject(label) === topic));
      return { label: topic, total: texts.length, agreed: texts.length - misses.length, misses };
    });
    const fallbackMisses = corpus.other.filter((t) => {
      const topics = detectTopics(t);
      return (
        topics.length === 0 ||
        !topics.every((topic) => inTheirWords(topic, t) && topicSubject(topic) === null)
      );
    });
    rows.push({
      label: "other (their own words only)",
      total: corpus.other.length,
      agreed: corpus.other.length - fallbackMisses.length,
      misses: fallbackMisses,
    });
    expect(reportAgreement("topic agreement", rows)).toBeGreaterThanOrEqual(0.9);
  });
});

describe("detectTopics", () => {
  it("gives the same label however hydration is phrased, and by either side", () => {
    for (const text of [
      "How's the water intake looking?",
      "hydration check!",
      "how much have you drunk today",
      "Had 2l already",
      "💧💧",
    ]) {
      expect(detectTopics(text), text).toContain("hydration");
    }
  });

  it("keeps the subject of a negated sentence", () => {
    expect(detectTopics("I haven't had any water")).toEqual(["hydration"]);
    expect(detectTopics("didn't sleep at all")).toEqual(["sleep"]);
  });

  it("reads phrases before words, so working out is movement and not work", () => {
    // Lunch only says when: the message is about working out.
    expect(detectTopics("Working out after lunch")).toEqual(["movement"]);
    expect(detectTopics("I'm running late for the meeting")).toEqual(["work"]);
    expect(detectTopics("Of course, see you then")).not.toContain("learning");
  });

  it("names an unknown subject by its noun phrase as written, never a stem or a verb", () => {
    expect(detectTopics("Did the Moltbook registration go through?")).toEqual(["moltbook registration"]);
    expect(detectTopics("any news on moltbook?")).toEqual(["moltbook"]);
    expect(detectTopics("My cat knocked the plant over again")).toEqual(["cat", "plant"]);
    expect(detectTopics("Finished the novel my book club picked")).toEqual(["novel", "book club"]);
    expect(detectTopics("both book clubs meet on Thursdays")).toEqual(["book club"]);
  });

  it("keeps an event's own words, which still belong to their subject", () => {
    expect(detectTopics("Interview at 2, wish me luck")).toEqual(["interview"]);
    expect(topicSubject("job interview")).toBe("work");
    expect(detectTopics("the dentist appointment is at 3")).toEqual(["health", "dentist appointment"]);
  });

  it("reads no topics from words in another language, only from emoji", () => {
    expect(detectTopics("Buenos días! Hoy tengo la cita con el médico")).toEqual([]);
    expect(detectTopics("Guten Morgen!")).toEqual([]);
    expect(detectTopics("Ich war heute im Fitnessstudio 💪")).toEqual(["movement"]);
    expect(detectTopics("danke", "de")).toEqual([]);
  });

  it("gives greetings no topic", () => {
    expect(detectTopics("Good night!")).toEqual([]);
    expect(detectTopics("morning!")).toEqual([]);
  });

  it("gives nothing for small talk", () => {
    expect(detectTopics("Lovely, see you soon")).toEqual([]);
    expect(detectTopics("")).toEqual([]);
  });

  it("lists topics in the order the text raises them", () => {
    expect(detectTopics("About an hour from your eating window—how's the water?")).toEqual([
      "food",
      "hydration",
    ]);
  });
});

describe("detectTopics: what is not the person's subject, nor a thing they talk about", () => {
  it("reads a verb the tagger took for a noun as no phrase", () => {
    // A person doing something, a verb before "as", a verb after a subject pronoun or before "if".
    expect(detectTopics("my sister lands at 6")).toEqual(["family"]);
    expect(detectTopics("does a smoothie in the car count as lunch?")).not.toContain("car count");
    expect(detectTopics("yes i had chips 😅 chips count")).toEqual(["chip"]);
    expect(detectTopics("why do u care")).toEqual([]);
    expect(detectTopics("first check if the cache is warm")).toEqual(["cache"]);
    // ...but a name ending in s is no verb, and an object pronoun may come before a thing.
    expect(detectTopics("my friend Tomás grilled me")).toEqual(["social", "friend tomás"]);
    expect(detectTopics("bought me flowers")).toEqual(["flower"]);
  });

  it("reads an adjective the tagger took for a noun as no phrase", () => {
    expect(detectTopics("polite but firm, I said no")).toEqual([]);
  });

  it("gives nothing for words an idiom consumed", () => {
    expect(detectTopics("did a dry run of the talk at lunch")).not.toContain("movement");
    expect(detectTopics("raccoon got in again. set off the alarm twice")).toEqual(["raccoon"]);
    // A fire alarm is a thing of its own, and an alarm that wakes them is still sleep.
    expect(detectTopics("the fire alarm went off twice during the meeting")).toEqual(["fire alarm"]);
    expect(detectTopics("my alarm went off at 5")).toEqual(["sleep"]);
  });

  it("leaves out what the person calls the companion", () => {
    expect(detectTopics("ur literally my dad rn")).toEqual([]);
    expect(detectTopics("You're a good listener.")).toEqual([]);
    expect(detectTopics("weird thing to tell an app")).toEqual([]);
    expect(detectTopics("ur mum called")).toEqual(["family"]);
  });

  it("does not make someone else's relative, eating or kind of thing theirs", () => {
    expect(detectTopics("jo's mum drove us home after the party")).toEqual(["party"]);
    expect(detectTopics("a family that yelled at the nurse all night")).not.toContain("family");
    expect(detectTopics("the dog ate my slipper")).toEqual(["dog", "slipper"]);
    expect(detectTopics("my printer ate the page")).toEqual(["printer", "page"]);
    // A verb after "and" shares the subject its clause began with.
    expect(detectTopics("He did four clues and slept")).toEqual([]);
    expect(detectTopics("we did four clues and slept")).toEqual(["sleep"]);
    expect(detectTopics("ok but a chill one")).toEqual([]);
    expect(detectTopics("slept like a baby. a baby that sleeps")).toEqual(["sleep"]);
    // Their own eating and their own relatives still are.
    expect(detectTopics("ate a bagel on the walk home")).toEqual(["food", "bagel"]);
    expect(detectTopics("my mom's sister is visiting")).toContain("family");
  });

  it("names the scene when nothing else is there, and not before how they feel", () => {
    expect(detectTopics("was on the tram with someone's elbow in my face")).toEqual(["tram"]);
    expect(detectTopics("got it out with a drain rod and a lot of swearing")).toEqual(["drain rod"]);
    expect(detectTopics("going to lie on the floor for an hour now, i'm wrecked")).toEqual(["mood"]);
    expect(detectTopics("ate a bagel on the walk back")).not.toContain("walk");
    // A verb's clitic makes no noun of its word.
    expect(detectTopics("tomorrow. with my HOD cc'd")).toEqual(["hod"]);
    // Nor a verb said again in capitals for emphasis.
    expect(detectTopics("the bees swarmed. SWARMED.")).toEqual(["bee"]);
  });

  it("reads 'on' as a scene unless it says what about", () => {
    expect(detectTopics("the phone shop on the high street")).toEqual(["phone shop"]);
    expect(detectTopics("any news on moltbook?")).toEqual(["moltbook"]);
    expect(detectTopics("shaky on the budget question")).toEqual(["money", "budget question"]);
  });

  it("names a filler noun once another noun says which, and a hyphenated word whole", () => {
    expect(detectTopics("the visa question came up again")).toEqual(["visa question"]);
    expect(detectTopics("my c-section recovery is slow")).toEqual(["c-section recovery"]);
    expect(detectTopics("the booking system crashed")).toEqual(["booking system"]);
    // An act in -ing only says which meeting: it is still work.
    expect(detectTopics("the planning meeting ran long")).toEqual(["work"]);
    expect(detectTopics("the pamphlet the nurse gave me")).toEqual(["pamphlet", "nurse"]);
  });

  it("leaves out a part before 'of' and things said not to be there", () => {
    expect(detectTopics("her side of the bed is cold")).toEqual(["sleep"]);
    expect(detectTopics("Already had a big glass of water and a mug of tea")).toEqual(["hydration"]);
    expect(detectTopics("a pair of shoes and a jar of honey")).toEqual(["shoe", "honey"]);
    expect(detectTopics("deployed to prod. no errors.")).toEqual(["work"]);
  });

  it("reads a sentence of another language inside an English message as no nouns", () => {
    const text = "two night shifts back to back and the printer jammed again. no es mi culpa";
    expect(detectTopics(text)).toEqual(["work", "printer"]);
  });

  it("reads a few English words that look a little Italian as the conversation's English", () => {
    expect(detectTopics("no raccoon. ate.")).toEqual(["raccoon", "food"]);
    expect(detectTopics("no raccoon. ate.", "it")).toEqual([]);
  });

  it("reads words the English model knows none of, which eld takes for English, in the conversation's language", () => {
    expect(readText("obvio, 40 fotos").language).toBeNull();
    expect(detectTopics("obvio, 40 fotos", "es")).toEqual([]);
    // In an English conversation the message is English again, and unknown words name nothing.
    expect(detectTopics("obvio, 40 fotos", "en")).toEqual([]);
  });

  it("names no day abbreviation, greeting, or verb the tagger took for a noun before an object pronoun", () => {
    expect(detectTopics("they moved her to mon wed fri so lindiwe drives her mondays")).toEqual([]);
    // "her" before a thing owns it: the word before is no verb.
    expect(detectTopics("fed the cat her dinner")).toContain("cat");
    expect(detectTopics("gave the puppy her first bath")).toContain("puppy");
    expect(detectTopics("Aloha. colonoscopy tomorrow 7:30am")).toEqual(["colonoscopy"]);
  });

  it("knows a few more subject words", () => {
    expect(detectTopics("405 deadlift")).toEqual(["movement"]);
    expect(detectTopics("up early again")).toEqual(["sleep"]);
    // Everyday meals are food however they are named.
    expect(detectTopics("toast in the car lol")).toEqual(["food"]);
    expect(detectTopics("Dev made pancakes 🥞")).toContain("food");
    // A sum of money is what something costs them.
    expect(detectTopics("exhaust and a tyre, £340")).toContain("money");
    expect(detectTopics("garage says $640 for a new core")).toContain("money");
    expect(detectTopics("the 46A at half one")).not.toContain("money");
  });
});

describe("detectTopics: grammar that tells a thing talked about from a measure or a frame", () => {
  it("counts a measure, but counted things that do something are the subject of their clause", () => {
    expect(detectTopics("80 pages left and we meet wednesday")).toEqual([]);
    expect(detectTopics("all 14 tomato plants survived!!!")).toEqual(["tomato plant"]);
    expect(detectTopics("2019 and 2022 papers both had it")).toEqual(["paper"]);
    expect(detectTopics("even the 16ft bourdon quit wheezing")).toEqual([]);
  });

  it("reads 's before an adjective that ends its phrase as 'is', and a short unknown word that owns as a name", () => {
    expect(detectTopics("the spaniel's grand, lost 3 teeth")).toEqual(["spaniel"]);
    expect(detectTopics("blower's fine. don't ask")).toEqual(["blower"]);
    expect(detectTopics("pua's here already")).toEqual(["pua"]);
    expect(detectTopics("going to jas's later")).toEqual(["jas"]);
    // An owner is still only whose the thing is, adjective or not.
    expect(detectTopics("Nadia's new sister")).not.toContain("nadia");
    expect(detectTopics("the af thing")).toEqual([]);
  });

  it("reads a bare 'home' as where they are, and 'my home' as a place", () => {
    expect(detectTopics("home. the bees swarmed")).toEqual(["bee"]);
    expect(detectTopics("finally home")).toEqual([]);
    expect(detectTopics("my home insurance went up")).toEqual(["home insurance"]);
    expect(detectTopics("we found a new home")).toEqual(["home"]);
  });

  it("leaves out whom they speak to after an answer, thanks or a greeting, or after a comma before an emoji", () => {
    expect(detectTopics("yes mum 🙄")).toEqual([]);
    expect(detectTopics("and yes mum, I have my bottle")).toEqual(["hydration"]);
    expect(detectTopics("thanks Dana!")).toEqual([]);
    expect(detectTopics("Thank you, pet ❤️")).toEqual([]);
    // A thing after "ok" or "no" is talked about; so is a person who is not alone there.
    expect(detectTopics("ok rankine. explain it")).toEqual(["rankine"]);
    expect(detectTopics("yes mum called")).toEqual(["family"]);
  });

  it("names no time word in any number or spelling, no pronoun in chat spelling, no exclamation", () => {
    expect(detectTopics("Stiff in the mornings")).toEqual([]);
    expect(detectTopics("frost warning tonite so covering the tomatoes")).not.toContain("tonite");
    expect(detectTopics("whether I can still curl next season")).toEqual([]);
    expect(detectTopics("already wrote em down")).toEqual([]);
    expect(detectTopics("god no. im doing the cake")).toEqual(["cake"]);
    expect(detectTopics("Brid from next door is coming")).toEqual(["brid"]);
  });
});

describe("detectTopics: round 3 grammar", () => {
  it("leaves out any one noun spoken to after an answer or a greeting, an oath before yes, a name set off before 'you'", () => {
    expect(detectTopics("yes madam 🫡")).toEqual([]);
    expect(detectTopics("Yes ma'am, heading to the appointment now.")).toEqual(["appointment"]);
    expect(detectTopics("Good morning sugar! the dog is fine")).toEqual(["dog"]);
    expect(detectTopics("Lord yes. Both my boys came")).not.toContain("lord");
    // A question's noun before "is" is what it asks about; phrasal verbs, toasts and takeaways are no sleep or food.
    expect(detectTopics("What time is the appointment")).toEqual(["appointment"]);
    expect(detectTopics("showed up early to the interview")).toEqual(["interview"]);
    expect(detectTopics("I'm toast after that meeting")).toEqual(["work"]);
    expect(detectTopics("main takeaway from the retro")).toEqual(["retro"]);
    // A checklist's answers name what they answer.
    expect(detectTopics("Gym yes. Water no.")).toEqual(["movement", "hydration"]);
    expect(detectTopics("Though honey, you don't need to ask me, I have the jug")).toEqual(["jug"]);
    expect(detectTopics("aye ok mum")).toEqual([]);
    // "no" as a determiner says there is none; "morning" without "good" names which coffee.
    expect(detectTopics("no milk 😭")).toEqual(["milk"]);
    expect(detectTopics("morning coffee ☕")).toEqual(["coffee"]);
    expect(detectTopics("ok rankine. explain it")).toEqual(["rankine"]);
  });

  it("ends a noun run where a name opens a clause about the noun, unless the noun is a person", () => {
    expect(detectTopics("The pill organiser Graeme bought me has the days on it")).toContain(
      "pill organiser",
    );
    expect(detectTopics("The pill organiser Graeme bought me")).not.toContain("graeme");
    expect(detectTopics("ate half a chicken carcass Earl left on the counter")).toContain("carcass");
    expect(detectTopics("ate half a chicken carcass Earl left on the counter")).not.toContain("carcass earl");
    expect(detectTopics("My son Graeme installed it")).toContain("son graeme");
  });

  it("reads a habit named by a noun after a preposition or a copula as its clause subject's", () => {
    expect(detectTopics("he's begging for breakfast like nothing happened")).toEqual([]);
    expect(detectTopics("she's more chill than me")).toEqual([]);
    // What someone makes for them, and what they themselves wait for, stays theirs.
    expect(detectTopics("Dev made pancakes")).toContain("food");
    expect(detectTopics("i'm begging for breakfast")).toEqual(["food"]);
  });

  it("leaves out a person named bare as the source of news, but not who they are to the person", () => {
    expect(detectTopics("Lorraine says I should tell you about my hip appointment")).toEqual([
      "hip appointment",
    ]);
    expect(detectTopics("appa says it's routine")).toEqual([]);
    expect(detectTopics("Dr. Patel says my blood pressure is a little low")).not.toContain("patel");
    expect(detectTopics("my sister Anjali says she can lend me the money")).toContain("sister anjali");
    expect(detectTopics("forecast says 68 and sunny")).toContain("forecast");
    expect(detectTopics("hemi reckons if i pass fri he'll stop")).toContain("hemi");
  });

  it("takes an adjective the tagger read between two nouns into their compound", () => {
    expect(detectTopics("yeah he forgot his science fair poster")).toEqual(["science fair poster"]);
    expect(detectTopics("the big red bus")).toEqual(["bus"]);
  });

  it("reads a sentence that is only a number of hours as how they slept", () => {
    expect(detectTopics("better. 6h")).toEqual(["sleep"]);
    expect(detectTopics("badly. 4 hours. don't start")).toEqual(["sleep"]);
    expect(detectTopics("like 5 hrs. practice test was 690 tho")).toContain("sleep");
    expect(detectTopics("my mom lands in 9 hours")).not.toContain("sleep");
    expect(detectTopics("the sandbox is down. 2 hours now.")).not.toContain("sleep");
  });

  it("names no oath and knows the plural of wife", () => {
    expect(detectTopics("EKG was normal, thank the Lord.")).toEqual(["ekg"]);
    expect(detectTopics("Both my boys and their wives came")).toContain("family");
  });
});

describe("topic domains and canonical labels", () => {
  it("maps every lexicon topic to a domain and fallback topics to other", () => {
    expect(topicDomain("hydration")).toBe("habits");
    expect(topicDomain("work")).toBe("work");
    expect(topicDomain("family")).toBe("relationships");
    expect(topicDomain("social")).toBe("social");
    expect(topicDomain("guitar")).toBe("other");
    expect(topicDomain("wedding")).toBe("social");
  });

  it("maps free-text labels onto the lexicon where it can", () => {
    expect(canonicalTopic("Water intake")).toBe("hydration");
    expect(canonicalTopic("sleep schedule")).toBe("sleep");
    expect(canonicalTopic("books")).toBe("book");
    expect(canonicalTopic("Book clubs")).toBe("book club");
    expect(canonicalTopic("Moltbook")).toBe("moltbook");
    expect(canonicalTopic("other:registr")).toBeNull();
  });

  it("drops reflection labels that say when or what a message does, not what it is about", () => {
    expect(canonicalTopic("morning")).toBeNull();
    expect(canonicalTopic("Good morning")).toBeNull();
    expect(canonicalTopic("friday night")).toBeNull();
    expect(canonicalTopic("greeting")).toBeNull();
    expect(canonicalTopic("small talk")).toBeNull();
    expect(canonicalTopic("morning routine")).toBe("morning routine");
    expect(canonicalTopic("night shift")).toBe("work");
  });
});

describe("messageTopics", () => {
  it("prefers reflection's annotations, canonicalised, even when they say there is no topic", () => {
    const annotated = message("How's the water?", {
      annotations: { topics: ["Water intake", "mood"], question: true, tone: "neutral" },
    });
    expect(messageTopics(annotated)).toEqual(["hydration", "mood"]);
    const none = message("How's the water?", {
      annotations: { topics: [], question: true, tone: "neutral" },
    });
    expect(messageTopics(none)).toEqual([]);
  });

  it("reads a media caption too", () => {
    expect(messageTopics(message("", { media: { kind: "photo", caption: "post-run selfie 🏃" } }))).toContain(
      "movement",
    );
  });

  it("reads a message again when it was edited in place", () => {
    const m = message("slept badly");
    expect(messageTopics(m)).toEqual(["sleep"]);
    m.text = "the deadline moved";
    expect(messageTopics(m)).toEqual(["work"]);
  });
});

/** Whether every word of a label is one of the text's words (a plural singularised at most). */
function inTheirWords(label: string, text: string): boolean {
  const words = new Set(text.toLowerCase().match(/[\p{L}']+/gu) ?? []);
  return label.split(" ").every((w) => words.has(w) || words.has(`${w}s`) || words.has(`${w}es`));
}
