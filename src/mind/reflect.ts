import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { messageTopics } from "../conversation/awareness/topics.ts";
import { OPEN_QUESTIONS_SHOWN } from "../conversation/pending-messages.ts";
import { type Annotations, type Message, moodSchema, toneSchema } from "../core/message.ts";
import type { MindDocument } from "../core/mind-record.ts";
import { messageAsRead, sameWords } from "../core/text.ts";
import { localTime } from "../core/zones.ts";
import type { Persona } from "../model/persona.ts";
import { personInTheirWords, whatTheyWrote } from "../model/prompts.ts";
import { estimateTokens } from "../model/tokens.ts";
import { toolInputSchema } from "../model/tool-schema.ts";
import {
  activeMemory,
  applyMemoryOps,
  type MemoryItem,
  memoryLineTokens,
  memoryOpSchema,
  type memoryRecord,
  rankMemory,
} from "./memory.ts";
import {
  CORRECTED_MARK,
  FORGOTTEN_REFUSAL,
  type forgottenHashesRecord,
  isForgotten,
  type refusedLastTimeRecord,
} from "./refusals.ts";
import {
  applyScratchpadUpdate,
  FIELD_MAX_CHARS,
  type FieldKey,
  fieldPath,
  isItemField,
  oversizedField,
  renderScratchpad,
  SCRATCHPAD_FIELDS,
  type Scratchpad,
  type ScratchpadResult,
  type scratchpadRecord,
  type TextFieldKey,
  WORKSPACE_INPUT_MAX_CHARS,
  type WorkspaceArchive,
  workspaceEditSchema,
} from "./scratchpad.ts";
import {
  applyThreadOps,
  recentThreadNotes,
  type Threads,
  threadOpSchema,
  type threadsRecord,
} from "./threads.ts";
import { applyUnderstandingOps, understandingOpSchema } from "./understanding.ts";

/**
 * Reflection: after an exchange, the cheaper model looks at what the companion understood
 * before and what was just said, and proposes one update — scratchpad fields, WORKSPACE
 * edits, memory and thread operations, annotations for the exchange's messages. This file
 * is the pure part: the tool, the prompt, and applying an update as a whole or not at all.
 */

const FIELD_HINTS: Record<TextFieldKey, string> = {
  identity_purpose: "why you are here for this person (rarely changes)",
  identity_user: "who they are: stable traits that shape how you talk with them",
  identity_boundaries: "what you will and won't do",
  trajectory_now: "the one thing the conversation is about right now",
  trajectory_path: "how you got here, compressed: a → b → now c",
  trajectory_later: "what was deferred, with when to come back to it",
  workspace: "your notepad: working material for what is going on now",
  self_confidence: "HIGH, MEDIUM or LOW, then why",
  self_attention: "what you are prioritising and why",
  self_flags: "lines like UNCERTAIN: …, PROTECT: …, REVISIT: …, SURFACE: …",
};

/** The fields reflection sets by value: every field but UNDERSTANDING, whose lines it edits by id. */
const TEXT_FIELDS = SCRATCHPAD_FIELDS.flatMap((f) => (isItemField(f.key) ? [] : [f.key]));

const fieldValue = (key: TextFieldKey) =>
  z
    .string()
    .max(key === "workspace" ? WORKSPACE_INPUT_MAX_CHARS : FIELD_MAX_CHARS)
    .optional()
    .describe(FIELD_HINTS[key]);

/** Reflection's verdict on one message of the exchange. */
const annotationInputSchema = z.object({
  messageId: z.string().min(1).describe("the id shown in brackets in the exchange"),
  topics: z
    .array(z.string().min(1).max(40))
    .max(6)
    .describe(
      "what it is about, in short labels: hydration, sleep, work, or its own words (book club); none for a greeting",
    ),
  question: z.boolean().describe("whether it asks for an answer"),
  tone: toneSchema.describe(
    "between them and you, not their mood: tense = friction (curt, irritated, pointed, a complaint about you or the conversation), warm = affection or enthusiasm, neutral = the rest",
  ),
  mood: moodSchema.optional().describe("their own state, if it shows"),
  answers: z
    .array(z.string().min(1))
    .max(10)
    .optional()
    .describe("ids of shown messages whose question it answers"),
});

