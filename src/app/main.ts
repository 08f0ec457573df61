import { join, relative } from "node:path";
import { CommandHandlers } from "../channels/command-handlers.ts";
import { TelegramChannel } from "../channels/telegram/bot.ts";
import { TelegramConnection } from "../channels/telegram/connection.ts";
import { TELEGRAM_TEXT_LIMIT } from "../channels/telegram/split.ts";
import { TelegramUpdatesState } from "../channels/telegram/updates-state.ts";
import { type Companion, type CompanionOptions, createCompanion } from "../companion/companion.ts";
import type { Clock, Timers } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { OutboundPort } from "../core/port.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import { reviewItems } from "../mind/review.ts";
import { ModelClient } from "../model/llm.ts";
import { personaFromDir } from "../model/persona.ts";
import type { ModelConfig } from "../model/settings.ts";
import { readTextIfExists } from "../store/files.ts";
import { acquireDataLock, type DataLock } from "../store/lock.ts";
import { MessageLog } from "../store/messages.ts";
import { MindStore } from "../store/mind.ts";
import { NotesStore } from "../store/notes.ts";
import { keptCopies, PERSON_FILES, removeKeptCopies } from "../store/person-files.ts";
import { SentFiles } from "../store/sent-files.ts";
import { Trace, type TraceLine } from "../store/trace.ts";
import type { CoreConfig, TelegramConfig } from "./config.ts";
import { type HeartbeatSchedule, startHeartbeatSchedule } from "./scheduler.ts";
import { formatStatus, readStatus } from "./status.ts";

/**
 * Wiring: configuration → the data lock → stores → model client → companion → channel and
 * heartbeat schedule, and the orderly way back down. `start` (Telegram) and `chat` (the
 * terminal) share everything here but the channel.
 */

/** Everything opened for one data directory, owned by one process. */
export interface Runtime {
  core: CoreConfig;
  model: ModelConfig;
  clock: Clock;
  /** The waits that belong with `clock`: the machine's in production, virtual in simulations. */
  timers: Timers;
  logger: Logger;
  lock: DataLock;
  messages: MessageLog;
  mind: MindStore;
  notes: NotesStore;
  files: SentFiles;
  trace: Trace;
  llm: ModelClient;
}

/**
 * Takes the data directory (DataLockedError names the PID holding it) and opens the stores.
 * The lock comes first: nothing is read or written before this process owns the data.
 */
