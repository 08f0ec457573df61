import {
  type EffectiveSettings,
  effectiveSettings,
  type HeartbeatSettings,
  type QuietHours,
} from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { type Decision, lastDecision } from "../core/decision.ts";
import type { MindStore } from "./mind-document.ts";

/**
 * The person's side of the check-in settings, as the slash commands use it: reading what is
 * in force (/pause, /quiet and /tz answer with it, /why and /memory show times in its zone),
 * the last decision (/why), and changing them (/pause, /resume, /quiet, /tz). The companion
 * owns the changes, so no channel writes the mind, and it tells the heartbeat schedule when
 * the zone moves, so no channel calls back into the app that runs the schedule.
 */

/**
 * Told the zone check-ins now run in whenever it may have moved: the app re-arms the heartbeat
 * schedule in it (a simulation records it).
 */
export type ZoneListener = (zone: string) => void;

/** What the settings are read from and changed in. */
interface CheckinControlsDeps {
  /** The configured settings; the person's pause, /quiet and /tz are kept in the mind over them. */
  core: HeartbeatSettings;
  mind: MindStore;
  clock: Clock;
  onZoneChange?: ZoneListener;
}

/** The check-in settings as the channels call them (Companion.checkins). */
export type CheckinCommands = Pick<
  CheckinControls,
  "settings" | "lastDecision" | "pause" | "resume" | "setQuietHours" | "setZone"
>;

/** The check-in settings over the mind's heartbeat state. */
export class CheckinControls {
  readonly #deps: CheckinControlsDeps;

  constructor(deps: CheckinControlsDeps) {
    this.#deps = deps;
  }

  /** The settings in force now (effectiveSettings). */
  settings(): EffectiveSettings {
    return effectiveSettings(this.#deps.core, this.#deps.mind.read().heartbeat, this.#deps.clock.now());
  }

  /** The last check-in decision, held or sent, for /why; null before the first. */
  lastDecision(): Decision | null {
    return lastDecision(this.#deps.mind.read());
  }

  /** Holds check-ins until `until`, or until resume() when null; replaces any pause before. */
  async pause(until: Date | null): Promise<void> {
    await this.#deps.mind.update((m) => {
      m.heartbeat.pausedIndefinitely = until === null;
      m.heartbeat.pausedUntil = until === null ? null : until.toISOString();
    });
  }

  /** Ends any pause. */
  async resume(): Promise<void> {
    await this.#deps.mind.update((m) => {
      m.heartbeat.pausedIndefinitely = false;
      m.heartbeat.pausedUntil = null;
    });
  }

  /** Replaces the configured quiet hours; null goes back to them. */
  async setQuietHours(quiet: QuietHours | null): Promise<void> {
    await this.#deps.mind.update((m) => {
      m.heartbeat.quietHours = quiet;
    });
  }

  /** The person's zone while travelling; null goes back to the configured one. The schedule is told either way. */
  async setZone(zone: string | null): Promise<void> {
    await this.#deps.mind.update((m) => {
      m.heartbeat.timezone = zone;
    });
    this.#deps.onZoneChange?.(this.settings().timezone);
  }

  /**
   * After work that may drop the person's zone behind the commands' back (a /wipe deletes the
   * /tz with everything else): tells the schedule when the zone in force is no longer `before`.
   */
  followZone(before: string): void {
    const zone = this.settings().timezone;
    if (zone !== before) this.#deps.onZoneChange?.(zone);
  }
}
