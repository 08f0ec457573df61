import { type MindStore, openMind } from "../../src/companion/mind-document.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { UsageRecord } from "../../src/core/usage.ts";
import { lines } from "../mind/items.ts";

/** One reply call's usage at `ts`: `input` tokens, 10 out, 5 read from the cache. */
export const usageRecord = (ts: string, input: number): UsageRecord => ({
  ts,
  purpose: "reply",
  model: "claude-test",
  input,
  output: 10,
  cacheWrite: 0,
  cacheRead: 5,
});

/**
 * A mind that knows a little about the person (Dr Alvarez, the dog) in every place words are
 * kept: a memory item, an UNDERSTANDING line and a thread note, plus one usage record, for the
 * tests of /forget and /wipe.
 */
export async function rememberingMind(dataDir: string, clock: Clock): Promise<MindStore> {
  const mind = await openMind(dataDir, clock);
  await mind.update((m) => {
    m.memory.push(
      {
        id: "m1",
        kind: "open_loop",
        text: "Waiting to hear from Dr Alvarez about the scan",
        learnedAt: "2026-11-20T10:00:00.000Z",
        sourceMessageIds: ["x"],
        importance: 4,
        topics: ["health"],
      },
      {
        id: "m2",
        kind: "pattern",
        text: "Walks the dog at seven",
        learnedAt: "2026-11-20T10:00:00.000Z",
        sourceMessageIds: [],
        importance: 2,
        topics: [],
      },
    );
    m.scratchpad.understanding_known = lines("- (user) sees dr alvarez monthly\n- (user) has a dog");
    m.threads.list[0]?.notes.push({
      ts: "2026-11-20T10:00:00.000Z",
      text: "Dr Alvarez called",
      kind: "note",
    });
    m.usage.push({ ...usageRecord("2026-11-22T09:00:00.000Z", 10) });
  });
  return mind;
}
