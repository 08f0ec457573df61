import { z } from "zod";
import { mindRecord } from "../core/mind-record.ts";
import { clip } from "../core/text.ts";
import { estimateTokens } from "../model/tokens.ts";
import { CORRECTED_MARK } from "./refusals.ts";
import {
  ITEM_FIELDS,
  type ItemFieldKey,
  itemPrefix,
  itemsFromText,
  itemsText,
  newItemId,
  understandingItemSchema,
} from "./understanding.ts";

/**
 * The scratchpad: the companion's live understanding of the person, in five sections of
 * distinct stability. It is not a log; reflection curates it after every exchange through
 * per-field edits, and every edit is checked as a whole before anything changes, so one
 * bad field never leaves the pad half-updated. It is kept in mind.json as the record
 * `scratchpad` (scratchpadRecord, below).
 */

/** The five sections, most stable first. */
const SCRATCHPAD_SECTIONS = ["IDENTITY", "UNDERSTANDING", "TRAJECTORY", "WORKSPACE", "SELF"] as const;
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

/** The fields kept as text. */
export type TextFieldKey = Exclude<FieldKey, ItemFieldKey>;

/** Whether a field holds items rather than text. */
export function isItemField(key: FieldKey): key is ItemFieldKey {
  return (ITEM_FIELDS as readonly string[]).includes(key);
}

