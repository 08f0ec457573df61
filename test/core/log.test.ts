import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/core/log.ts";

const TOKEN = "123456789:AAEsecretsecretsecretsecret";
const API_KEY = "sk-ant-api03-secret-key";
/** A transcription service's key in OpenAI's shape (PRESENCE_TRANSCRIBE_KEY). */
const TRANSCRIPTION_KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUv";
const WORDS = "I have not told anyone about the diagnosis";

/** A logger whose JSON lines are collected in memory. */
function capture(level = "trace") {
  const lines: string[] = [];
  const logger = createLogger(level, false, { write: (line: string) => void lines.push(line) });
  return { logger, text: () => lines.join("") };
}

describe("the process log", () => {
  it("censors the token, the API key and message text wherever they sit", () => {
    const { logger, text } = capture();
    logger.info({ token: TOKEN, config: { apiKey: API_KEY } }, "configured");
    logger.debug({ message: { role: "user", text: WORDS, media: { caption: WORDS } } }, "incoming");
    logger.warn({ turn: { messages: [{ text: WORDS }] }, headers: { "x-api-key": API_KEY } }, "turn");
    const failed = Object.assign(new Error("sendMessage failed"), { payload: { chat_id: 1, text: WORDS } });
    logger.error({ err: failed }, "send failed");

    const written = text();
    expect(written.trim().split("\n")).toHaveLength(4);
    expect(written).not.toContain(TOKEN);
    expect(written).not.toContain(API_KEY);
    expect(written).not.toContain(WORDS);
    expect(written.match(/\[redacted\]/g)).toHaveLength(7);
  });

  it("censors a token or key quoted inside an error's message and stack", () => {
    const { logger, text } = capture();
    const network = new Error(`request to http://127.0.0.1:9/bot${TOKEN}/getMe failed, reason: ECONNREFUSED`);
    const failed = Object.assign(new Error("Network request for 'getMe' failed!"), { error: network });
    logger.error({ err: failed }, "getMe failed");
    logger.warn(`retrying with key ${API_KEY}`);
    logger.warn(`transcription key ${TRANSCRIPTION_KEY} refused`);
    const written = text();
    expect(written).not.toContain(TRANSCRIPTION_KEY);
    expect(written).toContain("ECONNREFUSED");
    expect(written).toContain("/bot[redacted]/getMe");
    expect(written).not.toContain(TOKEN);
    expect(written).not.toContain(API_KEY);
    expect(() =>
      written
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
    ).not.toThrow();
  });

  it("keeps what an operator needs", () => {
    const { logger, text } = capture("info");
    logger.info({ chatId: 42, tokens: 1200 }, "reply sent");
    logger.debug({ text: WORDS }, "below the level");
    const line = JSON.parse(text()) as Record<string, unknown>;
    expect(line).toMatchObject({ msg: "reply sent", chatId: 42, tokens: 1200, level: 30 });
    expect(text()).not.toContain("below the level");
  });
});
