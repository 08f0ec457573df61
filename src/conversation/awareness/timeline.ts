import type { Message } from "../../core/message.ts";

/** A log entry with its instant parsed once. */
export interface Entry {
  readonly message: Message;
  readonly ms: number;
}

/**
 * The log as the awareness engine reads it: oldest first, only what had happened by
 * `now`. The store hands over a sorted window, but nothing here relies on it: an unsorted
 * log is sorted (stably, so equal timestamps keep their order), and entries without a
 * readable time are left out rather than guessed at.
 */
export function chronological(log: readonly Message[], nowMs: number): Entry[] {
  const entries: Entry[] = [];
  let sorted = true;
  for (const message of log) {
    const ms = Date.parse(message.ts);
    if (Number.isNaN(ms) || ms > nowMs) continue;
    const previous = entries[entries.length - 1];
    if (previous !== undefined && ms < previous.ms) sorted = false;
    entries.push({ message, ms });
  }
  return sorted ? entries : entries.sort((a, b) => a.ms - b.ms);
}

/** Index of the last entry by `role`, or -1. */
export function lastIndexOfRole(entries: readonly Entry[], role: Message["role"]): number {
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    if (entries[i]?.message.role === role) return i;
  }
  return -1;
}

/** Where the turn holding `index` begins: consecutive messages by one side form one turn. */
export function turnStart(entries: readonly Entry[], index: number): number {
  const role = entries[index]?.message.role;
  let start = index;
  while (start > 0 && entries[start - 1]?.message.role === role) start -= 1;
  return start;
}
