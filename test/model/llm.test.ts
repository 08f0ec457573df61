import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import {
  ModelClient,
  ModelKeyRejectedError,
  ModelRequestError,
  ModelUnavailableError,
} from "../../src/model/llm.ts";
import type { ModelConfig } from "../../src/model/settings.ts";
import {
  fakeModelConfig,
  type MessagesApiFake,
  startMessagesApiFake,
  textReply,
} from "../../testkit/messages-api.ts";

let api: MessagesApiFake;
const clock = new SettableClock("2026-03-07T10:00:00.000Z");

beforeEach(async () => {
  api = await startMessagesApiFake();
});
afterEach(async () => {
  await api.close();
});

function config(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return fakeModelConfig(api, { maxRetries: 2, ...overrides });
}

const request = {
  model: "claude-sonnet-5-5",
  max_tokens: 100,
  messages: [{ role: "user" as const, content: "Hello" }],
};

// The simulations reach the fake through its in-process fetch; the SDK must see the same API either way.
describe.each([
  ["over the socket", () => ({ clock })],
  ["through the fake's in-process fetch", () => ({ clock, fetch: api.fetch })],
])("ModelClient %s", (_how, deps) => {
  it("talks to the API with the key as a Bearer token and returns the usage with cache fields", async () => {
    const client = new ModelClient(config(), deps());
    api.enqueue(
      textReply("Hi there", {
        input_tokens: 12,
        output_tokens: 3,
        cache_creation_input_tokens: 1500,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 1000 },
      }),
    );
    const { message, usage } = await client.create(request, "reply");
    expect(message.content).toEqual([expect.objectContaining({ type: "text", text: "Hi there" })]);
    expect(api.requests[0]?.headers.authorization).toBe(`Bearer ${api.apiKey}`);
    expect(api.requests[0]?.body).not.toHaveProperty("temperature");
    expect(usage).toEqual({
      ts: "2026-03-07T10:00:00.000Z",
      purpose: "reply",
      model: "claude-sonnet-5-5",
      input: 12,
      output: 3,
      cacheWrite: 1500,
      cacheWrite1h: 1000,
      cacheRead: 0,
    });
  });

  it("uses the cheaper model for reflection and judging", () => {
    const client = new ModelClient(config(), deps());
    expect(client.modelFor("reply")).toBe("claude-sonnet-5-5");
    expect(client.modelFor("heartbeat-write")).toBe("claude-sonnet-5-5");
    expect(client.modelFor("reflect")).toBe("claude-haiku-5-5");
    expect(client.modelFor("judge")).toBe("claude-haiku-5-5");
  });

  it("lets the SDK retry overload and rate limits, then succeeds", async () => {
    const client = new ModelClient(config(), deps());
    api.failNext("529", 1, { retryAfterMs: 1 });
    api.failNext("429", 1, { retryAfterMs: 1 });
    api.enqueue(textReply("made it"));
    const { message } = await client.create(request, "reply");
    expect(message.content[0]).toMatchObject({ text: "made it" });
    expect(api.requests.map((r) => r.outcome)).toEqual(["529", "429", "answered"]);
  });

  it.each([
    ["529", "overloaded"],
    ["500", "server error"],
    ["reset", "dropped connection"],
  ] as const)("throws ModelUnavailableError after the retries on %s (%s)", async (kind, _what) => {
    const client = new ModelClient(config({ maxRetries: 1 }), deps());
    api.failNext(kind, 2, { retryAfterMs: 1 });
    const error = await client.create(request, "reply").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect(api.requests).toHaveLength(2);
  });

  it("throws ModelUnavailableError when the answer is too slow", async () => {
    const client = new ModelClient(config({ maxRetries: 0, timeoutMs: 300 }), deps());
    api.failNext("slow", 1, { delayMs: 700 });
    api.enqueue(textReply("too late"));
    const error = await client.create(request, "reply").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).message).toContain("PRESENCE_MODEL_TIMEOUT_MS");
  });

  it("names ANTHROPIC_API_KEY when the key is rejected, without retrying", async () => {
    const client = new ModelClient(config({ apiKey: "wrong-key" }), deps());
    const error = await client.create(request, "reply").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as ModelRequestError).setting).toBe("ANTHROPIC_API_KEY");
    expect((error as Error).message).toMatch(/ANTHROPIC_API_KEY was rejected \(401\)/);
    expect(api.requests).toHaveLength(1);
  });

  it("is refused a prompt past the context window, and answered one just inside it", async () => {
    const client = new ModelClient(config(), deps());
    // About 3.5 characters a token: 700,000 of text is 200,000 tokens, 600,000 about 171,500.
    const prompt = (chars: number) => ({
      ...request,
      messages: [{ role: "user" as const, content: "a".repeat(chars) }],
    });
    const error = await client.create(prompt(700_000), "reply").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toContain("prompt is too long");
    api.enqueue(textReply("read it all"));
    const { message } = await client.create(prompt(600_000), "reply");
    expect(message.content[0]).toMatchObject({ text: "read it all" });
  });

  it("reports a request the API refuses as ModelRequestError with the API's words", async () => {
    const client = new ModelClient(config(), deps());
    const error = await client
      .create({ ...request, messages: [{ role: "assistant", content: "I start" }] }, "reply")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRequestError);
    expect((error as Error).message).toContain("first message must use the user role");
  });
});

