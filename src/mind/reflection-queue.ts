import { randomBytes } from "node:crypto";
import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { detectTopics } from "../conversation/awareness/topics.ts";
import { openQuestions } from "../conversation/pending-messages.ts";
import { backoffDelay } from "../core/backoff.ts";
import { effectiveSettings, type HeartbeatSettings, type heartbeatRecord } from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import { isoUtc, type Message } from "../core/message.ts";
import { type MindAccess, type MindDocument, mindRecord } from "../core/mind-record.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import { recordUsage, type UsageLedger, type UsageRecord } from "../core/usage.ts";
import { prefixCacheFor, REFLECTION_PREFIX_PURPOSES, withPrefixCache } from "../model/cache-plan.ts";
import { type ModelAnswer, type ModelClient, ModelUnavailableError } from "../model/llm.ts";
import type { PersonaSource } from "../model/persona.ts";
import type { ModelConfig } from "../model/settings.ts";
import type { MessageLog } from "../store/messages.ts";
import type { NotesStore } from "../store/notes.ts";
import type { Trace } from "../store/trace.ts";
import {
  applyReflectionUpdate,
  type Exchange,
  OPEN_QUESTION_HOURS,
  questionsToShow,
  REFLECT_TOOL,
  type ReflectedMind,
  type ReflectionOutcome,
  reflectionPrompt,
  reflectionSystem,
  withoutForgotten,
} from "./reflect.ts";
import { type flushedThroughRecord, flushMarkAfter } from "./threads.ts";
import { ITEM_FIELDS, newItemId } from "./understanding.ts";

/**
 * Runs reflection off the reply path. Exchanges wait in a queue inside mind.json, so one
 * whose reflection never ran (a crash right after the reply) is reflected on after the
 * restart; they run one at a time, in order, because each builds on the state the one
 * before left; a model that is unavailable is retried later with growing pauses.
 */

/** Waits before retrying a job after its 1st, 2nd, … failure (the last one repeats). */
export const RETRY_BACKOFF_MS = [30_000, 120_000, 600_000, 1_800_000, 3_600_000] as const;
/** A job failing for a reason other than an unavailable model is given up after this many tries. */
const MAX_FAILED_ATTEMPTS = 3;
/** Room for the reflection's answer. */
const REFLECT_MAX_TOKENS = 2_048;

/** An exchange waiting to be reflected on. */
const reflectionJobSchema = z.looseObject({
  id: z.string().min(1),
  exchange: z.object({
    /** The exchange's log entries (the person's messages and the reply, or a check-in). */
    messageIds: z.array(z.string().min(1)).min(1),
    trigger: z.enum(["reply", "heartbeat"]),
    /** Messages leaving the working window, shown once so reflection can keep what matters. */
    evicting: z.array(z.string().min(1)).default([]),
  }),
  attempts: z.number().int().nonnegative(),
  enqueuedAt: isoUtc,
  /** Not retried before this instant (backoff after a transient failure). */
  notBefore: isoUtc.optional(),
  lastError: z.string().optional(),
});
export type ReflectionJob = z.infer<typeof reflectionJobSchema>;

/** The queue's record in mind.json: exchanges waiting, oldest first. */
export const reflectionQueueRecord = mindRecord({
  key: "reflectionQueue",
  schema: z.array(reflectionJobSchema).default([]),
  initial: () => [],
});

/**
 * What the queue reads and writes of mind.json: what reflection changes, the queue and the
 * flush mark, the zone the person set (/tz), and the usage ledger its calls join.
 */
type QueuedMind = ReflectedMind &
  UsageLedger &
  MindDocument<typeof reflectionQueueRecord | typeof flushedThroughRecord | typeof heartbeatRecord>;

/**
 * What the reflector needs; the log and notes are where annotations and archives go, and the
 * log's recent window is where the companion's open questions are found.
 */
export interface ReflectorDeps {
  mind: MindAccess<QueuedMind>;
  log: Pick<MessageLog, "get" | "update" | "recent">;
  notes: Pick<NotesStore, "write">;
  model: Pick<ModelClient, "create">;
  config: Pick<ModelConfig, "reflectModel" | "reflectMode" | "prices">;
  clock: Clock;
  /** The configured check-in settings; the zone in force (the person's /tz first, effectiveSettings) is read per job. */
  settings: HeartbeatSettings;
  /** The persona, read per reflection like per turn: reflection keeps IDENTITY consistent with it. */
  persona: PersonaSource;
  trace?: Pick<Trace, "note">;
  logger?: Logger;
}