/** The update, as the reflection tool takes it: every part optional, each one bounded. */
export const reflectionUpdateSchema = z.object({
  ...(Object.fromEntries(TEXT_FIELDS.map((key) => [key, fieldValue(key)])) as Record<
    TextFieldKey,
    ReturnType<typeof fieldValue>
  >),
  understanding: z
    .array(understandingOpSchema)
    .max(10)
    .optional()
    .describe(
      "UNDERSTANDING edits by line: Known (facts you are sure of, marked (user) or (inferred)), Believed (working assumptions that might be wrong), Unknown (what you need and don't have)",
    ),
  workspace_edits: z
    .array(workspaceEditSchema)
    .max(10)
    .optional()
    .describe("surgical WORKSPACE edits, applied in order after the field values"),
  memory: z.array(memoryOpSchema).max(10).optional().describe("episodic memory operations"),
  threads: z.array(threadOpSchema).max(3).optional().describe("thread moves and notes"),
  annotations: z.array(annotationInputSchema).max(20).optional().describe("one per message of the exchange"),
});
type ReflectionUpdate = z.infer<typeof reflectionUpdateSchema>;

/** The one tool reflection is forced to call. Its definition never changes between calls. */
export const REFLECT_TOOL: Anthropic.Tool = {
  name: "update_mind",
  description:
    'Record what changed in your understanding after this exchange. Pass only what changed; with nothing to change, call it with no arguments. For each scratchpad field a value replaces it, "APPEND: text" adds a line to it, "CLEAR" empties it; UNDERSTANDING lines are edited one by one, by id.',
  input_schema: toolInputSchema(reflectionUpdateSchema),
};

/** How reflection is asked to behave, whatever the persona. */
const REFLECT_GUIDANCE = `You are the reflective side of a companion who talks with one person over weeks and months. You do not talk to the person. After each exchange you see what the companion understood before it and the exchange itself, and you call update_mind once to keep that understanding current.

- Be minimal: most exchanges only change TRAJECTORY.Now, perhaps SELF or a line in WORKSPACE.
- UNDERSTANDING is lines with ids: add a line to Known, Believed or Unknown; change one (its words, or move it: a belief confirmed goes to Known); retire one that no longer holds. The person can read these lines and correct or delete them: a line marked as corrected by the person is theirs, leave it; words they asked you to forget are not written again.
- Be honest: if something is unclear, say so in Unknown; if confidence dropped, lower it.
- Curate for what will matter later, not for a complete record; keep what you would regret losing.
- Memory: add declared patterns ("weekends are loose"), open loops (started, not finished) and milestones; close a loop when it is finished; supersede an item that turned out wrong. Use the ids shown.
- Threads: when the conversation moves to a different subject for a while, scope into a thread (your note says why you left); goto back to an existing one (your note says what you bring).
- Annotate every message of the exchange: its topics, whether it asks something, its tone, the person's mood if it shows, and which shown messages it answers.
- When messages are leaving the window, this is the last time you see them: keep what matters from them.

## How an update is read

Leave out a field to keep it as it is. UNDERSTANDING edits apply before the field values. WORKSPACE edits (append, prepend, find_replace, delete) apply in order after the field values; the text to find or delete must be in WORKSPACE exactly.

The update is checked as a whole and refused as a whole, changing nothing, when a field would hold more than ${FIELD_MAX_CHARS} characters (rewrite it shorter rather than appending), when Confidence does not start with HIGH, MEDIUM or LOW, when the pad would be left nearly empty, when an edit's text is not in WORKSPACE, when a memory or UNDERSTANDING operation names an id that is not shown, or when an annotation's messageId is not in the exchange. One operation alone is refused, the rest applied, when it changes or retires what the person corrected, or writes words they asked to forget; an id in answers that is not shown is dropped; you are told next time. Nothing in memory is deleted: closing a loop or superseding an item keeps it, retired, with when and why.

## Who you reflect for

The companion's persona and the person's own words follow. Keep IDENTITY consistent with them; when the person speaks of self-harm, danger or a medical emergency, keep a PROTECT flag so the companion follows up with care.`;

/**
 * Reflection's system text: the guidance, how an update is read and checked, and the
 * persona (who the companion is and what the person said about themselves), so what it
 * keeps fits them. Stable between exchanges — it changes only when the persona files are
 * edited — so with the tool it forms a prefix long enough for the reflect model's cache.
 */
