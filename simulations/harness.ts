import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  buildCommandHandlers,
  buildCompanion,
  type CoreConfig,
  loadCoreConfig,
  loadVoiceConfig,
  openRuntime,
  type Runtime,
} from "../src/app/runtime.ts";
import type { CommandHandlers } from "../src/channels/command-handlers.ts";
import { commandOf } from "../src/channels/commands.ts";
import type { Companion, HeartbeatOutcome } from "../src/companion/companion.ts";
import type { MindStore } from "../src/companion/mind-document.ts";
import { buildAwarenessContext } from "../src/conversation/awareness/build.ts";
import { defaultAwarenessSettings } from "../src/conversation/awareness/context.ts";
import { detectTopics } from "../src/conversation/awareness/topics.ts";
import { formatQuietHours } from "../src/core/checkin-settings.ts";
import { SettableClock, VirtualTimers } from "../src/core/clock.ts";
import { heartbeatReasonSchema } from "../src/core/decision.ts";
import { type Logger, silentLogger } from "../src/core/log.ts";
import type { OutboundPort, OutgoingMessage, OutgoingReaction } from "../src/core/port.ts";
import { type ModelAnswer, ModelClient } from "../src/model/llm.ts";
import { fixedPersona, loadPersona } from "../src/model/persona.ts";
import { protocolAndPersona } from "../src/model/prompts.ts";
import type { ModelConfig } from "../src/model/settings.ts";
import type { BaselinePrompt } from "./baselines.ts";
import type { CallRecord, SimEvent } from "./events.ts";
import { checkExpectations, computeMetrics, type ExpectationResult } from "./metrics.ts";
import { isSilent, type Plan, planScenario, reactionText, reactionTo } from "./plan.ts";
import type { ModelKind, RunResult } from "./result.ts";
import type { Scenario } from "./scenario.ts";

/**
 * Lives one scenario with the real companion: the same code the bot runs, with only the
 * clock (a SettableClock moved from event to event, its timers firing on the way, so a retry
 * or a back-off waits in virtual time too), the channel (a port that records)
 * and, offline, the model (the naive model behind the Messages API fake) simulated. The
 * person's `/tz` goes through the bot's own command handlers. Everything is written to a
 * fresh data directory (locked, as the bot locks it), removed afterwards, without waiting
 * for the disk (`fsync: false`), and mind.json, the log's window and the trace only when the
 * run closes or reads them (`writeOnFlush`): a month of writes would otherwise spend most of its
 * time there.
 */

/** How to reach the model for one run: built per run, so each run starts with a clean cache and ledger. */
export interface ModelAccess {
  kind: ModelKind;
  /** The model settings (key, base URL) for this run; the scenario's answered-topic window is applied on top. */
  config: ModelConfig;
  /** How the SDK reaches the model when not over the network: the fake's in-process fetch. */
  fetch?: typeof fetch;
  /** Called after every turn, so a stateful fake model can forget what the turn left behind. */
  endTurn?: () => void;
  /** Requests the real API would have refused (the fake checks them); each one fails the run. */
  problems?: () => readonly string[];
  /**
   * The clock the model lives on, when it has one (the fake's prompt cache expires on it):
   * the run moves it to the scenario's start and on, so the cache ages in virtual time.
   */
  clock?: SettableClock;
}

