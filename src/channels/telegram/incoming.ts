import type { Message as TelegramMessage } from "grammy/types";
import type { Media } from "../../core/message.ts";
import type { IncomingInput } from "../../core/port.ts";
import { type NotHeard, unheardSoundText } from "../../core/sound.ts";
import { type NotRead, notReadNote, notReadReply } from "./documents.ts";
import { soundOf } from "./sounds.ts";

/**
 * What the person sent, in words the companion and the log can hold. Every kind of message
 * becomes text the model can read — a sticker its emoji, a document its name, a location a
 * place — so nothing the person sends is silently dropped. A caption is part of that text and
 * nowhere else the model looks (media.caption is kept as data only). A voice note, an audio
 * file or a round video note is labelled with its length ("[voice note, 0:42]") until the reply
 * turn hears it (its transcript then becomes the text), or says why it was not heard; with no
 * transcription service set up it is not heard (`off`), and a video note is a video. A document
 * the channel could not read says why, and without a caption carries its fixed answer
 * (`unreadReply`).
 */
export interface DescribedMessage {
  text: string;
  media?: Media;
  /** The largest size of a photo, to be fetched and shown to the model. */
  photoFileId?: string;
  /** A document not read with no words of the person's alongside: the fixed words that answer it. */
  unreadReply?: string;
}

/** What the channel already knows about a message beyond Telegram's fields: from reading it, or from the log (an edit). */
export interface KnownAbout {
  /** Why its document was not read. */
  notRead?: NotRead;
  /** Why its sound is not heard (`off`: no transcription service is set up); absent while it waits to be heard. */
  notHeard?: NotHeard;
  /** Its sound's transcript, once heard: the text stays the transcript when its caption is edited. */
  transcript?: string;
}

/**
 * Describes a Telegram message; null for service messages with nothing the person said. A
 * document is described as read, and a sound as waiting to be heard, unless `known` says otherwise.
 */
export function describeMessage(message: TelegramMessage, known: KnownAbout = {}): DescribedMessage | null {
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
  const sound = soundOf(message);
  // Unheard, a round video note is a video like any other, as it always was.
  if (sound && !(sound.kind === "video" && known.notHeard === "off")) {
    const media: Media = {
      kind: sound.kind,
      durationSeconds: sound.durationSeconds,
      ...(sound.title ? { fileName: sound.title } : {}),
      ...(caption ? { caption } : {}),
      ...(known.transcript !== undefined
        ? { transcribed: true as const }
        : known.notHeard
          ? { notHeard: known.notHeard }
          : {}),
    };
    return { text: known.transcript ?? unheardSoundText(media), media };
  }
  if (message.sticker) {
    return {
      text: message.sticker.emoji ?? "[sticker]",
      media: { kind: "sticker", ...(message.sticker.emoji ? { emoji: message.sticker.emoji } : {}) },
    };
  }
  if (message.document) {
    const name = message.document.file_name ?? "a file";
    const notRead = known.notRead;
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
