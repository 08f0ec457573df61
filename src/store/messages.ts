import { dirname, join } from "node:path";
import { type Adapter, Low } from "lowdb";
import { DateTime } from "luxon";
import type { Clock } from "../core/clock.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import { type Channel, type ExternalIds, type Message, messageSchema, messageTime } from "../core/message.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import { machineZone, requireKnownZone } from "../core/zones.ts";
import {
  DataFileError,
  DurableJsonFile,
  ensurePrivateDir,
  fsyncDir,
  namesInDir,
  removeDurable,
  removeLeftoverTemps,
  unlinkIfExists,
  type WriteOptions,
} from "./files.ts";
import { createIdGenerator } from "./ids.ts";
import { PERSON_FILES } from "./person-files.ts";

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
 * What the message log refused: a file it cannot use as it is (`damaged-file`), a message that
 * breaks its schema or a change to a message's identity (`invalid-message`: a bug in the
 * caller), or a message or channel delivery it already holds (`duplicate`).
 */
export type MessageLogRefusal = "damaged-file" | "invalid-message" | "duplicate";

/**
 * The message log refused a file or a write. One class with a `kind`, because no caller handles
 * the three differently. A damaged file's message names the file, the first bad entry and what
 * is wrong, because the person has to open that file and fix it: presence never repairs
 * someone's history on its own.
 */
export class MessageLogError extends Error {
  override readonly name = "MessageLogError";
  constructor(
    readonly kind: MessageLogRefusal,
    message: string,
    /** Position of the first bad entry (0-based) of a damaged file, when one entry is to blame. */
    readonly entryIndex?: number,
  ) {
    super(message);
  }
}

/** A damaged file's error: the file, then the entry to blame when there is one, then the problem. */
function damagedFile(file: string, problem: string, entryIndex?: number, entryId?: string): MessageLogError {
  const entry = entryIndex === undefined ? "" : `${describeEntry(entryIndex, entryId)}: `;
  return new MessageLogError("damaged-file", `${file}: ${entry}${problem}`, entryIndex);
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
    throw damagedFile(file, `expected { "version": ${MESSAGE_LOG_VERSION}, "messages": [...] }`);
  }
  const record = value as Record<string, unknown>;
  const version = record.version ?? 0;
  if (typeof version !== "number" || !Number.isInteger(version) || version < 0) {
    throw damagedFile(file, `"version" must be a whole number, found ${JSON.stringify(version)}`);
  }
  if (version > MESSAGE_LOG_VERSION) {
    throw damagedFile(
      file,
      `was written by a newer presence (format version ${version}; this one reads up to ${MESSAGE_LOG_VERSION})`,
    );
  }
  if (!Array.isArray(record.messages)) {
    throw damagedFile(file, `"messages" must be an array`);
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
function parseMessageLogFile(file: string, value: unknown): MessageLogData {
  const entries = migrate(file, value);
  const messages: Message[] = [];
  const seen = new Map<string, number>();
  for (const [index, entry] of entries.entries()) {
    const entryId = idOf(entry);
    const result = messageSchema.safeParse(entry);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
      throw damagedFile(file, `${where}${issue?.message ?? "invalid entry"}`, index, entryId);
    }
    const earlier = seen.get(result.data.id);
    if (earlier !== undefined) {
      throw damagedFile(file, `id is already used by entry ${earlier + 1}`, index, entryId);
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

/** Stable sort by time that returns the same array when it is already in order. */
function sortByTime(messages: Message[]): Message[] {
  for (let i = 1; i < messages.length; i++) {
    if (messageTime(messages[i - 1] as Message) > messageTime(messages[i] as Message)) {
      return [...messages].sort((a, b) => messageTime(a) - messageTime(b));
    }
  }
  return messages;
}

function idOf(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null) return undefined;
  const id = (entry as Record<string, unknown>).id;
  return typeof id === "string" ? id : undefined;
}

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
  while (index >= 0 && messageTime(messages[index] as Message) > nowMs) index--;
  while (index >= 0 && roleAt(index) !== "user") index--;
  while (index >= 0 && roleAt(index) === "user") index--;
  const beforeTurn = messages[index];
  if (beforeTurn === undefined) return undefined;
  return Math.min(nowMs - windowHours * HOUR_MS, messageTime(beforeTurn));
}

/** The named fields of a message, without the index signature that keeps unknown ones. */
type KnownFields<T> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};
type MessageFields = KnownFields<Message>;

