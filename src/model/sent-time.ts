import { localDayNumber, localTime } from "../core/zones.ts";

/**
 * The time a shown message carries before its text when it came after a pause, so a check-in
 * sent the next evening does not read as part of the night before's reply. One format, in
 * the person's zone and relative to the moment of the turn: `[21:40]` today, `[Thu 19:05]`
 * within the last six days, `[12 Mar 19:05]` before that, where a weekday would be
 * ambiguous. The protocol (prompts.ts) tells the model what it means, and the leak guard
 * removes one the model writes itself at the head of its message (SENT_TIME_AT_HEAD).
 */

/** The stamp of a message sent at `sentAt`, read at `now` in `zone`. */
export function sentTimeStamp(sentAt: Date, now: Date, zone: string): string {
  const at = localTime(sentAt.getTime(), zone);
  const daysAgo = localDayNumber(now.getTime(), zone) - localDayNumber(sentAt.getTime(), zone);
  const format = daysAgo === 0 ? "HH:mm" : daysAgo > 0 && daysAgo < 7 ? "ccc HH:mm" : "d LLL HH:mm";
  return `[${at.setLocale("en-US").toFormat(format)}]`;
}

const WEEKDAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";

/** A stamp of exactly sentTimeStamp's format at the very start of a text, with the space after it. */
export const SENT_TIME_AT_HEAD = new RegExp(
  String.raw`^\s*\[(?:${WEEKDAY} |[1-9]\d? ${MONTH} )?(?:[01]\d|2[0-3]):[0-5]\d\][ \t]*`,
);
