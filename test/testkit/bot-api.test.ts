import { request } from "node:http";
import { Api, Bot, GrammyError, HttpError, InputFile } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiFake, parseTelegramHtml, startBotApiFake } from "../../testkit/bot-api.ts";

let fake: BotApiFake;

afterEach(async () => {
  await fake?.close();
});

function api(token = fake.token): Api {
  return new Api(token, { apiRoot: fake.apiRoot });
}

/**
 * Posts a call the way grammY does and reports what came back within `watchMs`: the status, the
 * length the headers promised, the bytes that arrived, and whether the connection closed.
 */
function rawCall(
  method: string,
  params: Record<string, unknown>,
  watchMs: number,
): Promise<{ status: number; promised: number; received: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(`${fake.apiRoot}/bot${fake.token}/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let received = "";
      let closed = false;
      res.on("data", (chunk: Buffer) => {
        received += chunk.toString("utf8");
      });
      res.on("error", () => {});
      res.socket.on("close", () => {
        closed = true;
      });
      setTimeout(() => {
        resolve({
          status: res.statusCode ?? 0,
          promised: Number(res.headers["content-length"]),
          received,
          closed,
        });
        req.destroy();
      }, watchMs);
    });
    req.end(JSON.stringify(params));
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("the Bot API fake", () => {
  it("answers getMe for its token and 401 for any other, like Telegram", async () => {
    fake = await startBotApiFake();
    expect((await api().getMe()).username).toBe("presence_test_bot");
    const error = await rejection(api("1:wrongwrongwrongwrongwrong").getMe());
    expect(error).toBeInstanceOf(GrammyError);
    expect((error as GrammyError).error_code).toBe(401);
  });

  it("delivers scripted updates to a real grammY bot and forgets them once confirmed by offset", async () => {
    fake = await startBotApiFake();
    const owner = fake.user(1001, "Ada");
    const seen: string[] = [];
    const bot = new Bot(fake.token, { client: { apiRoot: fake.apiRoot } });
    bot.on("message:text", (ctx) => {
      seen.push(ctx.message.text);
    });
    fake.message(owner, { text: "first" });
    fake.message(owner, { text: "second" });
    const running = bot.start({ timeout: 1 });
    await waitFor(() => seen.length === 2);
    fake.message(owner, { text: "third" });
    await waitFor(() => seen.length === 3);
    await bot.stop();
    await running;
    expect(seen).toEqual(["first", "second", "third"]);
    expect(fake.pendingUpdates()).toBe(0);
  });

  it("leaves no listener behind on the keep-alive socket after each long poll", async () => {
    fake = await startBotApiFake();
    const owner = fake.user(1001, "Ada");
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    const seen: string[] = [];
    const bot = new Bot(fake.token, { client: { apiRoot: fake.apiRoot } });
    bot.on("message:text", (ctx) => {
      seen.push(ctx.message.text);
    });
    const running = bot.start({ timeout: 30 });
    try {
      for (let i = 1; i <= 15; i++) {
        // Let the next long poll start and wait, so the message answers it.
        await new Promise((r) => setTimeout(r, 30));
        fake.message(owner, { text: `m${i}` });
        await waitFor(() => seen.length === i);
      }
      await new Promise((r) => setImmediate(r));
    } finally {
      await bot.stop();
      await running;
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("long-polls: an update arriving during the wait answers the pending getUpdates", async () => {
    fake = await startBotApiFake();
    const owner = fake.user(1001, "Ada");
    const polling = api().getUpdates({ timeout: 5 });
    await fake.waitForCall((c) => c.method === "getUpdates");
    fake.message(owner, { text: "hello" });
    const updates = await polling;
    expect(updates.map((u) => u.message?.text)).toEqual(["hello"]);
    expect(await api().getUpdates({ offset: (updates[0]?.update_id ?? 0) + 1, timeout: 0 })).toEqual([]);
  });

  it("rejects text over 4096 characters and malformed HTML the way Telegram does", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    const tooLong = await rejection(api().sendMessage(1001, "a".repeat(4097)));
    expect((tooLong as GrammyError).description).toBe("Bad Request: message is too long");
    const badHtml = await rejection(api().sendMessage(1001, "<b>bold", { parse_mode: "HTML" }));
    expect((badHtml as GrammyError).description).toMatch(/^Bad Request: can't parse entities: /);
    const unsupported = await rejection(api().sendMessage(1001, "1 <3 you", { parse_mode: "HTML" }));
    expect((unsupported as GrammyError).description).toMatch(/^Bad Request: can't parse entities: /);
    const sent = await api().sendMessage(1001, "<b>4096</b> &lt;ok&gt;", { parse_mode: "HTML" });
    expect(sent.text).toBe("4096 <ok>");
    expect(fake.sent.map((s) => s.text)).toEqual(["4096 <ok>"]);
  });

  it("measures the limit on the visible text, in UTF-16 units as Telegram does", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    await api().sendMessage(1001, `<b>${"x".repeat(4096)}</b>`, { parse_mode: "HTML" });
    const emoji = await rejection(api().sendMessage(1001, "😀".repeat(2049)));
    expect((emoji as GrammyError).description).toBe("Bad Request: message is too long");
  });

  it("refuses entities that run past the text", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    const error = await rejection(
      api().sendMessage(1001, "short", { entities: [{ type: "bold", offset: 2, length: 10 }] }),
    );
    expect((error as GrammyError).error_code).toBe(400);
  });

  it("refuses chats that never wrote to the bot", async () => {
    fake = await startBotApiFake();
    const error = await rejection(api().sendMessage(77, "hello?"));
    expect((error as GrammyError).description).toBe("Bad Request: chat not found");
  });

  it("produces faults on demand, in order, then answers normally", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    fake.failNext(
      "sendMessage",
      { type: "rate-limit", retryAfter: 3 },
      { type: "server-error", status: 500 },
      { type: "drop" },
      { type: "server-error", status: 502 },
      { type: "blocked" },
    );
    const limited = (await rejection(api().sendMessage(1001, "a"))) as GrammyError;
    expect([limited.error_code, limited.parameters.retry_after]).toEqual([429, 3]);
    expect(((await rejection(api().sendMessage(1001, "b"))) as GrammyError).error_code).toBe(500);
    expect(await rejection(api().sendMessage(1001, "c"))).toBeInstanceOf(HttpError);
    expect(await rejection(api().sendMessage(1001, "d"))).toBeInstanceOf(HttpError);
    const blocked = (await rejection(api().sendMessage(1001, "e"))) as GrammyError;
    expect([blocked.error_code, blocked.description]).toEqual([
      403,
      "Forbidden: bot was blocked by the user",
    ]);
    await api().sendMessage(1001, "f");
    expect(fake.sent.map((s) => s.text)).toEqual(["f"]);
    expect(fake.calls.map((c) => c.status)).toEqual([429, 500, "dropped", 502, 403, 200]);
  });

  it("carries out a call and cuts its answer off half-way, then closes or stalls", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    fake.failNext("sendMessage", { type: "cut-off", ending: "close" }, { type: "cut-off", ending: "stall" });
    const closed = await rawCall("sendMessage", { chat_id: 1001, text: "a" }, 300);
    expect(closed.status).toBe(200);
    expect(closed.received.length).toBeGreaterThan(0);
    expect(closed.received.length).toBeLessThan(closed.promised);
    expect(closed.closed).toBe(true);
    const stalled = await rawCall("sendMessage", { chat_id: 1001, text: "b" }, 300);
    expect(stalled.received.length).toBeGreaterThan(0);
    expect(stalled.received.length).toBeLessThan(stalled.promised);
    expect(stalled.closed).toBe(false);
    expect(fake.sent.map((s) => s.text)).toEqual(["a", "b"]);
    expect(fake.calls.map((c) => c.status)).toEqual(["cut-off", "cut-off"]);
  });

  it("cuts off a long poll's answer when its update comes, and keeps the update for the next poll", async () => {
    fake = await startBotApiFake();
    fake.failNext("getUpdates", { type: "cut-off", ending: "stall" });
    const polled = rawCall("getUpdates", { timeout: 5 }, 500);
    await fake.waitForCall((c) => c.method === "getUpdates");
    const sent = fake.message(fake.user(1001, "Ada"), { text: "hello" });
    const cut = await polled;
    expect(cut.received).toContain('"ok":true');
    expect(cut.received.length).toBeLessThan(cut.promised);
    expect(cut.closed).toBe(false);
    const again = await api().getUpdates({ timeout: 0 });
    expect(again.map((u) => u.update_id)).toEqual([sent.updateId]);
    expect(fake.calls.map((c) => c.status)).toEqual(["cut-off", 200]);
  });

  it("blocks a chat until unblocked", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    fake.block(1001);
    expect(((await rejection(api().sendMessage(1001, "a"))) as GrammyError).error_code).toBe(403);
    fake.unblock(1001);
    await api().sendMessage(1001, "b");
    expect(fake.sent).toHaveLength(1);
  });

  it("serves photos through getFile and the file download path", async () => {
    fake = await startBotApiFake();
    const owner = fake.user(1001, "Ada");
    const bytes = new Uint8Array([1, 2, 3, 4]);
    fake.message(owner, { photo: { bytes, caption: "look" } });
    const [update] = await api().getUpdates({ timeout: 0 });
    const largest = update?.message?.photo?.at(-1);
    const file = await api().getFile(largest?.file_id ?? "");
    const response = await fetch(`${fake.apiRoot}/file/bot${fake.token}/${file.file_path}`);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
    expect(update?.message?.caption).toBe("look");
  });

  it("accepts a multipart document upload and records its bytes", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    const content = new TextEncoder().encode('{"hello":"world"}');
    await api().sendDocument(1001, new InputFile(content, "export.json"), { caption: "everything" });
    expect(fake.sent[0]?.document?.fileName).toBe("export.json");
    expect(new TextDecoder().decode(fake.sent[0]?.document?.bytes)).toBe('{"hello":"world"}');
  });

  it("records chat actions, commands and edits", async () => {
    fake = await startBotApiFake({ knownChats: [1001] });
    await api().sendChatAction(1001, "typing");
    await api().setMyCommands([{ command: "status", description: "How things stand" }]);
    const sent = await api().sendMessage(1001, "draft");
    await api().editMessageText(1001, sent.message_id, "final");
    expect(fake.actions).toEqual([{ chatId: 1001, action: "typing" }]);
    expect(fake.commands.map((c) => c.command)).toEqual(["status"]);
    expect(fake.sent[0]?.editedText).toBe("final");
  });

  it("scripts edited messages and non-text content", async () => {
    fake = await startBotApiFake();
    const owner = fake.user(1001, "Ada");
    const original = fake.message(owner, { text: "helo" });
    fake.edit(original, "hello");
    fake.message(owner, { sticker: { emoji: "👍" } });
    fake.message(owner, { location: { latitude: 52.5, longitude: 13.4 } });
    fake.message(
      fake.user(2002, "Stranger"),
      { text: "hi" },
      { chat: { id: -300, type: "group", title: "Group" } },
    );
    const updates = await api().getUpdates({ timeout: 0 });
    expect(updates[1]?.edited_message?.text).toBe("hello");
    expect(updates[1]?.edited_message?.message_id).toBe(original.messageId);
    expect(updates[2]?.message?.sticker?.emoji).toBe("👍");
    expect(updates[3]?.message?.location?.latitude).toBe(52.5);
    expect(updates[4]?.message?.chat.type).toBe("group");
  });
});

describe("parseTelegramHtml", () => {
  it("decodes entities and keeps text between supported tags", () => {
    expect(parseTelegramHtml('<a href="https://x.y">a &amp; b</a> <code>&lt;x&gt;</code>').text).toBe(
      "a & b <x>",
    );
  });

  it("refuses misnested tags", () => {
    expect(() => parseTelegramHtml("<b><i>x</b></i>")).toThrow(/can't parse entities/);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