/** What one runPending call did. */
export interface ReflectionRunSummary {
  applied: number;
  refused: number;
  /** Jobs given up (nothing left to reflect on, or failing for a reason waiting cannot fix). */
  dropped: number;
  /** When the first job still waiting may be retried; null when the queue is empty. */
  retryAt: string | null;
}

/** An exchange to reflect on, as the companion hands it over. */
export interface ExchangeInput {
  messageIds: readonly string[];
  trigger: "reply" | "heartbeat";
  /** Messages about to leave the working window (workingMessages().evicting). */
  evicting?: readonly Message[];
}

/** The one runner of reflections for a data dir; the companion owns it (see the file comment). */
export class Reflector {
  readonly #deps: ReflectorDeps;
  readonly #logger: Logger;
  /** One reflection at a time: each builds on the state the one before left. */
  readonly #running = new SerialQueue();

  constructor(deps: ReflectorDeps) {
    this.#deps = deps;
    this.#logger = deps.logger ?? silentLogger;
  }

  /**
   * Queues an exchange durably (in mind.json before this resolves) and marks its evicting
   * messages as flushed, so reflection is told about each of them once. In off mode nothing
   * is reflected. Single-phase mode queues too, for what the reply call could not carry: a
   * check-in, a reply that came without an update, a reply resent after a restart.
   */
  async enqueue(exchange: ExchangeInput): Promise<ReflectionJob | null> {
    return this.#deps.mind.update((mind) => this.enqueueIn(mind, exchange));
  }