/** What a caller appends: a message whose id and time the log may fill in. */
export type NewMessage = Omit<MessageFields, "id" | "ts"> &
  Partial<Pick<MessageFields, "id" | "ts">> &
  Record<string, unknown>;

/** A change to a logged message. Its identity, time and author never change. */
export type MessagePatch = Partial<Omit<MessageFields, "id" | "ts" | "role">> & Record<string, unknown>;

export interface MessageLogOptions extends WriteOptions {
  /** The data directory; the log is messages.json and archive/ inside it. */
  dataDir: string;
  /** Source of new ids and of the day boundary that decides what is archived. */
  clock: Clock;
  /** Zone whose midnight starts a day for the rollover; defaults to the machine's. */
  timeZone?: string;
  /**
   * Local days kept in messages.json: today and the days before it. Older days move into
   * archive/ so one append never rewrites a year. At least 2, so everything a channel may
   * deliver again (Telegram: 24 h) is still in the window.
   */
  windowDays?: number;
  logger?: Logger;
}

/** Local days kept in messages.json unless told otherwise; see bench/store.ts for the figures. */
export const DEFAULT_WINDOW_DAYS = 3;

const ARCHIVE_FILE = /^(\d{4}-\d{2})\.json$/;

/** Archive months kept in memory once read: the learned timing's look-back (8 weeks) spans at most three. */
const ARCHIVE_MONTHS_KEPT = 3;

/**
 * The conversation log: every message either side sent, oldest first, kept durably.
 *
 * messages.json holds a recent window (in memory too); older days live in
 * archive/YYYY-MM.json by UTC month, read only when asked for. Writes go through one queue,
 * so appends started together land in the order they were started and none is lost.
 */
export class MessageLog {
  readonly file: string;
  readonly archiveDir: string;
  readonly #low: Low<MessageLogData>;
  readonly #clock: Clock;
  readonly #zone: string;
  readonly #windowDays: number;
  readonly #logger: Logger;
  readonly #nextId: () => string;
  readonly #write: WriteOptions;
  /** With writeOnFlush (simulations only): whether the window changed since messages.json was last written. */
  #unwritten = false;
  #byId = new Map<string, Message>();
  /** The window's messages by their channel ids (externalKey), and the deliveries they came in. */
  #byExternal = new Map<string, Message>();
  #updates = new Set<string>();
  /** Newest archived message and newest archived message from the person, once looked up. */
  #archiveTail: { last: Message | null; lastUser: Message | null } | undefined;
  /** The local day #windowStart last worked out, [from, to), and the window's start on it. */
  #windowDay: { from: number; to: number; start: number } | undefined;
  /** Every read of the archive and every write, in the order they were asked for. */
  readonly #queue = new SerialQueue();
  /**
   * The archive months read last (at most ARCHIVE_MONTHS_KEPT), least recently used first:
   * the learned timing reads the last weeks at every check-in the other rules let out, and
   * reading and checking the same months from disk each time was most of its cost. Only this
   * process writes them (the data directory is locked), and it writes through these.
   */
  readonly #archives = new Map<string, Low<MessageLogData>>();
  /** The archive's months as last listed (#archiveMonths). */
  #months: string[] | undefined;

  private constructor(options: MessageLogOptions, low: Low<MessageLogData>) {
    this.file = join(options.dataDir, PERSON_FILES.messages);
    this.archiveDir = join(options.dataDir, PERSON_FILES.archive);
    this.#low = low;
    this.#clock = options.clock;
    this.#zone = options.timeZone ?? machineZone();
    this.#windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
    this.#logger = options.logger ?? silentLogger;
    this.#nextId = createIdGenerator(options.clock);
    this.#write = { fsync: options.fsync ?? true, writeOnFlush: options.writeOnFlush ?? false };
    this.#reindex();
  }

