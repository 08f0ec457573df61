import { pendingMessages } from "../conversation/pending-messages.ts";
import type { HeartbeatSettings } from "../core/checkin-settings.ts";
import type { Clock, Timer, Timers } from "../core/clock.ts";
import { InFlight, settledWithin } from "../core/in-flight.ts";
import type { Logger } from "../core/log.ts";
import type { Channel, ExternalIds, Media, Message } from "../core/message.ts";
import { type IncomingInput, type OutboundPort, RecipientBlockedError } from "../core/port.ts";
import { SerialQueue } from "../core/serial-queue.ts";
import type { PendingImage } from "../mind/compose.ts";
import { Reflector } from "../mind/reflection-queue.ts";
import type { ModelClient } from "../model/llm.ts";
import type { PersonaSource } from "../model/persona.ts";
import type { ModelConfig } from "../model/settings.ts";
import type { Transcriber } from "../model/transcription.ts";
import type { MessageLog } from "../store/messages.ts";
import type { NotesStore } from "../store/notes.ts";
import type { SentFiles } from "../store/sent-files.ts";
import type { Trace } from "../store/trace.ts";
import { type CheckinCommands, CheckinControls, type ZoneListener } from "./checkin-controls.ts";
import { checkinTurn, type HeartbeatOutcome, noticeAfterCheckin } from "./checkin-turn.ts";
import { DataRights, type DataRightsCommands } from "./data-rights.ts";
import type { MindStore } from "./mind-document.ts";
import { Outbox } from "./outbox.ts";
import { ReflectionSchedule } from "./reflection-schedule.ts";
import { ReplyRetry, type ReplyRetryOptions } from "./reply-retry.ts";
import { ReplySettle, type SettleTimes } from "./reply-settle.ts";
import { type ReplyOutcome, reflectOnRecovered, replyTurn } from "./reply-turn.ts";
import type { TurnContext } from "./turn-context.ts";
import { forgetOldSounds, keepArrivingSound } from "./voice-notes.ts";

export { pendingMessages } from "../conversation/pending-messages.ts";
export type { ZoneListener } from "./checkin-controls.ts";
export type { HeartbeatOutcome } from "./checkin-turn.ts";
export {
  DEFAULT_NOTICE_AFTER_MS,
  DEFAULT_NOTICE_TEXT,
  DEFAULT_RETRY_DELAYS_MS,
} from "./reply-retry.ts";
export type { ReplySettle, SettleTimes } from "./reply-settle.ts";

/**
 * The companion: the only place that orders the steps of a turn. Channels hand it the
 * person's messages (receive, then reply); the scheduler asks it to consider a check-in
 * (heartbeat). One turn runs at a time. The person's words are in the log before any
 * model is called; what goes out goes through the outbox (outbox.ts), so a crash can
 * neither lose an answer nor repeat one. The turns themselves are in reply-turn.ts and
 * checkin-turn.ts; the retry and notice in reply-retry.ts; a reply the channel refused,
 * resent as written, in reply-turn.ts; reflection's timing in reflection-schedule.ts; what a
 * check-in turn tells the person when check-ins stop or resume unseen, in checkin-turn.ts.
 */

/** How often a heartbeat looks for sounds past their keeping time (which is counted in days). */
const SOUND_SWEEP_EVERY_MS = 3_600_000;