export async function openRuntime(options: {
  core: CoreConfig;
  model: ModelConfig;
  purpose: string;
  clock: Clock;
  timers: Timers;
  logger: Logger;
}): Promise<Runtime> {
  const { core, model, clock, timers, logger } = options;
  const lock = await acquireDataLock(core.dataDir, options.purpose, clock);
  try {
    const messages = await MessageLog.open({ dataDir: core.dataDir, clock, timeZone: core.timezone, logger });
    const mind = await MindStore.open(core.dataDir, clock);
    const notes = new NotesStore({ dataDir: core.dataDir });
    const files = new SentFiles({ dataDir: core.dataDir });
    const trace = new Trace({ dataDir: core.dataDir, clock, logger });
    const llm = new ModelClient(model, { clock });
    return { core, model, clock, timers, logger, lock, messages, mind, notes, files, trace, llm };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** The companion over a runtime and a channel's outbound port. */
export function buildCompanion(runtime: Runtime, port: OutboundPort, options?: CompanionOptions): Companion {
  return createCompanion({
    clock: runtime.clock,
    timers: runtime.timers,
    core: runtime.core,
    model: runtime.model,
    log: runtime.messages,
    mind: runtime.mind,
    notes: runtime.notes,
    files: runtime.files,
    trace: runtime.trace,
    llm: runtime.llm,
    port,
    persona: personaFromDir(),
    logger: runtime.logger,
    ...(options ? { options } : {}),
  });
}

/** Where `chat` writes /export files: inside the data dir, so /wipe deletes them too. */
export function exportsDir(dataDir: string): string {
  return join(dataDir, PERSON_FILES.exports);
}

/**
 * How much of the trace an export carries: the newest records, within a byte budget, so the
 * file stays well under Telegram's 50 MB for documents; the export says what was left out.
 */
export const EXPORT_TRACE_LIMIT = { records: 5_000, bytes: 8 * 1024 * 1024 } as const;

/** The newest trace records that fit the export's budget, oldest first, and a note of what was left out. */
async function traceForExport(trace: Trace): Promise<{ records: TraceLine[]; note: string }> {
  const newest = await trace.last(EXPORT_TRACE_LIMIT.records + 1);
  const records: TraceLine[] = [];
  let bytes = 0;
  for (const record of newest.slice(-EXPORT_TRACE_LIMIT.records).reverse()) {
    bytes += Buffer.byteLength(JSON.stringify(record));
    if (bytes > EXPORT_TRACE_LIMIT.bytes) break;
    records.unshift(record);
  }
  const complete = records.length === newest.length;
  return {
    records,
    note: complete
      ? "All turn records are included (they are deleted after 30 days)."
      : `Only the newest ${records.length} turn records are included; older ones are kept on the computer for up to 30 days and are not in this file.`,
  };
}

/** How much of the damaged copies and crash leftovers an export carries as text; the rest it names. */
export const EXPORT_COPIES_BYTES = 8 * 1024 * 1024;

/**
 * The files beside the stores that hold the person's words (damaged originals, temp files a
 * crash left, the documents they sent), with their contents while they fit the budget: text as
 * text, a PDF as base64. Earlier /export files are not repeated.
 */
async function copiesForExport(dataDir: string, files: SentFiles): Promise<unknown[]> {
  let bytes = 0;
  const copies: unknown[] = [];
  for (const copy of await keptCopies(dataDir)) {
    if (copy.kind === "export") continue;
    const file = relative(dataDir, copy.path);
    bytes += copy.bytes;
    const fits = bytes <= EXPORT_COPIES_BYTES;
    const kept = fits && copy.kind === "document" ? await files.read(file) : null;
    const pdf = kept?.kind === "pdf" ? kept.bytes : null;
    const text =
      kept?.kind === "text"
        ? kept.bytes.toString("utf8")
        : fits && kept === null
          ? await readTextIfExists(copy.path)
          : null;
    copies.push(
      pdf !== null
        ? { file, kind: copy.kind, base64: pdf.toString("base64") }
        : text !== null
          ? { file, kind: copy.kind, text }
          : {
              file,
              kind: copy.kind,
              bytes: copy.bytes,
              omitted: `too large for this export; it is at ${copy.path}`,
            },
    );
  }
  return copies;
}

/** Hooks the commands need from the rest of the process. */
export interface CommandHooks {
  /** Runs /wipe through the companion (Companion.exclusive), so nothing in flight writes back. */
  exclusive?<T>(work: () => Promise<T>): Promise<T>;
  onTimezoneChange?(zone: string): void;
  /** The channel's text limit (TELEGRAM_TEXT_LIMIT, TERMINAL_TEXT_LIMIT): /memory's pages fit it. */
  textLimit?: number;
}

/**
 * The slash commands over a runtime and its companion: status, pause and the rest, export and
 * wipe; /memory, /forget and /fix go to the companion.
 */
export function buildCommandHandlers(
  runtime: Runtime,
  companion: Pick<Companion, "memory">,
  hooks: CommandHooks = {},
): CommandHandlers {
  const { core, model, clock, messages, mind, notes, files, trace } = runtime;
  return new CommandHandlers({
    ...hooks,
    memory: companion.memory,
    mind,
    clock,
    settings: { timezone: core.timezone, quietHours: core.quietHours },
    async status() {
      const status = await readStatus({
        now: clock.now(),
        core,
        mind,
        log: messages,
        budget: model.dailyTokenBudget > 0 ? model.dailyTokenBudget : null,
      });
      return formatStatus(status);
    },
    async exportAll() {
      const keys = await notes.list();
      const turns = await traceForExport(trace);
      return {
        exportedAt: clock.now().toISOString(),
        messages: await messages.all(),
        memoryNote:
          "memoryItems is what /memory lists, each with where it came from: learnedAt (null: learned before this was kept), sourceMessageIds (ids in messages; empty: not known) and corrected (you changed it with /fix).",
        memoryItems: reviewItems(mind.read()).map((item) => ({
          ...item,
          corrected: item.correctedAt !== null,
        })),
        mind: mind.exportAll(),
        notes: await Promise.all(keys.map(async (n) => ({ key: n.key, text: await notes.read(n.key) }))),
        traceNote: turns.note,
        trace: turns.records,
        otherFiles: await copiesForExport(core.dataDir, files),
      };
    },
    async wipeAll() {
      await messages.deleteAll();
      await mind.deleteAll();
      await notes.deleteAll();
      await trace.deleteAll();
      await removeKeptCopies(core.dataDir);
    },
  });
}

/**
 * Bounds for a graceful stop. With the channel's 2 s for confirming updates and the command's
 * 1 s exit grace, the worst case stays under pm2's kill_timeout of 10 s (ecosystem.config.cjs);
 * a reply cut off by these bounds stays unanswered in the log and is answered after the restart.
 */
export const STOP_BUDGET = {
  /** Replies in flight when updates stop. */
  channelGraceMs: 4_000,
  /** The companion's turn and reflections in flight. */
  companionCloseMs: 2_500,
} as const;

/** Starts the heartbeat: each tick asks the companion; ticks missed while down are not made up. */
function startHeartbeat(runtime: Runtime, companion: Companion): HeartbeatSchedule {
  const { core, logger } = runtime;
  return startHeartbeatSchedule({
    cron: core.heartbeatCron,
    timezone: runtime.mind.read().heartbeat.timezone ?? core.timezone,
    logger,
    onTick: async () => {
      const outcome = await companion.heartbeat();
      logger.info(
        { outcome: outcome.status, ...("decision" in outcome ? { reason: outcome.decision.reason } : {}) },
        "heartbeat",
      );
    },
  });
}

/** The settings `start` needs, read together so every problem is reported at once. */
export interface StartConfig {
  core: CoreConfig;
  model: ModelConfig;
  telegram: TelegramConfig;
}

/** How the running bot reports and where it gets time; the real process passes its own. */
export interface BotEnvironment {
  clock: Clock;
  /** The waits that belong with `clock` (systemTimers with systemClock). */
  timers: Timers;
  logger: Logger;
  /**
   * Signals that stop the bot (gracefully once it listens); they stay handled until the process
   * exits, so that a second one exits at once. Tests may pass none and call stop().
   */
  signals?: readonly NodeJS.Signals[];
}

/** A running bot: `done` resolves with the exit code once it has stopped. */
export interface RunningBot {
  readonly runtime: Runtime;
  readonly companion: Companion;
  readonly channel: TelegramChannel;
  readonly done: Promise<number>;
  /** When the heartbeat ticks next; it follows the person's /tz. Null once stopped. */
  nextHeartbeat(now: Date): Date | null;
  stop(code?: number): Promise<number>;
}

/**
 * A stop signal came before the bot was listening. Start-up was abandoned where it stood (what
 * recovery had begun is done after the next start) and the lock released; `start` exits 0.
 */
export class StartCancelledError extends Error {
  override readonly name = "StartCancelledError";
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal} before listening`);
  }
}

/** Exit code of a second SIGINT/SIGTERM while stopping (docs/running.md, Exit codes). */
export const EXIT_SECOND_SIGNAL = 130;
/** How long a second signal waits for the lock to be removed before exiting anyway (a hung disk must not hold it). */
const SECOND_SIGNAL_EXIT_MS = 500;

/**
 * Starts the companion on Telegram: lock, stores, the API key checked (ModelKeyRejectedError
 * when the API rejects it), getMe within TELEGRAM_CONNECT_TIMEOUT_MS (TelegramTokenRejectedError,
 * TelegramUnreachableError), recovery of what a crash interrupted, long polling, the heartbeat.
 * A SIGINT/SIGTERM before it listens abandons start-up (StartCancelledError); once it listens,
 * one stops it in order: no more updates, the turn in flight finished (bounded), the schedule
 * stopped, the stores flushed, the lock released. A second signal while stopping exits 130 at
 * once, removing the lock first if it is still this process's.
 */
export async function startBot(config: StartConfig, env: BotEnvironment): Promise<RunningBot> {
  const { clock, timers, logger } = env;
  const signals = env.signals ?? [];
  const starting = new AbortController();
  // One removal of the lock for every caller, so a second signal's exit waits for the one a stop began.
  let releaseLock: (() => Promise<void>) | undefined;
  let stopping: Promise<number> | undefined;
  let listening: RunningBot | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping || starting.signal.aborted) {
      logger.warn({ signal }, "second signal while stopping; exiting now");
      exitAfterReleasing(releaseLock);
      return;
    }
    logger.info({ signal }, "signal received");
    if (listening) void listening.stop(0);
    else starting.abort(new StartCancelledError(signal));
  };
  const forgetSignals = () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
  for (const signal of signals) process.on(signal, onSignal);

  let runtime: Runtime;
  try {
    runtime = await openRuntime({
      core: config.core,
      model: config.model,
      purpose: "start",
      clock,
      timers,
      logger,
    });
  } catch (error) {
    forgetSignals();
    throw error;
  }
  let releasing: Promise<void> | undefined;
  releaseLock = () => {
    releasing ??= runtime.lock.release();
    return releasing;
  };
  let companion: Companion | undefined;
  let schedule: HeartbeatSchedule | undefined;
  let channel: TelegramChannel | undefined;
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });

  const stop = (code = 0): Promise<number> => {
    stopping ??= (async () => {
      logger.info({ code }, "stopping");
      await channel
        ?.stop(STOP_BUDGET.channelGraceMs)
        .catch((err: unknown) => logger.warn({ err }, "channel stop failed"));
      await restarts.idle();
      await schedule?.stop().catch((err: unknown) => logger.warn({ err }, "schedule stop failed"));
      await companion?.close().catch((err: unknown) => logger.warn({ err }, "companion close failed"));
      await releaseLock();
      logger.info("stopped");
      resolveDone(code);
      return code;
    })();
    return stopping;
  };
  const restartSchedule = async (zone: string) => {
    if (!schedule || !companion || stopping) return;
    await schedule.stop();
    if (stopping) return;
    schedule = startHeartbeat(runtime, companion);
    logger.info({ timezone: zone }, "heartbeat follows the new time zone");
  };
  // Restarts run one after another, so two quick /tz never leave a schedule nobody stops.
  const restarts = new SerialQueue();
  const queueRestart = (zone: string) => {
    restarts
      .run(() => restartSchedule(zone))
      .catch((err: unknown) => logger.error({ err }, "could not move the heartbeat to the new time zone"));
  };

  const startUp = async (
    signal: AbortSignal,
  ): Promise<{ channel: TelegramChannel; companion: Companion }> => {
    const keyWarning = await runtime.llm.checkKey(signal);
    if (keyWarning)
      logger.warn(
        { setting: keyWarning.setting },
        `${keyWarning.message} (starting anyway; each reply tries the API again)`,
      );
    else logger.info({ model: config.model.model }, "the model API accepted the key");
    const updates = await TelegramUpdatesState.open(config.core.dataDir, clock.now());
    signal.throwIfAborted();
    const connection = new TelegramConnection({
      token: config.telegram.token,
      ownerId: config.telegram.ownerId,
      apiRoot: config.telegram.apiRoot,
      timers,
      logger,
    });
    const built = buildCompanion(runtime, connection.outbound, {
      closeTimeoutMs: STOP_BUDGET.companionCloseMs,
    });
    companion = built;
    const started = new TelegramChannel({
      connection,
      companion: built,
      messages: runtime.messages,
      updates,
      commands: buildCommandHandlers(runtime, built, {
        exclusive: (work) => built.exclusive(work),
        onTimezoneChange: queueRestart,
        textLimit: TELEGRAM_TEXT_LIMIT,
      }),
      clock,
      timers,
      logger,
      onFatal: (error) => {
        logger.error(
          { err: error },
          "cannot carry on; stopping so a restart can pick up where this left off",
        );
        void stop(1);
      },
    });
    channel = started;
    const me = await started.verify({ timeoutMs: config.telegram.connectTimeoutMs, signal });
    logger.info({ bot: me.username }, "telegram accepted the token");
    // Recovery runs beside long polling, not before it: it may wait on the model, and the
    // person's new messages must not wait for that. close() waits for it (bounded) like any turn.
    void built.recover().catch((err: unknown) => logger.error({ err }, "recovery failed"));
    await started.start(signal);
    signal.throwIfAborted();
    schedule = startHeartbeat(runtime, built);
    return { channel: started, companion: built };
  };

  try {
    const started = await unlessAborted(startUp(starting.signal), starting.signal);
    listening = {
      runtime,
      companion: started.companion,
      channel: started.channel,
      done,
      stop,
      nextHeartbeat: (now) => (stopping ? null : (schedule?.nextRun(now) ?? null)),
    };
    return listening;
  } catch (error) {
    if (starting.signal.aborted) {
      // Abandoned, not finished: nothing here is waited for, so the process can exit at once.
      // Work still in flight (recovery waiting on the model) may yet write, so the lock goes
      // with the process, not before it.
      logger.info("stopped before listening; what start-up had begun is done after the next start");
      void channel?.stop(0).catch(() => undefined);
      void companion?.close().catch(() => undefined);
      runtime.lock.releaseAtExit();
      throw starting.signal.reason;
    }
    forgetSignals();
    await channel?.stop(0).catch(() => undefined);
    await companion?.close().catch(() => undefined);
    await releaseLock();
    throw error;
  }
}

/**
 * Settles with `work`, or rejects with the signal's reason as soon as it aborts. `work` is
 * always followed, so its own rejection after an abort is never an unhandled one.
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Exits with EXIT_SECOND_SIGNAL once the lock is removed (if it is still ours), or after a moment if that hangs. */
function exitAfterReleasing(releaseLock: (() => Promise<void>) | undefined): void {
  const exit = () => process.exit(EXIT_SECOND_SIGNAL);
  setTimeout(exit, SECOND_SIGNAL_EXIT_MS);
  void (releaseLock?.() ?? Promise.resolve()).then(exit, exit);
}
