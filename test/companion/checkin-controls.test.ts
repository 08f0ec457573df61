import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CheckinControls } from "../../src/companion/checkin-controls.ts";
import { type MindStore, openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { recordDecision } from "../../src/core/decision.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";

let dir: string;
let clock: SettableClock;
let mind: MindStore;
let zones: string[];
let controls: CheckinControls;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "presence-checkins-"));
  clock = new SettableClock("2026-03-10T14:00:00Z");
  mind = await openMind(dir, clock);
  zones = [];
  controls = new CheckinControls({
    core: BERLIN_CHECKIN_SETTINGS,
    mind,
    clock,
    onZoneChange: (zone) => zones.push(zone),
  });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("CheckinControls", () => {
  it("keeps a pause, quiet hours and a zone in the mind, and reads them back in force", async () => {
    await controls.pause(new Date("2026-03-10T18:00:00Z"));
    await controls.setQuietHours({ start: 60, end: 420 });
    await controls.setZone("Asia/Tokyo");
    expect(mind.read().heartbeat).toMatchObject({
      pausedIndefinitely: false,
      pausedUntil: "2026-03-10T18:00:00.000Z",
      quietHours: { start: 60, end: 420 },
      timezone: "Asia/Tokyo",
    });
    expect(controls.settings()).toMatchObject({
      timezone: "Asia/Tokyo",
      quietHours: { start: 60, end: 420 },
      paused: { until: "2026-03-10T18:00:00.000Z", indefinitely: false },
    });
    await controls.pause(null);
    expect(controls.settings().paused).toEqual({ until: null, indefinitely: true });
    await controls.resume();
    await controls.setQuietHours(null);
    expect(controls.settings()).toMatchObject({
      quietHours: BERLIN_CHECKIN_SETTINGS.quietHours,
      paused: null,
    });
  });

  it("tells the schedule every /tz, and a zone that moved behind it only when it did", async () => {
    await controls.setZone("Asia/Tokyo");
    await controls.setZone(null);
    expect(zones).toEqual(["Asia/Tokyo", "Europe/Berlin"]);
    controls.followZone("Europe/Berlin");
    expect(zones).toHaveLength(2);
    await mind.update((m) => {
      m.heartbeat.timezone = "America/New_York";
    });
    controls.followZone("Europe/Berlin");
    expect(zones).toEqual(["Asia/Tokyo", "Europe/Berlin", "America/New_York"]);
  });

  it("reads the last check-in decision for /why", async () => {
    expect(controls.lastDecision()).toBeNull();
    const decision = {
      ts: clock.now().toISOString(),
      fire: false,
      reason: "quiet-hours",
      detail: "It is late.",
    } as const;
    await recordDecision(mind, decision);
    expect(controls.lastDecision()).toMatchObject(decision);
  });
});
