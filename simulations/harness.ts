import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAwarenessContext } from "../src/awareness/build.ts";
import { defaultAwarenessSettings } from "../src/awareness/context.ts";
import { detectTopics } from "../src/awareness/topics.ts";
import { SettableClock } from "../src/clock.ts";
import { type Companion, createCompanion, type HeartbeatOutcome } from "../src/companion.ts";
import { type CoreConfig, formatQuietHours, loadCoreConfig, type ModelConfig } from "../src/config.ts";
import { heartbeatReasonSchema } from "../src/heartbeat/policy.ts";
import { type Logger, silentLogger } from "../src/log.ts";
import { ModelClient, type UsageRecord } from "../src/mind/llm.ts";
import { personaFromDir } from "../src/mind/persona.ts";
import type { OutboundPort, OutgoingMessage } from "../src/port.ts";
import { MessageLog } from "../src/store/messages.ts";
import { MindStore } from "../src/store/mind.ts";
import { NotesStore } from "../src/store/notes.ts";
import { Trace } from "../src/store/trace.ts";
import type { CallRecord, SimEvent } from "./events.ts";
import { checkExpectations, computeMetrics, type ExpectationResult } from "./metrics.ts";
import { isSilent, type Plan, planScenario, reactionText, reactionTo } from "./plan.ts";
import type { ModelKind, RunResult } from "./result.ts";
import type { Scenario } from "./scenario.ts";

/**
 * Lives one scenario with the real companion: the same code the bot runs, with only the
 * clock (a SettableClock moved from event to event), the channel (a port that records)
 * and, offline, the model (the naive model behind the Messages API fake) simulated.
 * Everything is written to a fresh data directory, removed afterwards.
 */

/** How to reach the model for one run: built per run, so each run starts with a clean cache and ledger. */
export interface ModelAccess {
  kind: ModelKind;
  /** The model settings (key, base URL) for this run; the scenario's answered-topic window is applied on top. */
  config: ModelConfig;
  /** Called after every turn, so a stateful fake model can forget what the turn left behind. */
  endTurn?: () => void;
  /** Requests the real API would have refused (the fake checks them); each one fails the run. */
  problems?: () => readonly string[];
}

export interface HarnessOptions {
  model: ModelAccess;
  logger?: Logger;
}

/** Why a held-back check-in was held, by the step that decided it. */
function stageOf(reason: string): Extract<SimEvent, { kind: "checkin-held" }>["stage"] {
  if (reason === "already-answered" || reason === "repeated-topic") return "topic-guard";
  if (reason === "model-declined" || reason === "invalid-decision") return "decision";
  if (reason === "leak-guard-empty") return "leak-guard";
  if (reason === "reply-pending" || heartbeatReasonSchema.safeParse(reason).success) return "pre-check";
  return "error";
}

/** What the simulated channel delivered, in order. */
class RecordingPort implements OutboundPort {
  readonly sent: OutgoingMessage[] = [];

  async send(message: OutgoingMessage): Promise<Record<string, never>> {
    this.sent.push(message);
    return {};
  }
}

type Pending =
  | { at: Date; order: 0; kind: "tz"; to: string; from: string }
  | { at: Date; order: 1; kind: "person"; text: string; answers: string[]; cause: PersonCause }
  | { at: Date; order: 2; kind: "tick" };
type PersonCause = Extract<SimEvent, { kind: "person" }>["cause"];

/** A time-ordered agenda that reactions can be added to while it runs. */
class Agenda {
  readonly #items: Pending[] = [];

  add(item: Pending): void {
    const key = (p: Pending) => p.at.getTime() * 10 + p.order;
    const index = this.#items.findIndex((p) => key(p) > key(item));
    if (index < 0) this.#items.push(item);
    else this.#items.splice(index, 0, item);
  }

  next(): Pending | undefined {
    return this.#items.shift();
  }
}

