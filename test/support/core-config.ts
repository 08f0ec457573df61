import type { CoreConfig } from "../../src/app/config.ts";
import { parseCron } from "../../src/conversation/schedule.ts";
import type { HeartbeatSettings } from "../../src/core/checkin-settings.ts";

/**
 * The check-in rules as documented, written out once: config.test.ts holds loadCoreConfig to
 * them, and the tests that build a companion pin them, so a changed default fails there first
 * instead of quietly changing what every companion test means.
 */
export const DOCUMENTED_CHECKIN_RULES = {
  quietHours: { start: 22 * 60, end: 8 * 60 },
  heartbeatCron: parseCron("7 * * * *"),
  maxUnanswered: 3,
  recentMinutes: 30,
  weekendMaxUnanswered: 1,
  minGapMinutes: 45,
  maxCheckinsPerDay: 8,
  learnTiming: true,
} satisfies Partial<CoreConfig>;

/** Core settings for a companion under test: Berlin, the documented rules, no process log. */
export function testCoreConfig(dataDir: string): CoreConfig {
  return { timezone: "Europe/Berlin", dataDir, ...DOCUMENTED_CHECKIN_RULES, logLevel: "silent" };
}

const { heartbeatCron: _, ...DOCUMENTED_PRE_CHECK_RULES } = DOCUMENTED_CHECKIN_RULES;

/** The pre-check's settings for a person in Berlin under the documented rules. */
export const BERLIN_CHECKIN_SETTINGS: HeartbeatSettings = {
  timezone: "Europe/Berlin",
  ...DOCUMENTED_PRE_CHECK_RULES,
};