  /**
   * Loads the log, creating the private data directory if needed. A missing file is an empty
   * log; a file that cannot be read or validated, messages.json or any archive month, throws
   * MessageLogError and is left exactly as it was: presence refuses to start on a damaged
   * history rather than find out in the middle of a turn (reading a year of archive months
   * costs about 0.3 s, once). An older format is migrated in memory and written back with the
   * next append.
   */
  static async open(options: MessageLogOptions): Promise<MessageLog> {
    const windowDays = options.windowDays ?? DEFAULT_WINDOW_DAYS;
    if (!Number.isInteger(windowDays) || windowDays < 2) {
      throw new RangeError(`MessageLog: windowDays must be a whole number of at least 2, got ${windowDays}`);
    }
    if (options.timeZone !== undefined) requireKnownZone(options.timeZone);
    await ensurePrivateDir(options.dataDir);
    const write = { fsync: options.fsync ?? true };
    const low = new Low(logAdapter(join(options.dataDir, PERSON_FILES.messages), write), emptyLog());
    await low.read();
    const log = new MessageLog(options, low);
    for (const month of await log.#archiveMonths()) await log.#openArchive(month);
    return log;
  }

  /**
   * Adds a message, durably, before resolving; fills in a time-sortable id and the clock's time
   * when missing. A message older than the newest one is placed in time order. Moving older
   * days to the archive happens after it resolves, in the same queue, so the turn does not wait
   * for it.
   */
  append(input: NewMessage): Promise<Message> {
    return this.#queue.run(async () => {
      const message = this.#validate({
        ...input,
        id: input.id ?? this.#nextId(),
        ts: input.ts ?? this.#clock.now().toISOString(),
      });
      this.#refuseDuplicate(message);
      const messages = insertByTime(this.#low.data.messages, message);
      await this.#writeWindow(messages);
      this.#index(message);
      const cutoff = this.#windowStart();
      void this.#queue.run(() => this.#rollOverQuietly(cutoff));
      return message;
    });
  }

  /**
   * Changes a logged message (an edit, reflection's annotations), keeping every field the
   * patch does not name, unknown ones included. A new text without `editedAt` is stamped with
   * the clock, unless `edit: false` says the new text is not the person's edit (a voice note's
   * transcript). `patch` may be a function of the message as it is at the moment of writing,
   * for a change that must merge with what arrived meanwhile (an edited caption while a voice
   * note was being transcribed). Resolves to the updated message, or null when no message has
   * this id.
   */
  update(
    id: string,
    change: MessagePatch | ((current: Message) => MessagePatch),
    options: { edit?: boolean } = {},
  ): Promise<Message | null> {
    return this.#queue.run(async () => {
      const refuseFixedFields = (patch: MessagePatch) => {
        for (const field of ["id", "ts", "role"]) {
          if (field in patch)
            throw new MessageLogError("invalid-message", `a message's ${field} cannot be changed`);
        }
      };
      if (typeof change !== "function") refuseFixedFields(change);
      const apply = (current: Message): Message => {
        const patch = typeof change === "function" ? change(current) : change;
        refuseFixedFields(patch);
        const stamp =
          options.edit !== false &&
          patch.text !== undefined &&
          patch.text !== current.text &&
          patch.editedAt === undefined
            ? { editedAt: this.#clock.now().toISOString() }
            : {};
        return this.#validate({ ...current, ...patch, ...stamp });
      };
      const inWindow = this.#byId.get(id);
      if (inWindow) {
        const updated = apply(inWindow);
        await this.#writeWindow(this.#low.data.messages.map((m) => (m.id === id ? updated : m)));
        this.#reindex();
        return updated;
      }
      for (const month of (await this.#archiveMonths()).reverse()) {
        const archive = await this.#openArchive(month);
        const current = archive.data.messages.find((m) => m.id === id);
        if (!current) continue;
        const updated = apply(current);
        await this.#writeArchive(month, archive, {
          ...archive.data,
          messages: archive.data.messages.map((m) => (m.id === id ? updated : m)),
        });
        this.#archiveTail = undefined;
        return updated;
      }
      return null;
    });
  }

  /**
   * Resolves once every write started so far is done, archiving included (before exiting), and
   * the window is on disk (a log opened with writeOnFlush writes it now: WriteOptions).
   */
  async flush(): Promise<void> {
    await this.#queue.run(async () => {
      if (!this.#unwritten) return;
      await this.#low.write();
      this.#unwritten = false;
    });
  }

  /** The message with this id, wherever it is kept. */
  get(id: string): Promise<Message | null> {
    const inWindow = this.#byId.get(id);
    if (inWindow) return Promise.resolve(inWindow);
    return this.#queue.run(() => this.#findInArchives((m) => m.id === id));
  }

  /**
   * The messages with these ids that the log still holds, by id: the window first, then one
   * pass over the archive months (newest first) for the rest, stopping once all are found, so a
   * caller looking up many ids (/memory's sources) reads each month at most once.
   */
  getMany(ids: readonly string[]): Promise<Map<string, Message>> {
    const found = new Map<string, Message>();
    const missing = new Set<string>();
    for (const id of ids) {
      const inWindow = this.#byId.get(id);
      if (inWindow) found.set(id, inWindow);
      else missing.add(id);
    }
    if (missing.size === 0) return Promise.resolve(found);
    return this.#queue.run(async () => {
      for (const month of (await this.#archiveMonths()).reverse()) {
        for (const message of (await this.#openArchive(month)).data.messages) {
          if (missing.delete(message.id)) found.set(message.id, message);
        }
        if (missing.size === 0) break;
      }
      return found;
    });
  }

  /** The logged message a channel knows by these ids, so an edit there can update its text. */
  findByExternal(channel: Channel, ids: ExternalIds): Promise<Message | null> {
    const inWindow = this.#byExternal.get(externalKey(channel, ids));
    if (inWindow) return Promise.resolve(inWindow);
    return this.#queue.run(() =>
      this.#findInArchives(
        (m) =>
          m.channel === channel &&
          m.external?.chatId === ids.chatId &&
          m.external.messageId === ids.messageId,
      ),
    );
  }

  /**
   * Whether a channel's delivery (`external.updateId`) was already logged, for exactly-once
   * processing across restarts. Only the window is consulted: Telegram never redelivers an
   * update older than 24 hours, and the window always covers more than that.
   */
  hasUpdate(channel: Channel, updateId: number): boolean {
    return this.#updates.has(updateKey(channel, updateId));
  }

  /** The newest message of the whole log, or null when it is empty. */
  lastMessage(): Promise<Message | null> {
    const messages = this.#low.data.messages;
    const last = messages[messages.length - 1];
    if (last) return Promise.resolve(last);
    return this.#queue.run(async () => (await this.#loadArchiveTail()).last);
  }

  /** The person's newest message, however old, or null when they never wrote. */
  lastUserMessage(): Promise<Message | null> {
    const inWindow = this.#low.data.messages.findLast((m) => m.role === "user");
    if (inWindow) return Promise.resolve(inWindow);
    return this.#queue.run(async () => (await this.#loadArchiveTail()).lastUser);
  }

  /**
   * Whether any message lies in archive/, older than the window: a prompt that shows the window's
   * first message can then say truthfully that nothing came before it.
   */
  hasArchived(): Promise<boolean> {
    return this.#queue.run(async () => (await this.#loadArchiveTail()).last !== null);
  }

  /** The messages kept in memory (the recent window), oldest first. */
  recent(): Message[] {
    return [...this.#low.data.messages];
  }

  /**
   * What the awareness engine needs at `now` and no more: every message of the last
   * `windowHours`, the person's last turn and the message before it, however old, and
   * everything since, so days of one-sided check-ins are still counted (the whole log when
   * the person never wrote). Messages after `now` are left out. Built from this, the context
   * is the one the whole history gives. Served from memory unless it reaches back past the
   * window.
   */
  async awarenessSlice(now: Date, windowHours: number): Promise<Message[]> {
    const nowMs = now.getTime();
    const window = this.#low.data.messages;
    const fromMs = awarenessSliceStart(window, nowMs, windowHours);
    const first = window[0];
    if (fromMs !== undefined && first && messageTime(first) <= fromMs) {
      return window.filter((m) => inRange(m, fromMs, nowMs));
    }
    return this.#queue.run(async () => {
      const from = await this.#archivedSliceStart(nowMs, windowHours);
      return (await this.#messagesSince(from)).filter((m) => inRange(m, from, nowMs));
    });
  }

  /**
   * Every message from `from` to `until`, time-sorted: a bounded look back (the learned
   * check-in timing reads weeks, not the whole history). Served from memory when the window
   * reaches back that far; otherwise only the archive months from `from` on are read.
   */
  async between(from: Date, until: Date): Promise<Message[]> {
    const [fromMs, untilMs] = [from.getTime(), until.getTime()];
    const first = this.#low.data.messages[0];
    if (first && messageTime(first) <= fromMs)
      return this.#low.data.messages.filter((m) => inRange(m, fromMs, untilMs));
    return this.#queue.run(async () =>
      (await this.#messagesSince(fromMs)).filter((m) => inRange(m, fromMs, untilMs)),
    );
  }

  /** The whole history as one time-sorted log: archive months, then the window. */
  all(): Promise<Message[]> {
    return this.#queue.run(() => this.#messagesSince(Number.NEGATIVE_INFINITY));
  }

  /** Deletes the whole log for real, window and archive (/wipe). The log is empty afterwards. */
  deleteAll(): Promise<void> {
    return this.#queue.run(async () => {
      this.#archives.clear();
      this.#months = undefined;
      await removeDurable(this.archiveDir);
      await unlinkIfExists(this.file);
      await removeLeftoverTemps(this.file);
      await fsyncDir(dirname(this.file));
      this.#low.data = emptyLog();
      this.#unwritten = false;
      this.#archiveTail = { last: null, lastUser: null };
      this.#reindex();
    });
  }

  #validate(candidate: Record<string, unknown>): Message {
    const result = messageSchema.safeParse(candidate);
    if (result.success) return result.data;
    const problems = result.error.issues.map(
      (issue) => `${issue.path.join(".") || "message"}: ${issue.message}`,
    );
    throw new MessageLogError("invalid-message", `invalid message: ${problems.join("; ")}`);
  }

  #refuseDuplicate(message: Message): void {
    if (this.#byId.has(message.id)) {
      throw new MessageLogError(
        "duplicate",
        `a message with id ${JSON.stringify(message.id)} is already logged`,
      );
    }
    const updateId = message.external?.updateId;
    if (updateId !== undefined && this.hasUpdate(message.channel, updateId)) {
      throw new MessageLogError("duplicate", `${message.channel} update ${updateId} is already logged`);
    }
  }

  /**
   * Writes the window; memory changes only once the file is safely on disk (with writeOnFlush,
   * at once, and the file follows at flush()).
   */
  async #writeWindow(messages: Message[]): Promise<void> {
    const previous = this.#low.data;
    this.#low.data = { version: MESSAGE_LOG_VERSION, messages };
    if (this.#write.writeOnFlush) {
      this.#unwritten = true;
      return;
    }
    try {
      await this.#low.write();
    } catch (error) {
      this.#low.data = previous;
      throw error;
    }
  }

  /**
   * Moves the days before the window into their archive months. Archive first, window second:
   * a crash in between leaves a message in both places, which readers tolerate (the window's
   * copy wins) and the next rollover cleans up, rather than in neither. The append that
   * triggered it is already safe, so a failure here (a damaged archive file) is logged and the
   * messages simply stay in the window until it is fixed.
   */
  async #rollOverQuietly(cutoff: number): Promise<void> {
    try {
      await this.#rollOver(cutoff);
    } catch (error) {
      this.#logger.warn({ err: error, file: this.archiveDir }, "message log: archiving older days failed");
    }
  }

  /**
   * The first instant the window keeps: midnight, in the log's zone, windowDays - 1 days ago.
   * Worked out once a local day (#windowDay): it is asked at every append.
   */
  #windowStart(): number {
    const now = this.#clock.now().getTime();
    const day = this.#windowDay;
    if (day !== undefined && now >= day.from && now < day.to) return day.start;
    const today = DateTime.fromMillis(now, { zone: this.#zone }).startOf("day");
    const start = today.minus({ days: this.#windowDays - 1 }).toMillis();
    this.#windowDay = { from: today.toMillis(), to: today.plus({ days: 1 }).toMillis(), start };
    return start;
  }

  async #rollOver(cutoff: number): Promise<void> {
    const window = this.#low.data.messages;
    const oldest = window[0];
    if (oldest === undefined || messageTime(oldest) >= cutoff) return;
    const keepFrom = window.findIndex((m) => messageTime(m) >= cutoff);
    const split = keepFrom === -1 ? window.length : keepFrom;
    const leaving = window.slice(0, split);
    // Archiving may add a month: the archive is listed again next time.
    this.#months = undefined;
    await ensurePrivateDir(this.archiveDir);
    for (const [month, messages] of groupByMonth(leaving)) {
      const archive = await this.#openArchive(month);
      const known = new Set(archive.data.messages.map((m) => m.id));
      const merged = sortByTime([...archive.data.messages, ...messages.filter((m) => !known.has(m.id))]);
      await this.#writeArchive(month, archive, { version: MESSAGE_LOG_VERSION, messages: merged });
    }
    this.#archiveTail = undefined;
    await this.#writeWindow(window.slice(split));
    this.#reindex();
  }

  /** The archive's months, oldest first; listed once, and again after archiving or a wipe. */
  async #archiveMonths(): Promise<string[]> {
    this.#months ??= (await namesInDir(this.archiveDir))
      .map((name) => ARCHIVE_FILE.exec(name)?.[1])
      .filter((month): month is string => month !== undefined)
      .sort();
    return [...this.#months];
  }

  /** An archive month, from the months kept in memory or read (and then kept) from its file. */
  async #openArchive(month: string): Promise<Low<MessageLogData>> {
    const kept = this.#archives.get(month);
    if (kept) {
      // Most recently used last, so the least recently used is the first to leave.
      this.#archives.delete(month);
      this.#archives.set(month, kept);
      return kept;
    }
    const archive = new Low(logAdapter(archivePath(this.archiveDir, month), this.#write), emptyLog());
    await archive.read();
    this.#archives.set(month, archive);
    for (const old of this.#archives.keys()) {
      if (this.#archives.size <= ARCHIVE_MONTHS_KEPT) break;
      this.#archives.delete(old);
    }
    return archive;
  }

  /** Writes an archive month; on failure it is no longer kept, so memory never holds what the file does not. */
  async #writeArchive(month: string, archive: Low<MessageLogData>, data: MessageLogData): Promise<void> {
    archive.data = data;
    try {
      await archive.write();
    } catch (error) {
      this.#archives.delete(month);
      throw error;
    }
  }

  /** Archived messages from `fromMs` on, then the window; a message in both counts once. */
  async #messagesSince(fromMs: number): Promise<Message[]> {
    const window = this.#low.data.messages;
    const first = window[0];
    // Everything archived is older than the window's first message.
    if (first && messageTime(first) <= fromMs) return window.filter((m) => messageTime(m) >= fromMs);
    const firstMonth = Number.isFinite(fromMs) ? new Date(fromMs).toISOString().slice(0, 7) : "";
    const archived: Message[] = [];
    for (const month of await this.#archiveMonths()) {
      if (month < firstMonth) continue;
      const archive = await this.#openArchive(month);
      for (const message of archive.data.messages) {
        if (messageTime(message) >= fromMs && !this.#byId.has(message.id)) archived.push(message);
      }
    }
    return sortByTime([...archived, ...window.filter((m) => messageTime(m) >= fromMs)]);
  }

  async #findInArchives(predicate: (message: Message) => boolean): Promise<Message | null> {
    for (const month of (await this.#archiveMonths()).reverse()) {
      const found = (await this.#openArchive(month)).data.messages.findLast(predicate);
      if (found) return found;
    }
    return null;
  }

  async #loadArchiveTail(): Promise<{ last: Message | null; lastUser: Message | null }> {
    if (this.#archiveTail) return this.#archiveTail;
    let last: Message | null = null;
    let lastUser: Message | null = null;
    for (const month of (await this.#archiveMonths()).reverse()) {
      const messages = (await this.#openArchive(month)).data.messages;
      last ??= messages[messages.length - 1] ?? null;
      lastUser = messages.findLast((m) => m.role === "user") ?? null;
      if (lastUser) break;
    }
    this.#archiveTail = { last, lastUser };
    return this.#archiveTail;
  }

  /** awarenessSliceStart over the window and as many archive months, newest first, as it takes. */
  async #archivedSliceStart(nowMs: number, windowHours: number): Promise<number> {
    let messages = this.#low.data.messages;
    const found = awarenessSliceStart(messages, nowMs, windowHours);
    if (found !== undefined) return found;
    for (const month of (await this.#archiveMonths()).reverse()) {
      messages = [...(await this.#openArchive(month)).data.messages, ...messages];
      const from = awarenessSliceStart(messages, nowMs, windowHours);
      if (from !== undefined) return from;
    }
    return Number.NEGATIVE_INFINITY;
  }

  #reindex(): void {
    this.#byId = new Map();
    this.#byExternal = new Map();
    this.#updates = new Set();
    for (const message of this.#low.data.messages) this.#index(message);
  }

  #index(message: Message): void {
    this.#byId.set(message.id, message);
    const external = message.external;
    if (!external) return;
    this.#byExternal.set(externalKey(message.channel, external), message);
    if (external.updateId !== undefined) this.#updates.add(updateKey(message.channel, external.updateId));
  }
}

/** The log's files through lowdb; an unreadable file is reported like an invalid one. */
function logAdapter(file: string, write: WriteOptions): Adapter<MessageLogData> {
  const json = new DurableJsonFile(file, {
    parse: (value) => parseMessageLogFile(file, value),
    serialize: serializeMessageLog,
    ...write,
  });
  return {
    read: async () => {
      try {
        return await json.read();
      } catch (error) {
        if (error instanceof DataFileError) throw damagedFile(file, error.problem);
        throw error;
      }
    },
    write: (data) => json.write(data),
  };
}

function emptyLog(): MessageLogData {
  return { version: MESSAGE_LOG_VERSION, messages: [] };
}

function archivePath(archiveDir: string, month: string): string {
  return join(archiveDir, `${month}.json`);
}

function externalKey(channel: Channel, ids: ExternalIds): string {
  return `${channel}:${ids.chatId}:${ids.messageId}`;
}

function updateKey(channel: Channel, updateId: number): string {
  return `${channel}:${updateId}`;
}

/** A new array with the message after every message not later than it. */
function insertByTime(messages: Message[], message: Message): Message[] {
  const at = messageTime(message);
  let index = messages.length;
  while (index > 0 && messageTime(messages[index - 1] as Message) > at) index--;
  return [...messages.slice(0, index), message, ...messages.slice(index)];
}

/** Archive files are per UTC month, so concatenating them in name order keeps time order. */
function groupByMonth(messages: Message[]): Map<string, Message[]> {
  const months = new Map<string, Message[]>();
  for (const message of messages) {
    const month = new Date(messageTime(message)).toISOString().slice(0, 7);
    const group = months.get(month);
    if (group) group.push(message);
    else months.set(month, [message]);
  }
  return months;
}

function inRange(message: Message, fromMs: number, toMs: number): boolean {
  const at = messageTime(message);
  return at >= fromMs && at <= toMs;
}
