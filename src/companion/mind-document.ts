import { checkinNoticesRecord } from "../conversation/checkin-notices.ts";
import { heartbeatRecord } from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { decisionsRecord } from "../core/decision.ts";
import { usageDailyRecord, usageRecord, wipedAtRecord } from "../core/usage.ts";
import { memoryRecord } from "../mind/memory.ts";
import { reflectionQueueRecord } from "../mind/reflection-queue.ts";
import { forgottenHashesRecord, refusedLastTimeRecord } from "../mind/refusals.ts";
import { memoryListingRecord } from "../mind/review.ts";
import { scratchpadRecord } from "../mind/scratchpad.ts";
import { flushedThroughRecord, threadsRecord } from "../mind/threads.ts";
import { freshMindFile, type MindFile, MindStore as MindFileStore } from "../store/mind.ts";
import { outboxRecord } from "./outbox.ts";

/**
 * Everything the companion keeps about the person besides the log, in one file (mind.json)
 * so a change is one atomic write: the list of its records, each declared by the room that
 * owns it. The companion is the one room below the channels that sees every owner (its own
 * outbox, the mind's records, the check-in state below), so the list is made here, once; the
 * store below knows none of the shapes, and the rooms below see only the records they touch.
 */
const MIND_RECORDS = [
  scratchpadRecord,
  threadsRecord,
  memoryRecord,
  heartbeatRecord,
  decisionsRecord,
  checkinNoticesRecord,
  usageRecord,
  usageDailyRecord,
  reflectionQueueRecord,
  flushedThroughRecord,
  outboxRecord,
  wipedAtRecord,
  forgottenHashesRecord,
  memoryListingRecord,
  refusedLastTimeRecord,
] as const;

/** mind.json as the companion reads and writes it. */
export type MindState = MindFile<(typeof MIND_RECORDS)[number]>;

/** The store of mind.json, holding every record. */
export type MindStore = MindFileStore<(typeof MIND_RECORDS)[number]>;

/** Opens data/mind.json with every record (store/mind.ts says how a file is read and refused). */
export function openMind(
  dataDir: string,
  clock: Clock,
  options: Parameters<typeof MindFileStore.open>[3] = {},
): Promise<MindStore> {
  return MindFileStore.open(dataDir, clock, MIND_RECORDS, options);
}

/** A fresh mind: nothing learned, nothing decided. */
export function initialMindState(now: Date): MindState {
  return freshMindFile(MIND_RECORDS, now);
}
