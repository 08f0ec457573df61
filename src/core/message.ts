import { z } from "zod";

/** Where a message was exchanged. */
export const channelSchema = z.enum(["telegram", "cli", "simulation"]);
export type Channel = z.infer<typeof channelSchema>;

/**
 * Tone labels shared by annotations and the awareness engine: the exchange between the person
 * and the companion. `tense` is friction between them (curt, irritated, a complaint about the
 * companion), `warm` affection or enthusiasm toward it, `neutral` the rest, however the person feels.
 */
export const toneSchema = z.enum(["warm", "neutral", "tense"]);
export type Tone = z.infer<typeof toneSchema>;

/**
 * The person's own state as a message shows it (tired, worried, upbeat…): a separate fact from
 * tone, which is about the two of them. Shared by annotations and the awareness engine.
 */
export const moodSchema = z.enum([
  "tired",
  "sad",
  "stressed",
  "worried",
  "nervous",
  "angry",
  "upbeat",
  "calm",
  "sick",
]);
export type Mood = z.infer<typeof moodSchema>;

/** An instant as every data file writes it: ISO 8601 in UTC, with a Z and no offset. */
export const isoUtc = z.iso.datetime({ offset: false });

/** What reflection learned about one message; preferred to the lexicon when present. */
export const annotationsSchema = z.looseObject({
  topics: z.array(z.string().min(1)),
  question: z.boolean(),
  tone: toneSchema,
  /** The person's mood in this message, when it shows one (their messages only). */
  mood: moodSchema.optional(),
  /** Ids of earlier messages (usually the companion's questions) this message answers. */
  answers: z.array(z.string().min(1)).optional(),
});
export type Annotations = z.infer<typeof annotationsSchema>;

/** Non-text content, described so the log stays plain JSON (channels/telegram/incoming.ts writes it). */
const mediaSchema = z.looseObject({
  kind: z.enum(["photo", "voice", "sticker", "document", "location", "video", "audio", "other"]),
  caption: z.string().optional(),
  /** A sound's length (a voice note, an audio file, a video note). */
  durationSeconds: z.number().nonnegative().optional(),
  /** A sticker's emoji. */
  emoji: z.string().optional(),
  /** A document's file name; an audio file's title (performer – title) or name. */
  fileName: z.string().optional(),
  /**
   * A document the model reads, or a sound to be transcribed: where its bytes are kept, relative
   * to the data directory (files/…). A sound's file is deleted after its keeping time.
   */
  stored: z.string().optional(),
  /**
   * A sound logged before its bytes were kept: the channel downloads it after the message is
   * logged, so the log has it at once; `stored` names where the bytes go. Dropped once they are
   * kept. Still set after a restart, the process stopped while downloading it (voice-notes.ts).
   */
  downloading: z.literal(true).optional(),
  /**
   * A sound whose `text` is its transcript (core/sound.ts): written onto the entry before the
   * reply turn reads it. Absent in logs from before sounds were heard.
   */
  transcribed: z.literal(true).optional(),
  /**
   * A sound not heard, and why: no transcription service is set up (`off`), its type, its size
   * or length, the download, the service refused it, failed, took too long or could not be
   * reached, it took no video (a round video note), no words were made out, or its file was
   * gone or unreadable before it was transcribed.
   */
  notHeard: z
    .enum([
      "off",
      "type",
      "size",
      "length",
      "download",
      "refused",
      "failed",
      "timeout",
      "unreachable",
      "video",
      "empty",
      "gone",
    ])
    .optional(),
  /**
   * The setting the transcription service's failure points at (PRESENCE_TRANSCRIBE_KEY, …), when
   * it names one: the person is told it once a day, and /status names it.
   */
  notHeardSetting: z.string().optional(),
  /**
   * A document the model could not read, and why: its type, its size, the download, its bytes, or
   * (`together`) that it came with other documents too large to read in the same turn.
   */
  notRead: z.enum(["type", "size", "download", "content", "together"]).optional(),
  latitude: z.number().optional(),
  longitude: z.number().optional(),
  /** A venue's name and address. */
  place: z.string().optional(),
});
export type Media = z.infer<typeof mediaSchema>;

/**
 * A message's identifiers on the channel that carried it: the conversation there and the message
 * in it, as that channel numbers them (on Telegram, the chat and the message). Edits, quoted
 * replies and reactions address a message by them.
 */
export const externalIdsSchema = z.object({ chatId: z.number().int(), messageId: z.number().int() });
export type ExternalIds = z.infer<typeof externalIdsSchema>;