/** Everything the companion is built from; main.ts wires the real ones, tests the fakes. */
export interface CompanionDeps {
  clock: Clock;
  /** Every wait (the retry, reflection's back-off, close's bound) goes through these. */
  timers: Timers;
  core: HeartbeatSettings;
  model: ModelConfig;
  log: MessageLog;
  mind: MindStore;
  notes: NotesStore;
  /** Where the documents the person sends are kept for the model to read, and their voice notes to be heard. */
  files: SentFiles;
  trace: Trace;
  /** Its calls return their usage; the turns and reflection record it in the mind's ledger (what the budget counts). */
  llm: ModelClient;
  /** Hears the person's voice notes (voice-notes.ts); absent when PRESENCE_TRANSCRIBE_URL is not set. */
  transcriber?: Transcriber;
  /** How many days a voice note's sound is kept after it arrived (PRESENCE_VOICE_KEEP_DAYS). */
  soundKeepDays: number;
  port: OutboundPort;
  persona: PersonaSource;
  logger: Logger;
  /** The reflection runner; by default one is built from the other deps. */
  reflector?: Reflector;
  /** Told when the person's zone moves (/tz, a /wipe that drops it): the app's heartbeat schedule follows it. */
  onZoneChange?: ZoneListener;
  options?: CompanionOptions;
}

/** Knobs that tests and simulations turn; production uses the defaults. */
export interface CompanionOptions extends ReplyRetryOptions {
  /** How long close() waits for the turn in flight and background work. */
  closeTimeoutMs?: number;
  /** The channel assistant messages are logged with when the person has not written yet. */
  defaultChannel?: Channel;
  /** Run reflection in the background after each exchange (default true). */
  reflectInBackground?: boolean;
}

/** What the person changed by editing a message: its text, and its media when a caption on it changed. */
type MessageEdit = {
  text: string;
  editedAt: string;
  media?: Media;
};

/** How answerFixed went: the fixed words answered the message, went out as a notice, or were not needed. */
type FixedAnswer = "answered" | "noticed" | "already";

/** The companion's interface to channels, the scheduler and the command line. */
export interface Companion {
  /**
   * The person's rights over what is kept (data-rights.ts): /memory, /forget, /fix, /export,
   * /wipe; deleting and correcting run with nothing else writing (exclusive).
   */
  readonly rights: DataRightsCommands;
  /**
   * The check-in settings in force and the last decision (/pause, /resume, /quiet, /tz, /why
   * read and change them here); a new zone is told to the schedule (CompanionDeps.onZoneChange).
   */
  readonly checkins: CheckinCommands;
  /**
   * Whether voice notes are heard (a transcription service is set up): a channel hands over a
   * sound's download (IncomingInput.sound) only then; otherwise it logs it as not heard.
   */
  readonly hearsVoiceNotes: boolean;
  /**
   * Logs the person's message at once (outside the turn lock) and returns it as logged. A
   * document is kept first; a sound after, as it downloads in the background (the reply turn
   * waits for it, and so do idle() and the work of exclusive()).
   */
  receive(input: IncomingInput): Promise<Message>;
  /**
   * Says fixed `text` (never generated, sent exactly as written) through the outbox for a message
   * the companion cannot take in (a document it cannot read). When that message is all the
   * person is waiting on, the words are its answer (logged as one, so no model ever answers it, not
   * even after a restart); when other messages wait too, they are a notice and the next turn
   * answers everything. Nothing is said twice: "already" when something already answered it.
   * Throws when the channel could not deliver, like a channel's own send.
   */
  answerFixed(message: Message, text: string): Promise<FixedAnswer>;
  /**
   * Records that the person edited a message the log holds, matched by its channel and its ids
   * there (its text, and its media when a caption changed on media the log describes); the
   * logged message, or null.
   */
  receiveEdit(channel: Channel, ids: ExternalIds, edit: MessageEdit): Promise<Message | null>;
  /** Logs `input` if given, then answers everything the person said since the last answer, in one turn. */
  reply(input?: IncomingInput): Promise<ReplyOutcome>;
  /**
   * Replies that wait for a burst of the person's messages to settle (reply-settle.ts): a channel
   * opts in with its own times, tells it of each message it logged (`arrived`), and hears each
   * reply it starts (`started`), to wait for when it stops. "Typing…" shows while a burst settles.
   */
  settleReplies(times: SettleTimes, started: (reply: Promise<unknown>) => void): ReplySettle;
  /**
   * Considers a check-in now: pre-check, budget, decide, guard, write, send; then says a notice
   * when check-ins stopped or resumed for a reason the person cannot see (checkin-turn.ts).
   */
  heartbeat(): Promise<HeartbeatOutcome>;
  /**
   * After a restart: finishes interrupted sends, answers what is unanswered (once; a voice note
   * not transcribed yet is heard first), runs queued reflections, deletes sound past its keeping time.
   */
  recover(): Promise<void>;
  /**
   * Runs `work` (a /wipe, a /forget) with nothing else touching the stores: it takes the turn
   * lock, so the turn in flight finishes first and the next one starts after; retries wait, and
   * a reflection in flight and a sound still downloading finish before `work` starts, so neither
   * can write back what `work` deletes. When `work` dropped the person's /tz (a /wipe), the schedule is told the zone.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Resolves when no turn or background work (reflection, a retry that started, a sound downloading) is running; a retry still waiting for its timer is not waited for. */
  idle(): Promise<void>;
  /** Stops taking turns, cancels retries, waits (bounded) for work in flight. */
  close(): Promise<void>;
}

