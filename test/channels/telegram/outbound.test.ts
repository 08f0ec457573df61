import { Api } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { TelegramOutbound } from "../../../src/channels/telegram/outbound.ts";
import { type RetryPolicy, retryTransformer } from "../../../src/channels/telegram/retry.ts";
import { SettableClock, systemTimers, type Timers, VirtualTimers } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { RecipientBlockedError } from "../../../src/core/port.ts";
import { type BotApiFake, startBotApiFake } from "../../../testkit/bot-api.ts";
import { waitFor } from "../../e2e/harness.ts";

const OWNER = 1001;
let fake: BotApiFake;
let waits: number[];

afterEach(async () => {
  await fake?.close();
});

async function setup(
  policy: Partial<RetryPolicy> = {},
  typingRefreshMs?: number,
  timers: Timers = systemTimers,
): Promise<TelegramOutbound> {
  fake = await startBotApiFake({ knownChats: [OWNER] });
  waits = [];
  const api = new Api(fake.token, { apiRoot: fake.apiRoot });
  const fullPolicy = {
    maxAttempts: 5,
    baseDelayMs: 100,
    maxDelayMs: 400,
    maxRetryAfterSeconds: 60,
    ...policy,
  };
  api.config.use(
    retryTransformer(fullPolicy, silentLogger, {
      after(ms, fire) {
        waits.push(ms);
        fire();
        return { cancel() {} };
      },
    }),
  );
  return new TelegramOutbound({
    api,
    chatId: OWNER,
    timers,
    logger: silentLogger,
    ...(typingRefreshMs ? { typingRefreshMs } : {}),
  });
}

