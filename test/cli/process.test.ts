import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines, ROOT, spawnCli } from "./run.ts";

/** The real process, started the way a person starts it: exit codes and streams as they see them. */
describe("the presence process", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "presence-cli-"));
    await writeFile(join(dir, "broken.json"), '{ "messages": [ { "role": "user", "text": "hi" ');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("answers, fails and refuses with the right exit codes and nothing else on the streams", async () => {
    const log = join(ROOT, "test/fixtures/situations/hydration-pings.log.json");
    const [check, broken, unknown] = await Promise.all([
      spawnCli(["heartbeat-check", "--log", log, "--now", "2026-02-07T14:22:00+01:00", "--json"], {
        PRESENCE_TIMEZONE: "Europe/Madrid",
      }),
      spawnCli(["awareness", "--log", join(dir, "broken.json"), "--now", "2026-02-07T14:22:00Z"]),
      spawnCli(["frobnicate"]),
    ]);

    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({
      fire: false,
      reason: "unanswered-limit",
      timezone: "Europe/Madrid",
      now: "2026-02-07T13:22:00.000Z",
    });

    expect(broken.code).toBe(2);
    expect(broken.stdout).toBe("");
    expect(lines(broken.stderr)).toHaveLength(1);
    expect(broken.stderr).toContain(`${join(dir, "broken.json")}: is not valid JSON`);

    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual([
      "npm run cli -- frobnicate: unknown command (run `npm run cli -- --help` to see the commands)",
    ]);
  });
});

/** Runs `command` from the repository root with a clean environment; what it wrote to stderr, and its code. */
function run(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("usage and error lines name the command as it was typed", () => {
  it("through npm: `npm run cli -- awareness`", async () => {
    const result = await run("npm", ["run", "-s", "cli", "--", "awareness"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      "npm run cli -- awareness: --now is required (see `npm run cli -- awareness --help`)",
    ]);
  });

  it("once linked: `presence awareness` (bin/presence.mjs)", async () => {
    const result = await run(process.execPath, [join(ROOT, "bin/presence.mjs"), "awareness"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      "presence awareness: --now is required (see `presence awareness --help`)",
    ]);
  });
});
