import { randomBytes } from "node:crypto";
import { DateTime } from "luxon";
import { z } from "zod";
import { buildAwarenessContext } from "./awareness/build.ts";
import {
  type AwarenessContext,
  defaultAwarenessSettings,
  type PriorMemory,
  type Trigger,
} from "./awareness/context.ts";
import { formatAwarenessForPrompt } from "./awareness/format.ts";
import { detectTopics } from "./awareness/topics.ts";
import type { Clock } from "./clock.ts";
import type { CoreConfig, ModelConfig } from "./config.ts";
import {
  effectiveTimezone,
  heartbeatSettingsFromConfig,
  shouldFireHeartbeat,
  withCheckinSent,
} from "./heartbeat/policy.ts";
import type { Logger } from "./log.ts";
import { type ComposedPrompt, composePrompt, type PendingImage } from "./mind/compose.ts";
import { type GenerateDeps, generateCheckin, generateReply, MAX_TOKENS } from "./mind/generate.ts";
import { ModelClient, ModelRequestError, ModelUnavailableError, type UsageRecord } from "./mind/llm.ts";
import { PRIOR_CONTEXT_TOKENS, priorMemoryFor, rankMemory, withoutPriorContext } from "./mind/memory.ts";
import { NOTES_TOOLS } from "./mind/notes-tools.ts";
import type { PersonaSource } from "./mind/persona.ts";
import { buildStablePrefix, checkinMomentText, type StablePrefix } from "./mind/prompts.ts";
import { REFLECT_TOOL } from "./mind/reflect.ts";
import { type ExchangeInput, Reflector } from "./mind/reflection-queue.ts";
import { renderScratchpad } from "./mind/scratchpad.ts";
import { recentThreadNotes } from "./mind/threads.ts";
import { guardTopic } from "./mind/topic-guard.ts";
import {
  type IncomingInput,
  type OutboundPort,
  type OutgoingMessage,
  RecipientBlockedError,
} from "./port.ts";
import type { Channel, Message } from "./store/message.ts";
import type { MessageLog } from "./store/messages.ts";
import type { Decision, MindState, MindStore } from "./store/mind.ts";
import type { NotesStore } from "./store/notes.ts";
import type { Trace } from "./store/trace.ts";
import { TurnLock } from "./turn-lock.ts";

/**
 * The companion: the only place that orders the steps of a turn. Channels hand it the
 * person's messages (receive, then reply); the scheduler asks it to consider a check-in
 * (heartbeat). One turn runs at a time. The person's words are in the log before any
 * model is called; what goes out is recorded as an intent before it is sent and as a
 * message right after, so a crash can neither lose an answer nor repeat one (beyond the
 * one window no program can close: after the channel accepted it, before it was written).
 */

/** Everything the companion is built from; main.ts wires the real ones, tests the fakes. */
export interface CompanionDeps {
  clock: Clock;
  core: CoreConfig;
  model: ModelConfig;
  log: MessageLog;
  mind: MindStore;
  notes: NotesStore;
  trace: Trace;
  /** Build it with `usageLedger(mind)` as onUsage (or use createLedgerModelClient) so the budget counts. */
  llm: ModelClient;
  port: OutboundPort;
  persona: PersonaSource;
  logger: Logger;
  /** The reflection runner; by default one is built from the other deps. */
  reflector?: Reflector;
  options?: CompanionOptions;
}

/** Knobs that tests and simulations turn; production uses the defaults. */
export interface CompanionOptions {
  /** Waits between background attempts at a reply while the model is unavailable (the last repeats). */
  retryDelaysMs?: readonly number[];
  /** After the person waited this long (clock time), a failed attempt sends the one fixed notice. */
  noticeAfterMs?: number;
  noticeText?: string;
  /** How long close() waits for the turn in flight and background work. */
  closeTimeoutMs?: number;
  /** The channel assistant messages are logged with when the person has not written yet. */
  defaultChannel?: Channel;
  /** Run reflection in the background after each exchange (default true). */
  reflectInBackground?: boolean;
}

