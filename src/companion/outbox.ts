import { randomBytes } from "node:crypto";
import { z } from "zod";
import { withNoticeSaid } from "../conversation/checkin-notices.ts";
import { withCheckinSent } from "../conversation/checkin-policy.ts";
import { answeredBy } from "../conversation/pending-messages.ts";
import { replyAnchor } from "../conversation/reply-anchor.ts";
import { type NoticeSaid, noticeSaidSchema } from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { addDecision, type Decision, decisionSchema } from "../core/decision.ts";
import type { Logger } from "../core/log.ts";
import {
  type Annotations,
  annotationsSchema,
  type Channel,
  channelSchema,
  externalIdsSchema,
  isoUtc,
  type Message,
  type MessageRef,
  messageRefSchema,
} from "../core/message.ts";
import { mindRecord } from "../core/mind-record.ts";
import {
  type Delivery,
  type OutboundPort,
  type OutgoingMessage,
  type OutgoingReaction,
  RecipientBlockedError,
} from "../core/port.ts";
import type { ExchangeInput } from "../mind/reflection-queue.ts";
import type { MessageLog } from "../store/messages.ts";
import type { Trace } from "../store/trace.ts";
import type { MindState, MindStore } from "./mind-document.ts";

/**
 * An outgoing message recorded before it is handed to the channel. Its shape is checked when
 * mind.json is read, like everything else in it: an entry presence could not deliver makes it
 * refuse to start rather than drop that message when it next writes.
 */
const outboxIntentFields = z.looseObject({
  id: z.string().min(1),
  kind: z.enum(["reply", "heartbeat", "notice"]),
  /** What is said; empty only for a reaction. */
  text: z.string(),
  /** A reply given as a reaction with this emoji (on the person's message `replyTo`) instead of words. */
  reaction: z.string().min(1).optional(),
  /**
   * The person's message a reply is shown as answering, decided before the intent was written
   * (conversation/reply-anchor.ts), with the ids on the channel it needs, so a crash between
   * the decision and the send still anchors it; for a reaction, the message it is put on.
   */
  anchor: messageRefSchema.optional(),
  trigger: z.enum(["reply", "heartbeat"]),
  channel: channelSchema,
  createdAt: isoUtc,
  replyTo: z.string().optional(),
  answeredThrough: z.string().optional(),
  annotations: annotationsSchema.optional(),
  /** A check-in's decision record, written (with the message id) in the same write that logs it as sent. */
  decision: decisionSchema.optional(),
  /** Parts of a split text the channel already accepted: a later attempt sends only the rest. */
  partsDelivered: z.number().int().min(0).optional(),
  /** The first part's identifiers on the channel, once it was accepted (the log records them). */
  external: externalIdsSchema.optional(),
  /** A notice about check-ins stopping or resuming: recorded as told in the write that logs it as sent. */
  said: noticeSaidSchema.optional(),
});
/** An outbox entry as mind.json holds it: words to say, or a reaction. */
const outboxIntentSchema = outboxIntentFields.refine(
  (intent) => (intent.reaction === undefined ? intent.text !== "" : intent.anchor !== undefined),
  { message: "an outbox entry needs text, or a reaction and the message it is put on", path: ["text"] },
);
/** A message recorded in the outbox, with how far its delivery got. */
export type OutboxIntent = z.infer<typeof outboxIntentSchema>;

/**
 * Messages recorded as about to be sent and not yet recorded as sent: the outbox's record in
 * mind.json. Version 2 named an entry's ids on its channel `telegram`; the step to version 3
 * names them `external`, the first part's and those of the message its reply quotes or its
 * reaction is put on (`anchor`), unchanged.
 */
export const outboxRecord = mindRecord({
  key: "outbox",
  schema: z.array(outboxIntentSchema).default([]),
  initial: () => [],
  migrations: { 3: (outbox) => (Array.isArray(outbox) ? outbox.map(withExternalIds) : outbox) },
});

/**
 * A check-in interrupted by a crash is not sent after a restart once it is this old. A check-in
 * the channel refused is never sent again: it was timely or it is nothing.
 */
const STALE_CHECKIN_MS = 30 * 60_000;

/** What the log needs to know about a message besides its text: why it went out and what it answers. */
export interface DeliveryMeta {
  trigger: "reply" | "heartbeat";
  channel: Channel;
  /** The newest of the person's messages it covers, so later ones stay pending. */
  answeredThrough?: string;
  /** What the message is about, known when it was decided (a check-in's topic), so guards see it before reflection. */
  annotations?: Annotations;
  /** A check-in's decision record, for /why: recorded together with the check-in counted as sent. */
  decision?: Decision;
  /** A notice about check-ins stopping or resuming: recorded as told together with it logged as sent. */
  said?: NoticeSaid;
}

