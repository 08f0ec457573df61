import { createHash } from "node:crypto";
import { z } from "zod";
import { isoUtc } from "../core/message.ts";
import { sameWords } from "../core/text.ts";

/**
 * The shape of the mind as mind.json keeps it: the scratchpad's fields, episodic memory items
 * and threads. These schemas are the store's edge (the file is read and checked here); the
 * mind room's logic (src/mind/) works on the types inferred from them.
 */

/** The five sections, most stable first. */
export const SCRATCHPAD_SECTIONS = ["IDENTITY", "UNDERSTANDING", "TRAJECTORY", "WORKSPACE", "SELF"] as const;
export type ScratchpadSection = (typeof SCRATCHPAD_SECTIONS)[number];

/** The 13 fields: the reflection tool's parameter names, their section and their heading. */
export const SCRATCHPAD_FIELDS = [
  { key: "identity_purpose", section: "IDENTITY", label: "Purpose" },
  { key: "identity_user", section: "IDENTITY", label: "User" },
  { key: "identity_boundaries", section: "IDENTITY", label: "Boundaries" },
  { key: "understanding_known", section: "UNDERSTANDING", label: "Known" },
  { key: "understanding_believed", section: "UNDERSTANDING", label: "Believed" },
  { key: "understanding_unknown", section: "UNDERSTANDING", label: "Unknown" },
  { key: "trajectory_now", section: "TRAJECTORY", label: "Now" },
  { key: "trajectory_path", section: "TRAJECTORY", label: "Path" },
  { key: "trajectory_later", section: "TRAJECTORY", label: "Later" },
  { key: "workspace", section: "WORKSPACE", label: null },
  { key: "self_confidence", section: "SELF", label: "Confidence" },
  { key: "self_attention", section: "SELF", label: "Attention" },
  { key: "self_flags", section: "SELF", label: "Flags" },
] as const satisfies readonly { key: string; section: ScratchpadSection; label: string | null }[];

export type FieldKey = (typeof SCRATCHPAD_FIELDS)[number]["key"];

/**
 * The UNDERSTANDING fields, whose lines are items the person can review one by one (/memory),
 * each with where it came from; the other fields are the companion's own working text.
 */
export const ITEM_FIELDS = [
  "understanding_known",
  "understanding_believed",
  "understanding_unknown",
] as const;
export type ItemFieldKey = (typeof ITEM_FIELDS)[number];
/** The id prefix of a field's items: k, b, u (new ones add random hex; migrated ones "-1", "-2"…). */
export function itemPrefix(key: ItemFieldKey): string {
  return key.slice("understanding_".length, "understanding_".length + 1);
}
/** The fields kept as text. */
export type TextFieldKey = Exclude<FieldKey, ItemFieldKey>;

/** Whether a field holds items rather than text. */
export function isItemField(key: FieldKey): key is ItemFieldKey {
  return (ITEM_FIELDS as readonly string[]).includes(key);
}

/** Longest text an item may have (a memory item, an UNDERSTANDING line written by reflection or /fix): one sentence, not a story. */
export const ITEM_TEXT_MAX_CHARS = 300;

/**
 * What the person can review about an item: when it was learned, from which messages, and
 * whether they corrected it themselves (/fix): reflection leaves a corrected item as it is.
 */
const provenance = {
  /** The log entries it was learned from; empty when not known (learned before items kept their sources). */
  sourceMessageIds: z.array(z.string()),
  /** When the person corrected it (/fix). */
  correctedAt: isoUtc.optional(),
};

/** One line of an UNDERSTANDING field. */
const understandingItemSchema = z.looseObject({
  id: z.string().min(1),
  text: z.string().min(1),
  /** Absent for lines written before the pad kept items (migrated from the text of version 1). */
  learnedAt: isoUtc.optional(),
  ...provenance,
});
export type UnderstandingItem = z.infer<typeof understandingItemSchema>;

