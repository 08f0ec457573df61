import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../../src/core/clock.ts";
import { Trace } from "../../../src/store/trace.ts";
import { runInProcess } from "../../cli/run.ts";

let root: string;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "presence-trace-cmd-"));
  const dataDir = join(root, "data");
  env = { PRESENCE_DATA_DIR: dataDir, PRESENCE_TIMEZONE: "Europe/Berlin" };
  const clock = new SettableClock("2026-11-22T09:00:00.000Z");
  const trace = new Trace({ dataDir, clock });
  await trace.append({
    kind: "reply",
    outcome: "sent",
    input: [{ id: "u1", ts: clock.now().toISOString(), text: "The interview went well!" }],
    shown: {
      prefix: 1800,
      scratchpad: 210,
      awareness: 300,
      episodic: 40,
      working: 600,
      input: 12,
      total: 2962,
      truncated: [],
    },
    returned: { raw: "That's wonderful.", removed: [], toolCalls: [] },
    sent: { id: "a1", text: "That's wonderful." },
    usage: [{ input: 2962, output: 9, cacheWrite: 0, cacheRead: 1800 }],
    reflection: "queued",
  });
  await trace.append({
    kind: "reflect",
    outcome: "applied",
    shown: {
      model: "claude-haiku-5-5",
      sections: [
        { name: "prior_understanding", tokens: 220 },
        { name: "exchange", tokens: 30 },
      ],
    },
    returned: { trajectory_now: "Waiting on the result" },
    changes: ["scratchpad TRAJECTORY.Now"],
    tokens: { input: 1500, output: 40, cacheWrite: 0, cacheRead: 0 },
  });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("trace", () => {
  it("prints input, what was shown, what came back, what changed and tokens", async () => {
    const result = await runInProcess(["trace"], env);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out).toContain("── 2026-11-22 10:00:00 reply · sent");
    expect(out).toContain('input:    "The interview went well!"');
    expect(out).toContain(
      "shown:    prefix 1800, scratchpad 210, awareness 300, episodic 40, working 600, input 12, total 2962",
    );
    expect(out).toContain('sent:     "That\'s wonderful."');
    expect(out).toContain("tokens:   input 2962, output 9, cache write 0, cache read 1800");
    expect(out).toContain("shown:    claude-haiku-5-5: prior_understanding 220, exchange 30 tokens");
    expect(out).toContain("changes:  scratchpad TRAJECTORY.Now");
    expect(out.indexOf("reply · sent")).toBeLessThan(out.indexOf("reflect · applied"));
  });

  it("--last N limits to the newest N; --json prints them whole", async () => {
    const last = await runInProcess(["trace", "--last", "1"], env);
    expect(last.stdout).not.toContain("reply · sent");
    expect(last.stdout).toContain("reflect · applied");
    const json = await runInProcess(["trace", "--json", "--last", "2"], env);
    expect(
      json.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).kind),
    ).toEqual(["reply", "reflect"]);
  });

  it("rejects a bad --last with exit 2", async () => {
    const result = await runInProcess(["trace", "--last", "0"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--last must be a whole number of at least 1");
  });

  it("says so when nothing was traced", async () => {
    const result = await runInProcess(["trace"], { ...env, PRESENCE_DATA_DIR: join(root, "empty") });
    expect(result).toMatchObject({ code: 0, stdout: "No turns traced yet.\n" });
  });
});
