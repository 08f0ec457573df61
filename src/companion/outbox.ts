import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { ExchangeInput } from "../mind/reflection-queue.ts";
import { type Delivery, type OutboundPort, type OutgoingMessage, RecipientBlockedError } from "../port.ts";
import type { Channel, Message } from "../store/message.ts";
import type { MessageLog } from "../store/messages.ts";
import type { MindStore } from "../store/mind.ts";
import type { QuietTrace } from "./quiet-trace.ts";

/**
 * A check-in interrupted by a crash is not sent after a restart once it is this old. A check-in
 * the channel refused is never sent again: it was timely or it is nothing.
 */
export const STALE_CHECKIN_MS = 30 * 60_000;

const telegramIdsSchema = z.object({ chatId: z.number(), messageId: z.number() });

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
  /** Parts of a split text the channel already accepted: a later attempt sends only the rest. */
  partsDelivered: z.number().int().min(0).optional(),
  /** The first part's Telegram identifiers, once it was accepted (the log records them). */
  telegram: telegramIdsSchema.optional(),
});
/** A message recorded in the outbox, with how far its delivery got. */
export type OutboxIntent = z.infer<typeof outboxIntentSchema>;

/** What the log needs to know about a message besides its text: why it went out and what it answers. */
export interface DeliveryMeta {
  trigger: "reply" | "heartbeat";
  channel: Channel;
  /** The newest of the person's messages it covers, so later ones stay pending. */
  answeredThrough?: string;
}

/** How a send ended; a turn decides from it whether to retry, hold or reflect. */
export type Delivered =
  | { status: "sent"; message: Message }
  | { status: "blocked" }
  | { status: "failed"; error: string };

/** The stores and the channel the outbox writes through. */
export interface OutboxDeps {
  clock: Clock;
  mind: MindStore;
  log: MessageLog;
  port: OutboundPort;
  logger: Logger;
  trace: QuietTrace;
}

/**
 * The durable outbox: every message the companion says is recorded as an intent in the mind
 * before the channel sees it and logged as a message right after, so a crash can neither
 * lose an answer nor repeat one — beyond the one window no program can close: after the
 * channel accepted a part, before that was recorded. The parts of a split text are recorded
 * as they go out, so a failure or a crash half-way is resumed at the next part.
 *
 * A reply the channel refused stays in the outbox as written: the words were generated and
 * passed the leak guard once, so a retry delivers exactly them (see held-reply.ts) instead of
 * asking the model again. A check-in or notice the channel refused is dropped.
 */
export class Outbox {
  readonly #deps: OutboxDeps;

  constructor(deps: OutboxDeps) {
    this.#deps = deps;
  }

  /** Sends one message: intent written, then the channel, then the message logged and the intent cleared. */
  async deliver(outgoing: OutgoingMessage, meta: DeliveryMeta): Promise<Delivered> {
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

  /**
   * Finishes what a crash interrupted: intents already logged are cleared, stale check-ins and
   * notices dropped, the other check-ins sent (from the part they stopped at) and handed to
   * `reflect` once they are in the log. Replies are left in place for the reply turn that
   * recovery runs next, which delivers held replies first.
   */
  async finishInterrupted(reflect: (exchange: ExchangeInput) => Promise<string>): Promise<void> {
    const now = this.#deps.clock.now().getTime();
    const logged = this.#loggedIds();
    for (const entry of this.#deps.mind.read().outbox) {
      const parsed = outboxIntentSchema.safeParse(entry);
      const id = typeof entry.id === "string" ? entry.id : "";
      if (!parsed.success) {
        this.#deps.logger.warn({ id }, "dropped an unreadable outbox entry");
        await this.#clearIntent(id);
        continue;
      }
      const intent = parsed.data;
      if (intent.kind === "reply" && !logged.has(intent.id)) continue;
      const stale =
        intent.kind === "notice" ||
        (intent.kind === "heartbeat" && now - Date.parse(intent.createdAt) > STALE_CHECKIN_MS);
      if (logged.has(intent.id) || stale) {
        await this.#clearIntent(intent.id);
        await this.#deps.trace({
          kind: "recover",
          outbox: intent.id,
          action: logged.has(intent.id) ? "already-sent" : "dropped-stale",
        });
        continue;
      }
      const delivered = await this.#send(intent);
      const reflection =
        delivered.status === "sent"
          ? await reflect({ messageIds: [delivered.message.id], trigger: intent.trigger })
          : undefined;
      await this.#deps.trace({
        kind: "recover",
        outbox: intent.id,
        action: "resent",
        outcome: delivered.status,
        ...(reflection ? { reflection } : {}),
      });
    }
  }

  /** Replies written and guarded but not delivered yet, oldest first: what a retry sends before anything new. */
  heldReplies(): OutboxIntent[] {
    const logged = this.#loggedIds();
    return this.#deps.mind
      .read()
      .outbox.flatMap((entry) => {
        const parsed = outboxIntentSchema.safeParse(entry);
        return parsed.success ? [parsed.data] : [];
      })
      .filter((intent) => intent.kind === "reply" && !logged.has(intent.id));
  }

  /** Sends a held reply again, from the part the last attempt stopped at. */
  resend(intent: OutboxIntent): Promise<Delivered> {
    return this.#send(intent);
  }

  #loggedIds(): Set<string> {
    return new Set(
      this.#deps.log.recent().flatMap((m) => (typeof m.outboxId === "string" ? [m.outboxId] : [])),
    );
  }

  async #send(intent: OutboxIntent): Promise<Delivered> {
    const progress = { ...intent };
    const outgoing: OutgoingMessage = {
      text: intent.text,
      kind: intent.kind,
      ...(intent.replyTo ? { replyTo: intent.replyTo } : {}),
      ...(intent.partsDelivered ? { partsDelivered: intent.partsDelivered } : {}),
    };
    let delivery: Delivery;
    try {
      delivery = await this.#deps.port.send(outgoing, async (partsDelivered, part) => {
        progress.partsDelivered = partsDelivered;
        if (!progress.telegram && part.telegram) progress.telegram = part.telegram;
        await this.#recordProgress(progress);
      });
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
    const telegram = progress.telegram ?? delivery.telegram;
    const message = await this.#deps.log.append({
      role: "assistant",
      text: intent.text,
      channel: intent.channel,
      trigger: intent.trigger,
      outboxId: intent.id,
      ...(intent.replyTo ? { replyTo: intent.replyTo } : {}),
      ...(intent.answeredThrough ? { answeredThrough: intent.answeredThrough } : {}),
      ...(intent.kind === "notice" ? { notice: true } : {}),
      ...(telegram ? { telegram } : {}),
    });
    await this.#clearIntent(intent.id);
    return { status: "sent", message };
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
