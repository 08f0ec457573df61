import { describe, expect, it } from "vitest";
import { loadCoreConfig } from "../../src/app/config.ts";
import { buildStatus, formatStatus, unansweredCount } from "../../src/app/status.ts";
import { initialMindState, type MindState } from "../../src/companion/mind-document.ts";
import { parseCron } from "../../src/conversation/schedule.ts";
import type { Media, Message } from "../../src/core/message.ts";

const core = loadCoreConfig({ PRESENCE_TIMEZONE: "UTC", PRESENCE_HEARTBEAT_CRON: "7 * * * *" });

function msg(id: string, ts: string, role: Message["role"]): Message {
  return {
    id,
    ts,
    role,
    text: "…",
    channel: "cli",
    ...(role === "assistant" ? { trigger: "heartbeat" as const } : {}),
  };
}

function status(
  now: string,
  change: (mind: MindState) => void = () => undefined,
  extra: { tokensToday?: number; budget?: number | null } = {},
) {
  const mind = initialMindState(new Date(now));
  change(mind);
  return buildStatus({
    now: new Date(now),
    core,
    mind,
    messages: [],
    tokensToday: extra.tokensToday ?? 0,
    budget: extra.budget === undefined ? 1_000 : extra.budget,
  });
}

describe("buildStatus", () => {
  it("gives the next tick of the schedule outside quiet hours", () => {
    expect(status("2026-11-22T20:30:00.000Z").nextCheckin).toBe("2026-11-22T21:07:00.000Z");
    expect(status("2026-11-22T21:30:00.000Z").nextCheckin).toBe("2026-11-23T08:07:00.000Z");
  });

  it("follows the person's quiet hours and zone overrides", () => {
    const s = status("2026-11-22T12:40:00.000Z", (m) => {
      m.heartbeat.timezone = "Asia/Tokyo";
      m.heartbeat.quietHours = { start: 21 * 60, end: 9 * 60 };
    });
    // 21:40 in Tokyo: quiet until 09:00 there, which is 00:00Z; the first tick after is 00:07Z.
    expect(s.timezone).toBe("Asia/Tokyo");
    expect(s.nextCheckin).toBe("2026-11-23T00:07:00.000Z");
  });

  it("a pause moves the next check-in past it; an indefinite pause or a block means none", () => {
    const until = status("2026-11-22T09:40:00.000Z", (m) => {
      m.heartbeat.pausedUntil = "2026-11-23T10:00:00.000Z";
    });
    expect(until.paused).toEqual({ until: "2026-11-23T10:00:00.000Z", indefinitely: false });
    expect(until.nextCheckin).toBe("2026-11-23T10:07:00.000Z");
    const indefinitely = status("2026-11-22T09:40:00.000Z", (m) => {
      m.heartbeat.pausedIndefinitely = true;
    });
    expect(indefinitely.paused).toEqual({ until: null, indefinitely: true });
    expect(indefinitely.nextCheckin).toBeNull();
    const blocked = status("2026-11-22T09:40:00.000Z", (m) => {
      m.heartbeat.blocked = true;
    });
    expect(blocked).toMatchObject({ blocked: true, nextCheckin: null });
  });

  it("a pause that has ended is not shown", () => {
    const s = status("2026-11-22T09:40:00.000Z", (m) => {
      m.heartbeat.pausedUntil = "2026-11-22T09:00:00.000Z";
    });
    expect(s.paused).toBeNull();
    expect(s.nextCheckin).toBe("2026-11-22T10:07:00.000Z");
  });

  it("over the budget, no check-in until the next local day", () => {
    const s = status("2026-11-22T09:40:00.000Z", () => undefined, { tokensToday: 1_500, budget: 1_000 });
    expect(s.nextCheckin).toBe("2026-11-23T08:07:00.000Z");
  });

  it("counts the companion's messages since the person last wrote", () => {
    expect(
      unansweredCount([
        msg("1", "2026-11-22T08:00:00Z", "assistant"),
        msg("2", "2026-11-22T08:10:00Z", "user"),
        msg("3", "2026-11-22T09:00:00Z", "assistant"),
        msg("4", "2026-11-22T10:00:00Z", "assistant"),
      ]),
    ).toBe(2);
    expect(unansweredCount([])).toBe(0);
  });

  it("leaves the companion's notices out of the unanswered count", () => {
    expect(
      unansweredCount([
        msg("1", "2026-11-22T08:10:00Z", "user"),
        msg("2", "2026-11-22T09:00:00Z", "assistant"),
        { ...msg("3", "2026-11-22T10:00:00Z", "assistant"), notice: true },
      ]),
    ).toBe(1);
  });
});

