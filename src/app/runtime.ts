import { CommandHandlers } from "../channels/command-handlers.ts";
import {
  type Companion,
  type CompanionOptions,
  createCompanion,
  type ZoneListener,
} from "../companion/companion.ts";
import { type MindStore, openMind } from "../companion/mind-document.ts";
import type { Clock, Timers } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { OutboundPort } from "../core/port.ts";
import { ModelClient } from "../model/llm.ts";
import { type PersonaSource, personaFromDir } from "../model/persona.ts";
import type { ModelConfig } from "../model/settings.ts";
import { type EndpointCheckWarning, TranscriptionClient } from "../model/transcription.ts";
import { acquireDataLock, type DataLock } from "../store/lock.ts";
import { MessageLog } from "../store/messages.ts";
import { NotesStore } from "../store/notes.ts";
import { SentFiles } from "../store/sent-files.ts";
import { Trace } from "../store/trace.ts";
import type { CoreConfig, VoiceConfig } from "./config.ts";
import { formatStatus, readStatus, voiceNotesStatus, voiceNotesWords } from "./status.ts";

/**
 * A companion over one data directory, the way every command that talks runs it: the data
 * lock, the stores, the model client, the companion over a channel's outbound port, and the
 * slash commands over both. `start` (Telegram, main.ts) and `chat` (the terminal) build on
 * it, and so do the simulations, which must run the same code the bot runs.
 *
 * This file is app's public entry: simulations/ and bench/ import app only from here (the
 * architecture test holds them to it), so main.ts, config.ts and the commands can change
 * without them. Only src/cli.ts, the one room above, reaches into the rest of app.
 */

/** What openRuntime, and every command that writes, throws while another process holds the data directory. */
export { DataLockedError } from "../store/lock.ts";
/**
 * The command-line contract, for a command defined beside the code it runs (simulate in
 * simulations/, bench in bench/) and listed in src/cli.ts with app's own.
 */
export { defineCommand, UsageError } from "./commands/command.ts";
/** The width a command's output keeps within, and tables and paragraphs laid out to fit it. */
export { formatTable, OUTPUT_WIDTH, outputWidth, wrapWords } from "./commands/layout.ts";
/** Reading the settings from an environment (ConfigError names each problem), and their shape. */
export { type CoreConfig, loadCoreConfig, loadModelConfig, loadVoiceConfig } from "./config.ts";

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
  /** What becomes of voice notes (PRESENCE_TRANSCRIBE_*, PRESENCE_VOICE_KEEP_DAYS). */
  voice: VoiceConfig;
  /** The transcription service's client when one is set up: voice notes are heard. */
  transcriber: TranscriptionClient | undefined;
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
  /** A model client of the caller's over `model` (the simulations' one keeps every call's usage); by default the plain one. */
  llm?: ModelClient;
  /** The voice note settings (loadVoiceConfig): whether voice notes are heard, how long their sound is kept. */
  voice: VoiceConfig;
  /**
   * False only in simulations, whose data directory is a temp one deleted after the run: the
   * log and the mind are then written without waiting for the disk (store/files.ts WriteOptions).
   */
  fsync?: boolean;
  /**
   * True only in simulations, for the same reason: the mind, the log's window and the trace
   * change in memory and are written when flushed (store/files.ts WriteOptions), which the
   * caller does before the directory goes.
   */
  writeOnFlush?: boolean;
}): Promise<Runtime> {
  const { core, model, clock, timers, logger } = options;
  const writes = { fsync: options.fsync ?? true, writeOnFlush: options.writeOnFlush ?? false };
  const lock = await acquireDataLock(core.dataDir, options.purpose, clock);
  try {
    const messages = await MessageLog.open({
      dataDir: core.dataDir,
      clock,
      timeZone: core.timezone,
      logger,
      ...writes,
    });
    const mind = await openMind(core.dataDir, clock, writes);
    const notes = new NotesStore({ dataDir: core.dataDir });
    const files = new SentFiles({ dataDir: core.dataDir });
    const trace = new Trace({ dataDir: core.dataDir, clock, logger, writeOnFlush: writes.writeOnFlush });
    const llm = options.llm ?? new ModelClient(model, { clock });
    const { voice } = options;
    const transcriber = voice.transcription
      ? new TranscriptionClient(voice.transcription, { timers })
      : undefined;
    return {
      core,
      model,
      clock,
      timers,
      logger,
      lock,
      messages,
      mind,
      notes,
      files,
      trace,
      llm,
      voice,
      transcriber,
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * The companion over a runtime and a channel's outbound port; `onZoneChange` hears each move
 * of the person's zone (the heartbeat schedule re-arms in it). The persona is the project's
 * files, looked at before every turn so an edit counts at once; a simulation, which nobody
 * edits under, brings the one it loaded.
 */
export function buildCompanion(
  runtime: Runtime,
  port: OutboundPort,
  options?: CompanionOptions,
  onZoneChange?: ZoneListener,
  persona: PersonaSource = personaFromDir(),
): Companion {
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
    ...(runtime.transcriber ? { transcriber: runtime.transcriber } : {}),
    soundKeepDays: runtime.voice.keepDays,
    port,
    persona,
    logger: runtime.logger,
    ...(options ? { options } : {}),
    ...(onZoneChange ? { onZoneChange } : {}),
  });
}

/** What the channel brings to its commands. */
export interface CommandHooks {
  /** The channel's text limit (TELEGRAM_TEXT_LIMIT, TERMINAL_TEXT_LIMIT): /memory's pages fit it. */
  textLimit?: number;
  /**
   * What the start check found wrong with the transcription service, and when it looked: /status
   * says it until a voice note that arrived since was heard or failed for a cause of its own.
   */
  transcriptionAtStart?: { warning: EndpointCheckWarning; checkedAt: Date };
}

/**
 * The slash commands over a runtime and its companion: /status here; the check-in settings
 * (/pause, /quiet, /tz, /why) and the person's data rights (/memory, /forget, /fix, /export,
 * /wipe) go to the companion, which runs what deletes with nothing else writing.
 */
export function buildCommandHandlers(
  runtime: Runtime,
  companion: Pick<Companion, "rights" | "checkins">,
  hooks: CommandHooks = {},
): CommandHandlers {
  const { core, model, clock, messages, mind, voice } = runtime;
  const transcribeUrl = voice.transcription?.baseUrl;
  const { transcriptionAtStart, ...channelHooks } = hooks;
  return new CommandHandlers({
    ...channelHooks,
    rights: companion.rights,
    checkins: companion.checkins,
    clock,
    voiceNotes: voiceNotesWords(voiceNotesStatus(transcribeUrl)),
    async status() {
      const status = await readStatus({
        now: clock.now(),
        core,
        mind,
        log: messages,
        budget: model.dailyTokenBudget > 0 ? model.dailyTokenBudget : null,
        ...(transcribeUrl ? { transcribeUrl } : {}),
        ...(transcriptionAtStart ? { transcriptionAtStart } : {}),
      });
      return formatStatus(status);
    },
  });
}
