import { Api } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { retryTransformer } from "../../../src/channels/telegram/retry.ts";
import { DEFAULT_TRANSPORT_TIMEOUTS, telegramFetch } from "../../../src/channels/telegram/transport.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { type BotApiFake, startBotApiFake } from "../../../testkit/bot-api.ts";

const OWNER = 1001;
let fake: BotApiFake;

afterEach(async () => {
  await fake?.close();
});

/** A real grammY Api over the transport and the retry transformer, its waits recorded instead of slept. */
function api(apiRoot: string, waits: number[]): Api {
  const client = new Api(fake.token, {
    apiRoot,
    fetch: telegramFetch({ ...DEFAULT_TRANSPORT_TIMEOUTS, pollSeconds: 1, stallMs: 200 }),
  });
  const policy = { maxAttempts: 4, baseDelayMs: 10, maxDelayMs: 40, maxRetryAfterSeconds: 5 };
  client.config.use(
    retryTransformer(policy, silentLogger, {
      after(ms, fire) {
        waits.push(ms);
        fire();
        return { cancel() {} };
      },
    }),
  );
  return client;
}

describe("the Telegram transport", () => {
  it("retries a send whose connection was refused as often as the policy allows: it never reached Telegram", async () => {
    fake = await startBotApiFake({ knownChats: [OWNER] });
    const closedRoot = fake.apiRoot;
    await fake.close();
    const waits: number[] = [];
    await expect(api(closedRoot, waits).sendMessage(OWNER, "hello")).rejects.toThrow(/sendMessage/);
    expect(waits).toEqual([10, 20, 40]);
  });

  it("repeats a send whose answer was lost once, then leaves it to the caller", async () => {
    fake = await startBotApiFake({ knownChats: [OWNER] });
    fake.failNext("sendMessage", { type: "cut-off", ending: "stall" }, { type: "cut-off", ending: "close" });
    const waits: number[] = [];
    await expect(api(fake.apiRoot, waits).sendMessage(OWNER, "hello")).rejects.toThrow(/sendMessage/);
    expect(waits).toEqual([10]);
    expect(fake.sent.map((s) => s.text)).toEqual(["hello", "hello"]);
  });

  it("keeps retrying 5xx answers after a lost one: only lost answers count towards the one repeat", async () => {
    fake = await startBotApiFake({ knownChats: [OWNER] });
    fake.failNext(
      "sendMessage",
      { type: "cut-off", ending: "close" },
      { type: "server-error", status: 502 },
      { type: "server-error", status: 500 },
    );
    const waits: number[] = [];
    await api(fake.apiRoot, waits).sendMessage(OWNER, "hello");
    expect(waits).toEqual([10, 20, 40]);
    expect(fake.calls.map((c) => c.status)).toEqual(["cut-off", 502, 500, 200]);
  });
});
