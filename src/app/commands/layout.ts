import { clip } from "../../core/text.ts";
import type { CommandIO } from "./command.ts";

/**
 * Fitting a command's printed output to the screen it goes to. A terminal wraps a line that
 * is too long in the middle of a row, which scrambles a table; so every line keeps within a
 * width, a table too wide for it stacks each row's first cell above its figures, and prose is
 * wrapped between words. Output that goes to a pipe or a file (and tests) gets the same
 * 100-column layout every time.
 */

/** The widest line a command prints: a wider terminal gets the same layout, a narrower one its own. */
export const OUTPUT_WIDTH = 100;
/** Below this no layout reads; a tinier terminal is treated as this wide. */
const NARROWEST = 40;
const GAP = "  ";
/** How far a stacked row's figures, or a wrapped line's continuation, sit in from its first line. */
const STEP = "  ";

/** The width `io`'s output keeps within: the terminal's when narrower than OUTPUT_WIDTH, else OUTPUT_WIDTH. */
export function outputWidth(io: Pick<CommandIO, "columns">): number {
  const columns = io.columns;
  if (columns === undefined || !(columns > 0)) return OUTPUT_WIDTH;
  return Math.max(NARROWEST, Math.min(OUTPUT_WIDTH, columns));
}

/** How a table is laid out: its headings, which columns hold figures, and the width it keeps within. */
export interface TableLayout {
  /** Each column's heading, top line first (a shorter one sits on the bottom line); none: no heading and no rule. */
  headings?: readonly (readonly string[])[];
  /** Labels on a line of their own above the headings, each over columns `from`…`to` (inclusive). */
  groups?: readonly { label: string; from: number; to: number }[];
  /** The columns whose cells are right-aligned (figures); the others are left-aligned. */
  right: ReadonlySet<number>;
  /** Put before every line. */
  indent?: string;
  width: number;
}

/**
 * Rows as aligned columns, a row a line, columns empty in every row left out. When that is
 * wider than `layout.width`, each row's first cell goes on a line of its own, with the
 * other cells aligned beneath it; a line still too wide is cut with "…" rather than left
 * for the terminal to wrap.
 */
export function formatTable(rows: readonly (readonly string[])[], layout: TableLayout): string[] {
  const headings = layout.headings ?? [];
  const count = Math.max(headings.length, ...rows.map((row) => row.length));
  const widths = Array.from({ length: count }, (_, col) =>
    Math.max(
      0,
      ...(headings[col] ?? []).map((line) => line.length),
      ...rows.map((row) => (row[col] ?? "").length),
    ),
  );
  // A group's label fits over its columns: the last of them widens when it would not.
  for (const { label, from, to } of layout.groups ?? []) {
    let span = -GAP.length;
    for (let col = from; col <= to; col++) span += (widths[col] ?? 0) + GAP.length;
    if (label.length > span) widths[to] = (widths[to] ?? 0) + label.length - span;
  }
  const shown = widths.flatMap((width, col) => (width > 0 ? [col] : []));
  const indent = layout.indent ?? "";
  const fits = (lines: readonly string[]) => lines.every((line) => line.length <= layout.width);
  const rowPerLine = block(rows, shown, widths, layout, indent);
  const wide = [...rowPerLine.head, ...rowPerLine.body];
  if (fits(wide) || shown.length < 2) return wide.map((line) => clip(line, layout.width, { fit: true }));
  const [first = 0, ...rest] = shown;
  const beneath = block(rows, rest, widths, layout, indent + STEP);
  const stacked = [
    ...(headings[first] ?? []).filter((line) => line !== "").map((line) => indent + line),
    ...beneath.head,
    ...rows.flatMap((row, i) => [indent + (row[first] ?? ""), beneath.body[i] ?? ""]),
  ];
  return stacked.map((line) => clip(line, layout.width, { fit: true }));
}

/** The heading lines (groups, headings, a rule) and a line per row, for the columns `shown`. */
function block(
  rows: readonly (readonly string[])[],
  shown: readonly number[],
  widths: readonly number[],
  layout: TableLayout,
  indent: string,
): { head: string[]; body: string[] } {
  const width = (col: number) => widths[col] ?? 0;
  const line = (cell: (col: number) => string) =>
    (
      indent +
      shown
        .map((col) => (layout.right.has(col) ? cell(col).padStart(width(col)) : cell(col).padEnd(width(col))))
        .join(GAP)
    ).trimEnd();
  const body = rows.map((row) => line((col) => row[col] ?? ""));
  const headings = layout.headings;
  if (!headings) return { head: [], body };
  const height = Math.max(0, ...shown.map((col) => headings[col]?.length ?? 0));
  const headingLines = Array.from({ length: height }, (_, i) =>
    line((col) => {
      const lines = headings[col] ?? [];
      return lines[i - (height - lines.length)] ?? "";
    }),
  );
  return {
    head: [
      ...groupLine(shown, widths, layout, indent),
      ...headingLines,
      line((col) => "-".repeat(width(col))),
    ],
    body,
  };
}

/** The group labels, each right-aligned over the columns it spans; none when no group's columns are shown. */
function groupLine(
  shown: readonly number[],
  widths: readonly number[],
  layout: TableLayout,
  indent: string,
): string[] {
  const starts = new Map<number, number>();
  let at = indent.length;
  for (const col of shown) {
    starts.set(col, at);
    at += (widths[col] ?? 0) + GAP.length;
  }
  let text = "";
  for (const group of layout.groups ?? []) {
    const from = starts.get(group.from);
    const to = starts.get(group.to);
    if (from === undefined || to === undefined) continue;
    const end = to + (widths[group.to] ?? 0);
    const start = Math.max(from, end - group.label.length, text.length + 1);
    text = text.padEnd(start) + group.label;
  }
  return text === "" ? [] : [text];
}

/**
 * A paragraph as lines within `width`, broken between words; each line after the first
 * starts with the paragraph's own indentation and two spaces more, unless `continuation`
 * says otherwise. A word longer than the width (a path) keeps a line of its own, whole.
 */
export function wrapWords(text: string, width: number, continuation?: string): string[] {
  const leading = /^ */.exec(text)?.[0] ?? "";
  const next = continuation ?? leading + STEP;
  const lines: string[] = [];
  let current = leading;
  for (const word of text.slice(leading.length).split(" ")) {
    if (current.trim() === "") current += word;
    else if (current.length + 1 + word.length <= width) current += ` ${word}`;
    else {
      lines.push(current);
      current = next + word;
    }
  }
  lines.push(current);
  return lines;
}
