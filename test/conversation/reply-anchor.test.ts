import { describe, expect, it } from "vitest";
import { ANCHOR_AFTER_MS, replyAnchor } from "../../src/conversation/reply-anchor.ts";
import type { Message } from "../../src/core/message.ts";

const STARTED = new Date("2026-03-04T09:00:00.000Z");

function said(id: string, ts: string, telegramId?: number): Message {
  return {
    id,
    ts,
    role: "user",
    text: `message ${id}`,
    channel: "telegram",
    ...(telegramId === undefined ? {} : { external: { chatId: 1001, messageId: telegramId } }),
  };
}

const at = (iso: string) => new Date(iso);

describe("replyAnchor", () => {
  it("does not anchor an immediate answer to one message", () => {
    const answered = [said("a", "2026-03-04T10:00:00.000Z", 7)];
    expect(
      replyAnchor({ answered, sendAt: at("2026-03-04T10:00:20.000Z"), startedAt: STARTED }),
    ).toBeUndefined();
  });

  it("anchors an answer to several messages to the newest, with its Telegram ids", () => {
    const answered = [said("a", "2026-03-04T10:00:00.000Z", 7), said("b", "2026-03-04T10:00:05.000Z", 8)];
    expect(replyAnchor({ answered, sendAt: at("2026-03-04T10:00:20.000Z"), startedAt: STARTED })).toEqual({
      id: "b",
      external: { chatId: 1001, messageId: 8 },
    });
  });

  it("anchors a message that waited more than two minutes, and not one that waited exactly two", () => {
    const answered = [said("a", "2026-03-04T10:00:00.000Z", 7)];
    const sent = (ms: number) =>
      replyAnchor({
        answered,
        sendAt: new Date(Date.parse("2026-03-04T10:00:00.000Z") + ms),
        startedAt: STARTED,
      });
    expect(sent(ANCHOR_AFTER_MS)).toBeUndefined();
    expect(sent(ANCHOR_AFTER_MS + 1_000)?.id).toBe("a");
  });

  it("anchors a reply to a message logged before this process started (sent after a restart)", () => {
    const answered = [said("a", "2026-03-04T08:59:50.000Z", 7)];
    expect(replyAnchor({ answered, sendAt: at("2026-03-04T09:00:05.000Z"), startedAt: STARTED })?.id).toBe(
      "a",
    );
  });

  it("anchors without Telegram ids when the message has none (the channel then has nothing to quote)", () => {
    const answered = [said("a", "2026-03-04T10:00:00.000Z"), said("b", "2026-03-04T10:00:01.000Z")];
    expect(replyAnchor({ answered, sendAt: at("2026-03-04T10:00:02.000Z"), startedAt: STARTED })).toEqual({
      id: "b",
    });
  });

  /** A message Telegram says was sent at `sentAt`, logged (received) at `ts`. */
  const sentEarlier = (ts: string, sentAt: string): Message => {
    const message = said("a", ts, 7);
    return { ...message, external: { chatId: 1001, messageId: 7, sentAt } };
  };

  it("counts the wait from when Telegram says the message was sent, when that is before it was logged", () => {
    // Sent at 08:50 while presence was down, logged at 09:00:01 after the restart, answered at once.
    const answered = [sentEarlier("2026-03-04T09:00:01.000Z", "2026-03-04T08:50:00.000Z")];
    expect(replyAnchor({ answered, sendAt: at("2026-03-04T09:00:05.000Z"), startedAt: STARTED })).toEqual({
      id: "a",
      external: { chatId: 1001, messageId: 7 },
    });
  });

  it("anchors a message sent a little before the start, though logged after it and answered at once", () => {
    const answered = [sentEarlier("2026-03-04T09:00:01.000Z", "2026-03-04T08:59:40.000Z")];
    expect(replyAnchor({ answered, sendAt: at("2026-03-04T09:00:05.000Z"), startedAt: STARTED })?.id).toBe(
      "a",
    );
  });

  it("does not anchor a message Telegram dates in the second the process started (its date is whole seconds)", () => {
    const startedMidSecond = new Date("2026-03-04T09:00:00.700Z");
    const answered = [sentEarlier("2026-03-04T09:00:00.900Z", "2026-03-04T09:00:00.000Z")];
    expect(
      replyAnchor({ answered, sendAt: at("2026-03-04T09:00:10.000Z"), startedAt: startedMidSecond }),
    ).toBeUndefined();
  });

  it("anchors nothing when nothing is answered", () => {
    expect(replyAnchor({ answered: [], sendAt: STARTED, startedAt: STARTED })).toBeUndefined();
  });
});