/**
 * What a message's channel told about it: its identifiers there, the delivery it came in, and
 * when the person sent it. A message from a channel that numbers nothing (the terminal) has none.
 */
const externalRefSchema = z.looseObject({
  ...externalIdsSchema.shape,
  /**
   * The channel's id of the delivery that brought it (Telegram's update), so a delivery repeated
   * after a restart is not logged twice.
   */
  updateId: z.number().int().optional(),
  /**
   * When the channel says the person sent it (Telegram's `date`, whole seconds): earlier than `ts`
   * when it waited there while presence was not running. Absent in logs from before it was kept.
   */
  sentAt: isoUtc.optional(),
});
export type ExternalRef = z.infer<typeof externalRefSchema>;

/**
 * One of the person's messages as a channel points at it: its log id and, when its channel
 * numbers messages, its ids there. The outbound port takes it (an anchored reply, a reaction) and
 * the outbox keeps it in its entries (companion/outbox.ts), so both read the one shape.
 */
export const messageRefSchema = z.object({ id: z.string().min(1), external: externalIdsSchema.optional() });
export type MessageRef = z.infer<typeof messageRefSchema>;

/** Fields only the companion's own messages carry, and fields only the person's carry. */
const ASSISTANT_ONLY = ["trigger", "answeredThrough", "notice", "outboxId", "reaction"] as const;
const USER_ONLY = ["handledWithoutReply"] as const;

/**
 * One entry of the message log (data/messages.json and archive/), the shape every room
 * shares. Unknown fields are kept (looseObject), so a newer version's data survives being
 * read and written by an older one.
 */
export const messageSchema = z
  .looseObject({
    id: z.string().min(1),
    ts: isoUtc,
    role: z.enum(["user", "assistant"]),
    text: z.string(),
    channel: channelSchema,
    /** Why the companion spoke: answering the person, or checking in. */
    trigger: z.enum(["reply", "heartbeat"]).optional(),
    media: mediaSchema.optional(),
    editedAt: isoUtc.optional(),
    replyTo: z.string().min(1).optional(),
    /** Where its channel keeps it (absent for the terminal's); version 1 of the log called it `telegram`. */
    external: externalRefSchema.optional(),
    annotations: annotationsSchema.optional(),
    /**
     * The person's newest message this reply or check-in answers: messages logged after that
     * one (written while it was being composed) still wait for an answer.
     */
    answeredThrough: z.string().min(1).optional(),
    /** Fixed words said from code (the model was away, a document could not be read): said, but not an answer. */
    notice: z.literal(true).optional(),
    /** The outbox entry it was sent from, so recovery after a crash knows it went out. */
    outboxId: z.string().min(1).optional(),
    /** A message of the person's dealt with although nothing was said: it stops waiting. */
    handledWithoutReply: z.literal(true).optional(),
    /**
     * The companion reacted with this emoji to the person's message `replyTo` instead of writing
     * (its `text` is empty): an answer, so that message stops waiting, but not a message sent.
     */
    reaction: z.string().min(1).optional(),
  })
  .superRefine((m, ctx) => {
    const wrong = m.role === "user" ? ASSISTANT_ONLY : USER_ONLY;
    for (const field of wrong) {
      if (m[field] !== undefined) {
        ctx.addIssue({
          code: "custom",
          message: `${field} is only for ${m.role === "user" ? "assistant" : "user"} messages`,
          path: [field],
        });
      }
    }
  });
export type Message = z.infer<typeof messageSchema>;

/**
 * Each message's parsed time, with the text it was parsed from. The log is read by time many
 * times a turn (the store's window and archive, the pending messages, the open questions, the
 * learned timing), and parsing the same ISO texts again was 0.3 s of a simulated month.
 */
const parsedTimes = new WeakMap<Pick<Message, "ts">, { ts: string; ms: number }>();

/** Milliseconds since the epoch of a message's `ts`: `Date.parse(message.ts)`, parsed once per message. */
export function messageTime(message: Pick<Message, "ts">): number {
  const known = parsedTimes.get(message);
  if (known?.ts === message.ts) return known.ms;
  const ms = Date.parse(message.ts);
  parsedTimes.set(message, { ts: message.ts, ms });
  return ms;
}

/**
 * What a reader sees of a message: its text, with a caption the text does not already hold (older
 * logs kept some captions apart).
 */
export function messageText(message: Pick<Message, "text" | "media">): string {
  const caption = message.media?.caption;
  return caption && !message.text.includes(caption) ? `${message.text}\n${caption}` : message.text;
}
