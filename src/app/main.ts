import { TelegramChannel } from "../channels/telegram/bot.ts";
import { TelegramConnection } from "../channels/telegram/connection.ts";
import { TELEGRAM_TEXT_LIMIT } from "../channels/telegram/split.ts";
import { TelegramUpdatesState } from "../channels/telegram/updates-state.ts";
import type { Companion } from "../companion/companion.ts";
import type { Clock, Timers } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import type { ModelConfig } from "../model/settings.ts";
import { type EndpointCheckWarning, transcriptionPlace } from "../model/transcription.ts";
import type { CoreConfig, TelegramConfig, VoiceConfig } from "./config.ts";
import { buildCommandHandlers, buildCompanion, openRuntime, type Runtime } from "./runtime.ts";
import { type HeartbeatSchedule, startHeartbeatSchedule } from "./scheduler.ts";

/**
 * `start`'s wiring: the runtime (runtime.ts: lock, stores, model client), then Telegram's
 * outbound port, the companion over it, the channel over the companion, the heartbeat
 * schedule; and the orderly way back down.
 */

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
    timezone: companion.checkins.settings().timezone,
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
  voice: VoiceConfig;
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
const EXIT_SECOND_SIGNAL = 130;
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
      voice: config.voice,
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
    // The two checks ask different services: neither waits on the other.
    const [keyWarning, transcriptionAtStart] = await Promise.all([
      runtime.llm.checkKey(signal),
      checkTranscription(runtime, signal),
    ]);
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
    // The companion tells each move of the person's zone (/tz, a /wipe that drops it): the schedule re-arms in it.
    const built = buildCompanion(
      runtime,
      connection.outbound,
      { closeTimeoutMs: STOP_BUDGET.companionCloseMs },
      queueRestart,
    );
    companion = built;
    const started = new TelegramChannel({
      connection,
      companion: built,
      messages: runtime.messages,
      updates,
      commands: buildCommandHandlers(runtime, built, {
        textLimit: TELEGRAM_TEXT_LIMIT,
        ...(transcriptionAtStart ? { transcriptionAtStart } : {}),
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
 * Says at start whether voice notes are heard, and checks that the transcription service answers
 * at all (no sound is sent). One that does not, or refuses the key, is a warning, not a reason
 * to stop: the person's text must still be answered, a local server may be started after
 * presence, and each voice note tries again and says honestly when it cannot be heard. The
 * warning is returned, with when it was found, for /status to say.
 */
async function checkTranscription(
  runtime: Runtime,
  signal: AbortSignal,
): Promise<{ warning: EndpointCheckWarning; checkedAt: Date } | undefined> {
  const { transcriber, logger, clock } = runtime;
  if (!transcriber) {
    logger.info("voice notes are not heard: PRESENCE_TRANSCRIBE_URL is not set");
    return undefined;
  }
  const at = transcriptionPlace(transcriber.settings.baseUrl);
  const checkedAt = clock.now();
  const warning = await transcriber.checkEndpoint(signal);
  if (warning) {
    logger.warn({ setting: warning.setting, at }, `${warning.message} (starting anyway)`);
    return { warning, checkedAt };
  }
  logger.info(
    { at, model: transcriber.settings.model },
    "voice notes are heard: the transcription service answered",
  );
  return undefined;
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