/**
 * What the caller does the moment its message is recorded as sent (a reply or check-in hands
 * its exchange to reflection). `inWrite` runs inside the one mind write that clears the intent,
 * together with a check-in's count and decision record, so a crash keeps all of it or none —
 * and none means the intent is still there for recovery to finish. `afterWrite` runs once that
 * write is durable and says what happened, for the trace. The outbox knows nothing of what
 * the follow-up does; the caller passes it.
 */
interface SentFollowUp {
  inWrite(mind: MindState): void;
  afterWrite(): string;
}

/** The follow-up for a message, given the message as logged. */
export type AfterSent = (message: Message) => SentFollowUp;

/**
 * How a send ended; a turn decides from it whether to retry or hold. `reflection` says what
 * reflection does with it, for the trace. Only a reaction ends "refused": the channel will never
 * show it, so nothing is logged as said and the person's messages it answered stop waiting
 * (handled without a reply) instead of being retried for ever.
 */
export type Delivered =
  | { status: "sent"; message: Message; reflection: string }
  | { status: "blocked" }
  | { status: "failed"; error: string }
  | { status: "refused"; error: string };

/** The stores and the channel the outbox writes through. */
export interface OutboxDeps {
  clock: Clock;
  mind: MindStore;
  log: MessageLog;
  port: OutboundPort;
  logger: Logger;
  trace: Pick<Trace, "note">;
  /** When this process started: a reply to a message logged before it is anchored (it comes after a restart). */
  startedAt: Date;
}

/**
 * The durable outbox: every message the companion says is recorded as an intent in the mind
 * before the channel sees it and logged as a message right after, so a crash can neither
 * lose an answer nor repeat one — beyond the one window no program can close: after the
 * channel accepted a part, before that was recorded. The parts of a split text are recorded
 * as they go out, so a failure or a crash half-way is resumed at the next part.
 *
 * A reply the channel refused stays in the outbox as written: the words were generated and
 * passed the leak guard once, so a retry delivers exactly them (see sendHeldReplies in reply-turn.ts) instead of
 * asking the model again. A check-in or notice the channel refused is dropped.
 *
 * A reply given as a reaction is an entry like any reply (kind "reply", a `reaction` instead of
 * text): it is retried and recovered the same way, and being one entry it is sent as a reaction
 * or not at all, never also as text. Whether a text reply is anchored to the message it answers
 * is decided when its entry is written and decided again when it is sent, so a reply held past
 * the limit, or sent after a restart, is anchored although it was not when written.
 */
