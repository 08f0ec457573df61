import { MemoryReview } from "../../src/companion/memory-review.ts";
import type { MindStore } from "../../src/companion/mind-document.ts";
import type { Clock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { Trace } from "../../src/store/trace.ts";

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