/** Background retries of a reply: the third lands just past a minute, when the notice is due; then every 5 min. */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 15_000, 41_000, 120_000, 300_000] as const;
/** "If it takes longer than a minute": the wait after which the one notice goes out. */
export const DEFAULT_NOTICE_AFTER_MS = 60_000;
/** The one notice a person may see while the model is away: fixed words, never generated. */
export const DEFAULT_NOTICE_TEXT =
  "I'm having trouble thinking right now — I have your message and will answer as soon as I can.";
/** A check-in interrupted by a crash is not sent after a restart once it is this old. */
export const STALE_CHECKIN_MS = 30 * 60_000;

/** What a reply() achieved. */
export type ReplyOutcome =
  | { status: "sent"; message: Message; answered: string[] }
  | { status: "nothing-pending" }
  /** The model was unavailable (or the channel failed): a background retry is scheduled. */
  | { status: "deferred"; answered: string[]; reason: string }
  /** The model's answer was all leakage: nothing was sent (see the trace). */
  | { status: "empty"; answered: string[]; removed: string[] }
  | { status: "blocked"; answered: string[] }
  | { status: "failed"; answered: string[]; error: string }
  | { status: "closed" };

/** What a heartbeat() decided; the decision is also recorded in the mind for /why and status. */
export type HeartbeatOutcome =
  | { status: "sent"; message: Message; decision: Decision }
  | { status: "held"; decision: Decision }
  | { status: "closed" };

/** The companion's interface to channels, the scheduler and the command line. */
export interface Companion {
  /** Logs the person's message at once (outside the turn lock) and returns it as logged. */
  receive(input: IncomingInput): Promise<Message>;
  /** Logs `input` if given, then answers everything the person said since the last answer, in one turn. */
  reply(input?: IncomingInput): Promise<ReplyOutcome>;
  /** Considers a check-in now: pre-check, budget, decide, guard, write, send. */
  heartbeat(): Promise<HeartbeatOutcome>;
  /** After a restart: finishes interrupted sends, answers what is unanswered (once), runs queued reflections. */
  recover(): Promise<void>;
  /** Resolves when no turn or background work (reflection, a retry that started) is running; a retry still waiting for its timer is not waited for. */
  idle(): Promise<void>;
  /** Stops taking turns, cancels retries, waits (bounded) for work in flight. */
  close(): Promise<void>;
}

/** The onUsage hook that writes every call's usage into the mind's ledger. */
export function usageLedger(mind: MindStore): (usage: UsageRecord) => Promise<void> {
  return (usage) => mind.recordUsage(usage);
}

/** A model client whose usage lands in the mind's ledger (what the daily budget counts). */
export function createLedgerModelClient(
  config: ModelConfig,
  deps: { clock: Clock; mind: MindStore; logger?: Logger },
): ModelClient {
  return new ModelClient(config, {
    clock: deps.clock,
    onUsage: usageLedger(deps.mind),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
}

/** An outgoing message recorded before it is handed to the channel. */
const outboxIntentSchema = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(["reply", "heartbeat", "notice"]),
  text: z.string().min(1),
  trigger: z.enum(["reply", "heartbeat"]),
  channel: z.enum(["telegram", "cli", "simulation"]),
  createdAt: z.iso.datetime({ offset: false }),
  replyTo: z.string().optional(),
  answeredThrough: z.string().optional(),
});
type OutboxIntent = z.infer<typeof outboxIntentSchema>;

type Delivered =
  | { status: "sent"; message: Message }
  | { status: "blocked" }
  | { status: "failed"; error: string };

/** Builds the companion. Nothing runs until a method is called. */
export function createCompanion(deps: CompanionDeps): Companion {
  return new CompanionImpl(deps);
}

