import { Writable } from "node:stream";
import { HttpError } from "grammy";
import { describe, expect, it } from "vitest";
import { pollingHealthTransformer } from "../../../src/channels/telegram/connection.ts";
import { createLogger } from "../../../src/core/log.ts";

/** A transformer run against scripted getUpdates outcomes, with the log lines it wrote. */
function harness() {
  const lines: { level: number; msg: string }[] = [];
  const logger = createLogger(
    "info",
    false,
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const transformer = pollingHealthTransformer(logger);
  const call = (method: string, outcome: "ok" | "502" | "drop") =>
    transformer(
      async () => {
        if (outcome === "drop") throw new HttpError("Network request failed", new Error("socket hang up"));
        return outcome === "ok"
          ? { ok: true as const, result: [] as never }
          : { ok: false as const, error_code: 502, description: "Bad Gateway" };
      },
      method as "getUpdates",
      {} as never,
    ).catch(() => undefined);
  return { lines, call };
}

describe("pollingHealthTransformer", () => {
  it("logs an outage once when it starts and once when it ends, not at every retry", async () => {
    const { lines, call } = harness();
    await call("getUpdates", "ok");
    await call("getUpdates", "502");
    await call("getUpdates", "drop");
    await call("getUpdates", "502");
    await call("getUpdates", "ok");
    await call("getUpdates", "ok");
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [40, "cannot receive from Telegram; retrying every few seconds until it answers"],
      [30, "receiving from Telegram again"],
    ]);
  });

  it("leaves other methods to the retry policy", async () => {
    const { lines, call } = harness();
    await call("sendMessage", "502");
    expect(lines).toEqual([]);
  });
});
