import { pendingMessages } from "../conversation/pending-messages.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { Media, Message } from "../core/message.ts";
import type { DownloadedSound, IncomingInput } from "../core/port.ts";
import {
  awaitsHearing,
  type NotHeard,
  SOUND_LIMITS,
  soundFormatOfFile,
  unheardSoundText,
  wasNotHeard,
} from "../core/sound.ts";
import { TranscriptionError } from "../model/transcription.ts";
import type { MessageLog } from "../store/messages.ts";
import type { KeptFile, SentFiles } from "../store/sent-files.ts";
import type { TurnContext } from "./turn-context.ts";

/**
 * The person's voice notes (and audio files, and round video notes), heard as part of the reply
 * turn: the transcript is the message. A sound is logged as it arrives, before anything else,
 * then downloaded and kept under files/ (keepArrivingSound); the turn waits for that, transcribes
 * every pending sound before its prompt is built and writes the words onto the log entry (text,
 * `media.transcribed`), so awareness, reflection, /memory and /forget read them as text and a
 * crash before that write only means transcribing again after the restart. A sound that cannot
 * be heard says why on its entry (`media.notHeard`), whatever the cause, so one bad note never
 * holds up the turn: on its own it gets fixed words asking to type it, with no model call
 * (unheardReply); beside words of the person's the model answers those and is told. Its file is
 * deleted after the keeping time, unless its message still waits to be heard (forgetOldSounds).
 */

/** What a sound on its own gets when no transcription service is set up (media.notHeard `off`). */
export const UNHEARD_REPLY =
  "I can't listen to voice notes or audio yet, so I didn't hear that one. Could you type it for me?";

/** Said after UNHEARD_REPLY at most once a day: how the owner, who runs presence, turns hearing on. */
export const HOW_TO_HEAR =
  "(To have me hear them, set PRESENCE_TRANSCRIBE_URL to a transcription service: the README's “Voice notes” says how, and a local one keeps the sound on your computer.)";

const DAY_MS = 86_400_000;

/**
 * Downloads a sound whose message was just logged (IncomingInput.sound), keeps it where its
 * entry says (media.stored) and drops `media.downloading`; or writes onto the entry why it was
 * not heard (too large once asked for, the download failed). Runs outside the turn lock: the
 * reply turn waits for it (TurnContext.soundArriving).
 */
export async function keepArrivingSound(
  deps: { files: SentFiles; clock: Clock; log: Pick<MessageLog, "update">; logger: Logger },
  messageId: string,
  sound: NonNullable<IncomingInput["sound"]>,
): Promise<void> {
  const { files, clock, log, logger } = deps;
  let downloaded: DownloadedSound;
  try {
    downloaded = await sound.download();
  } catch (error) {
    // The channel says why itself; this is what it did not foresee. Its name only: a download's error may carry its URL.
    logger.warn(
      { messageId, error: error instanceof Error ? error.name : typeof error },
      "voice note not heard: its download failed",
    );
    downloaded = { notHeard: "download" };
  }
  if ("notHeard" in downloaded) {
    await markNotHeard(log, messageId, downloaded.notHeard);
    return;
  }
  let stored: string;
  try {
    stored = await files.keep(sound.name, sound.format, downloaded.bytes, clock.now());
  } catch (error) {
    logger.error({ messageId, err: error }, "voice note not heard: its sound could not be kept");
    await markNotHeard(log, messageId, "download");
    return;
  }
  const logged = await log.update(messageId, (current) => ({ media: arrived(current.media) }));
  // Its message is gone (deleted while it downloaded): so is the sound.
  if (logged === null) await files.remove(stored);
}

/**
 * Hears every pending sound not heard yet, oldest first, writing each transcript (or why it was
 * not heard) onto its log entry; "typing…" shows meanwhile. Sounds still downloading are waited
 * for, and sounds that arrived while it listened are heard too. Returns the pending messages as
 * they are logged now.
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

/**
 * Transcribes one kept sound and writes what came of it onto its entry. Whatever goes wrong
 * with this one note (its file unreadable, the service, a bug in the client) is written onto it
 * as why it was not heard, so the turn goes on; the process log names the cause, never the sound
 * or its words. Only a failure to write the log itself reaches the turn.
 */
async function hear(context: TurnContext, message: Message, media: Media): Promise<void> {
  const { transcriber, files, clock, logger, log } = context;
  const stored = media.stored as string;
  if (media.downloading) {
    const arriving = context.soundArriving(stored);
    // Heard in the next round, once it is kept (or marked not heard).
    if (arriving) return arriving;
  }
  if (!transcriber) {
    // Kept while a service was set up, and it no longer is.
    await markNotHeard(log, message.id, "off");
    return;
  }
  const format = soundFormatOfFile(stored);
  let kept: KeptFile | null;
  try {
    kept = format === null ? null : await files.read(stored);
  } catch (error) {
    logger.warn(
      {
        messageId: message.id,
        cause: "unreadable",
        error: error instanceof Error ? error.message : String(error),
      },
      "voice note not heard: its kept sound could not be read",
    );
    await markNotHeard(log, message.id, "gone");
    return;
  }
  if (format === null || kept === null) {
    if (media.downloading) {
      // Logged, and presence stopped before its sound was kept: nothing of it to hear.
      logger.warn({ messageId: message.id }, "voice note not heard: presence stopped while downloading it");
      await markNotHeard(log, message.id, "download");
    } else {
      logger.warn({ messageId: message.id }, "voice note not heard: its sound is no longer kept");
      await markNotHeard(log, message.id, "gone");
    }
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
    const ms = clock.now().getTime() - started;
    if (!(error instanceof TranscriptionError)) {
      logger.error({ messageId: message.id, err: error, ms }, "voice note not heard: transcribing it failed");
      await markNotHeard(log, message.id, "failed");
      return;
    }
    logger.warn(
      {
        messageId: message.id,
        cause: error.failure,
        ...(error.status !== undefined ? { status: error.status } : {}),
        ...(error.setting ? { setting: error.setting } : {}),
        ms,
      },
      `voice note not heard: ${error.message}`,
    );
    await markNotHeard(log, message.id, notHeardFor(error, media), error.setting);
    return;
  }
  const ms = clock.now().getTime() - started;
  if (words === "") {
    logger.warn({ messageId: message.id, ms }, "voice note not heard: the service made out no words");
    await markNotHeard(log, message.id, "empty");
    return;
  }
  // Not the person's edit: the words they said, written where the label was, onto the entry as
  // it is now (its caption may have been edited while it was heard).
  await log.update(
    message.id,
    (current) => ({ text: words, media: { ...arrived(current.media), transcribed: true } }),
    { edit: false },
  );
  logger.info({ messageId: message.id, seconds: media.durationSeconds, ms }, "voice note transcribed");
}