export class Outbox {
  readonly #deps: OutboxDeps;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
  }

  /**
   * Sends one message: intent written, then the channel, then the message logged, then the
   * intent cleared in the same write that counts a check-in and applies `afterSent`'s mutation.
   * Without `afterSent` (a notice) nothing else happens.
   */
  async deliver(outgoing: OutgoingMessage, meta: DeliveryMeta, afterSent?: AfterSent): Promise<Delivered> {
    return this.#record(
      {
        kind: outgoing.kind,
        text: outgoing.text,
        ...(outgoing.replyTo ? { replyTo: outgoing.replyTo } : {}),
        ...(outgoing.anchor ? { anchor: outgoing.anchor } : {}),
      },
      meta,
      afterSent,
    );
  }

  /**
   * Answers the person with a reaction instead of words, through the same steps as `deliver`:
   * it is logged as the companion's turn (answering the messages through `meta.answeredThrough`),
   * with empty text and the emoji in `reaction`.
   */
  async react(reaction: OutgoingReaction, meta: DeliveryMeta, afterSent?: AfterSent): Promise<Delivered> {
    return this.#record(
      { kind: "reply", text: "", reaction: reaction.emoji, replyTo: reaction.to.id, anchor: reaction.to },
      meta,
      afterSent,
    );
  }

  /** Writes the intent, then sends it. */
  async #record(
    what: Pick<OutboxIntent, "kind" | "text" | "reaction" | "replyTo" | "anchor">,
    meta: DeliveryMeta,
    afterSent?: AfterSent,
  ): Promise<Delivered> {
    const intent: OutboxIntent = {
      id: `o-${this.#deps.clock.now().getTime().toString(36)}-${randomBytes(4).toString("hex")}`,
      ...what,
      trigger: meta.trigger,
      channel: meta.channel,
      createdAt: this.#deps.clock.now().toISOString(),
      ...(meta.answeredThrough ? { answeredThrough: meta.answeredThrough } : {}),
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(meta.decision ? { decision: meta.decision } : {}),
      ...(meta.said ? { said: meta.said } : {}),
    };
    await this.#deps.mind.update((mind) => {
      mind.outbox.push(intent);
    });
    return this.#send(intent, afterSent);
  }

  /**
   * Finishes what a crash interrupted: intents already logged are cleared with the bookkeeping
   * the crash cut off (a check-in's count and decision, a notice's record of what was told, and
   * the caller's follow-up from `afterRecovered`, e.g. reflection), stale check-ins and notices
   * dropped (a notice about check-ins was not recorded as told, so the next tick says it while
   * its cause holds), the other check-ins sent (from the part they stopped at). Replies not
   * logged yet are left in place for the reply turn that recovery runs next, which delivers
   * held replies first.
   */
  async finishInterrupted(afterRecovered: (intent: OutboxIntent) => AfterSent | undefined): Promise<void> {
    const now = this.#deps.clock.now().getTime();
    const logged = this.#loggedMessages();
    for (const intent of this.#deps.mind.read().outbox) {
      const message = logged.get(intent.id);
      if (message) {
        const reflection = await this.#settle(intent, message, afterRecovered(intent));
        await this.#deps.trace.note({
          kind: "recover",
          outbox: intent.id,
          action: "already-sent",
          reflection,
        });
        continue;
      }
      if (intent.kind === "reply") continue;
      const stale =
        intent.kind === "notice" ||
        (intent.kind === "heartbeat" && now - Date.parse(intent.createdAt) > STALE_CHECKIN_MS);
      if (stale) {
        await this.#clearIntent(intent.id);
        await this.#deps.trace.note({ kind: "recover", outbox: intent.id, action: "dropped-stale" });
        continue;
      }
      const delivered = await this.#send(intent, afterRecovered(intent));
      await this.#deps.trace.note({
        kind: "recover",
        outbox: intent.id,
        action: "resent",
        outcome: delivered.status,
        ...(delivered.status === "sent" ? { reflection: delivered.reflection } : {}),
      });
    }
  }

  /**
   * The exchange a message finished after a crash closes, from its intent alone: a check-in
   * closes an exchange of its own; a reply, the person's messages it answered. (A notice
   * closes none: the caller does not ask.)
   */
  recoveredExchange(intent: OutboxIntent, message: Message): ExchangeInput {
    if (intent.kind === "heartbeat") return { messageIds: [message.id], trigger: "heartbeat" };
    const recent = this.#deps.log.recent();
    const before = recent.slice(
      0,
      Math.max(
        0,
        recent.findIndex((m) => m.id === message.id),
      ),
    );
    const answered = answeredBy(before, this.#deps.clock.now(), intent.answeredThrough);
    return { messageIds: [...answered.map((m) => m.id), message.id], trigger: "reply" };
  }

  /** Replies written and guarded but not delivered yet, oldest first: what a retry sends before anything new. */
  heldReplies(): OutboxIntent[] {
    const logged = this.#loggedIds();
    return this.#deps.mind
      .read()
      .outbox.filter((intent) => intent.kind === "reply" && !logged.has(intent.id));
  }

  /** Sends a held reply again, from the part the last attempt stopped at, with the caller's follow-up like any reply. */
  resend(intent: OutboxIntent, afterSent?: AfterSent): Promise<Delivered> {
    return this.#send(intent, afterSent);
  }

  #loggedIds(): Set<string> {
    return new Set(this.#loggedMessages().keys());
  }

  #loggedMessages(): Map<string, Message> {
    return new Map(
      this.#deps.log.recent().flatMap((m) => (m.outboxId === undefined ? [] : [[m.outboxId, m]])),
    );
  }

  /**
   * Clears a logged intent in one write with a check-in's count and decision, a notice's record
   * of what the person was told about check-ins, and the caller's follow-up mutation.
   */
  async #settle(intent: OutboxIntent, message: Message, afterSent?: AfterSent): Promise<string> {
    const followUp = afterSent?.(message);
    await this.#deps.mind.update((mind) => {
      mind.outbox = mind.outbox.filter((entry) => entry.id !== intent.id);
      if (intent.kind === "heartbeat" && intent.decision) recordCheckin(mind, intent, message);
      if (intent.said)
        mind.checkinNotices = withNoticeSaid(mind.checkinNotices, intent.said, new Date(intent.createdAt));
      followUp?.inWrite(mind);
    });
    return followUp ? followUp.afterWrite() : "none";
  }

  async #send(intent: OutboxIntent, afterSent?: AfterSent): Promise<Delivered> {
    const progress = { ...intent };
    let delivery: Delivery;
    try {
      if (intent.reaction !== undefined) {
        // The entry's schema requires the message a reaction is put on; an entry without one is not sent.
        const to = intent.anchor;
        if (to === undefined)
          throw new Error(`outbox entry ${intent.id} has a reaction but no message to put it on`);
        delivery = await this.#deps.port.react({ emoji: intent.reaction, to });
      } else {
        const anchor = this.#anchorAtSend(intent);
        const outgoing: OutgoingMessage = {
          text: intent.text,
          kind: intent.kind,
          ...(intent.replyTo ? { replyTo: intent.replyTo } : {}),
          ...(intent.partsDelivered ? { partsDelivered: intent.partsDelivered } : {}),
          ...(anchor ? { anchor } : {}),
        };
        delivery = await this.#deps.port.send(outgoing, async (partsDelivered, part) => {
          progress.partsDelivered = partsDelivered;
          if (!progress.external && part.external) progress.external = part.external;
          await this.#recordProgress(progress);
        });
      }
    } catch (error) {
      if (error instanceof RecipientBlockedError) {
        await this.#clearIntent(intent.id);
        await this.#deps.mind.update((mind) => {
          mind.heartbeat.blocked = true;
        });
        this.#deps.logger.warn("the person blocked the bot; check-ins stop until they write");
        return { status: "blocked" };
      }
      if (intent.kind !== "reply") await this.#clearIntent(intent.id);
      this.#deps.logger.error(
        { err: error, kind: intent.kind, partsDelivered: progress.partsDelivered ?? 0 },
        "the channel could not deliver a message",
      );
      return { status: "failed", error: error instanceof Error ? error.message : String(error) };
    }
    if (delivery.refused !== undefined) return this.#refused(intent, delivery.refused);
    const external = progress.external ?? delivery.external;
    const message = await this.#deps.log.append({
      role: "assistant",
      text: intent.text,
      ...(intent.reaction !== undefined ? { reaction: intent.reaction } : {}),
      channel: intent.channel,
      trigger: intent.trigger,
      outboxId: intent.id,
      ...(intent.replyTo ? { replyTo: intent.replyTo } : {}),
      ...(intent.answeredThrough ? { answeredThrough: intent.answeredThrough } : {}),
      ...(intent.annotations ? { annotations: intent.annotations } : {}),
      // Fixed words that cover the person's messages (answerFixed) are an answer, not a notice.
      ...(intent.kind === "notice" && !intent.answeredThrough ? { notice: true } : {}),
      ...(external ? { external } : {}),
    });
    const reflection = await this.#settle(intent, message, afterSent);
    return { status: "sent", message, reflection };
  }

  /**
   * A reaction the channel refused for good: nothing is logged as said (awareness must not say
   * "you reacted"), the person's newest message it answered is marked handled without a reply
   * (it and those before it stop waiting, as when the leak guard leaves nothing to send), then
   * the entry goes. A crash between the two sends the reaction again and gets the same refusal.
   */
  async #refused(intent: OutboxIntent, reason: string): Promise<Delivered> {
    const handled = intent.answeredThrough ?? intent.replyTo;
    if (handled !== undefined) await this.#deps.log.update(handled, { handledWithoutReply: true });
    await this.#clearIntent(intent.id);
    return { status: "refused", error: reason };
  }

  /**
   * The anchor of a reply as it goes out: the one decided when its entry was written, or — for a
   * reply that answered one message at once then but is sent only now (held by a failure, or
   * after a restart) — the same rule applied at the send time.
   */
  #anchorAtSend(intent: OutboxIntent): MessageRef | undefined {
    if (intent.kind !== "reply") return undefined;
    if (intent.anchor) return intent.anchor;
    const answered = this.#deps.log.recent().find((m) => m.id === intent.replyTo);
    if (!answered) return undefined;
    return replyAnchor({
      answered: [answered],
      sendAt: this.#deps.clock.now(),
      startedAt: this.#deps.startedAt,
    });
  }

  async #recordProgress(intent: OutboxIntent): Promise<void> {
    await this.#deps.mind.update((mind) => {
      mind.outbox = mind.outbox.map((entry) => (entry.id === intent.id ? { ...intent } : entry));
    });
  }

  async #clearIntent(id: string): Promise<void> {
    await this.#deps.mind.update((mind) => {
      mind.outbox = mind.outbox.filter((entry) => entry.id !== id);
    });
  }
}

/** A check-in counts towards the day's limit and its decision record names the message, for /why. */
function recordCheckin(mind: MindState, intent: OutboxIntent, message: Message): void {
  mind.heartbeat = withCheckinSent(mind.heartbeat, new Date(intent.createdAt));
  addDecision(mind, { ...intent.decision, messageId: message.id } as Decision);
}

/** Where version 2 kept an outbox entry's ids on the channel, the only channel it knew. */
const FORMER_IDS = "telegram";

/** The entry with its former ids field named `external`, and its anchor's. */
function withExternalIds(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const { [FORMER_IDS]: external, anchor, ...rest } = value as Record<string, unknown>;
  return {
    ...rest,
    ...(anchor === undefined ? {} : { anchor: withExternalIds(anchor) }),
    ...(external === undefined ? {} : { external }),
  };
}
