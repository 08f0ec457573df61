import type { Channel, ExternalIds, ExternalRef, Media, MessageRef } from "./message.ts";
import type { NotHeard, SoundFormat } from "./sound.ts";

/**
 * The outbound port: how the companion speaks to the person without knowing which
 * channel carries the words. Telegram and the terminal implement it; simulations
 * record into it. Keeping it this small lets the companion speak later (a retried
 * reply, a notice) from anywhere.
 */
export interface OutboundPort {
  /**
   * Delivers one message; resolves once the channel accepted all of it. A channel that splits
   * a long text into several messages skips the parts `message.partsDelivered` says an earlier
   * attempt already delivered, and reports each part it delivers to `progress` (awaited before
   * the next part), so a failure half-way is resumed where it stopped instead of repeated. A
   * channel that never splits may ignore both.
   */
  send(message: OutgoingMessage, progress?: SendProgress): Promise<Delivery>;
  /**
   * Reacts with one emoji to the person's message instead of writing (Telegram: a message
   * reaction); resolves once the channel accepted it, or with `refused` when it never will.
   * Setting the same reaction again changes nothing the person sees, so a retry after a crash is harmless.
   */
  react(reaction: OutgoingReaction): Promise<Delivery>;
  /** Shows that the companion is working on a reply (e.g. "typing…"); returns a stop function. */
  showWorking?(): () => void;
}

/** What the companion wants to say. */
export interface OutgoingMessage {
  text: string;
  /** Why it speaks: answering, checking in, or a fixed notice (not generated). */
  kind: "reply" | "heartbeat" | "notice";
  /** The id (in the log) of the person's message this answers, when it answers one. */
  replyTo?: string;
  /** Parts of this text an earlier attempt already delivered (0 when absent): they are not sent again. */
  partsDelivered?: number;
  /**
   * The person's message this is shown as answering (Telegram: a reply quoting it), when the
   * companion decided it should be (conversation/reply-anchor.ts); only the first part carries it.
   */
  anchor?: MessageRef;
}

/** A reaction the companion gives instead of a message. */
export interface OutgoingReaction {
  /** One emoji from the set Telegram allows (model/reaction.ts). */
  emoji: string;
  /** The person's message it is put on: their newest one it answers. */
  to: MessageRef;
}

/**
 * Told after each part of a message is accepted: how many parts are through now (counted from
 * the first part of the whole text) and that part's delivery. The outbox records it durably.
 */
export type SendProgress = (partsDelivered: number, part: Delivery) => Promise<void>;

/** What the channel reports about a delivered message. */
export interface Delivery {
  /** The delivered message's identifiers on the channel, when the channel numbers its messages. */
  external?: ExternalIds;
  /**
   * Set when a reaction was refused for good (Telegram's 400: the message was deleted, the emoji
   * is not allowed there): nothing appeared, and trying again cannot change that. The channel's reason.
   */
  refused?: string;
}

/** The channel refused because the person blocked the bot: stop checking in until they write. */
export class RecipientBlockedError extends Error {
  override readonly name = "RecipientBlockedError";
}

/** What kind of document the model can read: the channel decides it, the store keeps it with the file. */
export type DocumentKind = "pdf" | "text";

/** A sound's bytes as the channel downloaded them, or why it could not (too large once asked for, the download failed). */
export type DownloadedSound = { bytes: Uint8Array } | { notHeard: NotHeard };

/** A message from the person as a channel hands it to the companion, before it is logged. */
export interface IncomingInput {
  text: string;
  channel: Channel;
  media?: Media;
  /** An image the model may see (base64), for photos. */
  image?: { mediaType: "image/jpeg" | "image/png" | "image/gif" | "image/webp"; base64: string };
  /**
   * A document the model may read (a PDF, or text as UTF-8), kept under files/ by its name and
   * kind before the message is logged; the message's media then says where (media.stored).
   */
  document?: { name: string; kind: DocumentKind; bytes: Uint8Array };
  /**
   * A sound to be heard (a voice note, an audio file, a round video note). Unlike a document it
   * is downloaded after the message is logged, so a large one holds up neither the log nor the
   * person's next message: the companion logs the message, then calls `download` and keeps the
   * bytes under files/ by `name` and `format`. The reply turn waits for them, transcribes them
   * and writes the transcript onto the message (companion/voice-notes.ts).
   */
  sound?: { name: string; format: SoundFormat; download(): Promise<DownloadedSound> };
  /** The message's ids on its channel, the delivery it came in, and when the channel says it was sent. */
  external?: ExternalRef;
  replyTo?: string;
}
