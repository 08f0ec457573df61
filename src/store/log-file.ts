import { readFile } from "node:fs/promises";
import { DateTime } from "luxon";
import { type Message, messageSchema } from "../core/message.ts";
import { migrateEntry } from "./messages.ts";

/**
 * A log given on the command line (`--log FILE`) that cannot be used. The message is one line
 * naming the file and the problem, because the command prints it as it is and exits 2.
 */
export class LogFileError extends Error {
  override readonly name = "LogFileError";
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
}

/** ISO 8601 date and time with a Z or a numeric offset: a time without one means nothing exact. */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * Reads a hand-written or exported log for the read-only commands: `{ "messages": [...] }` or a
 * bare array, entries needing only `role`, `text` and `ts` (any offset), in any order. Times
 * become UTC with milliseconds, a missing id becomes `m<position>` (never an id the file uses
 * itself) and a missing channel "telegram", and an older version's fields are read as today's
 * (migrateEntry); the result is sorted by time once (stable), ready for the awareness engine.
 */
export async function loadLogFile(path: string): Promise<Message[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new LogFileError(path, `cannot be read (${oneLine(error)})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LogFileError(path, `is not valid JSON (${oneLine(error)})`);
  }
  const entries = entriesOf(value);
  if (!entries) {
    throw new LogFileError(path, `expected { "messages": [...] } or an array of messages`);
  }
  const messages: Message[] = [];
  const positions = new Map<string, number>();
  const givenIds = new Set(entries.map(givenId).filter((id) => id !== undefined));
  for (const [index, entry] of entries.entries()) {
    const fail = (problem: string) => new LogFileError(path, `entry ${index + 1}: ${problem}`);
    const message = normalizeEntry(entry, freshId(index, givenIds), fail);
    const earlier = positions.get(message.id);
    if (earlier !== undefined)
      throw fail(`id ${JSON.stringify(message.id)} is also used by entry ${earlier + 1}`);
    positions.set(message.id, index);
    messages.push(message);
  }
  return messages.sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
}

function entriesOf(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (typeof value === "object" && value !== null && "messages" in value && Array.isArray(value.messages)) {
    return value.messages;
  }
  return undefined;
}

function givenId(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>).id : undefined;
}

/** An id for an entry without one: `m<position>`, unless the file itself uses that id for another entry. */
function freshId(index: number, givenIds: ReadonlySet<unknown>): string {
  let id = `m${index + 1}`;
  while (givenIds.has(id)) id = `${id}'`;
  return id;
}

function normalizeEntry(entry: unknown, id: string, fail: (problem: string) => LogFileError): Message {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw fail("is not an object with role, text and ts");
  }
  const fields = migrateEntry(entry) as Record<string, unknown>;
  const candidate: Record<string, unknown> = {
    ...fields,
    id: fields.id ?? id,
    channel: fields.channel ?? "telegram",
    ts: normalizeTime(fields.ts, "ts", fail),
  };
  if (fields.editedAt !== undefined) candidate.editedAt = normalizeTime(fields.editedAt, "editedAt", fail);
  const result = messageSchema.safeParse(candidate);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join(".") ?? "";
  throw fail(`${field === "" ? "" : `${field}: `}${issue?.message ?? "invalid entry"}`);
}

function normalizeTime(value: unknown, field: string, fail: (problem: string) => LogFileError): string {
  if (value === undefined)
    throw fail(`${field} is missing (an ISO 8601 time such as "2026-02-07T08:39:00Z")`);
  const time = typeof value === "string" && ISO_WITH_OFFSET.test(value) ? DateTime.fromISO(value) : undefined;
  if (!time?.isValid) {
    throw fail(`${field} ${JSON.stringify(value)} is not an ISO 8601 time with Z or an offset`);
  }
  return new Date(time.toMillis()).toISOString();
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, " ").trim();
}
