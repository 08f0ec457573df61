import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TopicVerdict } from "../../src/conversation/topic-guard.ts";
import { SettableClock } from "../../src/core/clock.ts";
import {
  type CheckinGeneration,
  type DecideStep,
  EMPTY_REPLY_NUDGE,
  generateCheckin,
  generateReply,
  MAX_TOOL_ROUNDS,
} from "../../src/mind/generate.ts";
import { NOTES_TOOLS } from "../../src/mind/notes-tools.ts";
import { REFLECT_TOOL } from "../../src/mind/reflect.ts";
import { ModelClient, ModelRequestError } from "../../src/model/llm.ts";
import { loadPersona } from "../../src/model/persona.ts";
import { buildStablePrefix } from "../../src/model/prompts.ts";
import { NotesStore } from "../../src/store/notes.ts";
import {
  fakeModelConfig,
  type MessagesApiFake,
  type MessagesRequestBody,
  startMessagesApiFake,
  textReply,
  toolReply,
} from "../../testkit/messages-api.ts";
import { tempDataDir } from "../store/helpers.ts";

const clock = new SettableClock("2026-03-07T10:00:00.000Z");
const prefix = buildStablePrefix(await loadPersona(), { notes: NOTES_TOOLS, reflect: REFLECT_TOOL });
let api: MessagesApiFake;
let notes: NotesStore;
let llm: ModelClient;

beforeEach(async () => {
  api = await startMessagesApiFake();
  notes = new NotesStore({ dataDir: await tempDataDir() });
  llm = new ModelClient(fakeModelConfig(api), { clock });
});
afterEach(async () => {
  expect(api.problems).toEqual([]);
  await api.close();
});

function params(text = "How was the run?"): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model: "claude-sonnet-5-5",
    max_tokens: 500,
    system: prefix.system,
    tools: prefix.tools,
    messages: [{ role: "user", content: text }],
  };
}

const deps = () => ({ llm, notes });
const replyOptions = { promptTokens: 3_000, ceiling: 12_000, reflectToolName: REFLECT_TOOL.name, waiting: 1 };
const allow = (): TopicVerdict => ({ allow: true, topics: [] });
/** The decision on the same model as the message, its prefix marked as the message's is. */
const sameModel: DecideStep = { model: "claude-sonnet-5-5", prefixCache: "5m" };

/** Every way a model has been seen to leak, each around the same real message. */
const LEAKS = [
  "<thinking>they went quiet after lunch</thinking>How did the run feel?",
  "<reasoning>ask about the run</reasoning>\nHow did the run feel?",
  "How did the run feel?\n<scratchpad>note: 5k",
  "Decision: send\nTopic: running\nHow did the run feel?",
  "YES_MESSAGE\nHow did the run feel?",
  "[SEND] How did the run feel? HEARTBEAT_OK",
  "Reasoning: the user ran this morning and I should follow up.\n\nMessage: How did the run feel?",
  "The user mentioned a run this morning; I should ask how it went.\n---\nHow did the run feel?",
];

