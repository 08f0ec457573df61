import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../../src/companion/mind-document.ts";
import { SettableClock } from "../../../src/core/clock.ts";
import { acquireDataLock } from "../../../src/store/lock.ts";
import { lines, runInProcess } from "../../cli/run.ts";

let root: string;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-inject-"));
  env = { PRESENCE_DATA_DIR: join(root, "data"), PRESENCE_TIMEZONE: "UTC" };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const mindFile = () => join(root, "data", "mind.json");
const scratchpad = async () =>
  JSON.parse(await readFile(mindFile(), "utf8")).scratchpad as Record<string, unknown>;
/** An UNDERSTANDING field's lines as mind.json keeps them: items, each learned now, from no message. */
const itemTexts = (items: unknown) => (items as { text: string }[]).map((item) => item.text);

describe("inject", () => {
  it("writes a section given as SECTION.Field, in any case, without needing secrets", async () => {
    const result = await runInProcess(
      ["inject", "understanding.known", "-", "(user)", "works", "night", "shifts"],
      env,
    );
    expect(result).toEqual({
      code: 0,
      stdout: "UNDERSTANDING.Known is now:\n- (user) works night shifts\n",
      stderr: "",
    });
    const [item] = (await scratchpad()).understanding_known as Record<string, unknown>[];
    expect(item).toEqual({
      id: expect.stringMatching(/^k[0-9a-f]{6}$/),
      text: "- (user) works night shifts",
      learnedAt: expect.any(String),
      sourceMessageIds: [],
    });
  });

  it("APPEND: adds a line to what is there", async () => {
    expect((await runInProcess(["inject", "Known", "--", "- (user) has a cat"], env)).code).toBe(0);
    const result = await runInProcess(["inject", "Known", "APPEND: - (user) cat is called Miso"], env);
    expect(result.code).toBe(0);
    expect(itemTexts((await scratchpad()).understanding_known)).toEqual([
      "- (user) has a cat",
      "- (user) cat is called Miso",
    ]);
  });

  it("an unknown section is one line listing the valid ones, exit 2, nothing written", async () => {
    const result = await runInProcess(["inject", "Mood", "fine"], env);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(
      /unknown section "Mood"; valid sections: IDENTITY\.Purpose, .*WORKSPACE, .*SELF\.Flags/,
    );
    await expect(readFile(mindFile())).rejects.toThrow(/ENOENT/);
  });

  it("missing text is a usage error", async () => {
    expect((await runInProcess(["inject", "Known"], env)).code).toBe(2);
  });

  it("a refused value changes nothing and says why", async () => {
    await runInProcess(["inject", "Now", "settling in"], env);
    const before = await readFile(mindFile(), "utf8");
    const result = await runInProcess(["inject", "Confidence", "pretty sure"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/refused: SELF\.Confidence must start with HIGH, MEDIUM or LOW/);
    expect(await readFile(mindFile(), "utf8")).toBe(before);
  });

  it("a WORKSPACE over its budget is archived into a keyed note, a pointer left in its place", async () => {
    const big = "- notes on the kitchen renovation plan\n".repeat(80);
    const result = await runInProcess(["inject", "workspace", "--", big], env);
    expect(result.code).toBe(0);
    const pointer = (await scratchpad()).workspace as string;
    const key = /"(workspace-[0-9-]+)"/.exec(pointer)?.[1];
    expect(key).toBeDefined();
    expect(await readFile(join(root, "data", "notes", `${key}.md`), "utf8")).toBe(big.trim());
  });

  it("refuses while the bot holds the data directory, naming its pid", async () => {
    const lock = await acquireDataLock(join(root, "data"), "start");
    try {
      const result = await runInProcess(["inject", "Now", "x"], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`pid ${process.pid}, start`);
    } finally {
      await lock.release();
    }
    const mind = await openMind(join(root, "data"), new SettableClock("2026-11-22T00:00:00Z"));
    expect(mind.read().scratchpad.trajectory_now).not.toBe("x");
  });
});
