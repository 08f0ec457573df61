import { join } from "node:path";
import { z } from "zod";
import { isoUtc } from "../../core/message.ts";
import { DataFileError, DurableJsonFile, ensurePrivateDir } from "../../store/files.ts";

/**
 * data/telegram.json: what the Telegram channel must remember across restarts that is not
 * conversation — the updates it finished handling lately, and when each stranger last got the
 * fixed reply. Telegram delivers again every update that was not confirmed before a crash;
 * this record is how a command, an edit or a stranger's message handled just before the crash
 * is not handled a second time (the person's messages are also recognised by their update id
 * in the log). Exact ids rather than a high-water mark, because after a week without updates
 * Telegram starts numbering them afresh from a random value.
 */

/** A stranger's fixed reply is not repeated within this long. */
const STRANGER_REPLY_INTERVAL_MS = 60 * 60_000;

const FILE_NAME = "telegram.json";
/** Only the last batch before a crash can come again (one getUpdates answer holds at most 100). */
const HANDLED_KEPT = 100;

const stateSchema = z.looseObject({
  version: z.literal(1),
  /** Ids of the latest handled updates, oldest first. */
  handled: z.array(z.number().int()),
  /** Stranger id → when they last got the fixed reply (ISO); entries older than the interval are dropped. */
  strangersAnswered: z.record(z.string(), isoUtc),
});
type State = z.infer<typeof stateSchema>;

/** The channel's durable memory of handled updates and answered strangers. */
export class TelegramUpdatesState {
  readonly #file: DurableJsonFile<State>;
  #state: State;

  private constructor(file: DurableJsonFile<State>, state: State) {
    this.#file = file;
    this.#state = state;
  }

  /**
   * Reads data/telegram.json (a missing file is a first start); a damaged one throws
   * DataFileError. Strangers answered more than an hour before `now` are forgotten (on disk
   * with the next write).
   */
  static async open(dataDir: string, now: Date): Promise<TelegramUpdatesState> {
    await ensurePrivateDir(dataDir);
    const path = join(dataDir, FILE_NAME);
    const file = new DurableJsonFile<State>(path, {
      parse: (value) => {
        const parsed = stateSchema.safeParse(value);
        if (!parsed.success) {
          throw new DataFileError(
            path,
            `is not a presence Telegram state file (${parsed.error.issues[0]?.message}); delete it to start afresh (at worst the last update before a crash is handled twice)`,
          );
        }
        return parsed.data;
      },
    });
    const state = (await file.read()) ?? { version: 1, handled: [], strangersAnswered: {} };
    return new TelegramUpdatesState(file, {
      ...state,
      strangersAnswered: recentOnly(state.strangersAnswered, now),
    });
  }

  /** True when this update was handled before (Telegram delivers it again after a crash). */
  isHandled(updateId: number): boolean {
    return this.#state.handled.includes(updateId);
  }

  /** Records, durably, that this update is handled. */
  async markHandled(updateId: number): Promise<void> {
    if (this.isHandled(updateId)) return;
    await this.#save({ ...this.#state, handled: [...this.#state.handled, updateId].slice(-HANDLED_KEPT) });
  }

  /**
   * Whether a stranger may get the fixed reply now, at most once per interval; a yes is
   * recorded before it returns, so a restart does not reply again within the hour.
   */
  async claimStrangerReply(userId: number, now: Date): Promise<boolean> {
    const last = this.#state.strangersAnswered[String(userId)];
    if (last !== undefined && now.getTime() - Date.parse(last) < STRANGER_REPLY_INTERVAL_MS) return false;
    await this.#save({
      ...this.#state,
      strangersAnswered: {
        ...recentOnly(this.#state.strangersAnswered, now),
        [String(userId)]: now.toISOString(),
      },
    });
    return true;
  }

  async #save(next: State): Promise<void> {
    await this.#file.write(next);
    this.#state = next;
  }
}

/** The strangers answered within the last interval before `now`. */
function recentOnly(answered: Record<string, string>, now: Date): Record<string, string> {
  return Object.fromEntries(
    Object.entries(answered).filter(([, at]) => now.getTime() - Date.parse(at) < STRANGER_REPLY_INTERVAL_MS),
  );
}
