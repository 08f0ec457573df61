import cron from "node-cron";
import { vi } from "vitest";

/**
 * What node-cron itself says the next runs are, from a given instant. node-cron reads the
 * wall clock, so the clock is faked (Date only) for the call and restored after.
 */
export function nodeCronNextRuns(expression: string, timezone: string, from: Date, count: number): Date[] {
  const task = cron.createTask(expression, () => undefined, { timezone });
  vi.useFakeTimers({ toFake: ["Date"] });
  try {
    vi.setSystemTime(from);
    return task.getNextRuns(count);
  } finally {
    vi.useRealTimers();
    task.destroy();
  }
}
