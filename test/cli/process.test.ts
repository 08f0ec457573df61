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
      'presence: unknown command "frobnicate" (run with --help to see the commands)',
    ]);
  });
});