class CompanionImpl implements Companion {
  readonly #deps: CompanionDeps;
  readonly #lock = new TurnLock();
  readonly #reflector: Reflector;
  readonly #images = new Map<string, PendingImage>();
  readonly #background = new Set<Promise<unknown>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #retryDelays: readonly number[];
  readonly #noticeAfterMs: number;
  readonly #noticeText: string;
  #retryAttempt = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(deps: CompanionDeps) {
    this.#deps = deps;
    const options = deps.options ?? {};
    this.#retryDelays = options.retryDelaysMs?.length ? options.retryDelaysMs : DEFAULT_RETRY_DELAYS_MS;
    this.#noticeAfterMs = options.noticeAfterMs ?? DEFAULT_NOTICE_AFTER_MS;
    this.#noticeText = options.noticeText ?? DEFAULT_NOTICE_TEXT;
    this.#reflector =
      deps.reflector ??
      new Reflector({
        mind: deps.mind,
        log: deps.log,
        notes: deps.notes,
        model: deps.llm,
        config: deps.model,
        clock: deps.clock,
        timezone: deps.core.timezone,
        persona: deps.persona,
        trace: deps.trace,
        logger: deps.logger,
      });
  }

  async receive(input: IncomingInput): Promise<Message> {
    const message = await this.#deps.log.append({
      role: "user",
      text: input.text,
      channel: input.channel,
      ...(input.media ? { media: input.media } : {}),
      ...(input.telegram ? { telegram: input.telegram } : {}),
      ...(input.replyTo ? { replyTo: input.replyTo } : {}),
    });
    if (input.image) this.#images.set(message.id, input.image);
    if (this.#deps.mind.read().heartbeat.blocked) {
      await this.#deps.mind.update((mind) => {
        mind.heartbeat.blocked = false;
      });
    }
    return message;
  }

  async reply(input?: IncomingInput): Promise<ReplyOutcome> {
    if (input) await this.receive(input);
    if (this.#closed) return { status: "closed" };
    return this.#lock.runCoalesced("reply", () => this.#guarded("reply", () => this.#replyTurn()));
  }

  async heartbeat(): Promise<HeartbeatOutcome> {
    if (this.#closed) return { status: "closed" };
    return this.#lock.runCoalesced("heartbeat", () =>
      this.#guarded("heartbeat", () => this.#heartbeatTurn()),
    );
  }

  async recover(): Promise<void> {
    await this.#lock.run(() => this.#guarded("recover", () => this.#finishOutbox()));
    await this.reply();
    await this.#runReflections();
  }

  async idle(): Promise<void> {
    for (;;) {
      await this.#lock.idle();
      if (this.#background.size === 0) return;
      await Promise.allSettled([...this.#background]);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#cancelRetry();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    const timeout = this.#deps.options?.closeTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeout);
    });
    const result = await Promise.race([this.idle().then(() => "idle" as const), expired]);
    clearTimeout(timer);
    if (result === "timeout")
      this.#deps.logger.warn({ timeoutMs: timeout }, "closed with work still in flight");
  }

  /** Runs a turn so that an unexpected failure (a bug, a full disk) is logged and traced before it reaches the caller. */
  async #guarded<T>(kind: string, turn: () => Promise<T>): Promise<T> {
    try {
      return await turn();
    } catch (error) {
      this.#deps.logger.error({ err: error, kind }, "turn failed");
      await this.#traceQuietly({
        kind: `${kind}-error`,
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }

  // ---- replies ----

  async #replyTurn(): Promise<ReplyOutcome> {
    if (this.#closed) return { status: "closed" };
    const now = this.#deps.clock.now();
    const pending = pendingMessages(this.#deps.log.recent(), now);
    if (pending.length === 0) {
      this.#cancelRetry();
      return { status: "nothing-pending" };
    }
    const answered = pending.map((m) => m.id);
    const mind = this.#deps.mind.read();
    const composed = await this.#compose("reply", now, mind, pending);
    const stopWorking = this.#deps.port.showWorking?.();
    let generation: Awaited<ReturnType<typeof generateReply>>;
    try {
      generation = await generateReply(composed.prompt.params, this.#generateDeps(), {
        promptTokens: composed.prompt.sections.total,
        ceiling: this.#deps.model.promptCeiling,
        ...(this.#deps.model.reflectMode === "single-phase" ? { reflectToolName: REFLECT_TOOL.name } : {}),
      });
    } catch (error) {
      stopWorking?.();
      return this.#replyFailed(error, pending, composed);
    }
    stopWorking?.();

    const base = {
      kind: "reply",
      input: pending.map((m) => ({ id: m.id, ts: m.ts, text: m.text })),
      shown: composed.prompt.sections,
      awareness: composed.awarenessFormat,
      returned: { raw: generation.raw, removed: generation.removed, toolCalls: generation.toolCalls },
      usage: generation.usage,
    };
    if (generation.text === null) {
      await this.#traceQuietly({ ...base, outcome: "empty", why: "the leak guard left nothing to send" });
      return { status: "empty", answered, removed: generation.removed };
    }
    const last = pending[pending.length - 1] as Message;
    const delivered = await this.#deliver(
      { text: generation.text, kind: "reply", replyTo: last.id },
      { trigger: "reply", answeredThrough: last.id, channel: last.channel },
    );
    if (delivered.status !== "sent") {
      await this.#traceQuietly({ ...base, outcome: delivered.status, text: generation.text });
      if (delivered.status === "blocked") return { status: "blocked", answered };
      this.#scheduleRetry();
      return { status: "deferred", answered, reason: `the channel failed: ${delivered.error}` };
    }
    this.#cancelRetry();
    for (const id of answered) this.#images.delete(id);
    const exchange: ExchangeInput = {
      messageIds: [...answered, delivered.message.id],
      trigger: "reply",
      evicting: composed.prompt.evicting,
    };
    const reflection = await this.#reflect(exchange, generation.reflection);
    await this.#traceQuietly({
      ...base,
      outcome: "sent",
      sent: { id: delivered.message.id, text: generation.text },
      reflection,
    });
    return { status: "sent", message: delivered.message, answered };
  }

  async #replyFailed(error: unknown, pending: readonly Message[], composed: Composed): Promise<ReplyOutcome> {
    const answered = pending.map((m) => m.id);
    const base = {
      kind: "reply",
      input: pending.map((m) => ({ id: m.id, ts: m.ts, text: m.text })),
      shown: composed.prompt.sections,
    };
    if (error instanceof ModelUnavailableError) {
      const notice = await this.#maybeNotice(pending);
      const retryInMs = this.#scheduleRetry();
      this.#deps.logger.warn(
        { status: error.status, retryInMs, notice },
        "model unavailable; reply deferred",
      );
      await this.#traceQuietly({ ...base, outcome: "deferred", error: error.message, retryInMs, notice });
      return { status: "deferred", answered, reason: error.message };
    }
    if (error instanceof ModelRequestError) {
      this.#deps.logger.error({ status: error.status, setting: error.setting }, error.message);
      await this.#traceQuietly({ ...base, outcome: "failed", error: error.message });
      return { status: "failed", answered, error: error.message };
    }
    throw error;
  }

  /** Sends the fixed notice once per wait, when the oldest unanswered message has waited long enough. */
  async #maybeNotice(pending: readonly Message[]): Promise<boolean> {
    const oldest = pending[0];
    if (!oldest) return false;
    const waited = this.#deps.clock.now().getTime() - Date.parse(oldest.ts);
    if (waited < this.#noticeAfterMs) return false;
    const recent = this.#deps.log.recent();
    const from = recent.findIndex((m) => m.id === oldest.id);
    if (recent.slice(from + 1).some(isNotice)) return false;
    const delivered = await this.#deliver(
      { text: this.#noticeText, kind: "notice", replyTo: oldest.id },
      { trigger: "reply", notice: true, channel: oldest.channel },
    );
    return delivered.status === "sent";
  }

  /** Schedules the next background attempt at the unanswered messages; returns its delay. */
  #scheduleRetry(): number {
    if (this.#closed) return 0;
    const delay = this.#retryDelays[Math.min(this.#retryAttempt, this.#retryDelays.length - 1)] ?? 60_000;
    this.#retryAttempt += 1;
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#track(this.reply());
    }, delay);
    return delay;
  }

  #cancelRetry(): void {
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#retryAttempt = 0;
  }

  // ---- check-ins ----

  async #heartbeatTurn(): Promise<HeartbeatOutcome> {
    if (this.#closed) return { status: "closed" };
    const { clock, core, model, mind: store } = this.#deps;
    const now = clock.now();
    const mind = store.read();
    const settings = heartbeatSettingsFromConfig(core);
    const zone = effectiveTimezone(settings, mind.heartbeat);
    const spent = store.tokensOnLocalDay(now, zone);
    const budgetExceeded = model.dailyTokenBudget > 0 && spent >= model.dailyTokenBudget;
    if (budgetExceeded !== mind.heartbeat.budgetExceeded) {
      await store.update((draft) => {
        draft.heartbeat.budgetExceeded = budgetExceeded;
      });
    }
    const held = (reason: string, detail: string, extra: Partial<Decision> = {}) =>
      this.#hold({ ts: now.toISOString(), fire: false, reason, detail, ...extra });

    if (this.#retryTimer && pendingMessages(this.#deps.log.recent(), now).length > 0) {
      await this.#traceQuietly({ kind: "heartbeat", stage: "reply-pending" });
      return held("reply-pending", "The person's messages are still waiting for a reply; that comes first.");
    }
    const slice = await this.#deps.log.awarenessSlice(now, defaultAwarenessSettings.windowHours);
    const prior = priorMemoryFor(mind, queryOf(slice.slice(-4)), now, PRIOR_CONTEXT_TOKENS);
    const awareness = this.#awareness(slice, now, zone, "heartbeat", prior);
    const preCheck = shouldFireHeartbeat(awareness, now, settings, { ...mind.heartbeat, budgetExceeded });
    if (!preCheck.fire) {
      const outcome = await held(preCheck.reason, preCheck.detail);
      await this.#traceQuietly({ kind: "heartbeat", stage: "pre-check", preCheck, tokensToday: spent });
      return outcome;
    }

    const composed = await this.#compose("heartbeat", now, mind, [], { slice, awareness, zone, prior });
    let generation: Awaited<ReturnType<typeof generateCheckin>>;
    try {
      generation = await generateCheckin(composed.prompt.params, this.#generateDeps(), (topic) =>
        guardTopic(topic, slice, awareness, now, model.answeredTopicHours),
      );
    } catch (error) {
      if (!(error instanceof ModelUnavailableError || error instanceof ModelRequestError)) throw error;
      const reason = error instanceof ModelUnavailableError ? "model-unavailable" : "model-error";
      await this.#traceQuietly({
        kind: "heartbeat",
        stage: "model",
        preCheck,
        shown: composed.prompt.sections,
        error: error.message,
      });
      return held(reason, error.message);
    }
    const base = { kind: "heartbeat", preCheck, shown: composed.prompt.sections, usage: generation.usage };
    switch (generation.stage) {
      case "invalid-decision":
        await this.#traceQuietly({ ...base, stage: "decide", problem: generation.problem });
        return held("invalid-decision", generation.problem);
      case "declined":
        await this.#traceQuietly({ ...base, stage: "decide", decision: generation.decision });
        return held("model-declined", generation.decision.why, topicOf(generation.decision.topic));
      case "held":
        await this.#traceQuietly({
          ...base,
          stage: "topic-guard",
          decision: generation.decision,
          verdict: generation.verdict,
        });
        return held(generation.verdict.reason, generation.verdict.detail, topicOf(generation.decision.topic));
      case "empty":
        await this.#traceQuietly({
          ...base,
          stage: "leak-guard",
          decision: generation.decision,
          returned: { raw: generation.raw, removed: generation.removed },
          why: "the leak guard left nothing to send",
        });
        return held(
          "leak-guard-empty",
          "The written check-in was all reasoning or protocol; nothing was sent.",
        );
      case "write":
        break;
    }
    const newestUser = slice.findLast((m) => m.role === "user");
    const delivered = await this.#deliver(
      { text: generation.text, kind: "heartbeat" },
      {
        trigger: "heartbeat",
        channel: newestUser?.channel ?? this.#defaultChannel(),
        ...(newestUser ? { answeredThrough: newestUser.id } : {}),
      },
    );
    const returned = { decision: generation.decision, raw: generation.raw, removed: generation.removed };
    if (delivered.status !== "sent") {
      await this.#traceQuietly({ ...base, stage: "send", returned, outcome: delivered.status });
      if (delivered.status === "blocked")
        return held("blocked", "The channel says the person blocked the bot.");
      return held("send-failed", delivered.error, topicOf(generation.decision.topic));
    }
    const decision: Decision = {
      ts: now.toISOString(),
      fire: true,
      reason: "sent",
      detail: generation.decision.why,
      ...topicOf(generation.decision.topic),
      messageId: delivered.message.id,
    };
    await store.update((draft) => {
      draft.heartbeat = withCheckinSent(draft.heartbeat, now);
    });
    await store.recordDecision(decision);
    const reflection = await this.#reflect(
      { messageIds: [delivered.message.id], trigger: "heartbeat", evicting: composed.prompt.evicting },
      undefined,
    );
    await this.#traceQuietly({
      ...base,
      stage: "sent",
      returned,
      sent: { id: delivered.message.id, text: generation.text },
      reflection,
    });
    return { status: "sent", message: delivered.message, decision };
  }

  async #hold(decision: Decision): Promise<HeartbeatOutcome> {
    await this.#deps.mind.recordDecision(decision);
    if (decision.reason === "blocked") {
      await this.#deps.mind.update((mind) => {
        mind.heartbeat.blocked = true;
      });
    }
    return { status: "held", decision };
  }

  // ---- prompt ----

  async #compose(
    kind: Trigger,
    now: Date,
    mind: MindState,
    pending: readonly Message[],
    known?: { slice: Message[]; awareness: AwarenessContext; zone: string; prior: PriorMemory },
  ): Promise<Composed> {
    const zone =
      known?.zone ?? effectiveTimezone(heartbeatSettingsFromConfig(this.#deps.core), mind.heartbeat);
    const slice =
      known?.slice ?? (await this.#deps.log.awarenessSlice(now, defaultAwarenessSettings.windowHours));
    const query = queryOf(kind === "reply" ? pending : slice.slice(-4));
    const prior = known?.prior ?? priorMemoryFor(mind, query, now, PRIOR_CONTEXT_TOKENS);
    const awareness = known?.awareness ?? this.#awareness(slice, now, zone, kind, prior);
    const awarenessFormat = kind === "heartbeat" ? "full" : awareness.format;
    const ranked = rankMemory(mind.memory, query, now).map((r) => r.item);
    const prefix = await this.#prefix();
    const local = DateTime.fromJSDate(now, { zone });
    const prompt = composePrompt({
      kind,
      model: this.#deps.model.model,
      maxTokens: kind === "reply" ? MAX_TOKENS.reply : MAX_TOKENS.decide,
      ceiling: this.#deps.model.promptCeiling,
      prefix,
      scratchpad: renderScratchpad(mind.scratchpad),
      awareness: formatAwarenessForPrompt(awareness, kind),
      threadNotes: recentThreadNotes(mind.threads),
      // The full awareness block shows the prior context; the episodic section shows the rest.
      memory: awarenessFormat === "full" ? withoutPriorContext(ranked, prior) : ranked,
      log: this.#deps.log.recent().filter((m) => Date.parse(m.ts) <= now.getTime()),
      threads: mind.threads,
      flushedThrough: mind.flushedThrough,
      pending,
      images: this.#images,
      waitedMinutes: waitedMinutes(pending, awareness, now),
      ...(kind === "heartbeat"
        ? { checkinText: checkinMomentText(`${local.toFormat("cccc HH:mm")}, ${zone}`) }
        : {}),
    });
    return { prompt, awarenessFormat };
  }

  #awareness(
    slice: readonly Message[],
    now: Date,
    zone: string,
    trigger: Trigger,
    prior: PriorMemory,
  ): AwarenessContext {
    return buildAwarenessContext(slice, now, { ...defaultAwarenessSettings, timezone: zone, trigger }, prior);
  }

  async #prefix(): Promise<StablePrefix> {
    const persona = await this.#deps.persona.current();
    const singlePhase = this.#deps.model.reflectMode === "single-phase";
    return buildStablePrefix(persona, {
      notes: NOTES_TOOLS,
      ...(singlePhase ? { reflect: REFLECT_TOOL } : {}),
    });
  }

  #generateDeps(): GenerateDeps {
    return { llm: this.#deps.llm, notes: this.#deps.notes, clock: this.#deps.clock };
  }

  // ---- sending ----

  /**
   * Sends one message with the outbox protocol: intent written, then the channel, then the
   * message logged and the intent cleared. A crash between the channel and the log is the
   * only moment a restart may send it a second time.
   */
  async #deliver(
    outgoing: OutgoingMessage,
    meta: { trigger: "reply" | "heartbeat"; channel: Channel; answeredThrough?: string; notice?: boolean },
  ): Promise<Delivered> {
    const intent: OutboxIntent = {
      id: `o-${this.#deps.clock.now().getTime().toString(36)}-${randomBytes(4).toString("hex")}`,
      kind: outgoing.kind,
      text: outgoing.text,
      trigger: meta.trigger,
      channel: meta.channel,
      createdAt: this.#deps.clock.now().toISOString(),
      ...(outgoing.replyTo ? { replyTo: outgoing.replyTo } : {}),
      ...(meta.answeredThrough ? { answeredThrough: meta.answeredThrough } : {}),
    };
    await this.#deps.mind.update((mind) => {
      mind.outbox.push(intent);
    });
    return this.#send(intent);
  }

  async #send(intent: OutboxIntent): Promise<Delivered> {
    const outgoing: OutgoingMessage = {
      text: intent.text,
      kind: intent.kind,
      ...(intent.replyTo ? { replyTo: intent.replyTo } : {}),
    };
    let delivery: Awaited<ReturnType<OutboundPort["send"]>>;
    try {
      delivery = await this.#deps.port.send(outgoing);
    } catch (error) {
      await this.#clearIntent(intent.id);
      if (error instanceof RecipientBlockedError) {
        await this.#deps.mind.update((mind) => {
          mind.heartbeat.blocked = true;
        });
        this.#deps.logger.warn("the person blocked the bot; check-ins stop until they write");
        return { status: "blocked" };
      }
      this.#deps.logger.error({ err: error, kind: intent.kind }, "the channel could not deliver a message");
      return { status: "failed", error: error instanceof Error ? error.message : String(error) };
    }
    const message = await this.#deps.log.append({
      role: "assistant",
      text: intent.text,
      channel: intent.channel,
      trigger: intent.trigger,
      outboxId: intent.id,
      ...(intent.replyTo ? { replyTo: intent.replyTo } : {}),
      ...(intent.answeredThrough ? { answeredThrough: intent.answeredThrough } : {}),
      ...(intent.kind === "notice" ? { notice: true } : {}),
      ...(delivery.telegram ? { telegram: delivery.telegram } : {}),
    });
    await this.#clearIntent(intent.id);
    return { status: "sent", message };
  }

  async #clearIntent(id: string): Promise<void> {
    await this.#deps.mind.update((mind) => {
      mind.outbox = mind.outbox.filter((entry) => entry.id !== id);
    });
  }

  /** Finishes what a crash interrupted: logged sends are cleared, unlogged ones sent (stale check-ins dropped). */
  async #finishOutbox(): Promise<void> {
    const now = this.#deps.clock.now().getTime();
    const logged = new Set(
      this.#deps.log.recent().flatMap((m) => (typeof m.outboxId === "string" ? [m.outboxId] : [])),
    );
    for (const entry of this.#deps.mind.read().outbox) {
      const parsed = outboxIntentSchema.safeParse(entry);
      const id = typeof entry.id === "string" ? entry.id : "";
      if (!parsed.success) {
        this.#deps.logger.warn({ id }, "dropped an unreadable outbox entry");
        await this.#clearIntent(id);
        continue;
      }
      const intent = parsed.data;
      const stale =
        intent.kind === "notice" ||
        (intent.kind === "heartbeat" && now - Date.parse(intent.createdAt) > STALE_CHECKIN_MS);
      if (logged.has(intent.id) || stale) {
        await this.#clearIntent(intent.id);
        await this.#traceQuietly({
          kind: "recover",
          outbox: intent.id,
          action: logged.has(intent.id) ? "already-sent" : "dropped-stale",
        });
        continue;
      }
      const answered =
        intent.kind === "reply"
          ? answeredBy(this.#deps.log.recent(), new Date(now), intent.answeredThrough)
          : [];
      const delivered = await this.#send(intent);
      const reflection =
        delivered.status === "sent"
          ? await this.#reflect(
              { messageIds: [...answered.map((m) => m.id), delivered.message.id], trigger: intent.trigger },
              undefined,
            )
          : undefined;
      await this.#traceQuietly({
        kind: "recover",
        outbox: intent.id,
        action: "resent",
        outcome: delivered.status,
        ...(reflection ? { reflection } : {}),
      });
    }
  }

  // ---- reflection ----

  /**
   * Hands the exchange to reflection: an update that came with the reply (single-phase) is
   * applied as it is; anything else — two-phase, a check-in, a single-phase reply that
   * carried no update — is queued and run off the path, so no exchange goes unreflected.
   */
  async #reflect(exchange: ExchangeInput, inline: unknown): Promise<string> {
    const mode = this.#deps.model.reflectMode;
    if (mode === "off") return "off";
    if (mode === "single-phase" && inline !== undefined) {
      this.#track(this.#reflector.applyInline(exchange, inline));
      return "single-phase: applying";
    }
    await this.#reflector.enqueue(exchange);
    if (this.#deps.options?.reflectInBackground !== false) this.#track(this.#runReflections());
    return "queued";
  }

  async #runReflections(): Promise<void> {
    try {
      const summary = await this.#reflector.runPending();
      if (summary.retryAt !== null && !this.#closed) {
        const delay = Math.min(
          Math.max(Date.parse(summary.retryAt) - this.#deps.clock.now().getTime(), 1_000),
          3_600_000,
        );
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          this.#track(this.#runReflections());
        }, delay);
        timer.unref();
        this.#timers.add(timer);
      }
    } catch (error) {
      this.#deps.logger.error({ err: error }, "reflection run failed");
    }
  }

  // ---- helpers ----

  #track(work: Promise<unknown>): void {
    const tracked = work.catch((error: unknown) => {
      this.#deps.logger.error({ err: error }, "background work failed");
    });
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  #defaultChannel(): Channel {
    return this.#deps.options?.defaultChannel ?? "telegram";
  }

  async #traceQuietly(record: { kind: string } & Record<string, unknown>): Promise<void> {
    try {
      await this.#deps.trace.append(record);
    } catch (error) {
      this.#deps.logger.warn({ err: error }, "could not write the trace");
    }
  }
}