/**
 * Writes onto the entry that its sound was not heard and why (and the setting the failure points
 * at), in its text too: the model reads it there. Merged onto the entry as it is when written.
 */
async function markNotHeard(
  log: Pick<MessageLog, "update">,
  messageId: string,
  reason: NotHeard,
  setting?: string,
): Promise<void> {
  await log.update(
    messageId,
    (current) => {
      const marked: Media = {
        ...arrived(current.media),
        notHeard: reason,
        ...(setting ? { notHeardSetting: setting } : {}),
      };
      return { text: unheardSoundText(marked), media: marked };
    },
    { edit: false },
  );
}

/** A sound's media once its download is over, however it went. */
function arrived(media: Media | undefined): Media {
  const { downloading: _, ...rest } = media ?? { kind: "voice" };
  return rest;
}

/**
 * What the person is told a failure was: too large, the service refused it (or, for a round video
 * note, took no video), failed, took too long, or could not be reached.
 */
function notHeardFor(error: TranscriptionError, media: Media): NotHeard {
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
      if (status >= 500 || status === 408 || status === 429) return "failed";
      // A refusal that names no setting, of a video note: a service that takes sound only.
      return media.kind === "video" && error.setting === undefined ? "video" : "refused";
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
 * happened and to type it instead. A line for the owner follows, unless it was said in the last
 * day (`recent` is the log's recent window, so a restart does not say it again): where no
 * transcription service is set up, how to set one up (HOW_TO_HEAR); where the service's failure
 * points at a setting, that setting (settingLine), so a wrong one does not read as a glitch.
 */
export function unheardReply(unheard: readonly Message[], recent: readonly Message[], now: Date): string {
  const newest = unheard.at(-1)?.media;
  const reason = newest?.notHeard ?? "failed";
  const words = askToType(reason, unheard.length > 1);
  const forOwner =
    reason === "off"
      ? HOW_TO_HEAR
      : newest?.notHeardSetting
        ? settingLine(newest.notHeardSetting, reason)
        : undefined;
  if (forOwner === undefined) return words;
  const saidToday = recent.some(
    (m) => m.role === "assistant" && m.text.includes(forOwner) && now.getTime() - Date.parse(m.ts) < DAY_MS,
  );
  return saidToday ? words : `${words}\n\n${forOwner}`;
}

/**
 * The line naming the setting a failure points at (TranscriptionError.setting). A service that
 * took too long or could not be reached may be a passing thing, so that says what to look at if
 * it keeps happening; a refused key, a wrong address or model, an answer that is no transcript,
 * does not pass on its own.
 */
export function settingLine(setting: string, reason: NotHeard): string {
  return reason === "timeout" || reason === "unreachable"
    ? `(If this keeps happening, look at ${setting}: the README's “Voice notes” says how it is set.)`
    : `(This won't pass on its own: the transcription service points at ${setting}. The README's “Voice notes” says how it is set.)`;
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
    case "video":
      return `The transcription service I listen with doesn't take video notes, so I didn't hear ${that}. Could you send ${it} as a voice note, or type ${it}?`;
    case "refused":
      return `The transcription service turned ${that} away, so I couldn't listen to ${it}. Could you type ${it} for me?`;
    case "empty":
      return `I couldn't make out any words in ${that}. Could you type ${it} for me?`;
    default:
      return `I couldn't listen to ${that} just now. Could you type ${it} for me?`;
  }
}

/**
 * Deletes the sounds kept longer than `keepDays` (PRESENCE_VOICE_KEEP_DAYS): their words are in
 * the log, and the sound itself is only kept to be heard again after a crash and for /export. A
 * sound whose message still waits to be heard is spared, however old (presence was down, or the
 * keeping time is short). Run at start and with each heartbeat tick, under the turn lock; a
 * failure is logged and tried again then.
 */
export async function forgetOldSounds(
  deps: { files: SentFiles; clock: Clock; logger: Logger; log: Pick<MessageLog, "recent"> },
  keepDays: number,
): Promise<void> {
  try {
    const waiting = deps.log
      .recent()
      .flatMap((m) => (awaitsHearing(m.media) && m.media?.stored ? [m.media.stored] : []));
    const removed = await deps.files.removeSoundsKeptBefore(
      new Date(deps.clock.now().getTime() - keepDays * DAY_MS),
      new Set(waiting),
    );
    if (removed > 0)
      deps.logger.info({ removed, keepDays }, "voice notes' sound past its keeping time deleted");
  } catch (error) {
    deps.logger.warn({ err: error }, "could not delete voice notes' sound past its keeping time");
  }
}
