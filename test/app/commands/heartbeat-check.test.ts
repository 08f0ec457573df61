import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines, ROOT, runInProcess, spawnCli } from "../../cli/run.ts";
import { EVENING_ANSWERER_LOG } from "../../support/evening-answerer.ts";

const SITUATIONS = join(ROOT, "test/fixtures/situations");
/** 23:10 in Tokyo: quiet there, mid-afternoon in UTC. */
const QUIET = ["--log", join(SITUATIONS, "quiet-hours.log.json"), "--now", "2026-02-16T23:10:00+09:00"];

let dir: string;

/** Writes a log into the test's temp folder and returns its path. */
async function logFile(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "presence-heartbeat-check-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function decide(args: string[], env: Record<string, string> = {}) {
  const result = await runInProcess(["heartbeat-check", ...args, "--json"], env);
  expect(result).toMatchObject({ code: 0, stderr: "" });
  return JSON.parse(result.stdout) as { fire: boolean; reason: string; detail: string; timezone: string };
}

describe("heartbeat-check", () => {
  it("reads the zone from --tz, else PRESENCE_TIMEZONE, and --tz wins", async () => {
    expect(await decide([...QUIET, "--tz", "Asia/Tokyo"])).toMatchObject({
      reason: "quiet-hours",
      timezone: "Asia/Tokyo",
    });
    expect(await decide(QUIET, { PRESENCE_TIMEZONE: "Asia/Tokyo" })).toMatchObject({ reason: "quiet-hours" });
    expect(await decide([...QUIET, "--tz", "UTC"], { PRESENCE_TIMEZONE: "Asia/Tokyo" })).toMatchObject({
      reason: "ok",
      timezone: "UTC",
    });
  });

  it("takes the rules from the environment", async () => {
    expect(
      await decide([...QUIET, "--tz", "Asia/Tokyo"], { PRESENCE_QUIET_HOURS: "23:30-07:00" }),
    ).toMatchObject({
      reason: "ok",
    });
  });

  it("reads --now without an offset as a wall time in the zone", async () => {
    const local = [
      "--log",
      join(SITUATIONS, "quiet-hours.log.json"),
      "--now",
      "2026-02-16T23:10",
      "--tz",
      "Asia/Tokyo",
    ];
    expect(await decide(local)).toMatchObject({ reason: "quiet-hours" });
  });

  it("holds while --paused-until is ahead, and says until when", async () => {
    const paused = await decide([...QUIET, "--tz", "UTC", "--paused-until", "2026-02-16T16:00:00Z"]);
    expect(paused).toMatchObject({ fire: false, reason: "paused" });
    expect(paused.detail).toContain("16:00");
    expect(await decide([...QUIET, "--tz", "UTC", "--paused-until", "2026-02-16T14:00:00Z"])).toMatchObject({
      reason: "ok",
    });
  });

  it("counts the log's heartbeat messages of the local day toward the daily limit", async () => {
    const checkIns = ["08:07", "10:07", "12:07"].flatMap((time, i) => [
      {
        role: "assistant",
        trigger: "heartbeat",
        text: "How is the day going?",
        ts: `2026-02-10T${time}:00Z`,
      },
      { role: "user", text: `Fine, thanks (${i})`, ts: `2026-02-10T${time.replace("07", "20")}:00Z` },
    ]);
    const path = await logFile("three-check-ins.json", checkIns);
    const args = ["--log", path, "--now", "2026-02-10T15:00:00Z", "--tz", "UTC"];
    expect(await decide(args)).toMatchObject({ reason: "ok" });
    expect(await decide(args, { PRESENCE_MAX_CHECKINS_PER_DAY: "3" })).toMatchObject({
      reason: "daily-limit",
      detail: "3 check-ins already sent today (limit 3).",
    });
  });

  it("does not count the companion's notices as check-ins sent", async () => {
    const notices = ["08:07", "10:07", "12:07"].map((time) => ({
      role: "assistant",
      trigger: "heartbeat",
      notice: true,
      text: "I can't reach my model right now, so I've stopped checking in; I'll say when I'm back.",
      ts: `2026-02-10T${time}:00Z`,
    }));
    const path = await logFile("three-notices.json", notices);
    const args = ["--log", path, "--now", "2026-02-10T15:00:00Z", "--tz", "UTC"];
    expect(await decide(args, { PRESENCE_MAX_CHECKINS_PER_DAY: "3" })).toMatchObject({ reason: "ok" });
  });

  it("prints one human line without --json", async () => {
    const result = await runInProcess(["heartbeat-check", ...QUIET, "--tz", "Asia/Tokyo"]);
    expect(result.stdout).toBe(
      "hold (quiet-hours): It is 23:10 in Asia/Tokyo, inside quiet hours 22:00-08:00.\n",
    );
  });

  describe("the hours the person answers, learned from the log", () => {
    /** Three weeks of evenings in Berlin, then Tuesday 24 February at this local time. */
    const evening = (hhmm: string) => [
      "--log",
      EVENING_ANSWERER_LOG,
      "--now",
      `2026-02-24T${hhmm}`,
      "--tz",
      "Europe/Berlin",
    ];

    it("holds a check-in at an hour the person rarely answers, and names their best hours", async () => {
      const result = await spawnCli(["heartbeat-check", ...evening("10:07")]);
      expect(result).toEqual({
        code: 0,
        stderr: "",
        stdout:
          "hold (unlikely-moment): It is 10:07 on a weekday in Europe/Berlin; the person answered check-ins around this hour 0% of the time lately, best hours 19–22.\n",
      });
      expect(await decide(evening("10:07"))).toMatchObject({
        fire: false,
        reason: "unlikely-moment",
        moment: { local: "10:07", weekend: false, bestHours: [{ from: 19, to: 22 }] },
      });
    });

    it("lets one out in the evening, and at any hour with PRESENCE_LEARN_TIMING=off", async () => {
      expect(await decide(evening("20:07"))).toMatchObject({ fire: true, reason: "ok" });
      expect(await decide(evening("10:07"), { PRESENCE_LEARN_TIMING: "off" })).toMatchObject({
        fire: true,
        reason: "ok",
      });
    });

    it("lets one out at any hour when the log's last check-in is 24 hours old", async () => {
      expect(
        await decide(["--log", EVENING_ANSWERER_LOG, "--now", "2026-02-24T20:37", "--tz", "Europe/Berlin"]),
      ).toMatchObject({ reason: "ok" });
      expect(
        await decide(["--log", EVENING_ANSWERER_LOG, "--now", "2026-02-25T10:07", "--tz", "Europe/Berlin"]),
      ).toMatchObject({ reason: "ok" });
    });
  });

  describe("mistakes: one line naming the problem, exit 2", () => {
    const cases: [string, () => Promise<string[]>, RegExp][] = [
      [
        "a log that is not JSON",
        async () => ["--log", await logFile("bad.json", "{ nope"), "--now", "2026-02-10T10:00:00Z"],
        /bad\.json: is not valid JSON/,
      ],
      [
        "a log entry without a time",
        async () => [
          "--log",
          await logFile("no-ts.json", [{ role: "user", text: "hi" }]),
          "--now",
          "2026-02-10T10:00:00Z",
        ],
        /no-ts\.json: entry 1: ts is missing/,
      ],
      [
        "a log that does not exist",
        async () => ["--log", join(dir, "missing.json"), "--now", "2026-02-10T10:00:00Z"],
        /missing\.json: cannot be read/,
      ],
      [
        "an unknown --tz",
        async () => [...QUIET, "--tz", "Mars/Olympus"],
        /--tz "Mars\/Olympus" is not an IANA time zone/,
      ],
      [
        "an unparseable --now",
        async () => ["--log", join(SITUATIONS, "empty.log.json"), "--now", "half past ten"],
        /--now "half past ten" is not an ISO 8601 time/,
      ],
      [
        "an unparseable --paused-until",
        async () => [...QUIET, "--paused-until", "soon"],
        /--paused-until "soon" is not an ISO 8601 time/,
      ],
      ["no --log", async () => ["--now", "2026-02-10T10:00:00Z"], /--log is required/],
      ["no --now", async () => ["--log", join(SITUATIONS, "empty.log.json")], /--now is required/],
    ];

    it.each(cases)("%s", async (_name, args, problem) => {
      const result = await runInProcess(["heartbeat-check", ...(await args())]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toMatch(/^npm run cli -- heartbeat-check: /);
      expect(result.stderr).toMatch(problem);
    });

    it("an unknown zone in PRESENCE_TIMEZONE, with every other bad setting on the same line", async () => {
      const result = await runInProcess(["heartbeat-check", ...QUIET], {
        PRESENCE_TIMEZONE: "Mars/Olympus",
        PRESENCE_MAX_UNANSWERED: "lots",
      });
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toContain('PRESENCE_TIMEZONE "Mars/Olympus" is not an IANA time zone');
      expect(result.stderr).toContain("PRESENCE_MAX_UNANSWERED");
    });

    it("a PRESENCE_LEARN_TIMING that is neither on nor off", async () => {
      const result = await runInProcess(["heartbeat-check", ...QUIET], {
        PRESENCE_LEARN_TIMING: "yes please",
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        'npm run cli -- heartbeat-check: PRESENCE_LEARN_TIMING must be one of on, off, got "yes please" (for example PRESENCE_LEARN_TIMING=on)\n',
      );
    });
  });
});
