import { readFileSync } from "node:fs";
import { type Message, messageSchema } from "../../src/core/message.ts";

/** Where the evening answerer's log lives, for tests that hand it to the real command. */
export const EVENING_ANSWERER_LOG = new URL("../fixtures/timing/evening-answerer.log.json", import.meta.url)
  .pathname;

/**
 * Three weeks (Mon 2 Feb to Mon 23 Feb 2026, Europe/Berlin) with someone who is only around
 * in the evenings: check-ins at 09:07 and 11:07 go unanswered, they write on their own at
 * 19:30 and answer the 20:37 check-in within minutes. The learned timing's tests, the
 * pre-check's and status's read it.
 */
export function eveningAnswererLog(): Message[] {
  const file = JSON.parse(readFileSync(EVENING_ANSWERER_LOG, "utf8")) as { messages: unknown[] };
  return file.messages.map((m) => messageSchema.parse(m));
}
