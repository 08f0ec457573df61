import type { Media } from "./message.ts";

/**
 * Sound the person sends (a voice note, an audio file, a round video note), as every room
 * shares it: the formats a transcription service takes and the ending and type each is sent
 * with, the limits, and the words a sound is labelled with for the model, before and after it
 * was heard. The channel decides a sound's format, the store keeps it by its ending, the
 * transcription client sends it, the companion writes what came of it onto the log.
 */

/**
 * The formats OpenAI-compatible transcription endpoints accept, with the file ending and content
 * type each is sent with. Telegram's voice notes are OGG/Opus named `.oga`, which several
 * services refuse: they go as `.ogg`. A round video note is MP4 with video; `m4a` is audio only.
 */
export const SOUND_FORMATS = {
  ogg: { ending: ".ogg", contentType: "audio/ogg" },
  mp3: { ending: ".mp3", contentType: "audio/mpeg" },
  m4a: { ending: ".m4a", contentType: "audio/mp4" },
  mp4: { ending: ".mp4", contentType: "video/mp4" },
  wav: { ending: ".wav", contentType: "audio/wav" },
  flac: { ending: ".flac", contentType: "audio/flac" },
  webm: { ending: ".webm", contentType: "audio/webm" },
} as const satisfies Record<string, { ending: string; contentType: string }>;
export type SoundFormat = keyof typeof SOUND_FORMATS;

/** The format a kept file's name ends in, or null when it is no sound's. */
export function soundFormatOfFile(name: string): SoundFormat | null {
  const found = Object.entries(SOUND_FORMATS).find(([, format]) => name.endsWith(format.ending));
  return found ? (found[0] as SoundFormat) : null;
}

/**
 * What is sent for transcription at most. Telegram lets a bot download files up to 20 MB (the
 * hosted services take 25 MB); ten minutes keep one turn's wait, and its cost, bounded, while
 * a voice note is rarely longer than two. The README states both.
 */
export const SOUND_LIMITS = { bytes: 20 * 1024 * 1024, seconds: 10 * 60 } as const;

/**
 * How many days a sound is kept after it arrived unless PRESENCE_VOICE_KEEP_DAYS says otherwise:
 * its words are in the log once heard; the sound itself serves /export and a second listen.
 */
export const DEFAULT_SOUND_KEEP_DAYS = 30;

/** The kinds of media that are sound when they carry it: a voice note, an audio file, a round video note. */
const SOUND_KINDS: ReadonlySet<Media["kind"]> = new Set(["voice", "audio", "video"]);

/**
 * Whether the message's sound is waiting to be heard: kept, or on its way (media.stored names
 * where; media.downloading while it downloads), and neither transcribed nor marked not heard. A
 * video that is not a video note has nothing kept.
 */
export function awaitsHearing(media: Media | undefined): boolean {
  return (
    media !== undefined &&
    SOUND_KINDS.has(media.kind) &&
    media.stored !== undefined &&
    media.transcribed !== true &&
    media.notHeard === undefined
  );
}

/** Whether the message is a sound that could not be heard (media.notHeard says why). */
export function wasNotHeard(media: Media | undefined): boolean {
  return media !== undefined && SOUND_KINDS.has(media.kind) && media.notHeard !== undefined;
}

/** Why a sound was not heard (media.notHeard). */
export type NotHeard = NonNullable<Media["notHeard"]>;

/** "0:42", "3:05", "1:02:03": a sound's length the way a player shows it. */
export function playerDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = String(whole % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
}

/**
 * What a sound is called inside its `[…]` label, with its length: "voice note, 0:42",
 * "audio: Nina Simone – Feeling Good, 2:53", "video note, 0:12".
 */
export function soundLabel(media: Media): string {
  const name =
    media.kind === "voice"
      ? "voice note"
      : media.kind === "video"
        ? "video note"
        : `audio${media.fileName ? `: ${media.fileName}` : ""}`;
  return media.durationSeconds === undefined ? name : `${name}, ${playerDuration(media.durationSeconds)}`;
}

/** Why a sound was not heard, inside its label: the model reads it too. */
export function notHeardNote(reason: NotHeard): string {
  switch (reason) {
    case "off":
      return "not heard: voice notes and audio can't be listened to yet";
    case "type":
      return "not heard: this kind of audio file can't be transcribed";
    case "size":
      return `not heard: larger than ${SOUND_LIMITS.bytes / 1024 / 1024} MB, too large to transcribe`;
    case "length":
      return `not heard: longer than ${SOUND_LIMITS.seconds / 60} minutes, too long to transcribe`;
    case "download":
      return "not heard: it could not be downloaded";
    case "refused":
      return "not heard: the transcription service refused it";
    case "failed":
      return "not heard: the transcription service failed";
    case "timeout":
      return "not heard: transcribing it took too long";
    case "unreachable":
      return "not heard: the transcription service could not be reached";
    case "video":
      return "not heard: the transcription service does not take video notes";
    case "empty":
      return "not heard: no words could be made out";
    case "gone":
      return "not heard: its kept sound was deleted or could not be read before it was transcribed";
  }
}

/**
 * A sound's text in the log while it is not heard: its label, why not when it could not be,
 * then the caption (a caption is part of the text, once). Once heard, the text is the transcript
 * and the label is added where it is read (core/text.ts messageAsRead).
 */
export function unheardSoundText(media: Media): string {
  const label = `[${soundLabel(media)}${media.notHeard ? ` — ${notHeardNote(media.notHeard)}` : ""}]`;
  return media.caption ? `${label} ${media.caption}` : label;
}
