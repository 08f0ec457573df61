import { beforeEach, describe, expect, it } from "vitest";
import { openMind } from "../../src/companion/mind-document.ts";
import { SettableClock } from "../../src/core/clock.ts";
import { DECISIONS_KEPT, lastDecision, recordDecision } from "../../src/core/decision.ts";
import { tempDataDir } from "../store/helpers.ts";

let dataDir: string;
let clock: SettableClock;

beforeEach(async () => {
  dataDir = await tempDataDir();
  clock = new SettableClock("2026-11-22T10:00:00.000Z");
});

describe("decisions", () => {
  it("keeps the last 500 and answers the latest", async () => {
    const mind = await openMind(dataDir, clock);
    expect(lastDecision(mind.read())).toBeNull();
    await mind.update((m) => {
      for (let i = 0; i < DECISIONS_KEPT + 5; i++) {
        m.decisions.push({
          ts: clock.now().toISOString(),
          fire: false,
          reason: "quiet-hours",
          detail: `#${i}`,
        });
      }
    });
    await recordDecision(mind, {
      ts: clock.now().toISOString(),
      fire: true,
      reason: "ok",
      detail: "last",
      topic: "sleep",
    });
    expect(mind.read().decisions).toHaveLength(DECISIONS_KEPT);
    expect(mind.read().decisions[0]?.detail).toBe("#6");
    expect(lastDecision(mind.read())).toMatchObject({ fire: true, reason: "ok", topic: "sleep" });
  });
});
