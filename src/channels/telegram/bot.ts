import { type Bot, type Context, GrammyError } from "grammy";
import type { Document, Message as TelegramMessage, UserFromGetMe } from "grammy/types";
import type { ReplySettle, SettleTimes } from "../../companion/companion.ts";
import type { Clock, Timers } from "../../core/clock.ts";
import { InFlight, settledWithin } from "../../core/in-flight.ts";
import type { Logger } from "../../core/log.ts";
import type { Media, Message } from "../../core/message.ts";
import { type IncomingInput, RecipientBlockedError } from "../../core/port.ts";
import { type NotHeard, SOUND_LIMITS, type SoundFormat } from "../../core/sound.ts";
import type { MessageLog } from "../../store/messages.ts";
import type { ChannelCompanion } from "../channel.ts";
import type { CommandHandlers } from "../command-handlers.ts";
import { BOT_COMMANDS, commandOf, type SlashCommand } from "../commands.ts";
import type { TelegramConnection } from "./connection.ts";
import { checkDocument, documentKind, keptName, type NotRead, refusedBeforeDownload } from "./documents.ts";
import { DEFAULT_TELEGRAM_CONNECT_TIMEOUT_MS, firstContact } from "./first-contact.ts";
import { describeMessage, imageMediaType, type KnownAbout } from "./incoming.ts";
import type { TelegramOutbound } from "./outbound.ts";
import { notHeardBeforeDownload, soundOf, type TelegramSound } from "./sounds.ts";
import type { TelegramUpdatesState } from "./updates-state.ts";

export interface TelegramChannelOptions {
  /** The Bot API client and the outbound port the companion was built over. */
  connection: TelegramConnection;
  companion: ChannelCompanion;
  /** Read only: whether an update or a Telegram message is in the log already (after a restart). */
  messages: Pick<MessageLog, "hasUpdate" | "findByExternal">;
  /** Which updates were handled before a restart, and which strangers were answered lately. */
  updates: TelegramUpdatesState;
  commands: CommandHandlers;
  clock: Clock;
  /** What stop()'s bounds wait on. */
  timers: Timers;
  logger: Logger;
  /**
   * How long after the person's latest message the reply waits for more (REPLY_SETTLE_MS by
   * default), so a burst of messages gets one answer; tests set it lower.
   */
  replySettleMs?: number;
  /** The longest a burst's reply waits from its first message (REPLY_SETTLE_MAX_MS by default). */
  replySettleMaxMs?: number;
  /** Something went wrong that restarting fixes better than carrying on (e.g. the disk). */
  onFatal(error: unknown): void;
}

/** How long stopping waits for Telegram to confirm the last handled update. */
export const CONFIRM_OFFSET_MS = 2_000;
/**
 * On Telegram people often send a thought as several short messages a moment apart: the reply
 * waits this long after the latest for another (the companion's settle, SettleTimes.pauseMs).
 */
export const REPLY_SETTLE_MS = 1_500;
/**
 * However many messages follow, the reply starts this long after the first unanswered one
 * (SettleTimes.maxMs).
 */
export const REPLY_SETTLE_MAX_MS = 5_000;
/** The model accepts images up to 5 MB; larger photos reach it as their caption only. */
const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** The one reply a stranger gets: no model, nothing logged, and their id for setting up their own. */
function strangerReply(userId: number): string {
  return `Hi! I'm a private companion that talks with one person only, so I can't chat with you here.\n\nYour Telegram id is ${userId}. If you are setting up your own, that's the number for TELEGRAM_OWNER_ID.`;
}

/** Failed to write the person's message down: the update must not be confirmed to Telegram. */
class NotPersistedError extends Error {
  override readonly name = "NotPersistedError";
}

