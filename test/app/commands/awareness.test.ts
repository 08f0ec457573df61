import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { awarenessContextSchema } from "../../../src/conversation/awareness/context.ts";
import { lines, ROOT, runInProcess } from "../../cli/run.ts";

/** Ten minutes after the person last wrote, in an active conversation. */
const ACTIVE = [
  "--log",
  join(ROOT, "test/fixtures/situations/warm-turning-terse.log.json"),
  "--now",
  "2026-02-11T13:00:00Z",
  "--tz",
  "Europe/London",
];

describe("awareness", () => {
  it("gives a heartbeat the full block and a reply in an active conversation the slim one", async () => {
    const asJson = async (trigger: string) => {
      const result = await runInProcess(["awareness", ...ACTIVE, "--trigger", trigger, "--json"]);
      expect(result.code).toBe(0);
      return awarenessContextSchema.parse(JSON.parse(result.stdout));
    };
    expect((await asJson("reply")).format).toBe("slim");
    expect((await asJson("heartbeat")).format).toBe("full");
  });

  it("prints the block for a heartbeat unless told otherwise", async () => {
    const byDefault = await runInProcess(["awareness", ...ACTIVE]);
    const heartbeat = await runInProcess(["awareness", ...ACTIVE, "--trigger", "heartbeat"]);
    const reply = await runInProcess(["awareness", ...ACTIVE, "--trigger", "reply"]);
    expect(byDefault.stdout).toBe(heartbeat.stdout);
    expect(reply.stdout).not.toBe(heartbeat.stdout);
  });

  it("reports the person's zone and the moment in the JSON", async () => {
    const result = await runInProcess(["awareness", ...ACTIVE, "--json"]);
    expect(JSON.parse(result.stdout)).toMatchObject({
      now: "2026-02-11T13:00:00.000Z",
      timezone: "Europe/London",
    });
  });

  it("refuses an unknown --trigger in one line, exit 2", async () => {
    const result = await runInProcess(["awareness", ...ACTIVE, "--trigger", "cron"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      'npm run cli -- awareness: --trigger must be heartbeat or reply, got "cron"',
    ]);
  });

  it("refuses an unknown zone and an unparseable --now in one line, exit 2", async () => {
    const zone = await runInProcess(["awareness", ...ACTIVE, "--tz", "Europe/Atlantis"]);
    expect(zone.code).toBe(2);
    expect(lines(zone.stderr)).toEqual([
      'npm run cli -- awareness: --tz "Europe/Atlantis" is not an IANA time zone (for example Europe/Berlin)',
    ]);
    const now = await runInProcess(["awareness", ...ACTIVE.slice(0, 2), "--now", "2026-13-45T99:00:00Z"]);
    expect(now.code).toBe(2);
    expect(lines(now.stderr)).toHaveLength(1);
    expect(now.stderr).toContain('--now "2026-13-45T99:00:00Z" is not an ISO 8601 time');
  });

  it.each(["14:22", "2026-02", "2026"])(
    "refuses --now %j, which lacks a date or a time that would be taken from the wall clock",
    async (text) => {
      const result = await runInProcess(["awareness", ...ACTIVE.slice(0, 2), "--now", text]);
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toEqual([
        `npm run cli -- awareness: --now "${text}" is not an ISO 8601 time (for example 2026-02-07T14:22:00Z or 2026-02-07T14:22)`,
      ]);
    },
  );

  it("reads a --now without an offset as a wall time in the person's zone", async () => {
    const result = await runInProcess([
      "awareness",
      ...ACTIVE.slice(0, 2),
      "--now",
      "2026-07-01T09:30",
      "--tz",
      "Europe/Madrid",
      "--json",
    ]);
    expect(JSON.parse(result.stdout).now).toBe("2026-07-01T07:30:00.000Z");
  });
});