export function reflectionSystem(persona: Pick<Persona, "soul" | "user">): string {
  return [
    REFLECT_GUIDANCE,
    "# The companion's persona",
    whatTheyWrote(persona.soul),
    "# The person, in their own words",
    personInTheirWords(persona.user),
  ].join("\n\n");
}

/** An exchange as the queue holds it. */
export interface Exchange {
  messageIds: string[];
  trigger: "reply" | "heartbeat";
  evicting: string[];
}

/** One part of the reflection prompt, with its size for the trace. */
export interface PromptSection {
  name: string;
  text: string;
  tokens: number;
}

/** Token budget for the memory items shown to reflection. */
const REFLECT_MEMORY_TOKENS = 800;

/** How far back the companion's open questions are looked for: as far as awareness looks. */
export const OPEN_QUESTION_HOURS = 48;

/**
 * The companion's open questions (openQuestions, oldest first) that reflection is shown beside
 * an exchange: those it does not already see in the exchange or leaving the window, the newest
 * OPEN_QUESTIONS_SHOWN of them; none beside an exchange without a message of the person's (a
 * check-in), since only theirs can answer them.
 */
export function questionsToShow(
  open: readonly Message[],
  exchange: readonly Message[],
  evicting: readonly Message[],
): Message[] {
  if (!exchange.some((m) => m.role === "user")) return [];
  const shown = new Set([...exchange, ...evicting].map((m) => m.id));
  return open.filter((m) => !shown.has(m.id)).slice(-OPEN_QUESTIONS_SHOWN);
}

/** What reflection reads and changes of mind.json: the pad, memory, threads, and what the person ruled out. */
export type ReflectedMind = MindDocument<
  | typeof scratchpadRecord
  | typeof memoryRecord
  | typeof threadsRecord
  | typeof forgottenHashesRecord
  | typeof refusedLastTimeRecord
>;

/**
 * The user turn of the reflection call, by section: the prior state (scratchpad, memory with
 * ids, threads), the companion's questions still open (questionsToShow), the exchange, and the
 * messages leaving the window, each message with its id and local time, so an annotation can
 * name what a message answers.
 */
export function reflectionPrompt(
  mind: ReflectedMind,
  exchange: readonly Message[],
  evicting: readonly Message[],
  now: Date,
  zone: string,
  questions: readonly Message[] = [],
): PromptSection[] {
  const section = (name: string, body: string): PromptSection => {
    const text = `<${name}>\n${body}\n</${name}>`;
    return { name, text, tokens: estimateTokens(text) };
  };
  const line = (m: Message) =>
    `[${m.id}] ${localTime(Date.parse(m.ts), zone).toFormat("ccc d LLL HH:mm")} ${m.role === "user" ? "person" : "you"}: ${messageAsRead(m)}`;
  const query = {
    text: exchange.map((m) => m.text).join("\n"),
    topics: exchange.flatMap((m) => messageTopics(m)),
  };
  const shown: MemoryItem[] = [];
  let used = 0;
  for (const { item } of rankMemory(mind.memory, query, now)) {
    if (used + memoryLineTokens(item) + 8 > REFLECT_MEMORY_TOKENS) continue;
    shown.push(item);
    used += memoryLineTokens(item) + 8;
  }
  const hidden = activeMemory(mind.memory).length - shown.length;
  const memory = shown.map(
    (m) =>
      `- [${m.id}] ${m.kind.replace("_", " ")} (importance ${m.importance}): ${m.text}${m.correctedAt ? CORRECTED_MARK : ""}`,
  );
  if (hidden > 0) memory.push(`(${hidden} less relevant items not shown)`);
  const others = mind.threads.list.map((t) => t.name).filter((name) => name !== mind.threads.current);
  const notes = recentThreadNotes(mind.threads).map((n) => `- ${n.text}`);
  const sections = [
    section("prior_understanding", renderScratchpad(mind.scratchpad, { ids: true })),
    section("memory", memory.length > 0 ? memory.join("\n") : "(nothing yet)"),
    section(
      "threads",
      [
        `current: ${mind.threads.current}`,
        `others: ${others.length > 0 ? others.join(", ") : "(none)"}`,
        ...(notes.length > 0 ? ["recent notes here:", ...notes] : []),
      ].join("\n"),
    ),
  ];
  if (questions.length > 0) sections.push(section("open_questions", questions.map(line).join("\n")));
  sections.push(section("exchange", exchange.map(line).join("\n")));
  if (evicting.length > 0) sections.push(section("leaving_window", evicting.map(line).join("\n")));
  if (mind.refusedLastTime.length > 0) {
    sections.push(
      section("refused_last_time", mind.refusedLastTime.map((reason) => `- ${reason}`).join("\n")),
    );
  }
  return sections;
}

