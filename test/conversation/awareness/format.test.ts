import { describe, expect, it } from "vitest";
import { buildAwarenessContext } from "../../../src/conversation/awareness/build.ts";
import {
  type AwarenessSettings,
  defaultAwarenessSettings,
} from "../../../src/conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../../../src/conversation/awareness/format.ts";
import type { Message } from "../../../src/core/message.ts";
import { estimateTokens } from "../../../src/model/tokens.ts";
import { loadSituationLog } from "./lenient.ts";

const madridHeartbeat: AwarenessSettings = {
  ...defaultAwarenessSettings,
  timezone: "Europe/Madrid",
  trigger: "heartbeat",
};

/** Words that would turn a fact into advice; quoted messages are left out before looking. */
const ADVICE = /\b(?:should|must|don't|do not|avoid|try to|consider|remember to|make sure|instead)\b/i;

function outsideQuotes(block: string): string {
  return block.replace(/"[^"]*"/g, '""');
}

describe("formatAwarenessForPrompt: the full block", () => {
  const log = loadSituationLog("hydration-pings.log.json");
  const ctx = buildAwarenessContext(log, new Date("2026-02-07T14:22:00+01:00"), madridHeartbeat);
  const block = formatAwarenessForPrompt(ctx, "heartbeat");

  it("shows its own unanswered messages at the person's local times, then theirs, then the observations", () => {
    expect(block).toContain("Now: Saturday 2:22 PM (afternoon, weekend), Europe/Madrid");
    expect(block).toContain("Since their last message (8:39 AM, 5h 43m ago), you sent 3 messages:");
    expect(block).toContain('- 10:23 AM, asking: "How\'s the water intake looking this morning?"');
    expect(block).toContain("- 12:07 PM, asking:");
    expect(block).toContain('- Last message (8:39 AM, 5h 43m ago): "Good morning. Just waking up now."');
    expect(block).toContain("- Replies to your 3 messages since: none");
    expect(block).toContain("- You have asked about hydration 3 times without a response");
    // Each asked about water; the eating window was only mentioned beside the question.
    expect(block).toContain("- You have brought up food 2 times without a response");
    const order = ["### Your recent activity", "### Their recent activity", "### Observations"].map((h) =>
      block.indexOf(h),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order[0]).toBeGreaterThan(0);
  });

  it("quotes a question still waiting as the question, and says when nothing it sent asked anything", () => {
    const at = (hhmm: string) => `2026-02-12T${hhmm}:00+01:00`;
    /** The full block at 9:07 after the person's 7:50 message and the companion's 7:51 one. */
    const blockAfter = (sent: Partial<Message> & { text: string }) =>
      formatAwarenessForPrompt(
        buildAwarenessContext(
          [
            {
              id: "u1",
              ts: at("07:50"),
              role: "user",
              text: "Morning! Slept well for once.",
              channel: "telegram",
            },
            { id: "a1", ts: at("07:51"), role: "assistant", trigger: "reply", channel: "telegram", ...sent },
          ],
          new Date(at("09:07")),
          { ...madridHeartbeat, timezone: "Europe/Berlin" },
        ),
        "heartbeat",
      );

    // Cut to its opening, the message hid its question.
    const asked = blockAfter({
      text: "Morning! That \"for once\" says a lot, so I'm glad last night was one of the good ones. What's the day looking like?",
    });
    expect(asked).toContain('- 7:51 AM, asking: "What\'s the day looking like?"');
    expect(asked).toContain("- Replies to your 1 message since: none\n");

    const quiet = blockAfter({ text: "Glad to hear it. I'll keep out of your way this morning." });
    expect(quiet).toContain('- 7:51 AM: "Glad to hear it. I\'ll keep out of your way this morning."');
    expect(quiet).toContain("- Replies to your 1 message since: none (it asked nothing)");

    // A check-in that hopes invites an answer, as the topic guard counts it: nothing is said.
    const hope = blockAfter({ trigger: "heartbeat", text: "Hope the interview went well!" });
    expect(hope).toContain('- 7:51 AM: "Hope the interview went well!"');
    expect(hope).toContain("- Replies to your 1 message since: none\n");
  });

  it("says that neither side has written when the log is empty, not that the person has", () => {
    const empty = formatAwarenessForPrompt(
      buildAwarenessContext([], new Date("2026-02-07T08:07:00+01:00"), madridHeartbeat),
      "heartbeat",
    );
    expect(empty).toContain("You have not written yet.");
    expect(empty).toContain("- They have not written yet");
    expect(empty).not.toContain("since their last message");
    // Their first message in a slice of the log: the companion may have written before it.
    const first = formatAwarenessForPrompt(
      buildAwarenessContext(
        [{ id: "u1", ts: "2026-02-07T07:20:00Z", role: "user", text: "Morning!", channel: "telegram" }],
        new Date("2026-02-07T07:20:05Z"),
        { ...madridHeartbeat, trigger: "reply" },
      ),
      "reply",
    );
    expect(first).toContain("### Your recent activity\nYou have not written since their last message.");
  });

  it("names a question of the companion's that their later messages did not answer, as reflection read them", () => {
    const messages: Message[] = [
      {
        id: "a",
        ts: "2026-02-11T07:20:00Z",
        role: "user",
        text: "Morning! Water and tea already.",
        channel: "telegram",
        annotations: { topics: ["hydration"], question: false, tone: "neutral" },
      },
      {
        id: "b",
        ts: "2026-02-11T07:20:30Z",
        role: "assistant",
        text: "Good start! Water and tea before half eight is more than most manage on a weekday. What kind of tea is it? Enjoy it.",
        channel: "telegram",
      },
      {
        id: "c",
        ts: "2026-02-11T12:40:00Z",
        role: "user",
        text: "Refilled my water bottle.",
        channel: "telegram",
        annotations: { topics: ["hydration"], question: false, tone: "neutral" },
      },
      { id: "d", ts: "2026-02-11T12:40:30Z", role: "assistant", text: "Nice.", channel: "telegram" },
    ];
    const rendered = formatAwarenessForPrompt(
      buildAwarenessContext(messages, new Date("2026-02-11T15:07:00Z"), madridHeartbeat),
      "heartbeat",
    );
    expect(rendered).toContain(
      'Your question their later messages did not answer:\n- 8:20 AM: "What kind of tea is it?"',
    );
  });

  it("states facts and gives no advice", () => {
    expect(outsideQuotes(block)).not.toMatch(ADVICE);
  });

  it("shows prior context only when memory has some", () => {
    expect(block).not.toContain("prior context");
    const memory = {
      declaredPatterns: ["Weekends are looser"],
      openLoops: ["Moltbook post"],
      recentMilestones: [],
    };
    const withMemory = buildAwarenessContext(
      log,
      new Date("2026-02-07T14:22:00+01:00"),
      madridHeartbeat,
      memory,
    );
    const rendered = formatAwarenessForPrompt(withMemory, "heartbeat");
    expect(rendered).toContain("### Notable prior context");
    expect(rendered).toContain("- Declared pattern: Weekends are looser");
    expect(rendered).toContain("- Open loop: Moltbook post");
  });

  it("names yesterday by its local day across the night the clocks change", () => {
    const dst = buildAwarenessContext(
      loadSituationLog("dst-change.log.json"),
      new Date("2026-03-29T10:00:00+02:00"),
      madridHeartbeat,
    );
    expect(formatAwarenessForPrompt(dst, "heartbeat")).toContain("(yesterday 11:35 PM, 9h 25m ago)");
  });
});

describe("formatAwarenessForPrompt: the slim block", () => {
  const log = loadSituationLog("warm-turning-terse.log.json");
  const ctx = buildAwarenessContext(log, new Date("2026-02-11T13:00:00Z"), {
    ...defaultAwarenessSettings,
    timezone: "Europe/London",
    trigger: "reply",
  });

  it("is used in an active conversation: last exchanges, time in conversation, current topic", () => {
    const block = formatAwarenessForPrompt(ctx, "reply");
    expect(ctx.format).toBe("slim");
    expect(block).toContain("## Recent context (active conversation)");
    expect(block).toContain('- 12:50 PM them: "k"');
    expect(block).toContain('- 12:46 PM you: "Glad it\'s behind you. Want to talk it through?"');
    expect(block).toContain("Time in conversation: 30m");
    expect(block).toContain(`Latest topic: "presentation"`);
    expect(block).not.toContain("### Your recent activity");
    expect(outsideQuotes(block)).not.toMatch(ADVICE);
  });

  it("names every topic of the latest message when it had several, not an arbitrary one", () => {
    const both = buildAwarenessContext(
      [
        {
          id: "a",
          role: "user",
          text: "slept 7h and had two glasses of water",
          ts: "2026-02-11T07:50:00Z",
          channel: "telegram",
        },
      ],
      new Date("2026-02-11T07:51:00Z"),
      { ...defaultAwarenessSettings, timezone: "Europe/London", trigger: "reply" },
    );
    expect(both.conversationState.currentTopics).toEqual(["sleep", "hydration"]);
    const slim = {
      ...ctx,
      conversationState: { ...ctx.conversationState, currentTopics: ["sleep", "hydration"] },
    };
    expect(formatAwarenessForPrompt(slim, "reply")).toContain("Latest topics: sleep, hydration");
    // The full block lists their topics under their activity, never the latest of either side,
    // which may be the companion's own unanswered ping.
    expect(formatAwarenessForPrompt(both, "heartbeat")).not.toContain("Latest topic");
  });

  it("gives way to the full block for a heartbeat", () => {
    expect(formatAwarenessForPrompt(ctx, "heartbeat")).toContain("## Conversational awareness");
  });
});

describe("formatAwarenessForPrompt: size", () => {
  it("keeps the full block of a busy day well under 600 tokens (550 here)", () => {
    const words =
      "and then we talked about the launch, the water, the long walk and how tired I was after it";
    const log: Message[] = [];
    const first = Date.parse("2026-02-06T06:00:00Z");
    for (let i = 0; i < 300; i += 1) {
      const role = i < 290 && i % 2 === 0 ? "user" : "assistant";
      const ts = new Date(first + i * 9 * 60_000).toISOString();
      log.push({ id: `m${i}`, ts, role, text: `${words} ${words} (${i})`, channel: "telegram" });
    }
    const memory = {
      declaredPatterns: ["Weekends are looser", "Mornings are for deep work"],
      openLoops: ["Moltbook registration: registered, not posted yet"],
      recentMilestones: ["Shipped the first version of the 3 Is Different project"],
    };
    const now = new Date(first + 300 * 9 * 60_000);
    const ctx = buildAwarenessContext(log, now, madridHeartbeat, memory);
    const block = formatAwarenessForPrompt(ctx, "heartbeat");
    expect(ctx.conversationState.unansweredCount).toBe(11);
    expect(block).toContain("(8 earlier messages not shown)");
    expect(estimateTokens(block)).toBeLessThan(550);
  });
});

describe("formatAwarenessForPrompt: media", () => {
  it("quotes a captioned photo, voice note or document with its caption once", () => {
    const at = (minutes: number) =>
      new Date(Date.parse("2026-02-07T09:00:00Z") + minutes * 60_000).toISOString();
    const log: Message[] = [
      {
        id: "a",
        ts: at(0),
        role: "user",
        channel: "telegram",
        text: "my garden",
        media: { kind: "photo", caption: "my garden" },
      },
      { id: "b", ts: at(1), role: "assistant", channel: "telegram", trigger: "reply", text: "Lovely!" },
      {
        id: "c",
        ts: at(2),
        role: "user",
        channel: "telegram",
        text: "[document: plan.pdf] for Monday",
        media: { kind: "document", fileName: "plan.pdf", caption: "for Monday" },
      },
    ];
    const ctx = buildAwarenessContext(log, new Date(at(5)), {
      ...defaultAwarenessSettings,
      timezone: "UTC",
      trigger: "reply",
    });
    const block = formatAwarenessForPrompt(ctx, "reply");
    expect(block.split("for Monday").length - 1).toBe(1);
    expect(block.split("my garden").length - 1).toBe(1);
    expect(block).toContain('"[document: plan.pdf] for Monday"');
  });
});
