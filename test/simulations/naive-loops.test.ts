import { describe, expect, it } from "vitest";
import { naiveLoopOps } from "../../simulations/naive-loops.ts";
import { initialMindState, type MindState } from "../../src/companion/mind-document.ts";
import { detectTopics } from "../../src/conversation/awareness/topics.ts";
import type { Message } from "../../src/core/message.ts";
import type { MemoryItem } from "../../src/mind/memory.ts";
import { memoryOpSchema } from "../../src/mind/memory.ts";
import { applyReflectionUpdate, reflectionPrompt } from "../../src/mind/reflect.ts";

/**
 * The naive model's one memory habit, read off the real reflection prompt (so a change to
 * the prompt's format shows here) and applied by the real reflection code.
 */

const now = new Date("2026-03-02T08:10:00.000Z");
const zone = "Europe/Berlin";

function said(id: string, text: string): Message {
  return { id, ts: now.toISOString(), role: "user", text, channel: "simulation" };
}

function loop(id: string, text: string): MemoryItem {
  return {
    id,
    kind: "open_loop",
    text,
    learnedAt: now.toISOString(),
    sourceMessageIds: [],
    importance: 3,
    topics: detectTopics(text),
  };
}

function mindWith(memory: MemoryItem[]): MindState {
  return { ...initialMindState(now), memory };
}

function opsFor(mind: MindState, ...messages: Message[]) {
  const prompt = reflectionPrompt(mind, messages, [], now, zone)
    .map((s) => s.text)
    .join("\n\n");
  return naiveLoopOps(prompt);
}

function apply(mind: MindState, messages: Message[]) {
  const ops = opsFor(mind, ...messages);
  const outcome = applyReflectionUpdate(
    { memory: ops },
    {
      mind,
      exchange: { messageIds: messages.map((m) => m.id), trigger: "reply", evicting: [] },
      messages,
      now,
      newItemId: () => "m-new",
      topicsOf: detectTopics,
    },
  );
  if (!outcome.ok) throw new Error(outcome.reason);
  return outcome.memory;
}

describe("naiveLoopOps", () => {
  it("opens a loop from the sentence that names a day ahead, and the reflection code accepts it", () => {
    const memory = apply(mindWith([]), [
      said("u1", "Heads up: flying to Tokyo tomorrow morning, back Friday. Need coffee."),
    ]);
    expect(memory).toEqual([
      expect.objectContaining({
        id: "m-new",
        kind: "open_loop",
        text: "Heads up: flying to Tokyo tomorrow morning, back Friday.",
      }),
    ]);
  });

  it("leaves sentences that only mention a day, or say nothing of plans, alone", () => {
    expect(opsFor(mindWith([]), said("u1", "Lazy Saturday."), said("u2", "Sunday brunch today."))).toEqual(
      [],
    );
    expect(opsFor(mindWith([]), said("u1", "Drinking water, yes."))).toEqual([]);
  });

  it("closes the open loop that shares the most words with a message saying it is done", () => {
    const mind = mindWith([
      loop("trip", "Flying to Tokyo tomorrow, back Friday."),
      loop("slides", "Prepare the talk slides."),
    ]);
    expect(opsFor(mind, said("u1", "Slides done! Packing now."))).toEqual([
      { op: "close", id: "slides", note: "Slides done! Packing now." },
    ]);
    const memory = apply(mind, [said("u1", "Slides done! Packing now.")]);
    expect(memory.find((m) => m.id === "slides")?.retiredWhy).toBe("closed");
    expect(memory.find((m) => m.id === "trip")?.retiredAt).toBeUndefined();
  });

  it("closes the first open loop listed when a done message shares no word with any", () => {
    const mind = mindWith([loop("trip", "Flying to Tokyo tomorrow, back Friday.")]);
    expect(opsFor(mind, said("u1", "Home again. Exhausted but happy."))).toEqual([
      { op: "close", id: "trip", note: "Home again. Exhausted but happy." },
    ]);
    expect(opsFor(mindWith([]), said("u1", "Home again."))).toEqual([]);
  });

  it("only ever proposes operations the memory schema accepts", () => {
    const ops = opsFor(
      mindWith([loop("a", "Finish the report.")]),
      said("u1", `${"A very long plan for tomorrow ".repeat(20)}.`),
      said("u2", "Report finished."),
    );
    expect(ops.map((op) => op.op)).toEqual(["add", "close"]);
    for (const op of ops) expect(memoryOpSchema.safeParse(op).success).toBe(true);
  });
});