/** The pad as mind.json stores it: one string per text field ("" when empty), items for UNDERSTANDING. */
const scratchpadSchema = z.object({
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

/**
 * The scratchpad's record in mind.json. Version 1 kept each UNDERSTANDING field as text; the
 * step to version 2 makes each non-empty line an item with unknown provenance (no learnedAt,
 * no sources). Ids are derived from the field and the line's place ("k-1", "b-2", "u-1"), so
 * reading the same old file twice gives the same ids even before it is first written back.
 */
export const scratchpadRecord = mindRecord({
  key: "scratchpad",
  schema: scratchpadSchema,
  initial: initialScratchpad,
  migrations: { 2: itemsFromVersion1 },
});

/** Version 1 → 2 of the pad; anything not understood is left for the schema to name. */
function itemsFromVersion1(pad: unknown): unknown {
  if (typeof pad !== "object" || pad === null || Array.isArray(pad)) return pad;
  const migrated: Record<string, unknown> = { ...(pad as Record<string, unknown>) };
  for (const key of ITEM_FIELDS) {
    const text = migrated[key];
    if (typeof text !== "string") continue;
    const prefix = itemPrefix(key);
    migrated[key] = text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .map((line, index) => ({ id: `${prefix}-${index + 1}`, text: line, sourceMessageIds: [] }));
  }
  return migrated;
}

/** Longest value (characters) a field other than WORKSPACE may hold, or be given in one edit. */
export const FIELD_MAX_CHARS = 1_500;
/** Longest value or edit text WORKSPACE may be given at once. */
export const WORKSPACE_INPUT_MAX_CHARS = 6_000;
/** WORKSPACE above this many tokens is archived into a keyed note, leaving a pointer. */
export const WORKSPACE_BUDGET_TOKENS = 700;
/** A pad left with fewer characters than this (when it had more) counts as wiped, and is refused. */
const MIN_PAD_CHARS = 40;

const CONFIDENCE = /^\W*(HIGH|MEDIUM|LOW)\b/i;

/** A surgical edit of WORKSPACE, the notepad: add at either end, change or remove an exact passage. */
export const workspaceEditSchema = z.object({
  op: z
    .enum(["append", "prepend", "find_replace", "delete"])
    .describe("append/prepend add `text`; find_replace swaps `find` for `replace`; delete removes `text`"),
  text: z
    .string()
    .max(WORKSPACE_INPUT_MAX_CHARS)
    .optional()
    .describe("append/prepend: text to add; delete: exact text to remove"),
  find: z
    .string()
    .min(1)
    .max(WORKSPACE_INPUT_MAX_CHARS)
    .optional()
    .describe("find_replace: exact text to find"),
  replace: z
    .string()
    .max(WORKSPACE_INPUT_MAX_CHARS)
    .optional()
    .describe("find_replace: replacement (may be empty)"),
  all: z.boolean().optional().describe("find_replace: every occurrence instead of the first"),
});
type WorkspaceEdit = z.infer<typeof workspaceEditSchema>;

/**
 * An update: per-field values (a value replaces, `APPEND: …` adds a line, `CLEAR` empties,
 * `REPLACE: …` replaces explicitly) and WORKSPACE edits applied after them, in order.
 */
export interface ScratchpadUpdate {
  fields?: Partial<Record<FieldKey, string>>;
  workspaceEdits?: readonly WorkspaceEdit[];
}

/** WORKSPACE content that outgrew its budget, to be saved as a keyed note before the pad is saved. */
export interface WorkspaceArchive {
  key: string;
  content: string;
}

/** The pad after an update (and the archive note to write, if WORKSPACE overflowed), or why it was refused. */
export type ScratchpadResult =
  | { ok: true; pad: Scratchpad; changed: FieldKey[]; archive: WorkspaceArchive | null }
  | { ok: false; reason: string };

/** "UNDERSTANDING.Known" for a field, "WORKSPACE" for the one without subsections. */
export function fieldPath(key: FieldKey): string {
  const field = fieldDef(key);
  return field.label === null ? field.section : `${field.section}.${field.label}`;
}

/** Every path `inject` accepts, in pad order. */
export function fieldPaths(): string[] {
  return SCRATCHPAD_FIELDS.map((f) => fieldPath(f.key));
}

/**
 * Resolves what a person types ("UNDERSTANDING.Known", "known", "understanding_known",
 * "workspace"), case-insensitively; null when it names no field.
 */
export function resolveFieldPath(path: string): FieldKey | null {
  const wanted = path.trim().toLowerCase();
  const field = SCRATCHPAD_FIELDS.find(
    (f) =>
      f.key === wanted ||
      fieldPath(f.key).toLowerCase() === wanted ||
      (f.label !== null && f.label.toLowerCase() === wanted),
  );
  return field?.key ?? null;
}

/** A field's text as the model reads it (UNDERSTANDING rendered from its items). */
export function fieldText(pad: Scratchpad, key: FieldKey): string {
  return isItemField(key) ? itemsText(pad[key]) : pad[key];
}

/** Pre-populates one field, with the same value semantics and checks as a field value (an UNDERSTANDING line becomes an item). */
export function injectSection(pad: Scratchpad, path: string, text: string, now: Date): ScratchpadResult {
  const key = resolveFieldPath(path);
  if (key === null) throw new Error(`unknown section "${path}"; valid sections: ${fieldPaths().join(", ")}`);
  return applyScratchpadUpdate(pad, { fields: { [key]: text } }, now);
}

/**
 * Applies an update as a whole: either every field and edit lands, or nothing does and the
 * reason says what to fix. `now` names the archive note when WORKSPACE outgrows its budget.
 */
export function applyScratchpadUpdate(
  pad: Scratchpad,
  update: ScratchpadUpdate,
  now: Date,
): ScratchpadResult {
  const next: Scratchpad = { ...pad };
  const taken = new Set(ITEM_FIELDS.flatMap((key) => pad[key].map((item) => item.id)));
  for (const [key, value] of Object.entries(update.fields ?? {}) as [FieldKey, string | undefined][]) {
    if (value === undefined) continue;
    const limit = key === "workspace" ? WORKSPACE_INPUT_MAX_CHARS : FIELD_MAX_CHARS;
    if (value.length > limit) {
      return refuse(`${fieldPath(key)} was given ${value.length} characters (limit ${limit})`);
    }
    const text = applyFieldValue(fieldText(pad, key), value);
    if (isItemField(key)) {
      next[key] = itemsFromText(pad[key], text, key, { now, newId: (prefix) => newItemId(taken, prefix) });
    } else next[key] = text;
  }
  for (const [index, edit] of (update.workspaceEdits ?? []).entries()) {
    const edited = applyWorkspaceEdit(next.workspace, edit);
    if (typeof edited !== "string")
      return refuse(`WORKSPACE edit ${index + 1} (${edit.op}): ${edited.problem}`);
    next.workspace = edited;
  }
  const problem = checkPad(pad, next, update);
  if (problem !== null) return refuse(problem);

  let archive: WorkspaceArchive | null = null;
  if (estimateTokens(next.workspace) > WORKSPACE_BUDGET_TOKENS) {
    archive = { key: archiveKey(now), content: next.workspace };
    next.workspace = `(earlier workspace archived in note "${archive.key}"; read it with notes_read)`;
  }
  const changed = SCRATCHPAD_FIELDS.map((f) => f.key).filter(
    (key) => fieldText(next, key) !== fieldText(pad, key),
  );
  return { ok: true, pad: next, changed, archive };
}

/**
 * The pad as compact markdown, for the prompt and for reflection. With `ids` (reflection's
 * view), each UNDERSTANDING line shows its id, and a line the person corrected says so.
 */
export function renderScratchpad(pad: Scratchpad, options: { ids?: boolean } = {}): string {
  const lines: string[] = [];
  for (const section of SCRATCHPAD_SECTIONS) {
    lines.push(`## ${section}`);
    for (const field of SCRATCHPAD_FIELDS.filter((f) => f.section === section)) {
      const key = field.key;
      if (options.ids && isItemField(key) && pad[key].length > 0) {
        lines.push(
          `${field.label}:`,
          ...pad[key].map((item) => `[${item.id}] ${item.text}${item.correctedAt ? CORRECTED_MARK : ""}`),
        );
        continue;
      }
      const value = fieldText(pad, key).trim();
      const shown = value === "" ? "(empty)" : value;
      if (field.label === null) lines.push(shown);
      else if (shown.includes("\n")) lines.push(`${field.label}:`, shown);
      else lines.push(`${field.label}: ${shown}`);
    }
  }
  return lines.join("\n");
}

function fieldDef(key: FieldKey): (typeof SCRATCHPAD_FIELDS)[number] {
  const field = SCRATCHPAD_FIELDS.find((f) => f.key === key);
  if (!field) throw new RangeError(`not a scratchpad field: ${key}`);
  return field;
}

function applyFieldValue(current: string, value: string): string {
  if (value.trim() === "CLEAR") return "";
  const append = /^APPEND:[ \t]?/.exec(value);
  if (append) {
    const addition = value.slice(append[0].length).trim();
    if (addition === "") return current;
    return current.trim() === "" ? addition : `${current.trimEnd()}\n${addition}`;
  }
  const replace = /^REPLACE:[ \t]?/.exec(value);
  return (replace ? value.slice(replace[0].length) : value).trim();
}

function applyWorkspaceEdit(workspace: string, edit: WorkspaceEdit): string | { problem: string } {
  switch (edit.op) {
    case "append":
    case "prepend": {
      const text = edit.text?.trim();
      if (!text) return { problem: "needs non-empty text" };
      if (workspace.trim() === "") return text;
      return edit.op === "append" ? `${workspace.trimEnd()}\n${text}` : `${text}\n${workspace.trimStart()}`;
    }
    case "find_replace": {
      if (edit.find === undefined) return { problem: "needs find" };
      if (!workspace.includes(edit.find))
        return { problem: `"${clip(edit.find, QUOTED_CHARS)}" is not in WORKSPACE` };
      const replacement = edit.replace ?? "";
      return edit.all
        ? workspace.split(edit.find).join(replacement)
        : workspace.replace(edit.find, () => replacement);
    }
    case "delete": {
      if (!edit.text) return { problem: "needs the exact text to remove" };
      if (!workspace.includes(edit.text))
        return { problem: `"${clip(edit.text, QUOTED_CHARS)}" is not in WORKSPACE` };
      return workspace
        .replace(edit.text, "")
        .replace(/\n{3,}/g, "\n\n")
        .trim();
    }
  }
}

/**
 * Why an update is refused for size: the first field it changed that would be over its limit,
 * or null. A field the update left as it was is not its doing (the person's /fix may have
 * lengthened it), so it does not hold up an update of other fields.
 */
export function oversizedField(before: Scratchpad, after: Scratchpad): string | null {
  for (const field of SCRATCHPAD_FIELDS) {
    if (field.key === "workspace") continue;
    const text = fieldText(after, field.key);
    if (text.length <= FIELD_MAX_CHARS || text === fieldText(before, field.key)) continue;
    const fix = isItemField(field.key)
      ? "retire or shorten lines instead of adding"
      : "rewrite it shorter instead of appending";
    return `${fieldPath(field.key)} would hold ${text.length} characters (limit ${FIELD_MAX_CHARS}): ${fix}`;
  }
  return null;
}

function checkPad(before: Scratchpad, after: Scratchpad, update: ScratchpadUpdate): string | null {
  const oversized = oversizedField(before, after);
  if (oversized !== null) return oversized;
  if (update.fields?.self_confidence !== undefined && !CONFIDENCE.test(after.self_confidence)) {
    return `SELF.Confidence must start with HIGH, MEDIUM or LOW and say why (got "${clip(after.self_confidence, QUOTED_CHARS)}")`;
  }
  const size = (pad: Scratchpad) =>
    SCRATCHPAD_FIELDS.reduce((sum, f) => sum + fieldText(pad, f.key).trim().length, 0);
  if (size(after) < MIN_PAD_CHARS && size(before) >= MIN_PAD_CHARS) {
    return `the update would leave the pad nearly empty (${size(after)} characters): a wiped pad is refused`;
  }
  return null;
}

function archiveKey(now: Date): string {
  const iso = now.toISOString();
  return `workspace-${iso.slice(0, 10).replaceAll("-", "")}-${iso.slice(11, 19).replaceAll(":", "")}`;
}

/** A refusal quotes the model's own text up to this many characters, then "…". */
const QUOTED_CHARS = 60;

function refuse(reason: string): ScratchpadResult {
  return { ok: false, reason };
}
