import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { toolInputSchema } from "../model/tool-schema.ts";
import { InvalidNoteKeyError, type NotesStore, NoteTooLargeError } from "../store/notes.ts";

/**
 * The keyed notes as tools for the reply call: things worth keeping verbatim (a plan, a
 * list, an archived WORKSPACE) live in data/notes and cost prompt tokens only on the turn
 * that reads them. Every failure comes back as a tool result the model can read and act on
 * — a bad key is refused with the rule, never quietly rewritten into another file name.
 */

const noteKey = z
  .string()
  .describe(
    'The note\'s key: 1-64 characters, letters, digits, "_" or "-" only (no slashes, dots or spaces).',
  );
// The key's rule is checked by the store, whose refusal names it; the schema only says it.
const listInput = z.object({});
const readInput = z.object({ key: noteKey });
const writeInput = z.object({ key: noteKey, text: z.string().describe("The whole note (markdown).") });

/** The three tool definitions, in a fixed order so the cached prompt prefix never changes. */
export const NOTES_TOOLS: Anthropic.Tool[] = [
  {
    name: "notes_list",
    description: "List your keyed notes (key and size). Look here before writing a new one.",
    input_schema: toolInputSchema(listInput),
  },
  {
    name: "notes_read",
    description: "Read one keyed note in full.",
    input_schema: toolInputSchema(readInput),
  },
  {
    name: "notes_write",
    description:
      "Create or replace a keyed note. For what you want to keep word for word and need only now and then; what you need every turn belongs in your understanding instead.",
    input_schema: toolInputSchema(writeInput),
  },
];

/** The names of the notes tools, for telling them apart from other tools in a tool loop. */
export const NOTES_TOOL_NAMES: ReadonlySet<string> = new Set(NOTES_TOOLS.map((t) => t.name));

/** A tool result: the content to return in the `tool_result` block and whether it reports an error. */
export interface NotesToolResult {
  content: string;
  isError: boolean;
}

/** Runs one notes tool call; never throws for anything the model did wrong. */
export async function runNotesTool(
  notes: NotesStore,
  name: string,
  input: unknown,
): Promise<NotesToolResult> {
  try {
    switch (name) {
      case "notes_list": {
        const list = await notes.list();
        if (list.length === 0) return ok("(no notes yet)");
        return ok(list.map((n) => `${n.key} (${n.bytes} bytes)`).join("\n"));
      }
      case "notes_read": {
        const parsed = readInput.safeParse(input);
        if (!parsed.success) return error('notes_read needs {"key": "<key>"}');
        const text = await notes.read(parsed.data.key);
        if (text === null) return error(`there is no note "${parsed.data.key}"; notes_list shows the keys`);
        return ok(text);
      }
      case "notes_write": {
        const parsed = writeInput.safeParse(input);
        if (!parsed.success) return error('notes_write needs {"key": "<key>", "text": "<the whole note>"}');
        await notes.write(parsed.data.key, parsed.data.text);
        return ok(`saved note "${parsed.data.key}" (${parsed.data.text.length} characters)`);
      }
      default:
        return error(`unknown tool "${name}"; the notes tools are ${[...NOTES_TOOL_NAMES].join(", ")}`);
    }
  } catch (caught) {
    if (caught instanceof InvalidNoteKeyError || caught instanceof NoteTooLargeError)
      return error(caught.message);
    throw caught;
  }
}

function ok(content: string): NotesToolResult {
  return { content, isError: false };
}

function error(content: string): NotesToolResult {
  return { content, isError: true };
}
