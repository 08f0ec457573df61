import { describe, expect, it } from "vitest";
import { baselineCosts, COMPACT_AT_TOKENS, SILENT_TICK_TOKENS } from "../../simulations/baselines.ts";
import type { SimEvent } from "../../simulations/events.ts";
import { shippedPriceTable } from "../../src/model/prices.ts";
import { estimateTokens } from "../../src/model/tokens.ts";
import { fakeDollars } from "../../testkit/prices.ts";

/**
 * The two baselines on a timeline small enough to bill by hand: which prefix each call
 * writes or reads depends on the breakpoint after the previous call's content and on how
 * long ago that was, exactly as the Messages API fake's cache would have it.
 */

const ZONE = "Europe/Berlin";
const SYSTEM = "You are Claire, a warm companion. ".repeat(160);
const HEARTBEAT = "Check in when it would be welcome.";
const prompt = { system: SYSTEM, heartbeat: HEARTBEAT };

const at = (hhmm: string) => `2026-03-02T${hhmm}:00.000Z`;
const person = (hhmm: string, text: string): SimEvent => ({
  kind: "person",
  at: at(hhmm),
  zone: ZONE,
  text,
  cause: "script",
  answers: [],
});
const reply = (hhmm: string, text: string): SimEvent => ({ kind: "reply", at: at(hhmm), zone: ZONE, text });
const held = (hhmm: string): SimEvent => ({
  kind: "checkin-held",
  at: at(hhmm),
  zone: ZONE,
  reason: "recent-conversation",
  detail: "",
  stage: "pre-check",
  topic: null,
  tone: "neutral",
});

/** A message block's size as the cache counts it. */
const block = (role: "user" | "assistant", text: string) =>
  estimateTokens(`${role}:${JSON.stringify({ type: "text", text })}`);
const sonnet = (u: { input: number; output: number; cacheRead?: number; cacheWrite?: number }) =>
  fakeDollars({ model: "claude-sonnet-5-5", cacheRead: 0, cacheWrite: 0, ...u });

describe("the baselines", () => {
  const events = [
    person("09:00", "Hi there"),
    reply("09:00", "Hello!"),
    person("09:02", "How are you?"),
    reply("09:02", "Good, thanks."),
    held("10:07"),
    person("11:00", "Back again"),
    reply("11:00", "Welcome back."),
  ];
  const s = estimateTokens(SYSTEM);
  const u1 = block("user", "Hi there");
  const a1 = block("assistant", "Hello!");
  const u2 = block("user", "How are you?");
  const a2 = block("assistant", "Good, thanks.");
  const u3 = block("user", "Back again");
  const hb = block("user", HEARTBEAT);
  const out = (text: string) => estimateTokens(text);

  it("bill the transcript bot for a whole-log replay per message, writing what the previous call left", () => {
    const { transcript } = baselineCosts(events, prompt, shippedPriceTable());
    const expected = [
      // 09:00: the first call has no previous content, so no breakpoint: all of it is input.
      sonnet({ input: s + u1, output: out("Hello!") }),
      // 09:02: breakpoint after "Hello!": written; the new message is input.
      sonnet({ cacheWrite: s + u1 + a1, input: u2, output: out("Good, thanks.") }),
      // 11:00: that entry expired two hours ago, so the whole log is written again.
      sonnet({ cacheWrite: s + u1 + a1 + u2 + a2, input: u3, output: out("Welcome back.") }),
    ];
    expect(transcript.calls).toBe(3);
    expect(transcript.dollars).toBeCloseTo(
      expected.reduce((a, b) => a + b, 0),
      12,
    );
  });

  it("bill the every-tick bot for the same calls plus a whole-log call with HEARTBEAT.md on each tick", () => {
    const { everyTick } = baselineCosts(events, prompt, shippedPriceTable());
    const expected = [
      sonnet({ input: s + u1, output: out("Hello!") }),
      sonnet({ cacheWrite: s + u1 + a1, input: u2, output: out("Good, thanks.") }),
      // 10:07, silent: the log through "Good, thanks." is written, HEARTBEAT.md is input.
      sonnet({ cacheWrite: s + u1 + a1 + u2 + a2, input: hb, output: SILENT_TICK_TOKENS }),
      // 11:00: the tick's entry is 53 minutes old: written again.
      sonnet({ cacheWrite: s + u1 + a1 + u2 + a2, input: u3, output: out("Welcome back.") }),
    ];
    expect(everyTick.calls).toBe(4);
    expect(everyTick.dollars).toBeCloseTo(
      expected.reduce((a, b) => a + b, 0),
      12,
    );
  });

  it("read the cache when the next call comes within five minutes", () => {
    const burst = [
      person("09:00", "Hi there"),
      reply("09:00", "Hello!"),
      person("09:02", "How are you?"),
      reply("09:02", "Good, thanks."),
      person("09:05", "Back again"),
      reply("09:05", "Welcome back."),
    ];
    const { transcript } = baselineCosts(burst, prompt, shippedPriceTable());
    const third = sonnet({
      cacheRead: s + u1 + a1,
      cacheWrite: u2 + a2,
      input: u3,
      output: out("Welcome back."),
    });
    const firstTwo =
      sonnet({ input: s + u1, output: out("Hello!") }) +
      sonnet({ cacheWrite: s + u1 + a1, input: u2, output: out("Good, thanks.") });
    expect(transcript.dollars).toBeCloseTo(firstTwo + third, 12);
  });

  it("compact a history past 150k tokens with one call that reads it all and writes a 10k summary", () => {
    const long = "word ".repeat(Math.ceil((COMPACT_AT_TOKENS * 3.5) / 5) + 1_000);
    const { transcript } = baselineCosts(
      [
        person("09:00", long),
        reply("09:00", "That is a lot."),
        person("09:01", "Yes."),
        reply("09:01", "Ok."),
      ],
      prompt,
      shippedPriceTable(),
    );
    expect(transcript.compactions).toBe(1);
    expect(transcript.calls).toBe(3);
    // The compaction's 10k output tokens alone cost $0.10 at Sonnet's price.
    expect(transcript.dollars).toBeGreaterThan(0.1 + (COMPACT_AT_TOKENS * 2) / 1e6);
  });
});
