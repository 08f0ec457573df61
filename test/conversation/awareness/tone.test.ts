import { describe, expect, it } from "vitest";
import {
  detectTone,
  exchangeTone,
  messageTone,
  toneScore,
} from "../../../src/conversation/awareness/index.ts";
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
  it("scores emoji the lexicon lacks, stuck to words or with variation selectors", () => {
    expect(toneScore("thanks❤️")).toBeGreaterThan(toneScore("thanks"));
    expect(detectTone("🥰")).toBe("warm");
    expect(detectTone("🙄")).toBe("tense");
    expect(detectTone("see you :)")).toBe("warm");
  });

  it("turns a feeling round when it is negated, within the clause", () => {
    expect(detectTone("I'm not happy about this")).toBe("tense");
    expect(detectTone("not bad at all")).toBe("warm");
    expect(detectTone("No problem, happy to!")).toBe("warm");
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
    expect(detectTone("ok! 😊")).toBe("warm");
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
