import { join, relative } from "node:path";
import { CommandHandlers } from "../channels/command-handlers.ts";
import { type Companion, type CompanionOptions, createCompanion } from "../companion/companion.ts";
import type { Clock, Timers } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { OutboundPort } from "../core/port.ts";
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
import type { CoreConfig } from "./config.ts";
import { formatStatus, readStatus } from "./status.ts";

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
export { type CoreConfig, loadCoreConfig, loadModelConfig } from "./config.ts";

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
  /** A model client of the caller's over `model` (the simulations' one keeps every call's usage); by default the plain one. */
  llm?: ModelClient;
}): Promise<Runtime> {
  const { core, model, clock, timers, logger } = options;
  const lock = await acquireDataLock(core.dataDir, options.purpose, clock);
  try {
    const messages = await MessageLog.open({ dataDir: core.dataDir, clock, timeZone: core.timezone, logger });
    const mind = await MindStore.open(core.dataDir, clock);
    const notes = new NotesStore({ dataDir: core.dataDir });
    const files = new SentFiles({ dataDir: core.dataDir });
    const trace = new Trace({ dataDir: core.dataDir, clock, logger });
    const llm = options.llm ?? new ModelClient(model, { clock });
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
