import { describe, expect, it } from "vitest";
import {
  effectiveSettings,
  emptyHeartbeatState,
  formatQuietHours,
  parseQuietHours,
} from "../../src/core/checkin-settings.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";

describe("quiet hours", () => {
  it("parses and renders HH:MM-HH:MM, including ranges over midnight", () => {
    expect(parseQuietHours("22:00-08:00")).toEqual({ start: 1320, end: 480 });
    expect(formatQuietHours({ start: 1320, end: 480 })).toBe("22:00-08:00");
    for (const bad of ["22-08", "24:00-08:00", "22:00", "22:00-08:00-09:00", ""]) {
      expect(parseQuietHours(bad)).toBeNull();
    }
  });
});

describe("effectiveSettings", () => {
  const now = new Date("2026-03-10T14:00:00Z");

  it("is the configured settings while the person set nothing", () => {
    expect(effectiveSettings(BERLIN_CHECKIN_SETTINGS, emptyHeartbeatState, now)).toEqual({
      ...BERLIN_CHECKIN_SETTINGS,
      paused: null,
    });
  });

  it("puts the person's /tz and /quiet over the configured zone and quiet hours, and nothing else", () => {
    const state = { ...emptyHeartbeatState, timezone: "Asia/Tokyo", quietHours: { start: 60, end: 420 } };
    expect(effectiveSettings(BERLIN_CHECKIN_SETTINGS, state, now)).toEqual({
      ...BERLIN_CHECKIN_SETTINGS,
      timezone: "Asia/Tokyo",
      quietHours: { start: 60, end: 420 },
      paused: null,
    });
  });

  it("holds a pause until its instant, and one until /resume however long", () => {
    const until = { ...emptyHeartbeatState, pausedUntil: "2026-03-10T15:00:00.000Z" };
    expect(effectiveSettings(BERLIN_CHECKIN_SETTINGS, until, now).paused).toEqual({
      until: "2026-03-10T15:00:00.000Z",
      indefinitely: false,
    });
    const later = new Date("2026-03-10T15:00:00Z");
    expect(effectiveSettings(BERLIN_CHECKIN_SETTINGS, until, later).paused).toBeNull();
    const indefinitely = { ...until, pausedIndefinitely: true };
    expect(effectiveSettings(BERLIN_CHECKIN_SETTINGS, indefinitely, later).paused).toEqual({
      until: null,
      indefinitely: true,
    });
  });
});
