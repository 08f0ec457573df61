import type { Message as TelegramMessage } from "grammy/types";
import { type NotHeard, SOUND_LIMITS, type SoundFormat } from "../../core/sound.ts";

/**
 * Sounds the person sends on Telegram, heard rather than named when a transcription service is
 * set up: a voice note (OGG/Opus, which Telegram names `.oga`), an audio file sent as audio, a
 * round video note (MP4, its sound transcribed when the service takes video). Each is checked
 * against the limits (core/sound.ts) by what Telegram announces before anything is downloaded.
 */

/** A sound a Telegram message carries, with what the bot needs to download it. */
export interface TelegramSound {
  kind: "voice" | "audio" | "video";
  fileId: string;
  /** The size Telegram announces, when it does. */
  fileSize: number | undefined;
  durationSeconds: number;
  /** The format it is sent for transcription as, or null when no service takes such a file. */
  format: SoundFormat | null;
  /** An audio file's title ("performer – title") or file name. */
  title?: string;
}

/** The sound in a message: its voice note, audio file or video note; null for anything else. */
export function soundOf(message: TelegramMessage): TelegramSound | null {
  if (message.voice) {
    const { file_id, file_size, duration, mime_type } = message.voice;
    // The app records OGG/Opus; another type is taken by its mime type when a service knows it.
    return {
      kind: "voice",
      fileId: file_id,
      fileSize: file_size,
      durationSeconds: duration,
      format: mime_type ? soundFormat(mime_type, undefined) : "ogg",
    };
  }
  if (message.audio) {
    const { file_id, file_size, duration, mime_type, file_name, performer, title } = message.audio;
    const named = [performer, title].filter(Boolean).join(" – ") || file_name;
    return {
      kind: "audio",
      fileId: file_id,
      fileSize: file_size,
      durationSeconds: duration,
      format: soundFormat(mime_type, file_name),
      ...(named ? { title: named } : {}),
    };
  }
  if (message.video_note) {
    const { file_id, file_size, duration } = message.video_note;
    return { kind: "video", fileId: file_id, fileSize: file_size, durationSeconds: duration, format: "mp4" };
  }
  return null;
}

/** Mime types of sound by the format they are sent as. */
const MIME_FORMATS: Record<string, SoundFormat> = {
  "audio/ogg": "ogg",
  "audio/opus": "ogg",
  "application/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/mpga": "mp3",
  "audio/mp4": "m4a",
  "audio/m4a": "m4a",
  "audio/x-m4a": "m4a",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/vnd.wave": "wav",
  "audio/flac": "flac",
  "audio/x-flac": "flac",
  "audio/webm": "webm",
};

/** File name endings of sound by the format they are sent as (`.oga` and `.opus` are OGG). */
const ENDING_FORMATS: Record<string, SoundFormat> = {
  ogg: "ogg",
  oga: "ogg",
  opus: "ogg",
  mp3: "mp3",
  mpga: "mp3",
  mpeg: "mp3",
  m4a: "m4a",
  mp4: "m4a",
  wav: "wav",
  flac: "flac",
  webm: "webm",
};

/** The format an audio file is sent as, by its mime type, else its file name; null when no service takes it (AAC, AMR, WMA…). */
export function soundFormat(mimeType: string | undefined, fileName: string | undefined): SoundFormat | null {
  const mime = mimeType?.toLowerCase().split(";")[0]?.trim();
  const byMime = mime === undefined ? undefined : MIME_FORMATS[mime];
  if (byMime) return byMime;
  const ending = fileName?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  return (ending === undefined ? undefined : ENDING_FORMATS[ending]) ?? null;
}

/** Why a sound is not heard before downloading it (its format, its length, its announced size), or null to download it. */
export function notHeardBeforeDownload(sound: TelegramSound): NotHeard | null {
  if (sound.format === null) return "type";
  if (sound.durationSeconds > SOUND_LIMITS.seconds) return "length";
  return (sound.fileSize ?? 0) > SOUND_LIMITS.bytes ? "size" : null;
}