/** What a run needs from outside: the model, and a logger when a caller wants to watch. */
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

  /** A reaction shows in the transcript as the terminal prints it. */
  async react(reaction: OutgoingReaction): Promise<Record<string, never>> {
    this.sent.push({ kind: "reply", text: `(reacted ${reaction.emoji})` });
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
function scenarioCoreConfig(scenario: Scenario, dataDir: string): CoreConfig {
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

/** What one run is made of: the bot's parts over the run's data directory. */
interface RunParts {
  runtime: Runtime;
  port: RecordingPort;
  companion: Companion;
  commands: CommandHandlers;
  calls: CallRecord[];
  /** The zones the heartbeat schedule was told to follow, in order (the companion's zone listener). */
  followedZones: string[];
  /** What the baselines carry: the same protocol, persona and HEARTBEAT.md the companion runs with. */
  baseline: BaselinePrompt;
}

/** The bot's model client, with every answered call also kept for the run's token figures. */
class TappedModelClient extends ModelClient {
  readonly #calls: CallRecord[];

  constructor(config: ModelConfig, clock: SettableClock, calls: CallRecord[], via?: typeof fetch) {
    super(config, { clock, ...(via ? { fetch: via } : {}) });
    this.#calls = calls;
  }

  override async create(...args: Parameters<ModelClient["create"]>): Promise<ModelAnswer> {
    const answer = await super.create(...args);
    const usage = answer.usage;
    this.#calls.push({ ...usage, at: usage.ts, cacheWrite1h: usage.cacheWrite1h ?? 0 });
    return answer;
  }
}

class SimulationRun {
  readonly events: SimEvent[] = [];
  readonly #agenda = new Agenda();
  /** Open loops as last seen in the mind: id → text. */
  readonly #openLoops = new Map<string, string>();

  private constructor(
    readonly plan: Plan,
    readonly options: HarnessOptions,
    readonly clock: SettableClock,
    readonly timers: VirtualTimers,
    readonly parts: RunParts,
  ) {}

  static async open(plan: Plan, dataDir: string, options: HarnessOptions): Promise<SimulationRun> {
    const { scenario } = plan;
    const logger = options.logger ?? silentLogger;
    const clock = options.model.clock ?? new SettableClock(plan.start);
    clock.set(plan.start);
    const timers = new VirtualTimers(clock);
    const core = scenarioCoreConfig(scenario, dataDir);
    const model: ModelConfig = {
      ...options.model.config,
      answeredTopicHours: scenario.settings.answeredTopicHours ?? options.model.config.answeredTopicHours,
    };
    const calls: CallRecord[] = [];
    const llm = new TappedModelClient(model, clock, calls, options.model.fetch);
    const runtime = await openRuntime({
      core,
      model,
      // No voice settings: voice notes are not heard, as in every scenario so far.
      voice: loadVoiceConfig({}),
      purpose: "simulation",
      clock,
      timers,
      logger,
      llm,
      fsync: false,
      writeOnFlush: true,
    });
    await seedMemory(runtime.mind, scenario, plan.start);
    const port = new RecordingPort();
    const followedZones: string[] = [];
    // The project's persona, read once: nobody edits it during a run, and looking at its files
    // before each of a month's turns is time spent on nothing.
    const persona = await loadPersona();
    const companion = buildCompanion(
      runtime,
      port,
      { defaultChannel: "simulation" },
      (zone) => followedZones.push(zone),
      fixedPersona(persona),
    );
    const baseline = { system: protocolAndPersona(persona), heartbeat: persona.heartbeat };
    const commands = buildCommandHandlers(runtime, companion);
    return new SimulationRun(plan, options, clock, timers, {
      runtime,
      port,
      companion,
      commands,
      calls,
      baseline,
      followedZones,
    });
  }

  async play(): Promise<void> {
    this.#noteOpenLoops("known");
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
      await this.timers.advanceTo(item.at, () => this.parts.companion.idle());
      switch (item.kind) {
        case "tz":
          await this.#travel(item.from, item.to);
          break;
        case "person":
          await this.#personWrites(item.text, item.answers, item.cause);
          break;
        case "tick":
          await this.#tick();
          break;
      }
      await this.parts.companion.idle();
      this.options.model.endTurn?.();
      this.#noteOpenLoops("opened");
    }
  }

  async close(): Promise<void> {
    const { companion, runtime } = this.parts;
    await companion.close();
    await runtime.messages.flush();
    await runtime.mind.flush();
    await runtime.trace.flush();
    await runtime.lock.release();
  }

  result(elapsedMs: number): RunResult {
    const { scenario } = this.plan;
    const metrics = computeMetrics(this.events, this.parts.calls, {
      quietHours: scenario.quietHours,
      answeredTopicHours: this.parts.runtime.model.answeredTopicHours,
      cost: {
        prices: this.parts.runtime.model.prices,
        zoneAt: (at) => this.plan.zones.zoneAt(at),
        baseline: this.parts.baseline,
      },
    });
    const expectations: ExpectationResult[] = checkExpectations(
      scenario.expect,
      metrics,
      this.events,
      this.plan.zones,
    );
    if (this.plan.timezoneChanges.length > 0) {
      const wanted = this.plan.timezoneChanges.map((c) => c.to).join(", ");
      const got = this.parts.followedZones.join(", ") || "none";
      expectations.push({ name: "the schedule follows each /tz command", ok: got === wanted, wanted, got });
    }
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
      calls: this.parts.calls,
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

  /** The person sends `/tz Area/City`, handled exactly as the bot handles it. */
  async #travel(from: string, to: string): Promise<void> {
    const text = `/tz ${to}`;
    const command = commandOf(text);
    if (!command?.name) throw new Error(`the bot no longer knows the command "${text}"`);
    const reply = await this.parts.commands.run(command.name, command.args);
    this.#record({
      kind: "tz-change",
      from,
      to,
      reply: "text" in reply ? reply.text : reply.document.caption,
    });
  }

  /** Records open loops that appeared since the last look (`change`) and those that were retired. */
  #noteOpenLoops(change: "known" | "opened"): void {
    for (const item of this.parts.runtime.mind.read().memory) {
      if (item.kind !== "open_loop") continue;
      const open = item.retiredAt === undefined;
      if (open && !this.#openLoops.has(item.id)) {
        this.#openLoops.set(item.id, item.text);
        this.#record({ kind: "open-loop", change, id: item.id, text: item.text, note: "" });
      } else if (!open && this.#openLoops.delete(item.id)) {
        const note = item.retiredNote ?? (item.retiredWhy === "superseded" ? "superseded" : "");
        this.#record({ kind: "open-loop", change: "closed", id: item.id, text: item.text, note });
      }
    }
  }

  async #personWrites(text: string, answers: string[], cause: PersonCause): Promise<void> {
    const { companion, port } = this.parts;
    this.#record({ kind: "person", text, cause, answers });
    const before = port.sent.length;
    await companion.reply({ text, channel: "simulation" });
    await companion.idle();
    for (const message of port.sent.slice(before)) {
      if (message.kind === "notice") this.#record({ kind: "notice", text: message.text });
      else this.#record({ kind: "reply", text: message.text });
    }
  }

  async #tick(): Promise<void> {
    const now = this.clock.now();
    const tone = await this.#tone(now);
    const before = this.parts.port.sent.length;
    const outcome: HeartbeatOutcome = await this.parts.companion.heartbeat();
    if (outcome.status === "closed") return;
    const topic = outcome.decision.topic ?? null;
    if (outcome.status === "held") {
      const { reason, detail } = outcome.decision;
      this.#record({ kind: "checkin-held", reason, detail, stage: stageOf(reason), topic, tone });
      // What a held tick told the person about check-ins stopping or resuming (companion/checkin-turn.ts).
      for (const message of this.parts.port.sent.slice(before)) {
        if (message.kind === "notice") this.#record({ kind: "notice", text: message.text });
      }
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
    const slice = await this.parts.runtime.messages.awarenessSlice(now, defaultAwarenessSettings.windowHours);
    const zone = this.parts.companion.checkins.settings().timezone;
    const context = buildAwarenessContext(slice, now, {
      ...defaultAwarenessSettings,
      timezone: zone,
      trigger: "heartbeat",
    });
    return context.conversationState.lastExchangeTone;
  }

  /** Whether the leak guard removed something from a check-in before it was sent (the trace records it). */
  async #guardRemovedSomething(messageId: string): Promise<boolean> {
    const recent = await this.parts.runtime.trace.last(10);
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
