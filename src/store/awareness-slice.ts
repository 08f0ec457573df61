import type { Message } from "../core/message.ts";
import { timeOf } from "./log-format.ts";

const HOUR_MS = 3_600_000;

/**
 * Where the part of a time-sorted log that the awareness engine reads at `nowMs` begins, so the
 * store can hand over that part alone and get the same context as from the whole history.
 * The engine looks at the recent window; at the person's last turn (its tone, whether it came
 * on another channel) and the message just before it (what the assistant said last); and at
 * everything since. So the slice starts at the window or at that message, whichever is older.
 * When the person never wrote, every message the assistant ever sent is unanswered, so the
 * slice is the whole log.
 *
 * Returns undefined when `messages` do not reach back far enough to tell (the person's last
 * turn, or the search for it, runs into their first entry): older messages decide.
 */
export function awarenessSliceStart(
  messages: readonly Message[],
  nowMs: number,
  windowHours: number,
): number | undefined {
  let index = messages.length - 1;
  const roleAt = (i: number) => messages[i]?.role;
  while (index >= 0 && timeOf(messages[index] as Message) > nowMs) index--;
  while (index >= 0 && roleAt(index) !== "user") index--;
  while (index >= 0 && roleAt(index) === "user") index--;
  const beforeTurn = messages[index];
  if (beforeTurn === undefined) return undefined;
  return Math.min(nowMs - windowHours * HOUR_MS, timeOf(beforeTurn));
}
