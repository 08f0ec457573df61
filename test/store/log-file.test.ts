import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LogFileError, loadLogFile } from "../../src/store/log-file.ts";
import { tempDataDir } from "./helpers.ts";

async function logFile(contents: unknown): Promise<string> {
  const dir = await tempDataDir();
  await mkdir(dir, { recursive: true });
  const file = join(dir, "log.json");
  await writeFile(file, typeof contents === "string" ? contents : JSON.stringify(contents));
  return file;
}

describe("loadLogFile", () => {
  it("accepts minimal entries in any order, normalizing times to UTC and filling ids and channel", async () => {
    const file = await logFile({
      messages: [
        {
          role: "assistant",
          text: "How's the water intake?",
          ts: "2026-02-07T11:23:00+01:00",
          trigger: "heartbeat",
        },
        { role: "user", text: "Good morning.", ts: "2026-02-07T08:39:00Z" },
        { role: "user", text: "Same minute", ts: "2026-02-07T09:39:00.000+01:00", id: "own" },
      ],
    });
    const messages = await loadLogFile(file);
    expect(messages.map((m) => [m.id, m.ts, m.channel])).toEqual([
      ["m2", "2026-02-07T08:39:00.000Z", "telegram"],
      ["own", "2026-02-07T08:39:00.000Z", "telegram"],
      ["m1", "2026-02-07T10:23:00.000Z", "telegram"],
    ]);
    expect(messages[2]?.trigger).toBe("heartbeat");
  });

  it("accepts a bare array and keeps unknown fields", async () => {
    const file = await logFile([
      { role: "user", text: "hi", ts: "2026-02-07T08:39:00-05:00", channel: "cli", x: 1 },
    ]);
    expect(await loadLogFile(file)).toEqual([
      { id: "m1", role: "user", text: "hi", ts: "2026-02-07T13:39:00.000Z", channel: "cli", x: 1 },
    ]);
  });

  it("never gives an entry without an id one that another entry of the file has", async () => {
    const file = await logFile([
      { id: "m2", role: "user", text: "named m2 by hand", ts: "2026-02-07T08:00:00Z" },
      { role: "assistant", text: "no id", ts: "2026-02-07T08:01:00Z" },
    ]);
    const ids = (await loadLogFile(file)).map((m) => m.id);
    expect(ids[0]).toBe("m2");
    expect(ids[1]).not.toBe("m2");
    expect(new Set(ids).size).toBe(2);
  });

  it.each([
    ["a missing file", null, "cannot be read"],
    ["bad JSON", "[{", "is not valid JSON"],
    ["the wrong shape", { entries: [] }, 'expected { "messages": [...] } or an array of messages'],
    ["a non-object entry", [42], "entry 1: is not an object"],
    [
      "an entry without a time",
      [
        { role: "user", text: "a", ts: "2026-02-07T08:00:00Z" },
        {},
        { role: "user", text: "b", ts: "yesterday" },
      ],
      "entry 2: ts is missing",
    ],
    [
      "a time in words",
      [{ role: "user", text: "b", ts: "yesterday" }],
      'entry 1: ts "yesterday" is not an ISO 8601 time',
    ],
    ["a time without an offset", [{ role: "user", text: "b", ts: "2026-02-07T08:00:00" }], "entry 1: ts"],
    ["an impossible date", [{ role: "user", text: "b", ts: "2026-02-30T08:00:00Z" }], "entry 1: ts"],
    ["an unknown role", [{ role: "bot", text: "b", ts: "2026-02-07T08:00:00Z" }], "entry 1: role"],
    ["text that is not text", [{ role: "user", text: 3, ts: "2026-02-07T08:00:00Z" }], "entry 1: text"],
    [
      "a duplicate id",
      [
        { id: "a", role: "user", text: "b", ts: "2026-02-07T08:00:00Z" },
        { id: "a", role: "user", text: "c", ts: "2026-02-07T08:01:00Z" },
      ],
      'entry 2: id "a" is also used by entry 1',
    ],
  ])("reports %s in one line naming the file", async (_case, contents, problem) => {
    const file = contents === null ? join(await tempDataDir(), "nope.json") : await logFile(contents);
    const error = await loadLogFile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LogFileError);
    const message = (error as LogFileError).message;
    expect(message.startsWith(`${file}: `)).toBe(true);
    expect(message).toContain(problem);
    expect(message).not.toContain("\n");
  });
});