describe("TelegramOutbound", () => {
  it("sends formatted text as entities Telegram accepts", async () => {
    const outbound = await setup();
    const delivery = await outbound.send({ text: "Drink **water** today", kind: "reply" });
    expect(fake.sent[0]).toMatchObject({
      text: "Drink water today",
      entities: [{ type: "bold", offset: 6, length: 5 }],
    });
    expect(delivery.external).toEqual({ chatId: OWNER, messageId: fake.sent[0]?.messageId });
  });

  it("splits a long reply into messages within the limit, in order", async () => {
    const outbound = await setup();
    const paragraphs = Array.from({ length: 6 }, (_, i) => `Paragraph ${i}. ${"word ".repeat(300).trim()}`);
    await outbound.send({ text: paragraphs.join("\n\n"), kind: "reply" });
    expect(fake.sent.length).toBeGreaterThan(1);
    for (const s of fake.sent) expect(s.text.length).toBeLessThanOrEqual(4096);
    expect(fake.sent.map((s) => s.text).join("\n\n")).toBe(paragraphs.join("\n\n"));
  });

  it("gets a long, richly formatted reply accepted by Telegram's checks part by part", async () => {
    const outbound = await setup();
    const section = (i: number) =>
      `## Part ${i}\n\nSome **bold ${i}**, some _italic_, a [link](https://example.org/${i}) and \`code\`.\n\n\`\`\`\n${"const x = 1;\n".repeat(40)}\`\`\`\n\n- one 😀\n- two`;
    const text = Array.from({ length: 12 }, (_, i) => section(i)).join("\n\n");
    await outbound.send({ text, kind: "reply" });
    const statuses = fake.calls.filter((c) => c.method === "sendMessage").map((c) => c.status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(fake.sent.length).toBeGreaterThan(1);
    for (const part of fake.sent) {
      expect(part.text.length).toBeLessThanOrEqual(4096);
      expect(part.entities?.length).toBeGreaterThan(0);
    }
  });

  it("waits out a 429 for as long as Telegram asks, and sends once", async () => {
    const outbound = await setup();
    fake.failNext(
      "sendMessage",
      { type: "rate-limit", retryAfter: 7 },
      { type: "rate-limit", retryAfter: 2 },
    );
    await outbound.send({ text: "hello", kind: "reply" });
    expect(waits).toEqual([7000, 2000]);
    expect(fake.sent.map((s) => s.text)).toEqual(["hello"]);
  });

  it("retries 5xx and dropped connections with growing backoff", async () => {
    const outbound = await setup();
    fake.failNext(
      "sendMessage",
      { type: "server-error", status: 500 },
      { type: "drop" },
      { type: "server-error", status: 502 },
      { type: "server-error", status: 500 },
    );
    await outbound.send({ text: "still here", kind: "reply" });
    expect(waits).toEqual([100, 200, 400, 400]);
    expect(fake.sent.map((s) => s.text)).toEqual(["still here"]);
  });

  it("gives up after the attempt cap instead of looping forever", async () => {
    const outbound = await setup({ maxAttempts: 3 });
    fake.failNext(
      "sendMessage",
      ...Array.from({ length: 5 }, () => ({ type: "server-error" as const, status: 500 as const })),
    );
    await expect(outbound.send({ text: "x", kind: "reply" })).rejects.toThrow(/500/);
    expect(fake.calls.filter((c) => c.method === "sendMessage")).toHaveLength(3);
  });

  it("does not wait for a retry_after beyond the policy", async () => {
    const outbound = await setup({ maxRetryAfterSeconds: 30 });
    fake.failNext("sendMessage", { type: "rate-limit", retryAfter: 3600 });
    await expect(outbound.send({ text: "x", kind: "reply" })).rejects.toThrow(/429/);
    expect(waits).toEqual([]);
  });

  it("after a failure on the second part, resumes there: each part reaches the person once", async () => {
    const outbound = await setup({ maxAttempts: 2 });
    const text = `${"first ".repeat(500).trim()}\n\n${"second ".repeat(500).trim()}`;
    fake.failNext(
      "sendMessage",
      { type: "slow", ms: 0 },
      { type: "server-error", status: 500 },
      { type: "server-error", status: 500 },
    );
    const progress: number[] = [];
    const record = async (parts: number) => {
      progress.push(parts);
    };
    await expect(outbound.send({ text, kind: "reply" }, record)).rejects.toThrow(/500/);
    expect(progress).toEqual([1]);
    const delivery = await outbound.send({ text, kind: "reply", partsDelivered: 1 }, record);
    expect(progress).toEqual([1, 2]);
    expect(fake.sent.map((s) => s.text.split(" ")[0])).toEqual(["first", "second"]);
    expect(delivery.external?.messageId).toBe(fake.sent[1]?.messageId);
  });

  it("sends nothing when every part was already delivered", async () => {
    const outbound = await setup();
    expect(await outbound.send({ text: "hello", kind: "reply", partsDelivered: 1 })).toEqual({});
    expect(fake.calls.filter((c) => c.method === "sendMessage")).toEqual([]);
  });

  it("reports a blocked bot as RecipientBlockedError, without retrying", async () => {
    const outbound = await setup();
    fake.block(OWNER);
    await expect(outbound.send({ text: "are you there?", kind: "heartbeat" })).rejects.toBeInstanceOf(
      RecipientBlockedError,
    );
    expect(fake.calls.filter((c) => c.method === "sendMessage")).toHaveLength(1);
  });

  it("falls back to plain text when Telegram refuses the formatting", async () => {
    const outbound = await setup();
    fake.failNext("sendMessage", {
      type: "bad-request",
      description: "can't parse entities: Unsupported entity",
    });
    await outbound.send({ text: "a **bold** move", kind: "reply" });
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]?.text).toBe("a bold move");
    expect(fake.sent[0]?.entities).toBeUndefined();
  });

  it("keeps two replies' parts from interleaving", async () => {
    const outbound = await setup();
    fake.failNext("sendMessage", { type: "slow", ms: 50 });
    const long = `${"first ".repeat(800)}\n\n${"first ".repeat(800)}`;
    await Promise.all([
      outbound.send({ text: long, kind: "reply" }),
      outbound.send({ text: "second", kind: "reply" }),
    ]);
    const firstWords = fake.sent.map((s) => s.text.split(" ")[0]);
    expect(firstWords.at(-1)).toBe("second");
    expect(firstWords.slice(0, -1).every((w) => w === "first")).toBe(true);
    expect(firstWords.length).toBeGreaterThan(2);
  });

  it("shows typing until stopped", async () => {
    const clock = new SettableClock("2026-02-07T08:00:00.000Z");
    const timers = new VirtualTimers(clock);
    const outbound = await setup({}, 20, timers);
    const stop = outbound.showWorking();
    // At once, then every 20 ms: at 0, 20, 40, 60 and 80 within 90 ms.
    await timers.advanceTo(new Date(clock.now().getTime() + 90));
    stop();
    await waitFor(() => fake.actions.length === 5, 10_000);
    await timers.advanceTo(new Date(clock.now().getTime() + 60));
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.actions).toHaveLength(5);
    expect(fake.actions.every((a) => a.action === "typing" && a.chatId === OWNER)).toBe(true);
  });

  it("sends a document", async () => {
    const outbound = await setup();
    await outbound.sendDocument("presence-export.json", new TextEncoder().encode("{}"), "All of it");
    expect(fake.sent[0]).toMatchObject({
      method: "sendDocument",
      text: "All of it",
      document: { fileName: "presence-export.json" },
    });
  });

  describe("anchors and reactions", () => {
    /** A message of the person's in the fake chat, as the log would point at it. */
    function theirMessage(text: string) {
      const scripted = fake.message(fake.user(OWNER, "Ada"), { text });
      return { id: `m-${scripted.messageId}`, external: { chatId: OWNER, messageId: scripted.messageId } };
    }
    const longText = Array.from({ length: 3 }, (_, i) => `Part ${i}. ${"word ".repeat(900).trim()}`).join(
      "\n\n",
    );

    it("sends an anchored reply as a reply to their message, with the first part only", async () => {
      const outbound = await setup();
      const anchor = theirMessage("so what do you think?");
      await outbound.send({ text: longText, kind: "reply", anchor });
      expect(fake.sent.length).toBeGreaterThan(1);
      expect(fake.sent[0]?.replyTo).toEqual({
        messageId: anchor.external.messageId,
        allowSendingWithoutReply: true,
      });
      for (const later of fake.sent.slice(1)) expect(later.replyTo).toBeUndefined();
    });

    it("sends a reply without an anchor as a plain message", async () => {
      const outbound = await setup();
      theirMessage("hi");
      await outbound.send({ text: "Hi!", kind: "reply" });
      expect(fake.sent[0]?.replyTo).toBeUndefined();
    });

    it("does not anchor the rest of a reply whose first part already went out", async () => {
      const outbound = await setup();
      const anchor = theirMessage("tell me everything");
      await outbound.send({ text: longText, kind: "reply", anchor, partsDelivered: 1 });
      expect(fake.sent.length).toBeGreaterThan(0);
      for (const part of fake.sent) expect(part.replyTo).toBeUndefined();
    });

    it("still sends an anchored reply when their message is gone", async () => {
      const outbound = await setup();
      await outbound.send({
        text: "Still here.",
        kind: "reply",
        anchor: { id: "m-gone", external: { chatId: OWNER, messageId: 9_999 } },
      });
      expect(fake.sent[0]).toMatchObject({
        text: "Still here.",
        replyTo: { messageId: 9_999, allowSendingWithoutReply: true },
      });
    });

    it("reacts with setMessageReaction on their message and sends no message", async () => {
      const outbound = await setup();
      const to = theirMessage("ok thanks");
      expect(await outbound.react({ emoji: "👍", to })).toEqual({});
      expect(fake.reactions).toEqual([{ chatId: OWNER, messageId: to.external.messageId, emoji: ["👍"] }]);
      expect(fake.sent).toEqual([]);
      expect(fake.calls.filter((c) => c.method === "sendMessage")).toEqual([]);
    });

    it("gives up a reaction Telegram refuses (the message was deleted) and reports it refused, not delivered", async () => {
      const outbound = await setup();
      await expect(
        outbound.react({ emoji: "👍", to: { id: "m-gone", external: { chatId: OWNER, messageId: 9_999 } } }),
      ).resolves.toEqual({ refused: expect.stringContaining("MESSAGE_ID_INVALID") });
      const call = fake.calls.find((c) => c.method === "setMessageReaction");
      expect(call?.status).toBe(400);
      expect(fake.reactions).toEqual([]);
      expect(fake.sent).toEqual([]);
    });

    it("says the emoji as a message when their message has no Telegram ids to react to", async () => {
      const outbound = await setup();
      await outbound.react({ emoji: "🙏", to: { id: "m-typed-in-the-terminal" } });
      expect(fake.reactions).toEqual([]);
      expect(fake.sent.map((m) => m.text)).toEqual(["🙏"]);
    });

    it("surfaces a blocked bot on a reaction like on a message", async () => {
      const outbound = await setup();
      const to = theirMessage("night!");
      fake.block(OWNER);
      await expect(outbound.react({ emoji: "🙏", to })).rejects.toBeInstanceOf(RecipientBlockedError);
    });
  });
});