interface Composed {
  prompt: ComposedPrompt;
  awarenessFormat: "full" | "slim";
}

/** A fixed notice the companion sent while the model was away: said, but not an answer. */
function isNotice(message: Message): boolean {
  return message.role === "assistant" && message.notice === true;
}

/** An assistant message after which earlier messages count as seen: a reply or a check-in, not a notice. */
function isAnswer(message: Message): boolean {
  return message.role === "assistant" && !isNotice(message);
}

/**
 * The person's messages not answered yet, oldest first. The companion's last message (a
 * reply or a check-in; a notice does not count) covers the person's messages up to the one
 * it names in `answeredThrough` — messages that arrived while it was being written come
 * after that, even if they were logged before it — or, for entries without the field,
 * everything before it. A check-in that went out while a message waited has moved on from
 * it: a restart does not answer a morning greeting in the afternoon.
 */
export function pendingMessages(recent: readonly Message[], now: Date): Message[] {
  const visible = recent.filter((m) => Date.parse(m.ts) <= now.getTime());
  const lastAnswer = visible.findLastIndex(isAnswer);
  if (lastAnswer < 0) return visible.filter((m) => m.role === "user");
  const through = visible[lastAnswer]?.answeredThrough;
  const coveredUpTo = typeof through === "string" ? visible.findIndex((m) => m.id === through) : -1;
  const from = typeof through === "string" && coveredUpTo >= 0 ? coveredUpTo + 1 : lastAnswer + 1;
  return visible.filter((m, i) => m.role === "user" && i >= from);
}

/** The person's messages a resent reply answers: the pending ones up to the one it names. */
function answeredBy(recent: readonly Message[], now: Date, through: string | undefined): Message[] {
  const pending = pendingMessages(recent, now);
  const last = through === undefined ? -1 : pending.findIndex((m) => m.id === through);
  return last < 0 ? pending : pending.slice(0, last + 1);
}

/** How long the oldest pending message waited, when the awareness block cannot say it (a notice came between). */
function waitedMinutes(
  pending: readonly Message[],
  awareness: AwarenessContext,
  now: Date,
): number | undefined {
  const oldest = pending[0];
  if (!oldest || awareness.conversationState.waitingMinutes !== null) return undefined;
  return Math.floor((now.getTime() - Date.parse(oldest.ts)) / 60_000);
}

function queryOf(messages: readonly Message[]): { text: string; topics: string[] } {
  const text = messages.map((m) => m.text).join("\n");
  return { text, topics: detectTopics(text) };
}

function topicOf(topic: string): { topic?: string } {
  return topic.trim() ? { topic: topic.trim() } : {};
}