it("through the fake's in-process fetch, the SDK reaches the fake without a socket", async () => {
  const client = new ModelClient(config({ baseURL: "http://127.0.0.1:1" }), { clock, fetch: api.fetch });
  api.enqueue(textReply("no socket needed"));
  const { message } = await client.create(request, "reply");
  expect(message.content[0]).toMatchObject({ text: "no socket needed" });
  expect(api.requests[0]?.headers.authorization).toBe(`Bearer ${api.apiKey}`);
});

describe("ModelClient.checkKey", () => {
  it("accepts a key the models endpoint accepts, with one lookup of PRESENCE_MODEL and no tokens", async () => {
    const client = new ModelClient(config(), { clock });
    expect(await client.checkKey()).toBeNull();
    expect(api.modelLookups).toEqual(["claude-sonnet-5-5"]);
    expect(api.requests).toHaveLength(0);
  });

  it("throws ModelKeyRejectedError naming ANTHROPIC_API_KEY for 401 and 403, without retrying", async () => {
    const rejected = await new ModelClient(config({ apiKey: "wrong" }), { clock }).checkKey().catch((e) => e);
    expect(rejected).toBeInstanceOf(ModelKeyRejectedError);
    expect(rejected).toMatchObject({ status: 401, setting: "ANTHROPIC_API_KEY" });
    expect(api.modelLookups).toHaveLength(1);
    api.failLookups("403");
    const forbidden = await new ModelClient(config(), { clock }).checkKey().catch((e) => e);
    expect(forbidden).toBeInstanceOf(ModelKeyRejectedError);
    expect(String(forbidden)).toMatch(/rejected ANTHROPIC_API_KEY \(403: .*\)\. The key is not allowed/);
  });

  it("only warns for a model the endpoint does not know, an overloaded API, or none at all", async () => {
    const typo = await new ModelClient(config({ model: "claude-sonet" }), { clock }).checkKey();
    expect(typo).toEqual({
      setting: "PRESENCE_MODEL",
      message: expect.stringContaining('PRESENCE_MODEL "claude-sonet" (404: model: claude-sonet)'),
    });
    api.failLookups("529");
    const overloaded = await new ModelClient(config(), { clock }).checkKey();
    expect(overloaded?.message).toMatch(/^could not check ANTHROPIC_API_KEY: .*529/);
    expect(api.modelLookups).toHaveLength(2);
    const nowhere = await new ModelClient(config({ baseURL: "http://127.0.0.1:1" }), { clock }).checkKey();
    expect(nowhere?.message).toMatch(/^could not check ANTHROPIC_API_KEY: could not reach the model API/);
  });
});