describe("generateReply", () => {
  it("answers with one call, tools offered but not forced", async () => {
    api.enqueue(textReply("It sounds like it went well!"));
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBe("It sounds like it went well!");
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]?.body.tool_choice).toEqual({ type: "auto" });
    expect(result.usage).toHaveLength(1);
  });

  it("runs notes tools in bounded rounds with every tool_use answered by its tool_result", async () => {
    api.enqueue(
      toolReply("notes_write", { key: "run-plan", text: "Mon 5k, Wed 8k" }),
      toolReply("notes_read", { key: "../../etc/passwd" }),
      {
        content: [
          { type: "tool_use", name: "notes_list", input: {} },
          { type: "tool_use", name: "notes_read", input: { key: "run-plan" } },
        ],
      },
      textReply("Saved your plan: Mon 5k, Wed 8k."),
    );
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBe("Saved your plan: Mon 5k, Wed 8k.");
    expect(await notes.read("run-plan")).toBe("Mon 5k, Wed 8k");
    expect(result.toolCalls.map((c) => [c.name, c.isError])).toEqual([
      ["notes_write", false],
      ["notes_read", true],
      ["notes_list", false],
      ["notes_read", false],
    ]);
    const last = api.requests.at(-1)?.body as MessagesRequestBody;
    const results = last.messages.at(-1)?.content as Array<Record<string, unknown>>;
    expect(results.map((b) => b.type)).toEqual(["tool_result", "tool_result"]);
    expect(String(results[1]?.content)).toBe("Mon 5k, Wed 8k");
  });

  it("forces a text answer after the last allowed round", async () => {
    api.setHandler((body) =>
      body.tool_choice?.type === "none" ? textReply("Here is what I have.") : toolReply("notes_list", {}),
    );
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBe("Here is what I have.");
    expect(api.requests).toHaveLength(MAX_TOOL_ROUNDS + 1);
    expect(api.requests.at(-1)?.body.tool_choice).toEqual({ type: "none" });
  });

  it("asks once more, saying why, when the answer is all leakage", async () => {
    const leak = "<thinking>the user is tired</thinking>\nNO_MESSAGE";
    api.enqueue(textReply(leak), textReply("Rest well tonight."));
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result).toMatchObject({ text: "Rest well tonight.", nudged: { raw: leak } });
    expect(api.requests).toHaveLength(2);
    expect(api.problems).toEqual([]);
    const retry = api.requests[1]?.body as MessagesRequestBody;
    expect(retry.tool_choice).toEqual({ type: "none" });
    expect(retry.messages.slice(-2)).toEqual([
      { role: "assistant", content: leak },
      { role: "user", content: EMPTY_REPLY_NUDGE },
    ]);
    expect(result.usage).toHaveLength(2);
  });

  it("gives up after the one nudge when the second answer is all leakage too", async () => {
    api.enqueue(textReply(""), textReply("NO_REPLY"));
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBeNull();
    expect(api.requests).toHaveLength(2);
    expect(api.problems).toEqual([]);
  });

  it("tells a reply that calls a check-in tool to answer in text", async () => {
    api.enqueue(
      toolReply("decide_checkin", { send: true, why: "x", topic: "y" }),
      textReply("Sorry — yes, it went well!"),
    );
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBe("Sorry — yes, it went well!");
    expect(result.toolCalls[0]).toMatchObject({ name: "decide_checkin", isError: true });
  });

  it("captures a single-phase reflection that rides along with the answer", async () => {
    api.enqueue(
      toolReply(REFLECT_TOOL.name, { trajectory_now: "Talking about the run" }, { text: "Nice pace!" }),
    );
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBe("Nice pace!");
    expect(result.reflection).toEqual({ trajectory_now: "Talking about the run" });
    expect(api.requests).toHaveLength(1);
  });

  it.each(LEAKS)("never lets a leak through: %j", async (leaky) => {
    api.enqueue(textReply(leaky));
    const result = await generateReply(params(), deps(), replyOptions);
    expect(result.text).toBe("How did the run feel?");
    expect(result.raw).toBe(leaky);
    expect(result.removed.length).toBeGreaterThan(0);
  });
});

