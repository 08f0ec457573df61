import { describe, expect, it } from "vitest";
import { buildAwarenessContext } from "../../src/conversation/awareness/build.ts";
import { canonicalTopicsOf, checkinAnnotations, guardTopic } from "../../src/conversation/topic-guard.ts";
import type { Message } from "../../src/core/message.ts";

const base = Date.parse("2026-03-07T08:00:00.000Z");
let counter = 0;

function at(minutes: number, role: Message["role"], text: string): Message {
  counter += 1;
  return {
    id: `t${String(counter).padStart(4, "0")}`,
    ts: new Date(base + minutes * 60_000).toISOString(),
    role,
    text,
    channel: "telegram",
    ...(role === "assistant" ? { trigger: "heartbeat" as const } : {}),
  };
}

function verdict(topic: string, log: Message[], nowMinutes: number, hours = 6) {
  const now = new Date(base + nowMinutes * 60_000);
  const awareness = buildAwarenessContext(log, now, {
    timezone: "Europe/Berlin",
    activeMinutes: 30,
    windowHours: 48,
    trigger: "heartbeat",
  });
  return guardTopic(topic, log, awareness, now, hours);
}

describe("guardTopic", () => {
  it("normalizes a decided topic the way the awareness engine labels messages", () => {
    expect(canonicalTopicsOf("water")).toEqual(["hydration"]);
    expect(canonicalTopicsOf("Drinking enough")).toEqual(["hydration"]);
    expect(canonicalTopicsOf("movement")).toEqual(["movement"]);
    expect(canonicalTopicsOf("sleep and water")).toEqual(["sleep", "hydration"]);
    expect(canonicalTopicsOf("guitar")).toEqual(["guitar"]);
    expect(canonicalTopicsOf("the job interview")).toEqual(["job interview"]);
    expect(canonicalTopicsOf("  ")).toEqual([]);
  });

  it("holds back a topic the person already answered within the window (already-answered)", () => {
    const log = [at(0, "user", "Morning! Already had two big glasses of water.")];
    const result = verdict("water", log, 3 * 60);
    expect(result).toMatchObject({ allow: false, reason: "already-answered" });
    if (!result.allow) {
      expect(result.detail).toBe("the person already said how water stands today, 3h ago");
      expect(result.answerId).toBe(log[0]?.id);
    }
  });

  it("allows the topic again once the answer is older than the window", () => {
    const log = [at(0, "user", "Morning! Already had two big glasses of water.")];
    expect(verdict("hydration", log, 7 * 60).allow).toBe(true);
    expect(verdict("hydration", log, 7 * 60, 8).allow).toBe(false);
  });

  it("holds back a topic already raised and still unanswered (repeated-topic)", () => {
    const log = [
      at(0, "user", "Off to work, talk later"),
      at(120, "assistant", "How's the water intake looking this morning?"),
    ];
    const result = verdict("hydration", log, 9 * 60);
    expect(result).toMatchObject({ allow: false, reason: "repeated-topic" });
    if (!result.allow) expect(result.detail).toMatch(/once/);
  });

  it("follows up after a check-in that only wished well: a wish asks nothing, so it is no repeat", () => {
    const log = [
      at(0, "user", "physio this arvo for the shoulder"),
      at(230, "assistant", "Good luck at physio! 🤞"),
    ];
    expect(verdict("physio", log, 8 * 60 + 30).allow).toBe(true);
    // A check-in that asks, or nudges, still waits for its answer.
    const nudged = [
      at(0, "user", "physio this arvo for the shoulder"),
      at(230, "assistant", "Don't skip physio today."),
    ];
    expect(verdict("physio", nudged, 8 * 60 + 30)).toMatchObject({ allow: false, reason: "repeated-topic" });
  });

  it("names a topic outside the lexicon in the decided words, never by its internal label", () => {
    const log = [at(0, "user", "The move went fine, all boxes are in.")];
    const result = verdict("the move", log, 3 * 60);
    expect(result).toMatchObject({ allow: false, reason: "already-answered" });
    if (!result.allow) {
      expect(result.detail).toBe("the person already said how the move went, 3h ago");
    }
  });

  it("annotates a sent check-in with the decided topic's labels and the text's", () => {
    expect(checkinAnnotations("the move", "How's the packing going?")).toEqual({
      topics: ["move", "packing"],
      question: true,
      tone: "neutral",
    });
  });

  it("allows a fresh topic, and an empty one", () => {
    const log = [
      at(0, "user", "Off to work, talk later"),
      at(120, "assistant", "How's the water intake looking this morning?"),
    ];
    expect(verdict("sleep", log, 9 * 60)).toEqual({ allow: true, topics: ["sleep"] });
    expect(verdict("", log, 9 * 60).allow).toBe(true);
  });

  it("lets a follow-up after an event through when the person only mentioned it before its moment", () => {
    // 08:00 UTC is 09:00 in Berlin: the interview is at 14:00, the check-in at 16:07.
    const log = [
      at(0, "user", "Big day, interview at 2 😬"),
      at(1, "assistant", "Good luck! You'll do great."),
      at(4 * 60, "user", "prepping for the interview over lunch, so nervous"),
    ];
    expect(verdict("the interview", log, 7 * 60 + 7).allow).toBe(true);
  });

  it("holds a follow-up the person already answered after the event, naming the answer", () => {
    const log = [
      at(0, "user", "Big day, interview at 2 😬"),
      at(6 * 60 + 30, "user", "interview went great, they want a second round!"),
    ];
    const result = verdict("the interview", log, 7 * 60 + 7);
    expect(result).toMatchObject({ allow: false, reason: "already-answered", answerId: log[1]?.id });
  });

  it("holds a habit the person volunteered a status on today, not an intention", () => {
    const sorted = [at(0, "user", "hydration is sorted today")];
    expect(verdict("had water yet?", sorted, 2 * 60).allow).toBe(false);
    const later = [at(0, "user", "will drink more water later")];
    expect(verdict("water", later, 2 * 60).allow).toBe(true);
  });

  it("holds a habit whose status came in a message that also asks something", () => {
    const log = [at(0, "user", "already on my second bottle of water today, proud of me?")];
    expect(verdict("water", log, 3 * 60)).toMatchObject({ allow: false, answerId: log[0]?.id });
    const asking = [at(0, "user", "should I drink more water?")];
    expect(verdict("water", asking, 3 * 60).allow).toBe(true);
  });

  it("knows tablets and meals by the words people use for them", () => {
    const tablets = [at(0, "user", "Morning tablets taken with my porridge, as always.")];
    expect(verdict("morning tablets", tablets, 2 * 60).allow).toBe(false);
    const french = [
      at(0, "assistant", "Tu as pu manger un morceau ?"),
      at(35, "user", "Oui, un jambon-beurre entre deux clientes."),
    ];
    expect(verdict("le repas de midi", french, 2 * 60).allow).toBe(false);
  });

  it("takes an answer that only promises as a plan, which holds for a while and then lapses", () => {
    const log = [
      at(0, "assistant", "Had any water today?"),
      at(2, "user", "naw. will drink some after school i promise"),
    ];
    expect(verdict("water", log, 60).allow).toBe(false);
    expect(verdict("water", log, 4 * 60).allow).toBe(true);
    const italian = [
      at(0, "user", "Oggi niente pranzo, troppi clienti. Mangio qualcosa dopo le 3 quando chiudo"),
    ];
    expect(verdict("pranzo", italian, 4 * 60).allow).toBe(true);
  });

  it("ignores messages after the moment it judges", () => {
    const log = [at(0, "user", "Off to work"), at(600, "user", "drank so much water today")];
    expect(verdict("water", log, 60).allow).toBe(true);
  });
});