describe("buildStatus: the limits the pre-check applies", () => {
  const limits = loadCoreConfig({
    PRESENCE_TIMEZONE: "UTC",
    PRESENCE_HEARTBEAT_CRON: "7 * * * *",
    PRESENCE_QUIET_HOURS: "22:00-08:00",
    PRESENCE_MAX_UNANSWERED: "3",
    PRESENCE_WEEKEND_MAX_UNANSWERED: "1",
    PRESENCE_MIN_GAP_MINUTES: "45",
    PRESENCE_RECENT_MINUTES: "30",
    PRESENCE_MAX_CHECKINS_PER_DAY: "2",
  });
  const at = (now: string, messages: Message[], change: (mind: MindState) => void = () => undefined) => {
    const mind = initialMindState(new Date(now));
    change(mind);
    return buildStatus({ now: new Date(now), core: limits, mind, messages, tokensToday: 0, budget: null });
  };
  // Tue 24 Nov 2026: a weekday.
  const person = msg("u1", "2026-11-24T06:00:00.000Z", "user");

  it("waits for you once the unanswered limit is reached", () => {
    const s = at("2026-11-24T12:00:00.000Z", [
      person,
      msg("a1", "2026-11-24T08:07:00.000Z", "assistant"),
      msg("a2", "2026-11-24T09:07:00.000Z", "assistant"),
      msg("a3", "2026-11-24T10:07:00.000Z", "assistant"),
    ]);
    expect(s).toMatchObject({ nextCheckin: null, awaitingYou: true });
    expect(formatStatus(s)).toContain("Next check-in: after you write");
  });

  it("skips the weekend while the weekend limit holds, and waits for you when only weekends are scheduled", () => {
    const saturday = [person, msg("a1", "2026-11-28T09:07:00.000Z", "assistant")];
    const s = at("2026-11-28T12:00:00.000Z", saturday);
    expect(s).toMatchObject({ nextCheckin: "2026-11-30T08:07:00.000Z", awaitingYou: false });
    const everyFifteenSeconds = buildStatus({
      now: new Date("2026-11-28T12:00:00.000Z"),
      core: { ...limits, heartbeatCron: parseCron("*/15 * * * * *") },
      mind: initialMindState(new Date("2026-11-28T12:00:00.000Z")),
      messages: saturday,
      tokensToday: 0,
      budget: null,
    });
    expect(everyFifteenSeconds.nextCheckin).toBe("2026-11-30T08:00:00.000Z");
    const weekendsOnly = buildStatus({
      now: new Date("2026-11-28T12:00:00.000Z"),
      core: { ...limits, heartbeatCron: parseCron("7 * * * 0,6") },
      mind: initialMindState(new Date("2026-11-28T12:00:00.000Z")),
      messages: saturday,
      tokensToday: 0,
      budget: null,
    });
    expect(formatStatus(weekendsOnly)).toContain("Next check-in: after you write");
  });

  it("moves to the first tick of the next day once today's check-ins are used up", () => {
    const s = at("2026-11-24T12:00:00.000Z", [], (m) => {
      m.heartbeat.checkinsSent = ["2026-11-24T08:07:00.000Z", "2026-11-24T09:07:00.000Z"];
    });
    expect(s.nextCheckin).toBe("2026-11-25T08:07:00.000Z");
  });

  it("waits out the minimum gap after the last message and a recent conversation", () => {
    const gap = at("2026-11-24T12:00:00.000Z", [person, msg("a1", "2026-11-24T11:30:00.000Z", "assistant")]);
    // 11:30 + 45 min = 12:15: the 12:07 tick is too soon.
    expect(gap.nextCheckin).toBe("2026-11-24T13:07:00.000Z");
    const talking = at("2026-11-24T12:00:00.000Z", [msg("u2", "2026-11-24T11:30:00.000Z", "user")]);
    expect(talking.nextCheckin).toBe("2026-11-24T12:07:00.000Z");
    const justNow = at("2026-11-24T12:00:00.000Z", [msg("u3", "2026-11-24T11:59:00.000Z", "user")]);
    expect(justNow.nextCheckin).toBe("2026-11-24T13:07:00.000Z");
  });
});