/** What applying an update needs besides the update. */
export interface ReflectionContext {
  mind: ReflectedMind;
  exchange: Exchange;
  /** The exchange's messages as logged (for annotation checks and when a thread move starts). */
  messages: readonly Message[];
  /** Ids of the open questions the prompt showed (questionsToShow), which `answers` may name too. */
  questions?: readonly string[];
  now: Date;
  /** A fresh item id starting with `prefix` ("m" for memory, "k"/"b"/"u" for UNDERSTANDING lines). */
  newItemId: (prefix: string) => string;
  topicsOf: (text: string) => string[];
}

/** An applied update: the new state parts, the annotations to write, and what changed. */
interface AppliedReflection {
  ok: true;
  update: ReflectionUpdate;
  scratchpad: Scratchpad;
  memory: MemoryItem[];
  threads: Threads;
  annotations: { messageId: string; annotations: Annotations }[];
  archive: WorkspaceArchive | null;
  changes: string[];
  /**
   * Operations refused one by one (the person corrected or forgot what they touched), and ids in
   * an annotation's `answers` dropped because they were not shown: ids, never words.
   */
  refused: string[];
}

/** An update applied, or refused as a whole with a reason (traced; nothing changed). */
export type ReflectionOutcome = AppliedReflection | { ok: false; reason: string };

/**
 * Checks the whole update and computes its result, or refuses it with a reason. Pure: the
 * caller writes the result (and nothing at all when it is refused).
 */
