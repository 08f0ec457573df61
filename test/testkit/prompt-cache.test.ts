import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import { type MessagesApiFake, startMessagesApiFake, textReply } from "../../testkit/messages-api.ts";

/**
 * The Messages API fake's prompt cache, through the real SDK on a virtual clock: what a
 * cached prefix costs depends on how long ago the same bytes were last written or read.
 */

let api: MessagesApiFake | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const START = "2026-10-20T09:00:00.000Z";

/** About `tokens` tokens of stable text (3.5 characters a token). */
function filler(tokens: number, seed = "x"): string {
  return `${seed} `.repeat(Math.ceil((tokens * 3.5) / (seed.length + 1)));
}

async function setup(): Promise<{ clock: SettableClock; sdk: Anthropic }> {
  const clock = new SettableClock(START);
  api = await startMessagesApiFake({ clock });
  api.setHandler(() => textReply("ok"));
  return { clock, sdk: new Anthropic({ apiKey: api.apiKey, baseURL: api.url, maxRetries: 0 }) };
}

type Ttl = "5m" | "1h";

/** One request whose system prompt (a breakpoint at its end) is `systemTokens` long. */
function ask(
  sdk: Anthropic,
  options: { systemTokens?: number; ttl?: Ttl; model?: string; question?: string; seed?: string } = {},
) {
  const cache_control =
    options.ttl === "1h"
      ? { type: "ephemeral" as const, ttl: "1h" as const }
      : { type: "ephemeral" as const };
  return sdk.messages.create({
    model: options.model ?? "claude-sonnet-5-5",
    max_tokens: 100,
    system: [{ type: "text", text: filler(options.systemTokens ?? 2_000, options.seed), cache_control }],
    messages: [{ role: "user", content: options.question ?? "How are you?" }],
  });
}

const cacheOf = (m: Anthropic.Message) => ({
  read: m.usage.cache_read_input_tokens,
  written: m.usage.cache_creation_input_tokens,
  written1h: m.usage.cache_creation?.ephemeral_1h_input_tokens,
});

