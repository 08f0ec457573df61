import { describe, expect, it } from "vitest";
import { LEAK_EVERY, minimalObject, NaiveModel, ROTATION } from "../../simulations/naive-model.ts";
import { REFLECT_TOOL } from "../../src/mind/reflect.ts";
import { guardOutgoing } from "../../src/model/leak-guard.ts";
import { DECIDE_CHECKIN_TOOL, WRITE_MESSAGE_TOOL } from "../../src/model/prompts.ts";
import type { FakeResponse, MessagesRequestBody } from "../../testkit/messages-api.ts";

/** The naive model must be predictable and deliberately tactless, whatever the prompt says. */

const user = (text: string): MessagesRequestBody["messages"] => [{ role: "user", content: text }];
const forced = (tool: { name: string; input_schema: unknown }, text = "anything"): MessagesRequestBody => ({
  model: "m",
  max_tokens: 100,
  messages: user(text),
  tools: [tool as NonNullable<MessagesRequestBody["tools"]>[number]],
  tool_choice: { type: "tool", name: tool.name },
});
const plain = (text: string): MessagesRequestBody => ({ model: "m", max_tokens: 100, messages: user(text) });

function toolInput(response: FakeResponse): Record<string, unknown> {
  const block = response.content.find((b) => b.type === "tool_use");
  if (block?.type !== "tool_use") throw new Error("expected a tool call");
  return block.input;
}

function textOf(response: FakeResponse): string {
  const block = response.content.find((b) => b.type === "text");
  if (block?.type !== "text") throw new Error("expected text");
  return block.text;
}

/** One check-in as the companion runs it: decide, then write. */
function checkIn(model: NaiveModel): { topic: unknown; message: string } {
  const decision = toolInput(
    model.respond(forced(DECIDE_CHECKIN_TOOL, "You asked three times already. Stop.")),
  );
  expect(decision.send).toBe(true);
  const message = String(toolInput(model.respond(forced(WRITE_MESSAGE_TOOL))).message);
  model.endTurn();
  return { topic: decision.topic, message };
}

describe("NaiveModel", () => {
  it("always decides to send and rotates through the topics, ignoring what the prompt says", () => {
    const model = new NaiveModel();
    const topics = Array.from({ length: ROTATION.length + 2 }, () => checkIn(model).topic);
    expect(topics).toEqual([...ROTATION, ROTATION[0], ROTATION[1]]);
  });

  it("is deterministic: two models given the same requests say the same words", () => {
    const a = new NaiveModel();
    const b = new NaiveModel();
    const run = (m: NaiveModel) => Array.from({ length: 12 }, () => checkIn(m).message);
    expect(run(a)).toEqual(run(b));
  });

  it(`leaks internal reasoning into every ${LEAK_EVERY}th check-in, in a form the leak guard removes`, () => {
    const model = new NaiveModel();
    const messages = Array.from({ length: LEAK_EVERY * 2 }, () => checkIn(model).message);
    const leaky = messages.filter((m) => /<thinking>|^Reasoning:/m.test(m));
    expect(leaky).toEqual([messages[LEAK_EVERY - 1], messages[LEAK_EVERY * 2 - 1]]);
    expect(model.stats.leaks).toBe(2);
    for (const text of leaky) {
      const guarded = guardOutgoing(text);
      expect(guarded.removed.length).toBeGreaterThan(0);
      expect(guarded.text).not.toMatch(/thinking|Reasoning|rotation/);
    }
  });

  it("answers a person's message generically, without a question", () => {
    const model = new NaiveModel();
    const reply = textOf(model.respond(plain("My cat died this morning.")));
    expect(reply).not.toContain("?");
    expect(reply).not.toMatch(/cat/i);
  });

  it("forgets a decided topic at the end of a turn, so a held check-in never turns into a reply", () => {
    const model = new NaiveModel();
    model.respond(forced(DECIDE_CHECKIN_TOOL));
    model.endTurn();
    const reply = textOf(model.respond(plain("hi")));
    expect(reply).not.toContain("?");
    expect(model.stats.checkinTexts).toBe(0);
  });

  it("reflects with the smallest update the reflection tool accepts", () => {
    const model = new NaiveModel();
    const update = toolInput(model.respond(forced(REFLECT_TOOL)));
    expect(update).toEqual(minimalObject(REFLECT_TOOL.input_schema as Parameters<typeof minimalObject>[0]));
    expect(model.stats.reflections).toBe(1);
  });

  it("adds its one word-matched open loop to an otherwise minimal reflection", () => {
    const prompt = "<exchange>\n[u1] Mon 2 Mar 09:10 person: Flying out tomorrow.\n</exchange>";
    const update = toolInput(new NaiveModel().respond(forced(REFLECT_TOOL, prompt)));
    expect(update).toEqual({
      ...minimalObject(REFLECT_TOOL.input_schema as Parameters<typeof minimalObject>[0]),
      memory: [{ op: "add", kind: "open_loop", text: "Flying out tomorrow.", importance: 3 }],
    });
  });

  it("fills required fields of any schema at their simplest", () => {
    expect(
      minimalObject({
        type: "object",
        required: ["a", "b", "c", "d"],
        properties: {
          a: { type: "string", minLength: 3 },
          b: { enum: ["HIGH", "LOW"] },
          c: { type: "array", minItems: 1, items: { type: "integer", minimum: 2 } },
          d: { type: "object", required: ["e"], properties: { e: { type: "boolean" } } },
          optional: { type: "string" },
        },
      }),
    ).toEqual({ a: "nnn", b: "HIGH", c: [2], d: { e: false } });
  });
});
