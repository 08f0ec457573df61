import type { Message as TelegramMessage } from "grammy/types";
import type { Media } from "../../core/message.ts";
import type { IncomingInput } from "../../core/port.ts";
import { type NotRead, notReadNote, notReadReply } from "./documents.ts";

/**
 * What the person sent, in words the companion and the log can hold. Every kind of message
 * becomes text the model can read — a sticker its emoji, a document its name, a location a
 * place — so nothing the person sends is silently dropped. A caption is part of that text and
 * nowhere else the model looks (media.caption is kept as data only). A voice note or sound file
 * says plainly that it was not heard; without a caption it is `unheard`, and the channel answers
 * it with fixed words rather than let a model pretend to have listened. A document the channel
 * could not read says why, and without a caption carries its fixed answer (`unreadReply`).
 */
export interface DescribedMessage {
  text: string;
  media?: Media;
  /** The largest size of a photo, to be fetched and shown to the model. */
  photoFileId?: string;
  /** Sound with no words of the person's alongside: nothing here a model could answer. */
  unheard?: true;
  /** A document not read with no words of the person's alongside: the fixed words that answer it. */
  unreadReply?: string;
}

/**
 * Describes a Telegram message; null for service messages with nothing the person said. A
 * document is described as read unless `notRead` says why it was not.
 */
export function describeMessage(message: TelegramMessage, notRead?: NotRead): DescribedMessage | null {
  const caption = message.caption?.trim() || undefined;
  const withCaption = (label: string) => (caption ? `${label} ${caption}` : label);
  if (message.text !== undefined) return { text: message.text };
  if (message.photo && message.photo.length > 0) {
    const largest = message.photo.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
    return {
      text: caption ?? "[photo]",
      media: { kind: "photo", ...(caption ? { caption } : {}) },
      photoFileId: largest.file_id,
    };
  }
  if (message.voice) {
    return {
      text: withCaption(
        `[voice note, ${message.voice.duration} s — not heard: voice notes can't be listened to yet]`,
      ),
      media: { kind: "voice", durationSeconds: message.voice.duration, ...(caption ? { caption } : {}) },
      ...(caption ? {} : { unheard: true }),
    };
  }
  if (message.audio) {
    const title = [message.audio.performer, message.audio.title].filter(Boolean).join(" – ");
    return {
      text: withCaption(`[audio${title ? `: ${title}` : ""} — not heard: audio can't be listened to yet]`),
      media: { kind: "audio", ...(caption ? { caption } : {}) },
      ...(caption ? {} : { unheard: true }),
    };
  }
  if (message.sticker) {
    return {
      text: message.sticker.emoji ?? "[sticker]",
      media: { kind: "sticker", ...(message.sticker.emoji ? { emoji: message.sticker.emoji } : {}) },
    };
  }
  if (message.document) {
    const name = message.document.file_name ?? "a file";
    return {
      text: withCaption(`[document: ${name}${notRead ? ` — ${notReadNote(notRead)}` : ""}]`),
      media: {
        kind: "document",
        fileName: name,
        ...(caption ? { caption } : {}),
        ...(notRead ? { notRead } : {}),
      },
      ...(notRead && !caption ? { unreadReply: notReadReply(name, notRead) } : {}),
    };
  }
  if (message.venue) {
    const { title, address, location } = message.venue;
    return {
      text: `[location: ${title}, ${address}]`,
      media: {
        kind: "location",
        latitude: location.latitude,
        longitude: location.longitude,
        place: `${title}, ${address}`,
      },
    };
  }
  if (message.location) {
    const { latitude, longitude } = message.location;
    return {
      text: `[location: ${latitude.toFixed(5)}, ${longitude.toFixed(5)}]`,
      media: { kind: "location", latitude, longitude },
    };
  }
  if (message.video || message.video_note || message.animation) {
    return { text: withCaption("[video]"), media: { kind: "video", ...(caption ? { caption } : {}) } };
  }
  if (message.contact || message.poll || message.dice)
    return { text: "[something Telegram-specific]", media: { kind: "other" } };
  return null;
}

/** The image types the model accepts, by file extension. */
export function imageMediaType(filePath: string): NonNullable<IncomingInput["image"]>["mediaType"] | null {
  const extension = filePath.toLowerCase().split(".").at(-1);
  if (extension === "jpg" || extension === "jpeg") return "image/jpeg";
  if (extension === "png") return "image/png";
  if (extension === "gif") return "image/gif";
  if (extension === "webp") return "image/webp";
  return null;
}