/** Builds the companion. Nothing runs until a method is called. */
export function createCompanion(deps: CompanionDeps): Companion {
  return new CompanionImpl(deps);
}

class CompanionImpl implements Companion {
  readonly #deps: CompanionDeps;
  /** One turn at a time: a reply and a check-in both read the log, call the model and write back. */
  readonly #lock = new SerialQueue();
  readonly #images = new Map<string, PendingImage>();
  /** Sounds logged and still downloading, by where they will be kept (media.stored): the reply turn waits for them. */
  readonly #soundsArriving = new Map<string, Promise<void>>();
  /** Work started off the turn path (reflection, a retried reply), for idle() and close(). */
  readonly #background: InFlight;
  readonly #outbox: Outbox;
  readonly #retry: ReplyRetry;
  readonly #reflection: ReflectionSchedule;
  readonly #turn: TurnContext;
  readonly rights: DataRights;
  readonly checkins: CheckinControls;
  readonly hearsVoiceNotes: boolean;
  /** The background attempt at a reply the retry asked for, waiting for its time. */
  #retryTimer: Timer | undefined;
  #closed = false;
  /** When sounds past their keeping time were last looked for (ms), so heartbeats look at most hourly. */
  #soundsSweptAt: number | undefined;

  constructor(deps: CompanionDeps) {
    this.#deps = deps;
    const options = deps.options ?? {};
    this.#background = new InFlight((error) => deps.logger.error({ err: error }, "background work failed"));
    this.#reflection = new ReflectionSchedule({
      ...deps,
      reflector: deps.reflector ?? defaultReflector(deps),
      background: this.#background,
      inBackground: options.reflectInBackground !== false,
    });
    // A reply to what was logged before this moment is sent after a restart: it is anchored.
    const startedAt = deps.clock.now();
    this.#outbox = new Outbox({ ...deps, trace: deps.trace, startedAt });
    this.#retry = new ReplyRetry({ ...deps, outbox: this.#outbox }, options);
    this.hearsVoiceNotes = deps.transcriber !== undefined;
    this.#turn = {
      ...deps,
      hearsVoiceNotes: this.hearsVoiceNotes,
      images: this.#images,
      outbox: this.#outbox,
      retry: this.#retry,
      reflection: this.#reflection,
      trace: deps.trace,
      startedAt,
      defaultChannel: options.defaultChannel ?? "telegram",
      soundArriving: (stored) => this.#soundsArriving.get(stored),
      isClosed: () => this.#closed,
    };
    this.rights = new DataRights({
      ...deps,
      exclusive: (work) => this.exclusive(work),
    });
    this.checkins = new CheckinControls(deps);
  }

  async receive(input: IncomingInput): Promise<Message> {
    const { files } = this.#deps;
    // A document's file first: a crash before the message is logged leaves a file Telegram's
    // redelivery replaces. A sound's message first, naming where its sound will be kept: the
    // download may take a while, and the log must not wait for it.
    const document = input.document
      ? await files.keep(input.document.name, input.document.kind, input.document.bytes)
      : undefined;
    const sound = input.sound;
    const soundAt = sound ? files.storedPath(sound.name, sound.format) : undefined;
    const media = document
      ? { kind: "document" as const, ...input.media, stored: document }
      : soundAt
        ? { kind: "voice" as const, ...input.media, stored: soundAt, downloading: true as const }
        : input.media;
    // Known as arriving before it is logged, so no turn can take it for one a crash left.
    let arrived = () => {};
    if (soundAt) {
      const arriving = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      this.#soundsArriving.set(soundAt, arriving);
    }
    let message: Message;
    try {
      message = await this.#deps.log.append({
        role: "user",
        text: input.text,
        channel: input.channel,
        ...(media ? { media } : {}),
        ...(input.external ? { external: input.external } : {}),
        ...(input.replyTo ? { replyTo: input.replyTo } : {}),
      });
    } catch (error) {
      if (soundAt) this.#soundsArriving.delete(soundAt);
      arrived();
      throw error;
    }
    if (sound && soundAt) {
      const keeping = keepArrivingSound(this.#deps, message.id, sound).finally(() => {
        this.#soundsArriving.delete(soundAt);
        arrived();
      });
      this.#background.track(keeping);
    }
    if (input.image) this.#images.set(message.id, input.image);
    if (this.#deps.mind.read().heartbeat.blocked) {
      await this.#deps.mind.update((mind) => {
        mind.heartbeat.blocked = false;
      });
    }
    return message;
  }

  async answerFixed(message: Message, text: string): Promise<FixedAnswer> {
    const recent = this.#deps.log.recent();
    if (recent.some((m) => m.role === "assistant" && m.replyTo === message.id)) return "already";
    const pending = pendingMessages(recent, this.#deps.clock.now());
    const alone = pending.length === 1 && pending[0]?.id === message.id;
    const delivered = await this.#outbox.deliver(
      { text, kind: "notice", replyTo: message.id },
      { trigger: "reply", channel: message.channel, ...(alone ? { answeredThrough: message.id } : {}) },
    );
    if (delivered.status === "blocked") throw new RecipientBlockedError("the person blocked the bot");
    if (delivered.status === "failed") throw new Error(`could not say the fixed answer: ${delivered.error}`);
    return alone ? "answered" : "noticed";
  }

  async receiveEdit(channel: Channel, ids: ExternalIds, edit: MessageEdit): Promise<Message | null> {
    const logged = await this.#deps.log.findByExternal(channel, ids);
    if (!logged) return null;
    await this.#deps.log.update(logged.id, edit);
    return logged;
  }

  async reply(input?: IncomingInput): Promise<ReplyOutcome> {
    if (input) await this.receive(input);
    if (this.#closed) return { status: "closed" };
    return this.#lock.runCoalesced("reply", async () => {
      try {
        return await this.#guarded("reply", () => replyTurn(this.#turn));
      } finally {
        this.#followRetry();
      }
    });
  }

  settleReplies(times: SettleTimes, started: (reply: Promise<unknown>) => void): ReplySettle {
    const { port, timers } = this.#deps;
    return new ReplySettle({
      times,
      timers,
      reply: () => this.reply(),
      showWorking: port.showWorking?.bind(port),
      started,
    });
  }

  async heartbeat(): Promise<HeartbeatOutcome> {
    if (this.#closed) return { status: "closed" };
    return this.#lock.runCoalesced("heartbeat", () =>
      this.#guarded("heartbeat", async () => {
        const outcome = await checkinTurn(this.#turn);
        if (outcome.status !== "closed") await noticeAfterCheckin(this.#turn, outcome.decision);
        await this.#forgetOldSounds();
        return outcome;
      }),
    );
  }

  async recover(): Promise<void> {
    await this.#lock.run(() =>
      this.#guarded("recover", () => this.#outbox.finishInterrupted(reflectOnRecovered(this.#turn))),
    );
    await this.reply();
    await this.#reflection.runPending();
    await this.#lock.run(() => this.#forgetOldSounds());
  }

  /**
   * Deletes the sounds kept past their keeping time (voice-notes.ts), under the turn lock so no
   * turn is hearing one. The keeping time is counted in days, so a sweep an hour is plenty: the
   * heartbeats in between neither list the files nor make a reply wait behind them.
   */
  async #forgetOldSounds(): Promise<void> {
    const now = this.#deps.clock.now().getTime();
    if (this.#soundsSweptAt !== undefined && now - this.#soundsSweptAt < SOUND_SWEEP_EVERY_MS) return;
    await forgetOldSounds(this.#deps, this.#deps.soundKeepDays);
    this.#soundsSweptAt = now;
  }

  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#lock.run(async () => {
      const retrying = this.#retryTimer !== undefined;
      this.#retry.cancel();
      this.#followRetry();
      await this.#reflection.settle();
      // A sound still downloading would be kept after `work` deleted its message.
      await Promise.all(this.#soundsArriving.values());
      const zoneBefore = this.checkins.settings().timezone;
      try {
        const result = await work();
        this.checkins.followZone(zoneBefore);
        return result;
      } finally {
        await this.#afterExclusive(retrying);
      }
    });
  }

  /** Drops photos of messages `work` deleted and picks up what is still owed: the retry of a pending reply, queued reflections. */
  async #afterExclusive(retrying: boolean): Promise<void> {
    for (const id of [...this.#images.keys()]) {
      if (!(await this.#deps.log.get(id))) this.#images.delete(id);
    }
    if (this.#closed) return;
    const pending = pendingMessages(this.#deps.log.recent(), this.#deps.clock.now());
    if (retrying && pending.length > 0) this.#retry.schedule();
    this.#followRetry();
    this.#reflection.resume();
  }

  /**
   * Keeps the retry's timer in step with what the turn told the retry: armed for the wait it
   * asked for (replacing one already waiting), or dropped. The attempt it runs is a reply like
   * any other, tracked as background work.
   */
  #followRetry(): void {
    const change = this.#retry.takeChange();
    if (change === undefined) return;
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    if (change === null || this.#closed) return;
    this.#retryTimer = this.#deps.timers.after(change, () => {
      this.#retryTimer = undefined;
      this.#background.track(this.reply());
    });
  }

  async idle(): Promise<void> {
    for (;;) {
      await this.#lock.idle();
      if (!this.#background.busy) return;
      await this.#background.settled();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#retry.stop();
    this.#followRetry();
    this.#reflection.stop();
    const timeout = this.#deps.options?.closeTimeoutMs ?? 10_000;
    if (!(await settledWithin(this.idle(), timeout, this.#deps.timers)))
      this.#deps.logger.warn({ timeoutMs: timeout }, "closed with work still in flight");
  }

  /** Runs a turn so that an unexpected failure (a bug, a full disk) is logged and traced before it reaches the caller. */
  async #guarded<T>(kind: "reply" | "heartbeat" | "recover", turn: () => Promise<T>): Promise<T> {
    try {
      return await turn();
    } catch (error) {
      this.#deps.logger.error({ err: error, kind }, "turn failed");
      await this.#deps.trace.note({
        kind: `${kind}-error` as const,
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  }
}

/** The reflection runner built from the companion's own stores and model, when the caller brings none. */
function defaultReflector(deps: CompanionDeps): Reflector {
  return new Reflector({
    mind: deps.mind,
    log: deps.log,
    notes: deps.notes,
    model: deps.llm,
    config: deps.model,
    clock: deps.clock,
    settings: deps.core,
    persona: deps.persona,
    trace: deps.trace,
    logger: deps.logger,
  });
}
