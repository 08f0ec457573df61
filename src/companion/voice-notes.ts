import { pendingMessages } from "../conversation/pending-messages.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { Media, Message } from "../core/message.ts";
import {
  awaitsHearing,
  type NotHeard,
  SOUND_LIMITS,
  soundFormatOfFile,
  unheardSoundText,
  wasNotHeard,
} from "../core/sound.ts";
import { TranscriptionError } from "../model/transcription.ts";
import type { SentFiles } from "../store/sent-files.ts";
import type { TurnContext } from "./turn-context.ts";

/**
 * The person's voice notes (and audio files, and round video notes), heard as part of the reply
 * turn: the transcript is the message. A sound is logged as it arrives, kept under files/; the
 * turn transcribes every pending one before its prompt is built and writes the words onto the
 * log entry (text, `media.transcribed`), so awareness, reflection, /memory and /forget read them
 * as text and a crash before that write only means transcribing again after the restart. A
 * sound that cannot be heard says why on its entry (`media.notHeard`): on its own it gets fixed
 * words asking to type it, with no model call (unheardReply); beside words of the person's the
 * model answers those and is told. Its file is deleted after the keeping time (forgetOldSounds).
 */

/** What a sound on its own gets when no transcription service is set up (media.notHeard `off`). */
export const UNHEARD_REPLY =
  "I can't listen to voice notes or audio yet, so I didn't hear that one. Could you type it for me?";

/** Said after UNHEARD_REPLY at most once a day: how the owner, who runs presence, turns hearing on. */
export const HOW_TO_HEAR =
  "(To have me hear them, set PRESENCE_TRANSCRIBE_URL to a transcription service: the README's “Voice notes” says how, and a local one keeps the sound on your computer.)";

const DAY_MS = 86_400_000;

/**
 * Hears every pending sound not heard yet, oldest first, writing each transcript (or why it was
 * not heard) onto its log entry; "typing…" shows meanwhile. Sounds that arrived while it listened
 * are heard too. Returns the pending messages as they are logged now.
 */
export async function hearPending(context: TurnContext): Promise<Message[]> {
  for (;;) {
    const pending = pendingMessages(context.log.recent(), context.clock.now());
    const waiting = pending.filter((message) => awaitsHearing(message.media));
    if (waiting.length === 0) return pending;
    const stopWorking = context.port.showWorking?.();
    try {
      for (const message of waiting) await hear(context, message, message.media as Media);
    } finally {
      stopWorking?.();
    }
  }
}

/** Transcribes one kept sound and writes what came of it onto its entry; the process log names the cause of a failure, never the sound or its words. */
async function hear(context: TurnContext, message: Message, media: Media): Promise<void> {
  const { transcriber, files, clock, logger } = context;
  if (!transcriber) {
    // Kept while a service was set up, and it no longer is.
    await markNotHeard(context, message, media, "off");
    return;
  }
  const stored = media.stored as string;
  const format = soundFormatOfFile(stored);
  const kept = format === null ? null : await files.read(stored);
  if (format === null || kept === null) {
    logger.warn({ messageId: message.id }, "voice note not heard: its sound is no longer kept");
    await markNotHeard(context, message, media, "gone");
    return;
  }
  const started = clock.now().getTime();
  let words: string;
  try {
    words = await transcriber.transcribe({
      bytes: kept.bytes,
      format,
      durationSeconds: media.durationSeconds,
    });
  } catch (error) {
    if (!(error instanceof TranscriptionError)) throw error;
    logger.warn(
      {
        messageId: message.id,
        cause: error.failure,
        ...(error.status !== undefined ? { status: error.status } : {}),
        ...(error.setting ? { setting: error.setting } : {}),
        ms: clock.now().getTime() - started,
      },
      `voice note not heard: ${error.message}`,
    );
    await markNotHeard(context, message, media, notHeardFor(error));
    return;
  }
  const ms = clock.now().getTime() - started;
  if (words === "") {
    logger.warn({ messageId: message.id, ms }, "voice note not heard: the service made out no words");
    await markNotHeard(context, message, media, "empty");
    return;
  }
  // Not the person's edit: the words they said, written where the label was.
  await context.log.update(
    message.id,
    { text: words, media: { ...media, transcribed: true } },
    { edit: false },
  );
  logger.info({ messageId: message.id, seconds: media.durationSeconds, ms }, "voice note transcribed");
}