describe("formatStatus", () => {
  it("says it in a few lines, in the person's local time", () => {
    const s = status(
      "2026-11-22T09:40:00.000Z",
      (m) => {
        m.heartbeat.pausedUntil = "2026-11-22T18:00:00.000Z";
        m.decisions.push({
          ts: "2026-11-22T09:07:00.000Z",
          fire: false,
          reason: "paused",
          detail: "paused until 18:00",
        });
      },
      { tokensToday: 1_234, budget: 2_000_000 },
    );
    expect(formatStatus(s, "Europe/Berlin").split("\n")).toEqual([
      "Check-ins: paused until Sun 22 Nov 19:00",
      "Unanswered: none",
      "Next check-in: Sun 22 Nov 19:07 at the earliest (Europe/Berlin)",
      "Tokens today: 1,234 of 2,000,000",
      "Last check-in decision: Sun 22 Nov 10:07, I didn't check in: you had paused check-ins.",
      "Voice notes: not heard (no transcription service: PRESENCE_TRANSCRIBE_URL is not set)",
    ]);
  });

  it("says where voice notes are transcribed, and when that is this machine", () => {
    const at = (transcribeUrl: string) =>
      formatStatus(
        buildStatus({
          now: new Date("2026-11-22T09:40:00.000Z"),
          core,
          mind: initialMindState(new Date("2026-11-22T09:40:00.000Z")),
          messages: [],
          tokensToday: 0,
          budget: null,
          transcribeUrl,
        }),
      )
        .split("\n")
        .find((line) => line.startsWith("Voice notes:"));
    expect(at("http://127.0.0.1:8080/v1")).toBe(
      "Voice notes: heard, transcribed at 127.0.0.1:8080, on this machine",
    );
    expect(at("http://localhost:9000/v1")).toBe(
      "Voice notes: heard, transcribed at localhost:9000, on this machine",
    );
    expect(at("https://api.openai.com/v1")).toBe("Voice notes: heard, transcribed at api.openai.com");
  });

  it("says what is wrong with the service: what the start check found, until a note is heard, then the newest failure", () => {
    const now = new Date("2026-11-22T09:40:00.000Z");
    const checkedAt = new Date("2026-11-22T08:00:00.000Z");
    const note = (id: string, ts: string, media: Partial<Media>): Message => ({
      ...msg(id, ts, "user"),
      channel: "telegram",
      media: { kind: "voice", durationSeconds: 5, stored: `files/${id}.ogg`, ...media },
    });
    const line = (messages: Message[]) =>
      formatStatus(
        buildStatus({
          now,
          core,
          mind: initialMindState(now),
          messages,
          tokensToday: 0,
          budget: null,
          transcribeUrl: "http://127.0.0.1:8080/v1",
          transcriptionAtStart: {
            warning: {
              message: "the transcription service at PRESENCE_TRANSCRIBE_URL did not answer (…)",
              summary: "the service did not answer when presence started (check PRESENCE_TRANSCRIBE_URL)",
              setting: "PRESENCE_TRANSCRIBE_URL",
            },
            checkedAt,
          },
        }),
      )
        .split("\n")
        .find((l) => l.startsWith("Voice notes:"));
    const heard = "Voice notes: heard, transcribed at 127.0.0.1:8080, on this machine";
    expect(line([])).toBe(
      `${heard}, but the service did not answer when presence started (check PRESENCE_TRANSCRIBE_URL)`,
    );
    // Heard before the check: the warning still stands. Heard after it: the service works.
    expect(line([note("a", "2026-11-22T07:00:00.000Z", { transcribed: true })])).toContain("did not answer");
    expect(line([note("b", "2026-11-22T09:00:00.000Z", { transcribed: true })])).toBe(heard);
    // A note too long to hear says nothing of the service; one it refused does.
    expect(
      line([
        note("c", "2026-11-22T09:00:00.000Z", { transcribed: true }),
        note("d", "2026-11-22T09:10:00.000Z", { notHeard: "length" }),
      ]),
    ).toBe(heard);
    expect(
      line([
        note("e", "2026-11-22T09:00:00.000Z", { transcribed: true }),
        note("f", "2026-11-22T09:20:00.000Z", {
          notHeard: "refused",
          notHeardSetting: "PRESENCE_TRANSCRIBE_KEY",
        }),
      ]),
    ).toBe(
      `${heard}, but the last voice note was not heard: the transcription service refused it (check PRESENCE_TRANSCRIBE_KEY)`,
    );
  });

  it("says when the budget is spent and when check-ins are stopped by a block", () => {
    const over = status("2026-11-22T09:40:00.000Z", () => undefined, { tokensToday: 5_000, budget: 1_000 });
    expect(formatStatus(over)).toContain(
      "Tokens today: 5,000 of 1,000 (over budget: no check-ins until tomorrow)",
    );
    const blocked = status("2026-11-22T09:40:00.000Z", (m) => {
      m.heartbeat.blocked = true;
    });
    expect(formatStatus(blocked)).toContain("Check-ins: stopped: the bot was blocked");
    expect(formatStatus(blocked)).toContain("Next check-in: after you write");
  });

  it("says on the day of a /wipe that the token count was kept through it, and why; not the next day", () => {
    const wiped = (m: MindState) => {
      m.heartbeat.timezone = "Europe/Berlin";
      m.wipedAt = "2026-11-22T21:30:00.000Z";
    };
    const sameDay = status("2026-11-22T22:10:00.000Z", wiped, { tokensToday: 4_321, budget: 50_000 });
    expect(formatStatus(sameDay)).toContain(
      "Tokens today: 4,321 of 50,000; the count was kept through your /wipe at 22:30 (a number, no words), so today's budget still holds",
    );
    // 00:10 in Berlin is the next local day: the count started after the wipe.
    const nextDay = status("2026-11-22T23:10:00.000Z", wiped, { tokensToday: 10, budget: 50_000 });
    expect(nextDay.wipedToday).toBeNull();
    expect(formatStatus(nextDay)).not.toContain("/wipe");
  });

  it("shows what episodic memory holds, retired items left out", () => {
    const item = (id: string, kind: "pattern" | "open_loop" | "milestone", retired = false) => ({
      id,
      kind,
      text: `item ${id}`,
      learnedAt: "2026-11-20T09:00:00.000Z",
      sourceMessageIds: [],
      importance: 3,
      topics: [],
      ...(retired ? { retiredAt: "2026-11-21T09:00:00.000Z", retiredWhy: "closed" as const } : {}),
    });
    const s = status("2026-11-22T09:40:00.000Z", (m) => {
      m.memory = [item("a", "pattern"), item("b", "open_loop"), item("c", "open_loop", true)];
    });
    expect(s.memory).toEqual({ declaredPatterns: 1, openLoops: 1, milestones: 0 });
    expect(formatStatus(s)).toContain("Memory: 1 declared pattern, 1 open loop, 0 milestones");
    expect(formatStatus(status("2026-11-22T09:40:00.000Z"))).not.toContain("Memory:");
  });
});