/**
 * The companion on Telegram. Only the owner's private chat is heard; strangers get one fixed
 * reply an hour, groups nothing. Every update is handled before it is confirmed to Telegram (the
 * next getUpdates offset confirms it) and recorded as handled right after; an update recorded,
 * or a message the log already holds, is skipped when Telegram delivers it again after a
 * crash, so each is handled once (a command or a stranger's reply at most twice, if the
 * process dies in the instant between its answer and the record). Replies run outside the update
 * loop so messages that arrive while the companion thinks reach it and join the next turn.
 */
export class TelegramChannel {
  readonly bot: Bot;
  readonly outbound: TelegramOutbound;
  readonly #options: TelegramChannelOptions;
  readonly #connection: TelegramConnection;
  /** Replies started outside the update loop, which stop() waits for. */
  readonly #replies: InFlight;
  /** The companion's reply to a burst, once the person pauses (with "typing…" meanwhile). */
  readonly #settle: ReplySettle;
  #polling: Promise<void> | undefined;
  /** Set when an update could not be logged: from then on nothing may confirm it to Telegram. */
  #halted = false;

  constructor(options: TelegramChannelOptions) {
    this.#options = options;
    this.#replies = new InFlight((err: unknown) => {
      options.logger.error({ err }, "reply failed; it will be retried after a restart");
    });
    const times: SettleTimes = {
      pauseMs: options.replySettleMs ?? REPLY_SETTLE_MS,
      maxMs: options.replySettleMaxMs ?? REPLY_SETTLE_MAX_MS,
    };
    this.#settle = options.companion.settleReplies(times, (reply) => this.#replies.track(reply));
    this.#connection = options.connection;
    this.bot = options.connection.bot;
    this.outbound = options.connection.outbound;
    this.bot.use((ctx, next) => this.#once(ctx.update.update_id, next));
    this.bot.on(["message", "edited_message"], (ctx) => this.#route(ctx));
    this.bot.catch((error) => {
      if (error.error instanceof NotPersistedError) {
        this.#halted = true;
        options.onFatal(error.error);
        // Hold the update loop: its next getUpdates would confirm the update that was not logged.
        return new Promise<void>(() => {});
      }
      options.logger.error(
        { err: error.error, updateId: error.ctx.update.update_id },
        "update handling failed",
      );
    });
  }

  /**
   * Asks Telegram who the bot is, once: a rejected token becomes TelegramTokenRejectedError,
   * no answer within `timeoutMs` TelegramUnreachableError (see firstContact).
   */
  async verify(options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<UserFromGetMe> {
    if (!this.bot.isInited()) {
      this.bot.botInfo = await firstContact(this.#connection.token, {
        apiRoot: this.#connection.apiRoot,
        timeoutMs: options.timeoutMs ?? DEFAULT_TELEGRAM_CONNECT_TIMEOUT_MS,
        logger: this.#options.logger,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    }
    return this.bot.botInfo;
  }

  /**
   * Registers the command menu and starts long polling; resolves once polling runs. An aborted
   * `signal` (a stop before listening) keeps polling from starting.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const me = await this.verify();
    try {
      await this.bot.api.setMyCommands([...BOT_COMMANDS]);
    } catch (err) {
      this.#options.logger.warn({ err }, "could not register the command menu; commands still work");
    }
    signal?.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      let polling = false;
      this.#polling = this.bot
        .start({
          allowed_updates: ["message", "edited_message"],
          timeout: this.#connection.pollTimeoutSeconds,
          onStart: () => {
            polling = true;
            resolve();
          },
        })
        .catch((error: unknown) => {
          if (polling) this.#options.onFatal(error);
          else reject(error);
        });
    });
    this.#options.logger.info({ bot: me.username }, "listening on Telegram");
  }

  /**
   * Stops taking updates (confirming those handled, if Telegram answers within a moment, and
   * never one that could not be logged), then waits up to `graceMs` for replies in flight.
   */
  async stop(graceMs: number): Promise<void> {
    if (!this.#halted) {
      const stopping = this.bot.isRunning() ? this.bot.stop() : Promise.resolve();
      const polling = this.#polling ?? Promise.resolve();
      await settledWithin(Promise.allSettled([stopping, polling]), CONFIRM_OFFSET_MS, this.#options.timers);
    }
    this.#settle.flush();
    await this.#replies.settledWithin(graceMs, this.#options.timers);
  }

  async #once(updateId: number, handle: () => Promise<void>): Promise<void> {
    if (this.#options.updates.isHandled(updateId)) {
      this.#options.logger.info({ updateId }, "update already handled before a restart; skipped");
      return;
    }
    await handle();
    await this.#options.updates.markHandled(updateId);
  }

  async #route(ctx: Context): Promise<void> {
    const message = ctx.message ?? ctx.editedMessage;
    if (message?.chat.type !== "private" || !message.from) return;
    if (message.from.id !== this.#connection.ownerId) {
      if (ctx.message) await this.#answerStranger(message.from.id, message.chat.id);
      return;
    }
    if (ctx.editedMessage) {
      await this.#applyEdit(ctx.editedMessage);
      return;
    }
    const command = message.text ? commandOf(message.text) : null;
    if (command) {
      await this.#runCommand(command);
      return;
    }
    await this.#receive(ctx.update.update_id, message);
  }

  async #answerStranger(userId: number, chatId: number): Promise<void> {
    if (!(await this.#options.updates.claimStrangerReply(userId, this.#options.clock.now()))) return;
    this.#options.logger.info({ strangerId: userId }, "message from a stranger: fixed reply, nothing logged");
    await this.bot.api.sendMessage(chatId, strangerReply(userId)).catch((err: unknown) => {
      this.#options.logger.warn({ err }, "could not answer a stranger");
    });
  }

  async #applyEdit(edited: TelegramMessage): Promise<void> {
    // A document's or a sound's edited caption keeps what the log knows of it: why the document
    // was not read, the sound's transcript or why it was not heard, where its file is kept.
    const sound = soundOf(edited);
    const before =
      edited.document || sound
        ? await this.#options.messages.findByExternal("telegram", {
            chatId: edited.chat.id,
            messageId: edited.message_id,
          })
        : null;
    const media = before?.media;
    const described = describeMessage(edited, before ? knownFromLog(before) : {});
    if (!described) return;
    const editedAt = new Date((edited.edit_date ?? edited.date) * 1000).toISOString();
    const logged = await this.#options.companion.receiveEdit(
      "telegram",
      { chatId: edited.chat.id, messageId: edited.message_id },
      {
        text: described.text,
        editedAt,
        ...(sound && media && described.media
          ? { media: { ...withoutCaption(media), ...described.media } }
          : {}),
      },
    );
    if (logged) this.#options.logger.info({ messageId: logged.id }, "the person edited a message");
  }

  /**
   * Runs a command and sends its answer, locally: no model call, an unknown command included.
   * A command that fails (an export Telegram refuses, a full disk) is answered in words
   * instead of silence, and logged by its Telegram fields: the raw error of a document upload
   * carries the file, which must not reach the log.
   */
  async #runCommand(command: SlashCommand): Promise<void> {
    const { logger } = this.#options;
    const label = command.name ?? "unknown";
    logger.info({ command: label }, "command");
    try {
      const reply = await this.#options.commands.answer(command);
      if ("text" in reply) await this.outbound.send({ text: reply.text, kind: "notice" });
      else
        await this.outbound.sendDocument(
          reply.document.fileName,
          reply.document.contents,
          reply.document.caption,
        );
    } catch (error) {
      logger.error({ command: label, error: describeFailure(error) }, "command failed");
      if (error instanceof RecipientBlockedError) return;
      await this.outbound
        .send({ text: commandFailedText(command.name ?? command.typed, error), kind: "notice" })
        .catch((err: unknown) =>
          logger.warn({ error: describeFailure(err) }, "could not say the command failed"),
        );
    }
  }

  async #receive(updateId: number, message: TelegramMessage): Promise<void> {
    const { messages, companion, logger } = this.#options;
    if (messages.hasUpdate("telegram", updateId)) {
      logger.info({ updateId }, "message already logged before a restart; not logged again");
      const logged = await messages.findByExternal("telegram", {
        chatId: message.chat.id,
        messageId: message.message_id,
      });
      const fixed = logged?.media?.notRead
        ? describeMessage(message, { notRead: logged.media.notRead })?.unreadReply
        : undefined;
      // Nothing is downloaded again: a sound still waiting is heard by the reply recovery runs, and
      // one whose download the crash cut off is answered there as not heard.
      if (logged && fixed) await companion.answerFixed(logged, fixed);
      return;
    }
    // A document is downloaded before its message is logged (it is small, and read as it is
    // logged); a sound after (soundToKeep): the log, and the next message, must not wait for it.
    const read = message.document ? await this.#readDocument(message, message.document) : undefined;
    const sound = soundOf(message);
    const notHeard = sound ? this.#notHeardBeforeDownload(sound) : null;
    const described = describeMessage(message, {
      ...(read && "notRead" in read ? { notRead: read.notRead } : {}),
      ...(notHeard ? { notHeard } : {}),
    });
    if (!described) return;
    const input: IncomingInput = {
      text: described.text,
      channel: "telegram",
      ...(described.media ? { media: described.media } : {}),
      external: {
        chatId: message.chat.id,
        messageId: message.message_id,
        updateId,
        // Telegram's date (seconds): when it was sent, which a message waiting out a restart needs (reply-anchor.ts).
        sentAt: new Date(message.date * 1_000).toISOString(),
      },
      ...(read && "document" in read ? { document: read.document } : {}),
      ...(sound?.format && !notHeard ? { sound: this.#soundToKeep(message, sound, sound.format) } : {}),
    };
    if (described.photoFileId) {
      const image = await this.#downloadImage(described.photoFileId);
      if (image) input.image = image;
    }
    let logged: Message;
    try {
      logged = await companion.receive(input);
    } catch (error) {
      throw new NotPersistedError(`could not log the person's message: ${String(error)}`, { cause: error });
    }
    logger.info({ updateId, kind: described.media?.kind ?? "text" }, "message from the person");
    // A document it could not read gets fixed words, never the model's (Companion.answerFixed);
    // a sound is heard, or answered when it cannot be, by the reply turn the settle starts.
    const fixed = described.unreadReply;
    if (fixed && (await companion.answerFixed(logged, fixed)) === "answered") return;
    this.#settle.arrived();
  }

  async #downloadImage(fileId: string): Promise<IncomingInput["image"] | undefined> {
    try {
      const file = await this.bot.api.getFile(fileId);
      const mediaType = file.file_path ? imageMediaType(file.file_path) : null;
      if (!file.file_path || !mediaType || (file.file_size ?? 0) > MAX_IMAGE_BYTES) return undefined;
      const bytes = await this.#download(file.file_path);
      if (bytes.byteLength > MAX_IMAGE_BYTES) return undefined;
      return { mediaType, base64: bytes.toString("base64") };
    } catch (err) {
      this.#options.logger.warn(
        { err: String(err) },
        "could not fetch a photo; the model gets its caption only",
      );
      return undefined;
    }
  }

  /**
   * Downloads a document the model can read (documents.ts): the file to keep, or why it is not
   * read. Its type and announced size are checked before anything is downloaded.
   */
  async #readDocument(
    message: TelegramMessage,
    document: Document,
  ): Promise<{ document: NonNullable<IncomingInput["document"]> } | { notRead: NotRead }> {
    const kind = documentKind(document.file_name, document.mime_type);
    const refused = refusedBeforeDownload(kind, document);
    if (refused || kind === null) return { notRead: refused ?? "type" };
    let bytes: Buffer;
    try {
      const file = await this.bot.api.getFile(document.file_id);
      if (!file.file_path) throw new Error("Telegram gave no file path");
      bytes = await this.#download(file.file_path);
    } catch (err) {
      // By name and message only: never the URL, which holds the token, nor the file.
      this.#options.logger.warn(
        { error: describeFailure(err) },
        "could not download a document; the person is told",
      );
      return { notRead: "download" };
    }
    const checked = checkDocument(kind, bytes);
    if (!checked.ok) return { notRead: checked.notRead };
    return {
      document: { name: keptName(message.chat.id, message.message_id), kind, bytes: checked.bytes },
    };
  }

  /**
   * Why a sound is not heard before anything is downloaded: no transcription service is set up,
   * its format, length or announced size (sounds.ts); null when it is to be downloaded.
   */
  #notHeardBeforeDownload(sound: TelegramSound): NotHeard | null {
    if (!this.#options.companion.hearsVoiceNotes) return "off";
    return notHeardBeforeDownload(sound);
  }

  /**
   * A sound to be heard, as the companion takes it: where to keep it, and its download, which
   * the companion starts once the message is logged. The download says why a sound is not
   * heard when it fails or what arrives is over the size limit.
   */
  #soundToKeep(
    message: TelegramMessage,
    sound: TelegramSound,
    format: SoundFormat,
  ): NonNullable<IncomingInput["sound"]> {
    return {
      name: keptName(message.chat.id, message.message_id),
      format,
      download: async () => {
        try {
          const file = await this.bot.api.getFile(sound.fileId);
          if (!file.file_path) throw new Error("Telegram gave no file path");
          if ((file.file_size ?? 0) > SOUND_LIMITS.bytes) return { notHeard: "size" };
          const bytes = await this.#download(file.file_path);
          return bytes.byteLength > SOUND_LIMITS.bytes ? { notHeard: "size" } : { bytes };
        } catch (err) {
          // By name and message only: never the URL, which holds the token, nor the sound.
          this.#options.logger.warn(
            { error: describeFailure(err) },
            "could not download a voice note; the reply says so",
          );
          return { notHeard: "download" };
        }
      },
    };
  }

  /** The bytes of a file Telegram holds (`file_path` from getFile), through the transport's limits for files. */
  async #download(filePath: string): Promise<Buffer> {
    const { apiRoot, token } = this.#connection;
    const response = await this.#connection.fetch(`${apiRoot}/file/bot${token}/${filePath}`);
    if (!response.ok) throw new Error(`download answered ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }
}

/** What the person reads when a command failed: what broke, in Telegram's words when it was Telegram. */
function commandFailedText(name: string, error: unknown): string {
  const reason =
    error instanceof GrammyError ? `Telegram said: ${error.description}` : "something broke on my side";
  const hint =
    name === "export" ? " The export may be too large to send; the data is still all on my computer." : "";
  return `Sorry, /${name} didn't work (${reason}).${hint}`;
}

/** A failure as log fields: a Telegram error by method, code and description, never with its payload. */
function describeFailure(error: unknown): Record<string, unknown> {
  if (error instanceof GrammyError) {
    return { method: error.method, error_code: error.error_code, description: error.description };
  }
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { message: String(error) };
}

/**
 * What the log knows of a message beyond Telegram's fields, for describing an edit of it the
 * same way: why its document was not read, its sound's transcript, or why its sound was not
 * heard (a sound logged before sounds were heard has neither a file nor a reason: it was not).
 */
function knownFromLog(logged: Message): KnownAbout {
  const media = logged.media;
  if (!media) return {};
  if (media.notRead) return { notRead: media.notRead };
  if (media.transcribed) return { transcript: logged.text };
  if (media.notHeard) return { notHeard: media.notHeard };
  return (media.kind === "voice" || media.kind === "audio") && !media.stored ? { notHeard: "off" } : {};
}

/** A logged message's media without its caption, which an edit replaces (or removes). */
function withoutCaption(media: Media): Media {
  const { caption: _, ...rest } = media;
  return rest;
}
