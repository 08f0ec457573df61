import { describe, expect, it } from "vitest";
import { messageTime } from "../../src/core/message.ts";

describe("messageTime", () => {
  it("is the instant of a message's ts, however it is spelled, and follows a ts that changes", () => {
    const message = { ts: "2026-03-07T08:30:00.000Z" };
    expect(messageTime(message)).toBe(Date.UTC(2026, 2, 7, 8, 30));
    expect(messageTime(message)).toBe(Date.UTC(2026, 2, 7, 8, 30));
    message.ts = "2026-03-07T09:30:00+01:00";
    expect(messageTime(message)).toBe(Date.UTC(2026, 2, 7, 8, 30));
    message.ts = "2026-03-08T08:30:00.000Z";
    expect(messageTime(message)).toBe(Date.UTC(2026, 2, 8, 8, 30));
    expect(messageTime({ ts: "not a time" })).toBeNaN();
  });
});