export function applyReflectionUpdate(input: unknown, ctx: ReflectionContext): ReflectionOutcome {
  const parsed = reflectionUpdateSchema.safeParse(input ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `invalid update: ${issue?.path.join(".") || "input"}: ${issue?.message ?? "?"}`,
    };
  }
  const update = parsed.data;
  const forgotten = new Set(ctx.mind.forgottenHashes);
  const items = applyUnderstandingOps(ctx.mind.scratchpad, update.understanding ?? [], {
    now: ctx.now,
    sourceMessageIds: ctx.exchange.messageIds,
    newId: ctx.newItemId,
    forgotten,
  });
  if (!items.ok) return { ok: false, reason: items.reason };
  const fields = Object.fromEntries(
    TEXT_FIELDS.flatMap((key) => (update[key] === undefined ? [] : [[key, update[key]]])),
  ) as Partial<Record<FieldKey, string>>;
  let pad = applyScratchpadUpdate(
    items.pad,
    { fields, workspaceEdits: update.workspace_edits ?? [] },
    ctx.now,
  );
  if (!pad.ok) return { ok: false, reason: pad.reason };
  // A text field given words the person forgot keeps its old value; the rest of the update applies.
  const writesForgotten = forgottenFieldWrites(items.pad, pad, forgotten);
  if (writesForgotten.length > 0) {
    for (const key of writesForgotten) delete fields[key];
    const workspaceEdits = writesForgotten.includes("workspace") ? [] : (update.workspace_edits ?? []);
    pad = applyScratchpadUpdate(items.pad, { fields, workspaceEdits }, ctx.now);
    if (!pad.ok) return { ok: false, reason: pad.reason };
  }
  const oversized = oversizedField(ctx.mind.scratchpad, pad.pad);
  if (oversized !== null) return { ok: false, reason: oversized };

  const memory = applyMemoryOps(ctx.mind.memory, update.memory ?? [], {
    now: ctx.now,
    sourceMessageIds: ctx.exchange.messageIds,
    newId: () => ctx.newItemId("m"),
    topicsOf: ctx.topicsOf,
    forgotten,
  });
  if (!memory.ok) return { ok: false, reason: memory.reason };

  const firstTs = ctx.messages.reduce((min, m) => Math.min(min, Date.parse(m.ts)), ctx.now.getTime());
  const threads = applyThreadOps(ctx.mind.threads, update.threads ?? [], {
    now: ctx.now,
    switchAt: new Date(firstTs),
  });
  if (!threads.ok) return { ok: false, reason: threads.reason };

  const annotations: AppliedReflection["annotations"] = [];
  const droppedAnswers: string[] = [];
  // What an annotation may say a message answers: any message the prompt showed.
  const shown = new Set([...ctx.exchange.messageIds, ...ctx.exchange.evicting, ...(ctx.questions ?? [])]);
  for (const a of update.annotations ?? []) {
    if (!ctx.exchange.messageIds.includes(a.messageId)) {
      return { ok: false, reason: `annotation for ${a.messageId}, which is not a message of this exchange` };
    }
    const topics = [...new Set(a.topics.map((t) => t.trim().toLowerCase()))];
    const answers = [...new Set(a.answers ?? [])];
    const unknown = answers.filter((id) => !shown.has(id));
    if (unknown.length > 0) {
      droppedAnswers.push(`annotation ${a.messageId}: answers ${unknown.join(", ")}: not shown, dropped`);
    }
    const known = answers.filter((id) => shown.has(id));
    // Mood is the person's own state: the companion's messages carry none.
    const fromPerson = ctx.messages.find((m) => m.id === a.messageId)?.role === "user";
    annotations.push({
      messageId: a.messageId,
      annotations: {
        topics,
        question: a.question,
        tone: a.tone,
        ...(a.mood && fromPerson ? { mood: a.mood } : {}),
        ...(known.length > 0 ? { answers: known } : {}),
      },
    });
  }

  const changes = [
    ...items.changes.map((change) => `UNDERSTANDING ${change}`),
    ...pad.changed.map((key) => `scratchpad ${fieldPath(key)}`),
    ...(pad.archive ? [`WORKSPACE archived to note ${pad.archive.key}`] : []),
    ...memory.changes,
    ...threads.changes,
    ...(annotations.length > 0 ? [`annotated ${annotations.length} message(s)`] : []),
  ];
  return {
    ok: true,
    update,
    scratchpad: pad.pad,
    memory: memory.items,
    threads: threads.threads,
    annotations,
    archive: pad.archive,
    changes,
    refused: [
      ...items.refused,
      ...writesForgotten.map((key) => `${fieldPath(key)}: ${FORGOTTEN_REFUSAL}`),
      ...memory.refused,
      ...droppedAnswers,
    ],
  };
}

/**
 * The text fields an applied update gives a line of words the person forgot (compared as
 * sameWords, by hash) that the field did not already hold. WORKSPACE is read before any archive,
 * so words moved into an archive note count too.
 */
function forgottenFieldWrites(
  before: Scratchpad,
  after: Extract<ScratchpadResult, { ok: true }>,
  forgotten: ReadonlySet<string>,
): TextFieldKey[] {
  if (forgotten.size === 0) return [];
  return TEXT_FIELDS.filter((key) => {
    const text = key === "workspace" ? (after.archive?.content ?? after.pad.workspace) : after.pad[key];
    const held = new Set(before[key].split("\n").map(sameWords));
    return text.split("\n").some((line) => !held.has(sameWords(line)) && isForgotten(line, forgotten));
  });
}

/** How a field value may start ("APPEND: …", "REPLACE: …", read in scratchpad.ts): not part of its words. */
const FIELD_DIRECTIVE = /^(?:APPEND|REPLACE):[ \t]?/;

/**
 * The model's answer as the trace keeps it: each line of a string that is words the person had
 * deleted (an operation or field refused for writing them again) is replaced, so the trace does
 * not keep them — a field value's "APPEND:" or "REPLACE:" before the words included.
 */
export function withoutForgotten(value: unknown, forgotten: ReadonlySet<string>): unknown {
  if (typeof value === "string") {
    if (isForgotten(value, forgotten)) return "(words the person deleted)";
    return value
      .split("\n")
      .map((line) =>
        isForgotten(line.replace(FIELD_DIRECTIVE, ""), forgotten) ? "(words the person deleted)" : line,
      )
      .join("\n");
  }
  if (Array.isArray(value)) return value.map((item) => withoutForgotten(item, forgotten));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutForgotten(v, forgotten)]));
  }
  return value;
}
