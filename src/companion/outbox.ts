import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { ExchangeInput } from "../mind/reflection-queue.ts";
import { type OutboundPort, type OutgoingMessage, RecipientBlockedError } from "../port.ts";
import type { Channel, Message } from "../store/message.ts";
import type { MessageLog } from "../store/messages.ts";
import type { MindStore } from "../store/mind.ts";
import { answeredBy } from "./pending-messages.ts";
import type { QuietTrace } from "./quiet-trace.ts";

/** A check-in interrupted by a crash is not sent after a restart once it is this old. */
export const STALE_CHECKIN_MS = 30 * 60_000;

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
 * channel accepted it, before it was logged.
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
   * Finishes what a crash interrupted: intents already logged are cleared, the others sent
   * (stale check-ins and notices are dropped). A resent message is an exchange like any
   * other, so it is handed to `reflect` once it is in the log.
   */
  async finishInterrupted(reflect: (exchange: ExchangeInput) => Promise<string>): Promise<void> {
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
        await this.#deps.trace({
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
          ? await reflect({
              messageIds: [...answered.map((m) => m.id), delivered.message.id],
              trigger: intent.trigger,
            })
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
}
