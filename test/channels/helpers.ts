import { CheckinControls, type ZoneListener } from "../../src/companion/checkin-controls.ts";
import { MemoryReview } from "../../src/companion/memory-review.ts";
import type { MindStore } from "../../src/companion/mind-document.ts";
import type { QuietHours } from "../../src/core/checkin-settings.ts";
import type { Clock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { Trace } from "../../src/store/trace.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";

/** The companion's real memory review over a data dir's stores, for command tests without a companion. */
export async function memoryReviewFor(
  dataDir: string,
  clock: Clock,
  mind: MindStore,
  log?: MessageLog,
): Promise<MemoryReview> {
  return new MemoryReview({
    mind,
    log: log ?? (await MessageLog.open({ dataDir, clock, timeZone: "UTC" })),
    notes: new NotesStore({ dataDir }),
    trace: new Trace({ dataDir, clock }),
    clock,
    // No turns run in these tests: nothing else writes meanwhile.
    exclusive: (work) => work(),
  });
}

/**
 * The companion's real check-in settings over a mind store, configured with `configured` (the
 * documented rules otherwise), for command tests without a companion.
 */
export function checkinControlsFor(
  mind: MindStore,
  clock: Clock,
  configured: { timezone: string; quietHours: QuietHours },
  onZoneChange?: ZoneListener,
): CheckinControls {
  return new CheckinControls({
    core: { ...BERLIN_CHECKIN_SETTINGS, ...configured },
    mind,
    clock,
    ...(onZoneChange ? { onZoneChange } : {}),
  });
}