/** The pad as mind.json stores it: one string per text field ("" when empty), items for UNDERSTANDING. */
export const scratchpadSchema = z.object({
  identity_purpose: z.string(),
  identity_user: z.string(),
  identity_boundaries: z.string(),
  understanding_known: z.array(understandingItemSchema),
  understanding_believed: z.array(understandingItemSchema),
  understanding_unknown: z.array(understandingItemSchema),
  trajectory_now: z.string(),
  trajectory_path: z.string(),
  trajectory_later: z.string(),
  workspace: z.string(),
  self_confidence: z.string(),
  self_attention: z.string(),
  self_flags: z.string(),
});
export type Scratchpad = z.infer<typeof scratchpadSchema>;

/** The text a new companion starts with in Unknown. */
const FIRST_UNKNOWN = "What their days look like; what they want from these conversations.";

/** The pad a new companion starts with: enough to act on, and honest that little is known. */
export function initialScratchpad(): Scratchpad {
  return {
    identity_purpose: "Be a warm, perceptive companion to one person: remember what matters to them.",
    identity_user: "Not known yet: learn it from what they say, not from guesses.",
    identity_boundaries:
      "A companion, not a therapist or doctor. In danger or crisis: warmth, and local emergency services or a crisis line.",
    understanding_known: [],
    understanding_believed: [],
    understanding_unknown: [{ id: "u-1", text: FIRST_UNKNOWN, sourceMessageIds: [] }],
    trajectory_now: "Getting to know them.",
    trajectory_path: "",
    trajectory_later: "",
    workspace: "",
    self_confidence: "LOW - nothing learned yet",
    self_attention: "Listening for what matters to them.",
    self_flags: "",
  };
}

/** The three things worth remembering: how they live, what is unfinished, what they reached. */
export const memoryKindSchema = z.enum(["pattern", "open_loop", "milestone"]);
export type MemoryKind = z.infer<typeof memoryKindSchema>;

/** One remembered item as mind.json keeps it. */
export const memoryItemSchema = z.looseObject({
  id: z.string().min(1),
  kind: memoryKindSchema,
  text: z.string().min(1),
  learnedAt: isoUtc,
  ...provenance,
  /** 1 (passing) to 5 (central to the person). */
  importance: z.number().int().min(1).max(5),
  topics: z.array(z.string()),
  /** When the same thing was learned again; recency counts from here. */
  reinforcedAt: isoUtc.optional(),
  retiredAt: isoUtc.optional(),
  retiredWhy: z.enum(["superseded", "closed"]).optional(),
  /** The item that replaced this one. */
  supersededBy: z.string().optional(),
  /** How a loop was closed, in a few words. */
  retiredNote: z.string().optional(),
});
export type MemoryItem = z.infer<typeof memoryItemSchema>;

/**
 * What is kept of an item the person had deleted (/forget) or corrected (/fix, its old words):
 * a SHA-256 of its normalised text, so reflection can refuse to add the same words again while
 * nothing readable remains.
 */
export function forgottenHash(text: string): string {
  return createHash("sha256").update(sameWords(text)).digest("hex");
}

/** The thread every conversation starts in. */
export const MAIN_THREAD = "main";

/** A line left in a thread so that whoever comes back to it knows why it was left or what was brought. */
export const threadNoteSchema = z.object({
  ts: isoUtc,
  text: z.string(),
  /** left: written by `scope` in the origin; arrived: by `goto` in the destination; note: in place. */
  kind: z.enum(["left", "arrived", "note"]),
});
export type ThreadNote = z.infer<typeof threadNoteSchema>;

/** One subject of the conversation, with its notes (its messages stay in the log). */
export const threadSchema = z.object({
  name: z.string().min(1),
  createdAt: isoUtc,
  notes: z.array(threadNoteSchema),
});
export type Thread = z.infer<typeof threadSchema>;

/** All threads, which one is current, and when each stretch of conversation began (which thread a message belongs to). */
export const threadsSchema = z.object({
  current: z.string().min(1),
  list: z.array(threadSchema).min(1),
  /** Moments the conversation entered a thread, oldest first; before the first, it was in main. */
  switches: z.array(z.object({ at: isoUtc, thread: z.string().min(1) })),
});
export type Threads = z.infer<typeof threadsSchema>;

/** A conversation's threads before anything happened. */
export function initialThreads(now: Date): Threads {
  return {
    current: MAIN_THREAD,
    list: [{ name: MAIN_THREAD, createdAt: now.toISOString(), notes: [] }],
    switches: [],
  };
}
