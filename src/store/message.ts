import { z } from "zod";

/** Where a message was exchanged. */
export const channelSchema = z.enum(["telegram", "cli", "simulation"]);
export type Channel = z.infer<typeof channelSchema>;

/** Tone labels shared by annotations and the awareness engine. */
export const toneSchema = z.enum(["warm", "neutral", "tense"]);
export type Tone = z.infer<typeof toneSchema>;

const isoUtc = z.iso.datetime({ offset: false });

/** What reflection learned about one message; preferred to the lexicon when present. */
export const annotationsSchema = z.looseObject({
  topics: z.array(z.string().min(1)),
  question: z.boolean(),
  tone: toneSchema,
  answers: z.array(z.string().min(1)).optional(),
});
export type Annotations = z.infer<typeof annotationsSchema>;

/** Non-text content, described so the log stays plain JSON. */
export const mediaSchema = z.looseObject({
  kind: z.enum(["photo", "voice", "sticker", "document", "location", "video", "audio", "other"]),
  caption: z.string().optional(),
});
export type Media = z.infer<typeof mediaSchema>;

/**
 * One entry of the message log. Unknown fields are kept (looseObject), so a newer
 * version's data survives being read and written by an older one.
 */
export const messageSchema = z
  .looseObject({
    id: z.string().min(1),
    ts: isoUtc,
    role: z.enum(["user", "assistant"]),
    text: z.string(),
    channel: channelSchema,
    trigger: z.enum(["reply", "heartbeat"]).optional(),
    media: mediaSchema.optional(),
    editedAt: isoUtc.optional(),
    replyTo: z.string().min(1).optional(),
    telegram: z
      .looseObject({
        chatId: z.number().int(),
        messageId: z.number().int(),
        updateId: z.number().int().optional(),
      })
      .optional(),
    annotations: annotationsSchema.optional(),
  })
  .refine((m) => m.trigger === undefined || m.role === "assistant", {
    message: "trigger is only for assistant messages",
    path: ["trigger"],
  });
export type Message = z.infer<typeof messageSchema>;