/** Writes onto the entry that its sound was not heard and why, in its text too: the model reads it there. */
async function markNotHeard(
  context: TurnContext,
  message: Message,
  media: Media,
  reason: NotHeard,
): Promise<void> {
  const marked: Media = { ...media, notHeard: reason };
  await context.log.update(message.id, { text: unheardSoundText(marked), media: marked }, { edit: false });
}

/** What the person is told a failure was: too large, the service refused it, failed, took too long, or could not be reached. */
function notHeardFor(error: TranscriptionError): NotHeard {
  switch (error.failure) {
    case "too-large":
      return "size";
    case "timeout":
      return "timeout";
    case "unreachable":
      return "unreachable";
    case "answer":
      return "failed";
    case "status": {
      const status = error.status ?? 500;
      return status >= 500 || status === 408 || status === 429 ? "failed" : "refused";
    }
  }
}

/**
 * Whether everything waiting is sound that was not heard, with no words of the person's beside
 * it (a caption is words): nothing a model could answer, so fixed words do (unheardReply).
 */
export function onlyUnheard(pending: readonly Message[]): boolean {
  return pending.length > 0 && pending.every((m) => wasNotHeard(m.media) && !m.media?.caption);
}

/**
 * The fixed words for sounds on their own that were not heard, by why the newest was not: what
 * happened and to type it instead. Where no transcription service is set up, the line on how to
 * set one up follows, unless it was said in the last day (`recent` is the log's recent window).
 */
export function unheardReply(unheard: readonly Message[], recent: readonly Message[], now: Date): string {
  const reason = unheard.at(-1)?.media?.notHeard ?? "failed";
  const words = askToType(reason, unheard.length > 1);
  if (reason !== "off") return words;
  const saidToday = recent.some(
    (m) =>
      m.role === "assistant" && m.text.includes(HOW_TO_HEAR) && now.getTime() - Date.parse(m.ts) < DAY_MS,
  );
  return saidToday ? words : `${words}\n\n${HOW_TO_HEAR}`;
}

/** One short line asking to type what could not be heard, in the singular or for several. */
function askToType(reason: NotHeard, several: boolean): string {
  const that = several ? "those" : "that one";
  const it = several ? "them" : "it";
  switch (reason) {
    case "off":
      return several
        ? "I can't listen to voice notes or audio yet, so I didn't hear those. Could you type them for me?"
        : UNHEARD_REPLY;
    case "size":
    case "length":
      return `${several ? "Those are" : "That one is"} too long for me to listen to (I can take up to ${SOUND_LIMITS.seconds / 60} minutes and ${SOUND_LIMITS.bytes / 1024 / 1024} MB). Could you type ${it}, or send ${it} in shorter parts?`;
    case "type":
      return `I can't listen to that kind of audio file. Could you type what ${several ? "they say" : "it says"}?`;
    case "empty":
      return `I couldn't make out any words in ${that}. Could you type ${it} for me?`;
    default:
      return `I couldn't listen to ${that} just now. Could you type ${it} for me?`;
  }
}

/**
 * Deletes the sounds kept longer than `keepDays` (PRESENCE_VOICE_KEEP_DAYS): their words are in
 * the log, and the sound itself is only kept to be heard again after a crash and for /export.
 * Run at start and with each heartbeat tick; a failure is logged and tried again then.
 */
export async function forgetOldSounds(
  deps: { files: SentFiles; clock: Clock; logger: Logger },
  keepDays: number,
): Promise<void> {
  try {
    const removed = await deps.files.removeSoundsKeptBefore(
      new Date(deps.clock.now().getTime() - keepDays * DAY_MS),
    );
    if (removed > 0)
      deps.logger.info({ removed, keepDays }, "voice notes' sound past its keeping time deleted");
  } catch (error) {
    deps.logger.warn({ err: error }, "could not delete voice notes' sound past its keeping time");
  }
}