  /**
   * Queues an exchange inside a mind write the caller is making, so the job lands together
   * with whatever else that write records (the outbox clearing a message it logged as sent):
   * a crash can then not keep the one and lose the other.
   */
  enqueueIn(mind: QueuedMind, exchange: ExchangeInput): ReflectionJob | null {
    if (this.#deps.config.reflectMode === "off") return null;
    const evicting = exchange.evicting ?? [];
    const job: ReflectionJob = {
      id: `r-${this.#deps.clock.now().getTime().toString(36)}-${randomBytes(3).toString("hex")}`,
      exchange: {
        messageIds: [...exchange.messageIds],
        trigger: exchange.trigger,
        evicting: evicting.map((m) => m.id),
      },
      attempts: 0,
      enqueuedAt: this.#deps.clock.now().toISOString(),
    };
    mind.reflectionQueue.push(job);
    const mark = flushMarkAfter(mind.flushedThrough, evicting);
    if (mark) mind.flushedThrough = mark;
    return job;
  }

  /**
   * Reflects on every queued exchange that is due, oldest first. Calls made while a run is
   * going wait for it, so two reflections never run at once. Stops at the first job that
   * has to wait, since later ones build on its result.
   */
  runPending(): Promise<ReflectionRunSummary> {
    return this.#running.run(() => this.#drain());
  }

  /**
   * Applies an update that arrived with the reply (single-phase mode), with the same checks
   * and the same all-or-nothing write as a queued reflection.
   */
  applyInline(exchange: ExchangeInput, input: unknown): Promise<ReflectionOutcome> {
    return this.#running.run(async () => {
      const messages = await this.#load(exchange.messageIds);
      const job: Exchange = {
        messageIds: [...exchange.messageIds],
        trigger: exchange.trigger,
        evicting: (exchange.evicting ?? []).map((m) => m.id),
      };
      const outcome = (await this.#commit(null, job, messages, input)) as ReflectionOutcome;
      if (exchange.evicting && exchange.evicting.length > 0) {
        const evicting = exchange.evicting;
        await this.#deps.mind.update((mind) => {
          const mark = flushMarkAfter(mind.flushedThrough, evicting);
          if (mark) mind.flushedThrough = mark;
        });
      }
      await this.#deps.trace?.note({
        kind: "reflect",
        mode: "single-phase",
        exchange: job,
        ...describe(outcome),
      });
      return outcome;
    });
  }

  async #drain(): Promise<ReflectionRunSummary> {
    const summary: ReflectionRunSummary = { applied: 0, refused: 0, dropped: 0, retryAt: null };
    for (;;) {
      const job = this.#deps.mind.read().reflectionQueue[0];
      if (!job) return summary;
      const now = this.#deps.clock.now();
      if (job.notBefore !== undefined && Date.parse(job.notBefore) > now.getTime()) {
        summary.retryAt = job.notBefore;
        return summary;
      }
      const result = await this.#runJob(job);
      if (result === "wait") {
        summary.retryAt = this.#deps.mind.read().reflectionQueue[0]?.notBefore ?? null;
        return summary;
      }
      summary[result] += 1;
    }
  }

  async #runJob(job: ReflectionJob): Promise<"applied" | "refused" | "dropped" | "wait"> {
    const messages = await this.#load(job.exchange.messageIds);
    if (messages.length === 0) {
      await this.#remove(job.id);
      await this.#deps.trace?.note({
        kind: "reflect",
        job: job.id,
        outcome: "dropped",
        reason: "its messages are gone",
      });
      return "dropped";
    }
    const evicting = await this.#load(job.exchange.evicting);
    const mind = this.#deps.mind.read();
    const zone = effectiveSettings(this.#deps.settings, mind.heartbeat, this.#deps.clock.now()).timezone;
    // Open as the exchange ended: what came after it cannot be what it answers.
    const ended = new Date(Math.max(...messages.map((m) => Date.parse(m.ts))));
    const questions = questionsToShow(
      openQuestions(this.#deps.log.recent(), ended, OPEN_QUESTION_HOURS),
      messages,
      evicting,
    );
    const sections = reflectionPrompt(mind, messages, evicting, this.#deps.clock.now(), zone, questions);
    const model = this.#deps.config.reflectModel;
    const shown = { model, sections: sections.map((s) => ({ name: s.name, tokens: s.tokens })) };

    let answer: ModelAnswer;
    try {
      const system = reflectionSystem(await this.#deps.persona.current());
      const cache = prefixCacheFor(mind.usage, REFLECTION_PREFIX_PURPOSES, model, this.#deps.config.prices);
      answer = await this.#deps.model.create(
        {
          model,
          max_tokens: REFLECT_MAX_TOKENS,
          system: withPrefixCache([{ type: "text", text: system }], cache),
          tools: [REFLECT_TOOL],
          tool_choice: { type: "tool", name: REFLECT_TOOL.name },
          messages: [{ role: "user", content: sections.map((s) => s.text).join("\n\n") }],
        },
        "reflect",
      );
    } catch (error) {
      return this.#failed(job, error, shown);
    }
    await this.#recordUsage(answer.usage);
    const response = answer.message;

    const call = response.content.find(
      (block): block is Anthropic.ToolUseBlock =>
        block.type === "tool_use" && block.name === REFLECT_TOOL.name,
    );
    const usage = response.usage;
    const tokens = {
      input: usage.input_tokens,
      output: usage.output_tokens,
      cacheWrite: usage.cache_creation_input_tokens ?? 0,
      cacheRead: usage.cache_read_input_tokens ?? 0,
    };
    if (!call) {
      await this.#remove(job.id);
      await this.#deps.trace?.note({
        kind: "reflect",
        job: job.id,
        exchange: job.exchange,
        shown,
        tokens,
        outcome: "refused",
        reason: "the model did not call update_mind",
      });
      return "refused";
    }
    const outcome = await this.#commit(
      job.id,
      job.exchange,
      messages,
      call.input,
      questions.map((m) => m.id),
    );
    if (outcome === JOB_GONE) {
      this.#logger.info({ job: job.id }, "reflection discarded: its job left the queue while it ran");
      return "dropped";
    }
    await this.#deps.trace?.note({
      kind: "reflect",
      job: job.id,
      exchange: job.exchange,
      shown,
      returned: withoutForgotten(call.input, new Set(this.#deps.mind.read().forgottenHashes)),
      tokens,
      ...describe(outcome),
    });
    if (!outcome.ok) this.#logger.warn({ job: job.id }, "reflection update refused");
    return outcome.ok ? "applied" : "refused";
  }

  /**
   * Writes an update: annotations (a check-in keeps the topics it was sent with, which the
   * topic guard relies on) and the WORKSPACE archive first (rewriting them is
   * harmless if a crash makes the job run again), then the state and the job's removal in
   * one mind.json write. The update is applied again to the state as it is at that moment,
   * so a /forget or /wipe that happened while the model thought is not undone; a queued job
   * that left the queue meanwhile (a /wipe) writes nothing at all, not even a note.
   */
  /** The reflection call's usage joins the ledger (the budget counts it); a failed write is logged, never loses the reflection. */
  async #recordUsage(usage: UsageRecord): Promise<void> {
    try {
      await recordUsage(this.#deps.mind, [usage], this.#deps.clock.now());
    } catch (error) {
      this.#logger.warn({ err: error, purpose: "reflect" }, "could not record model usage");
    }
  }

  async #commit(
    jobId: string | null,
    exchange: Exchange,
    messages: readonly Message[],
    input: unknown,
    questions: readonly string[] = [],
  ): Promise<ReflectionOutcome | typeof JOB_GONE> {
    if (jobId !== null && !this.#queued(jobId)) return JOB_GONE;
    const now = this.#deps.clock.now();
    const context = (mind: QueuedMind) => {
      const taken = new Set([
        ...mind.memory.map((item) => item.id),
        ...ITEM_FIELDS.flatMap((key) => mind.scratchpad[key].map((item) => item.id)),
      ]);
      return {
        mind,
        exchange,
        messages,
        questions,
        now,
        newItemId: (prefix: string) => newItemId(taken, prefix),
        topicsOf: detectTopics,
      };
    };
    const preview = applyReflectionUpdate(input, context(this.#deps.mind.read()));
    if (!preview.ok) {
      if (jobId !== null) await this.#remove(jobId);
      return preview;
    }
    for (const { messageId, annotations } of preview.annotations) {
      const kept = messages.find((m) => m.id === messageId && m.trigger === "heartbeat")?.annotations;
      const topics = kept ? [...new Set([...kept.topics, ...annotations.topics])] : annotations.topics;
      await this.#deps.log.update(messageId, { annotations: { ...annotations, topics } });
    }
    if (preview.archive) {
      if (jobId !== null && !this.#queued(jobId)) return JOB_GONE;
      await this.#deps.notes.write(preview.archive.key, preview.archive.content);
    }
    return this.#deps.mind.update((mind): ReflectionOutcome | typeof JOB_GONE => {
      if (jobId !== null) {
        const queued = mind.reflectionQueue.some((j) => j.id === jobId);
        if (!queued) return JOB_GONE;
        mind.reflectionQueue = mind.reflectionQueue.filter((j) => j.id !== jobId);
      }
      const applied = applyReflectionUpdate(input, context(mind));
      if (!applied.ok) return applied;
      mind.scratchpad = applied.scratchpad;
      mind.memory = applied.memory;
      mind.threads = applied.threads;
      mind.refusedLastTime = applied.refused;
      return applied;
    });
  }

  #queued(jobId: string): boolean {
    return this.#deps.mind.read().reflectionQueue.some((j) => j.id === jobId);
  }

  async #failed(
    job: ReflectionJob,
    error: unknown,
    shown: Record<string, unknown>,
  ): Promise<"dropped" | "wait"> {
    const transient = error instanceof ModelUnavailableError;
    const attempts = job.attempts + 1;
    const message = error instanceof Error ? error.message : String(error);
    if (!transient && attempts >= MAX_FAILED_ATTEMPTS) {
      await this.#remove(job.id);
      await this.#deps.trace?.note({
        kind: "reflect",
        job: job.id,
        shown,
        outcome: "dropped",
        reason: message,
        attempts,
      });
      this.#logger.error({ job: job.id, err: error }, "reflection given up");
      return "dropped";
    }
    const delay = backoffDelay({ delaysMs: RETRY_BACKOFF_MS }, attempts);
    const notBefore = new Date(this.#deps.clock.now().getTime() + delay).toISOString();
    await this.#deps.mind.update((mind) => {
      const queued = mind.reflectionQueue.find((j) => j.id === job.id);
      if (queued) Object.assign(queued, { attempts, notBefore, lastError: message });
    });
    await this.#deps.trace?.note({
      kind: "reflect",
      job: job.id,
      shown,
      outcome: "deferred",
      reason: message,
      attempts,
      notBefore,
    });
    this.#logger.warn({ job: job.id, attempts, transient }, "reflection deferred");
    return "wait";
  }

  async #load(ids: readonly string[]): Promise<Message[]> {
    const found = await Promise.all(ids.map((id) => this.#deps.log.get(id)));
    return found.filter((m): m is Message => m !== null);
  }

  async #remove(jobId: string): Promise<void> {
    await this.#deps.mind.update((mind) => {
      mind.reflectionQueue = mind.reflectionQueue.filter((j) => j.id !== jobId);
    });
  }
}

/** What a commit returns when its job was removed (a /wipe) while the model thought: nothing was written. */
const JOB_GONE = Symbol("job gone");

/** The trace's account of an outcome: what changed, and each operation refused with why. */
function describe(
  outcome: ReflectionOutcome,
): { outcome: "applied"; changes: string[]; refusedOps?: string[] } | { outcome: "refused"; reason: string } {
  if (!outcome.ok) return { outcome: "refused", reason: outcome.reason };
  return {
    outcome: "applied",
    changes: outcome.changes,
    ...(outcome.refused.length > 0 ? { refusedOps: outcome.refused } : {}),
  };
}