describe("the Messages API fake's prompt cache", () => {
  it("reads a prefix written less than five minutes ago", async () => {
    const { clock, sdk } = await setup();
    const first = await ask(sdk);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1_900);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    clock.advanceMinutes(4.9);
    const second = await ask(sdk, { question: "And now?" });
    expect(cacheOf(second)).toEqual({
      read: first.usage.cache_creation_input_tokens,
      written: 0,
      written1h: 0,
    });
    expect(second.usage.input_tokens).toBeLessThan(20);
  });

  it("writes it again once five minutes have passed without a read", async () => {
    const { clock, sdk } = await setup();
    const first = await ask(sdk);
    clock.advanceMinutes(5);
    const second = await ask(sdk);
    expect(cacheOf(second)).toEqual({
      read: 0,
      written: first.usage.cache_creation_input_tokens,
      written1h: 0,
    });
  });

  it("starts the five minutes again on every hit", async () => {
    const { clock, sdk } = await setup();
    await ask(sdk);
    for (let i = 0; i < 3; i++) {
      clock.advanceMinutes(4);
      expect((await ask(sdk)).usage.cache_read_input_tokens).toBeGreaterThan(1_900);
    }
    // Read twelve minutes after the write, because each read kept it; gone 5.5 minutes after the last.
    clock.advanceMinutes(5.5);
    expect((await ask(sdk)).usage.cache_read_input_tokens).toBe(0);
  });

  it("caches nothing below the model's minimum cacheable length", async () => {
    const { clock, sdk } = await setup();
    // About 1,500 tokens: over Sonnet's 1,024, under Haiku's 2,048.
    for (let i = 0; i < 2; i++) {
      const small = await ask(sdk, { model: "claude-haiku-5-5", systemTokens: 1_500 });
      expect(cacheOf(small)).toEqual({ read: 0, written: 0, written1h: 0 });
      expect(small.usage.input_tokens).toBeGreaterThan(1_400);
    }
    clock.advanceMinutes(1);
    expect((await ask(sdk, { systemTokens: 1_500 })).usage.cache_creation_input_tokens).toBeGreaterThan(
      1_400,
    );
    expect((await ask(sdk, { systemTokens: 1_500 })).usage.cache_read_input_tokens).toBeGreaterThan(1_400);
    expect((await ask(sdk, { systemTokens: 900, seed: "y" })).usage.cache_creation_input_tokens).toBe(0);
  });

  it("keeps a one-hour breakpoint for an hour after each use, and says it was a one-hour write", async () => {
    const { clock, sdk } = await setup();
    const first = await ask(sdk, { ttl: "1h" });
    expect(cacheOf(first).written1h).toBe(first.usage.cache_creation_input_tokens);
    clock.advanceMinutes(59);
    expect(cacheOf(await ask(sdk, { ttl: "1h" })).read).toBe(first.usage.cache_creation_input_tokens);
    clock.advanceMinutes(59);
    expect(cacheOf(await ask(sdk, { ttl: "1h" })).read).toBe(first.usage.cache_creation_input_tokens);
    clock.advanceMinutes(60);
    expect(cacheOf(await ask(sdk, { ttl: "1h" }))).toEqual({
      read: 0,
      written: first.usage.cache_creation_input_tokens,
      written1h: first.usage.cache_creation_input_tokens,
    });
  });

  it("is per model: the same bytes on another model are a new write", async () => {
    const { sdk } = await setup();
    await ask(sdk, { systemTokens: 3_000 });
    const other = await ask(sdk, { systemTokens: 3_000, model: "claude-haiku-5-5" });
    expect(cacheOf(other).read).toBe(0);
    expect(cacheOf(other).written).toBeGreaterThan(2_900);
  });

  it("finds what the previous call wrote from a breakpoint up to 20 blocks further on, as transcripts rely on", async () => {
    const { clock, sdk } = await setup();
    const history: Anthropic.MessageParam[] = [{ role: "user", content: filler(1_500) }];
    const call = () => {
      const messages = history.map((m, i) =>
        i === history.length - 1
          ? {
              role: m.role,
              content: [
                {
                  type: "text" as const,
                  text: String(m.content),
                  cache_control: { type: "ephemeral" as const },
                },
              ],
            }
          : m,
      );
      return sdk.messages.create({ model: "claude-sonnet-5-5", max_tokens: 50, messages });
    };
    const first = await call();
    history.push({ role: "assistant", content: "Noted." }, { role: "user", content: "Another thing." });
    clock.advanceMinutes(2);
    const second = await call();
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_creation_input_tokens).toBeLessThan(30);
  });

  it("treats the messages as new when tool_choice changes, but still reads tools and system", async () => {
    const { sdk } = await setup();
    const tool = {
      name: "pick",
      description: "pick one",
      input_schema: { type: "object" as const, properties: {} },
    };
    const request = (choice: Anthropic.ToolChoice) =>
      sdk.messages.create({
        model: "claude-sonnet-5-5",
        max_tokens: 50,
        tools: [tool],
        tool_choice: choice,
        system: [{ type: "text", text: filler(1_500), cache_control: { type: "ephemeral" } }],
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: filler(800, "m"), cache_control: { type: "ephemeral" } }],
          },
        ],
      });
    api?.setHandler((body) =>
      body.tool_choice?.type === "tool"
        ? { content: [{ type: "tool_use", name: "pick", input: {} }] }
        : textReply("ok"),
    );
    const first = await request({ type: "auto" });
    const same = await request({ type: "auto" });
    expect(same.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    const forced = await request({ type: "tool", name: "pick" });
    expect(forced.usage.cache_read_input_tokens).toBeGreaterThan(1_400);
    expect(forced.usage.cache_read_input_tokens).toBeLessThan(first.usage.cache_creation_input_tokens ?? 0);
    expect(forced.usage.cache_creation_input_tokens).toBeGreaterThan(700);
  });

  it("refuses more than four breakpoints, and a one-hour breakpoint after a five-minute one", async () => {
    const { sdk } = await setup();
    const block = (ttl?: Ttl) => ({
      type: "text" as const,
      text: filler(300),
      cache_control:
        ttl === "1h" ? { type: "ephemeral" as const, ttl: "1h" as const } : { type: "ephemeral" as const },
    });
    const send = (system: ReturnType<typeof block>[]) =>
      sdk.messages.create({
        model: "claude-sonnet-5-5",
        max_tokens: 10,
        system,
        messages: [{ role: "user", content: "hi" }],
      });
    await expect(send([block(), block(), block(), block(), block()])).rejects.toThrow(/maximum of 4 blocks/);
    await expect(send([block(), block("1h")])).rejects.toThrow(
      /must not come after one with the default 5 minutes/,
    );
    await expect(send([block("1h"), block()])).resolves.toBeDefined();
    expect(api?.problems).toHaveLength(2);
  });
});