/** Runs one scenario to the end and returns what happened, with figures and expectations checked. */
export async function runScenario(scenario: Scenario, options: HarnessOptions): Promise<RunResult> {
  const started = performance.now();
  const plan = planScenario(scenario);
  const dataDir = await mkdtemp(join(tmpdir(), `presence-sim-${scenario.name}-`));
  try {
    const run = await SimulationRun.open(plan, dataDir, options);
    try {
      await run.play();
    } finally {
      await run.close();
    }
    return run.result(performance.now() - started);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The settings the bot would read from the environment, for this scenario. */
export function scenarioCoreConfig(scenario: Scenario, dataDir: string): CoreConfig {
  const base = loadCoreConfig({
    PRESENCE_TIMEZONE: scenario.timezone,
    PRESENCE_DATA_DIR: dataDir,
    PRESENCE_QUIET_HOURS: formatQuietHours(scenario.quietHours),
    PRESENCE_HEARTBEAT_CRON: scenario.heartbeatCron,
    LOG_LEVEL: "silent",
  });
  const { answeredTopicHours: _, ...core } = scenario.settings;
  return { ...base, ...core };
}

class SimulationRun {
  readonly events: SimEvent[] = [];
  readonly #agenda = new Agenda();

  private constructor(
    readonly calls: CallRecord[],
    readonly plan: Plan,
    readonly options: HarnessOptions,
    readonly clock: SettableClock,
    readonly log: MessageLog,
    readonly mind: MindStore,
    readonly trace: Trace,
    readonly port: RecordingPort,
    readonly companion: Companion,
    readonly modelConfig: ModelConfig,
  ) {}

  static async open(plan: Plan, dataDir: string, options: HarnessOptions): Promise<SimulationRun> {
    const { scenario } = plan;
    const logger = options.logger ?? silentLogger;
    const clock = new SettableClock(plan.start);
    const core = scenarioCoreConfig(scenario, dataDir);
    const modelConfig: ModelConfig = {
      ...options.model.config,
      answeredTopicHours: scenario.settings.answeredTopicHours ?? options.model.config.answeredTopicHours,
    };
    const log = await MessageLog.open({ dataDir, clock, timeZone: core.timezone, logger });
    const mind = await MindStore.open(dataDir, clock);
    await seedMemory(mind, scenario, plan.start);
    const trace = new Trace({ dataDir, clock });
    const port = new RecordingPort();
    const calls: CallRecord[] = [];
    const llm = new ModelClient(modelConfig, {
      clock,
      logger,
      onUsage: async (usage: UsageRecord) => {
        calls.push({ ...usage, at: usage.ts });
        await mind.recordUsage(usage);
      },
    });
    const companion = createCompanion({
      clock,
      core,
      model: modelConfig,
      log,
      mind,
      notes: new NotesStore({ dataDir }),
      trace,
      llm,
      port,
      persona: personaFromDir(),
      logger,
      options: { defaultChannel: "simulation" },
    });
    return new SimulationRun(calls, plan, options, clock, log, mind, trace, port, companion, modelConfig);
  }

  async play(): Promise<void> {
    for (const at of this.plan.ticks) this.#agenda.add({ at, order: 2, kind: "tick" });
    for (const m of this.plan.messages) {
      this.#agenda.add({
        at: m.at,
        order: 1,
        kind: "person",
        text: m.text,
        answers: m.answers,
        cause: "script",
      });
    }
    for (const c of this.plan.timezoneChanges)
      this.#agenda.add({ at: c.at, order: 0, kind: "tz", from: c.from, to: c.to });

    for (let item = this.#agenda.next(); item !== undefined; item = this.#agenda.next()) {
      this.clock.set(item.at);
      switch (item.kind) {
        case "tz":
          await this.#travel(item.to);
          this.#record({ kind: "tz-change", from: item.from, to: item.to });
          break;
        case "person":
          await this.#personWrites(item.text, item.answers, item.cause);
          break;
        case "tick":
          await this.#tick();
          break;
      }
      await this.companion.idle();
      this.options.model.endTurn?.();
    }
  }

  async close(): Promise<void> {
    await this.companion.close();
    await this.log.flush();
  }

  result(elapsedMs: number): RunResult {
    const { scenario } = this.plan;
    const metrics = computeMetrics(this.events, this.calls, {
      quietHours: scenario.quietHours,
      answeredTopicHours: this.modelConfig.answeredTopicHours,
    });
    const expectations: ExpectationResult[] = checkExpectations(
      scenario.expect,
      metrics,
      this.events,
      this.plan.zones,
    );
    const problems = this.options.model.problems?.() ?? [];
    expectations.push({
      name: "requests the real API would accept",
      ok: problems.length === 0,
      wanted: "all",
      got: problems.length === 0 ? "all" : `${problems.length} refused: ${problems[0]}`,
    });
    return {
      scenario,
      model: this.options.model.kind,
      span: { start: this.plan.start.toISOString(), end: this.plan.end.toISOString() },
      events: this.events,
      calls: this.calls,
      metrics,
      expectations,
      passed: expectations.every((e) => e.ok),
      elapsedMs,
    };
  }

  #record(event: DistributiveOmit<SimEvent, "at" | "zone">): void {
    const at = this.clock.now();
    this.events.push({ ...event, at: at.toISOString(), zone: this.plan.zones.zoneAt(at) } as SimEvent);
  }

  /** What `/tz Area/City` changes: the zone override the pre-check, the prompts and /status read. */
  async #travel(zone: string): Promise<void> {
    await this.mind.update((draft) => {
      draft.heartbeat.timezone = zone;
    });
  }

  async #personWrites(text: string, answers: string[], cause: PersonCause): Promise<void> {
    this.#record({ kind: "person", text, cause, answers });
    const before = this.port.sent.length;
    await this.companion.reply({ text, channel: "simulation" });
    await this.companion.idle();
    for (const message of this.port.sent.slice(before)) {
      if (message.kind === "notice") this.#record({ kind: "notice", text: message.text });
      else this.#record({ kind: "reply", text: message.text });
    }
  }

  async #tick(): Promise<void> {
    const now = this.clock.now();
    const tone = await this.#tone(now);
    const outcome: HeartbeatOutcome = await this.companion.heartbeat();
    if (outcome.status === "closed") return;
    const topic = outcome.decision.topic ?? null;
    if (outcome.status === "held") {
      const { reason, detail } = outcome.decision;
      this.#record({ kind: "checkin-held", reason, detail, stage: stageOf(reason), topic, tone });
      return;
    }
    this.#record({
      kind: "checkin-sent",
      text: outcome.message.text,
      topic,
      tone,
      stripped: await this.#guardRemovedSomething(outcome.message.id),
    });
    this.#react(now, topic);
  }

  /** The tone of the last exchange as the companion's awareness reads it at this moment. */
  async #tone(now: Date): Promise<Extract<SimEvent, { kind: "checkin-sent" }>["tone"]> {
    const slice = await this.log.awarenessSlice(now, defaultAwarenessSettings.windowHours);
    const zone = this.mind.read().heartbeat.timezone ?? this.plan.scenario.timezone;
    const context = buildAwarenessContext(slice, now, {
      ...defaultAwarenessSettings,
      timezone: zone,
      trigger: "heartbeat",
    });
    return context.conversationState.lastExchangeTone;
  }

  /** Whether the leak guard removed something from a check-in before it was sent (the trace records it). */
  async #guardRemovedSomething(messageId: string): Promise<boolean> {
    const recent = await this.trace.last(10);
    const turn = recent.findLast((r) => (r.sent as { id?: unknown } | undefined)?.id === messageId);
    const removed = (turn?.returned as { removed?: unknown } | undefined)?.removed;
    return Array.isArray(removed) && removed.length > 0;
  }

  /** Schedules the person's reaction to a check-in, unless they are away or ignore it. */
  #react(sentAt: Date, topic: string | null): void {
    const { plan } = this;
    if (isSilent(plan, sentAt)) return;
    const reaction = reactionTo(plan.scenario.reactions, plan.zones.reading(sentAt));
    if (reaction.kind === "ignore") return;
    const at = new Date(sentAt.getTime() + reaction.afterMinutes * 60_000);
    if (at > plan.end || isSilent(plan, at)) return;
    const answers = [
      ...(reaction.answersTopic && topic !== null ? [topic] : []),
      ...(reaction.kind === "change-subject" ? reaction.answers : []),
    ];
    this.#agenda.add({
      at,
      order: 1,
      kind: "person",
      text: reactionText(reaction, topic),
      answers,
      cause: reaction.kind,
    });
  }
}

/** Puts the scenario's prior memory in the mind, as if reflection had learned it before the run. */
async function seedMemory(mind: MindStore, scenario: Scenario, at: Date): Promise<void> {
  if (scenario.memory.length === 0) return;
  await mind.update((draft) => {
    scenario.memory.forEach((item, i) => {
      draft.memory.push({
        id: `scenario-${i + 1}`,
        kind: item.kind,
        text: item.text,
        importance: item.importance,
        learnedAt: at.toISOString(),
        sourceMessageIds: [],
        topics: detectTopics(item.text),
      });
    });
  });
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
