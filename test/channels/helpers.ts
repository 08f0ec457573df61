import { CheckinControls, type ZoneListener } from "../../src/companion/checkin-controls.ts";
import { DataRights, type DataRightsCommands } from "../../src/companion/data-rights.ts";
import type { MindStore } from "../../src/companion/mind-document.ts";
import type { QuietHours } from "../../src/core/checkin-settings.ts";
import type { Clock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { SentFiles } from "../../src/store/sent-files.ts";
import { Trace } from "../../src/store/trace.ts";
import { BERLIN_CHECKIN_SETTINGS } from "../support/core-config.ts";

/**
 * The companion's real data rights over a data dir's stores, for command tests without a
 * companion; `fakes` stands in for /export and /wipe where a test only checks the command's words.
 */
export async function dataRightsFor(
  dataDir: string,
  clock: Clock,
  mind: MindStore,
  log?: MessageLog,
  fakes: Partial<Pick<DataRightsCommands, "exportAll" | "wipeAll">> = {},
): Promise<DataRightsCommands> {
  const rights = new DataRights({
    mind,
    log: log ?? (await MessageLog.open({ dataDir, clock, timeZone: "UTC" })),
    notes: new NotesStore({ dataDir }),
    trace: new Trace({ dataDir, clock }),
    files: new SentFiles({ dataDir }),
    clock,
    // No turns run in these tests: nothing else writes meanwhile.
    exclusive: (work) => work(),
  });
  return {
    listMemory: (options) => rights.listMemory(options),
    forgetListed: (number) => rights.forgetListed(number),
    forgetText: (text) => rights.forgetText(text),
    fixListed: (number, text) => rights.fixListed(number, text),
    exportAll: fakes.exportAll ?? (() => rights.exportAll()),
    wipeAll: fakes.wipeAll ?? (() => rights.wipeAll()),
  };
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
