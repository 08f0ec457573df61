import { type Message, messageSchema } from "../core/message.ts";

/**
 * The format version this code writes (2: a message's channel ids are `external`, not
 * `telegram`). Older files are migrated in memory when read.
 */
export const MESSAGE_LOG_VERSION = 2;

/** The contents of messages.json and of every archive month file. */
export interface MessageLogData {
  version: typeof MESSAGE_LOG_VERSION;
  messages: Message[];
}

/**
 * A message log file that cannot be used as it is. It names the file, the first bad entry and
 * what is wrong, because the person has to open that file and fix it: presence never repairs
 * someone's history on its own.
 */
export class MessageLogError extends Error {
  override readonly name = "MessageLogError";
  constructor(
    readonly file: string,
    readonly problem: string,
    /** Position of the first bad entry (0-based), when one entry is to blame. */
    readonly entryIndex?: number,
    readonly entryId?: string,
  ) {
    super(`${file}: ${entryIndex === undefined ? "" : `${describeEntry(entryIndex, entryId)}: `}${problem}`);
  }
}

function describeEntry(index: number, id: string | undefined): string {
  return `entry ${index + 1} (index ${index}${id === undefined ? "" : `, id ${JSON.stringify(id)}`})`;
}

/**
 * The entries of any known version, in today's shape. Version 0 is what came before the version
 * field: a bare array of messages, or an object with `messages` and no `version`; versions 0 and 1
 * keep a message's channel ids under `telegram` (migrateEntry). Later versions add a step here.
 */
function migrate(file: string, value: unknown): unknown[] {
  if (Array.isArray(value)) return value.map(migrateEntry);
  if (typeof value !== "object" || value === null) {
    throw new MessageLogError(file, `expected { "version": ${MESSAGE_LOG_VERSION}, "messages": [...] }`);
  }
  const record = value as Record<string, unknown>;
  const version = record.version ?? 0;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
    throw new MessageLogError(file, `"version" must be a whole number, found ${JSON.stringify(version)}`);
  }
  if (version > MESSAGE_LOG_VERSION) {
    throw new MessageLogError(
      file,
      `was written by a newer presence (format version ${version}; this one reads up to ${MESSAGE_LOG_VERSION})`,
    );
  }
  if (!Array.isArray(record.messages)) {
    throw new MessageLogError(file, `"messages" must be an array`);
  }
  return version < 2 ? record.messages.map(migrateEntry) : record.messages;
}

/** Where versions 0 and 1 kept a message's ids on its channel, the only channel they knew. */
const FORMER_IDS = "telegram";

/**
 * Version 1 → 2: a message's ids on its channel (chat, message, update, sent time) move from
 * `telegram` to `external`, unchanged. Logs given on the command line carry no version and go
 * through it too (loadLogFile). Anything not understood is left for the schema to name.
 */
export function migrateEntry(entry: unknown): unknown {
  if (typeof entry !== "object" || entry === null || !(FORMER_IDS in entry) || "external" in entry) {
    return entry;
  }
  const { [FORMER_IDS]: external, ...rest } = entry as Record<string, unknown>;
  return { ...rest, external };
}

/**
 * Reads any known version of the log file format into today's shape, validating every entry.
 * Entries out of time order (a hand-edited file) are sorted, stably; duplicate ids are refused
 * because edits and replies address messages by id.
 */
export function parseMessageLogFile(file: string, value: unknown): MessageLogData {
  const entries = migrate(file, value);
  const messages: Message[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of entries.entries()) {
    const entryId = idOf(entry);
    const result = messageSchema.safeParse(entry);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
      throw new MessageLogError(file, `${where}${issue?.message ?? "invalid entry"}`, index, entryId);
    }
    const earlier = seen.get(result.data.id);
    if (earlier !== undefined) {
      throw new MessageLogError(file, `id is already used by entry ${earlier + 1}`, index, entryId);
    }
    seen.set(result.data.id, index);
    messages.push(result.data);
  }
  return { version: MESSAGE_LOG_VERSION, messages: sortByTime(messages) };
}

/**
 * One message per line: a person can read and diff it, and it costs far less to write than
 * indented JSON.
 */
export function serializeMessageLog(data: MessageLogData): string {
  const body =
    data.messages.length === 0 ? "" : `\n${data.messages.map((m) => JSON.stringify(m)).join(",\n")}\n`;
  return `{ "version": ${data.version}, "messages": [${body}] }\n`;
}

/** Milliseconds since the epoch of a message's time; the one way the store compares times. */
export function timeOf(message: Pick<Message, "ts">): number {
  return Date.parse(message.ts);
}

/** Stable sort by time that returns the same array when it is already in order. */
export function sortByTime(messages: Message[]): Message[] {
  for (let i = 1; i < messages.length; i++) {
    if (timeOf(messages[i - 1] as Message) > timeOf(messages[i] as Message)) {
      return [...messages].sort((a, b) => timeOf(a) - timeOf(b));
    }
  }
  return messages;
}

function idOf(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const id = (entry as Record<string, unknown>).id;
  return typeof id === "string" ? id : undefined;
}
