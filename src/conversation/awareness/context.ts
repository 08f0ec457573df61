import { z } from "zod";
import { isoUtc, messageSchema, moodSchema } from "../../core/message.ts";

const minutes = z.number().int().nonnegative();

/** The conversation's domain, as the topic lexicon groups topics. */
const domainSchema = z.enum(["habits", "health", "work", "relationships", "social", "reflective", "other"]);
export type Domain = z.infer<typeof domainSchema>;

/**
 * Where the conversation stands at one moment: the answer to "what did I say lately,
 * what did they say lately, and how is it going". Computed from the log alone
 * (plus episodic memory), so it is the same whether a reply or a heartbeat asks.
 * Documented with an example in docs/awareness.md.
 */
export const awarenessContextSchema = z.object({
  now: isoUtc,
  timezone: z.string(),
  self: z.object({
    /** Assistant messages since the person's last message, however old that is (reactions are not messages sent). */
    messagesSent: z.array(messageSchema),
    /** The companion's last message, not counting reactions: what the minimum gap runs from. */
    lastMessageTime: isoUtc.nullable(),
    timeSinceLastMessage: minutes.nullable(),
    topicsMentioned: z.array(z.string()),
    /**
     * The companion's questions in the window that the person wrote after and, as reflection read
     * each of their later messages, did not answer (none names it in `answers`), oldest first.
     * Empty while a later message of theirs waits for reflection: code cannot tell an answer.
     */
    questionsLeftOpen: z.array(messageSchema),
    /** Topics raised two or more times within messagesSent. */
    repeatedTopics: z.array(z.object({ topic: z.string(), count: z.number().int().min(2) })),
    /** Assistant messages and reactions in the window (and since the person's last message): the slim block's "you" lines. */
    recentMessages: z.array(messageSchema).optional(),
  }),
  user: z.object({
    lastMessage: messageSchema.nullable(),
    timeSinceLastMessage: minutes.nullable(),
    recentMessages: z.array(messageSchema),
    engagementLevel: z.enum(["active", "sporadic", "silent"]),
    topicsAddressed: z.array(z.string()),
    /** The person's mood in their last message, when it shows one clearly (tired, worried, upbeat…). */
    mood: moodSchema.nullable().optional(),
  }),
  conversationState: z.object({
    unansweredCount: z.number().int().nonnegative(),
    lastExchangeTone: z.enum(["warm", "neutral", "tense", "unknown"]),
    recentTopicShift: z.boolean(),
    currentDomain: domainSchema.nullable(),
    silenceDuration: minutes.nullable(),
    timeOfDay: z.enum(["morning", "afternoon", "evening", "night"]),
    dayType: z.enum(["weekday", "weekend"]),
    /** Set when a reply comes late: how long the person's message has waited. */
    waitingMinutes: minutes.nullable(),
    /** The subject of the latest message that had one (a topic label), null when none in the window. */
    currentTopic: z.string().nullable().optional(),
    /** Every topic of that message, in order: "sleep" and "hydration" came together, and one alone would be arbitrary. */
    currentTopics: z.array(z.string()),
    /** Whose that message was and when, so a latest topic is not read as the newest message's. */
    currentTopicAt: z
      .object({ role: z.enum(["user", "assistant"]), ts: isoUtc })
      .nullable()
      .optional(),
    /** Minutes since the current stretch of conversation began (gaps of at most activeMinutes); null when none is going on. */
    conversationMinutes: minutes.nullable().optional(),
    /** The language the person writes in lately (ISO 639-1); code reads topics and tone only in English. */
    language: z.string().optional(),
  }),
  priorContext: z.object({
    declaredPatterns: z.array(z.string()),
    openLoops: z.array(z.string()),
    recentMilestones: z.array(z.string()),
  }),
  observations: z.array(z.string()),
  format: z.enum(["full", "slim"]),
});
export type AwarenessContext = z.infer<typeof awarenessContextSchema>;

/** Why the awareness block is being built; heartbeats always get the full block. */
export type Trigger = "reply" | "heartbeat";

/** Episodic memory as the awareness engine sees it: plain lines, already ranked. */
export interface PriorMemory {
  declaredPatterns: string[];
  openLoops: string[];
  recentMilestones: string[];
}

/** What the awareness engine needs to know besides the log and the moment. */
export interface AwarenessSettings {
  /** IANA zone of the person: time of day, day type and "today" are theirs. */
  timezone: string;
  /** The person counts as active when their last message is at most this old. */
  activeMinutes: number;
  /** How far back recent messages and topics reach. */
  windowHours: number;
  trigger: Trigger;
}

export const defaultAwarenessSettings: Omit<AwarenessSettings, "timezone" | "trigger"> = {
  activeMinutes: 30,
  windowHours: 48,
};