describe("generateCheckin", () => {
  it("costs one small forced call and sends nothing when the model declines", async () => {
    api.enqueue(
      toolReply("decide_checkin", { send: false, why: "They said they'd be in meetings", topic: "" }),
    );
    const result = await generateCheckin(params("[Check-in moment]"), deps(), allow, sameModel);
    expect(result).toMatchObject({ stage: "declined", decision: { send: false } });
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]?.body.tool_choice).toMatchObject({ type: "tool", name: "decide_checkin" });
    expect(api.requests[0]?.body.max_tokens).toBeLessThanOrEqual(300);
  });

  it("stops after the decision when the topic guard holds it back", async () => {
    api.enqueue(toolReply("decide_checkin", { send: true, why: "follow up", topic: "water" }));
    const guard = (topic: string): TopicVerdict => ({
      allow: false,
      reason: "already-answered",
      detail: `answered ${topic}`,
      topics: ["hydration"],
    });
    const result = await generateCheckin(params("[Check-in moment]"), deps(), guard, sameModel);
    expect(result).toMatchObject({ stage: "held", verdict: { reason: "already-answered" } });
    expect(api.requests).toHaveLength(1);
  });

  it("returns each call's usage, and a failed write's error carries what the decision spent", async () => {
    api.enqueue(toolReply("decide_checkin", { send: false, why: "not now", topic: "" }));
    const declined = await generateCheckin(params("[Check-in moment]"), deps(), allow, sameModel);
    expect(declined.usage).toEqual([
      expect.objectContaining({ purpose: "heartbeat-decide", ts: "2026-03-07T10:00:00.000Z" }),
    ]);

    api.setHandler(() => {
      api.failNext("400", 1);
      return toolReply("decide_checkin", { send: true, why: "follow up", topic: "running" });
    });
    const error = await generateCheckin(params("[Check-in moment]"), deps(), allow, sameModel).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as ModelRequestError).spentBefore).toEqual([
      expect.objectContaining({ purpose: "heartbeat-decide", input: expect.any(Number) }),
    ]);
    expect(api.requests.map((r) => r.outcome)).toEqual(["answered", "answered", "400"]);
  });

  it.each(LEAKS)("writes only the message through a forced write_message call: %j", async (leaky) => {
    api.enqueue(
      toolReply("decide_checkin", { send: true, why: "they ran this morning", topic: "running" }),
      toolReply("write_message", { message: leaky }),
    );
    const result: CheckinGeneration = await generateCheckin(
      params("[Check-in moment]"),
      deps(),
      allow,
      sameModel,
    );
    expect(result).toMatchObject({ stage: "write", text: "How did the run feel?" });
    const write = api.requests[1]?.body as MessagesRequestBody;
    expect(write.tool_choice).toMatchObject({ type: "tool", name: "write_message" });
    expect(write.tools).toEqual(api.requests[0]?.body.tools);
    expect(write.system).toEqual(api.requests[0]?.body.system);
  });

  it("sends nothing when the written message is nothing but leakage", async () => {
    api.enqueue(
      toolReply("decide_checkin", { send: true, why: "x", topic: "sleep" }),
      toolReply("write_message", { message: "<thinking>maybe not</thinking> NO_MESSAGE" }),
    );
    const result = await generateCheckin(params("[Check-in moment]"), deps(), allow, sameModel);
    expect(result.stage).toBe("empty");
  });

  it("decides on the cheaper model with its prefix unmarked, and writes on the main model", async () => {
    api.enqueue(
      toolReply("decide_checkin", { send: true, why: "they ran this morning", topic: "running" }),
      toolReply("write_message", { message: "How did the run feel?" }),
    );
    const result = await generateCheckin(params("[Check-in moment]"), deps(), allow, {
      model: "claude-haiku-5-5",
      prefixCache: "none",
    });
    expect(result).toMatchObject({ stage: "write", text: "How did the run feel?" });
    const [decide, write] = api.requests.map((r) => r.body);
    expect(decide?.model).toBe("claude-haiku-5-5");
    expect(JSON.stringify(decide?.system)).not.toContain("cache_control");
    expect(write?.model).toBe("claude-sonnet-5-5");
    expect(write?.system).toEqual(prefix.system);
    expect(result.usage.map((u) => [u.purpose, u.model])).toEqual([
      ["heartbeat-decide", "claude-haiku-5-5"],
      ["heartbeat-write", "claude-sonnet-5-5"],
    ]);
  });

  it("treats a malformed decision as no check-in", async () => {
    api.enqueue(toolReply("decide_checkin", { send: "yes please" }));
    const result = await generateCheckin(params("[Check-in moment]"), deps(), allow, sameModel);
    expect(result.stage).toBe("invalid-decision");
    expect(api.requests).toHaveLength(1);
  });
});
