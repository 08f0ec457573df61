import { DateTime } from "luxon";
import { systemClock } from "../../core/clock.ts";
import { clip } from "../../core/text.ts";
import { Trace, type TraceLine } from "../../store/trace.ts";
import { loadCoreConfig } from "../config.ts";
import { defineCommand, UsageError } from "./command.ts";

/**
 * `trace [--last N]`: recent turns as a person debugging them wants to read them — what
 * came in, what the model was shown (sizes by section), what it returned, what changed in
 * the mind and what it cost. The trace holds private text; this only reads it.
 */
export const traceCommand = defineCommand({
  name: "trace",
  summary: "recent turns: input, what the model was shown, what it returned, what changed, tokens",
  usage: "trace [--last N] [--json]",
  help: [
    "Prints the newest records of data/trace.jsonl, oldest first. Reads only.",
    "",
    "Options:",
    "  --last N   how many records (default 10)",
    "  --json     the records as JSON lines, unabridged",
  ].join("\n"),
  options: { last: { type: "string" }, json: { type: "boolean" } },
  async run({ values }, io) {
    const last = values.last === undefined ? 10 : Number(values.last);
    if (!Number.isInteger(last) || last < 1) {
      throw new UsageError(`--last must be a whole number of at least 1, got "${values.last}"`);
    }
    const core = loadCoreConfig(io.env);
    const records = await new Trace({ dataDir: core.dataDir, clock: systemClock }).last(last);
    if (values.json) {
      io.stdout(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
      return 0;
    }
    if (records.length === 0) {
      io.stdout("No turns traced yet.\n");
      return 0;
    }
    io.stdout(`${records.map((r) => formatTraceRecord(r, core.timezone)).join("\n\n")}\n`);
    return 0;
  },
});

const LABEL_WIDTH = 9;
/** Fields shown on their own lines, in this order; the rest follow as compact JSON. */
const SHOWN_FIRST = [
  "input",
  "shown",
  "returned",
  "sent",
  "changes",
  "reflection",
  "usage",
  "tokens",
] as const;
const IN_HEADER = new Set(["ts", "kind", "stage", "outcome"]);
/** A value longer than this many characters is cut, "…" after it. */
const CLIP = 240;

/** One trace record as a few labelled lines, times in the person's zone. */
function formatTraceRecord(record: TraceLine, zone: string): string {
  const when = DateTime.fromISO(record.ts, { zone }).toFormat("yyyy-MM-dd HH:mm:ss");
  const header = [record.kind, record.stage, record.outcome].filter((p) => typeof p === "string").join(" · ");
  const lines = [`── ${when} ${header}`];
  const line = (label: string, text: string) => lines.push(`${`${label}:`.padEnd(LABEL_WIDTH)} ${text}`);
  for (const key of SHOWN_FIRST) {
    if (record[key] === undefined) continue;
    const text = describeField(key, record[key]);
    if (text !== "") line(key === "usage" ? "tokens" : key, text);
  }
  for (const [key, value] of Object.entries(record)) {
    if (IN_HEADER.has(key) || (SHOWN_FIRST as readonly string[]).includes(key) || value === undefined)
      continue;
    line(key, clip(typeof value === "string" ? value : JSON.stringify(value), CLIP));
  }
  return lines.join("\n");
}

function describeField(key: (typeof SHOWN_FIRST)[number], value: unknown): string {
  switch (key) {
    case "input":
      return Array.isArray(value) ? value.map((m) => quote(textOf(m))).join(" · ") : quote(textOf(value));
    case "shown":
      return describeShown(value);
    case "returned":
    case "sent":
    case "reflection":
      return typeof value === "object" && value !== null && "text" in value
        ? quote(textOf(value))
        : clip(JSON.stringify(value), CLIP);
    case "changes":
      return Array.isArray(value)
        ? value.length === 0
          ? "nothing"
          : value.join("; ")
        : clip(JSON.stringify(value), CLIP);
    case "usage":
    case "tokens":
      return describeTokens(value);
  }
}

/** Section sizes, whether as [{ name, tokens }] (reflection) or { section: tokens } (reply, heartbeat). */
function describeShown(value: unknown): string {
  if (typeof value !== "object" || value === null) return clip(JSON.stringify(value), CLIP);
  const record = value as Record<string, unknown>;
  const model = typeof record.model === "string" ? `${record.model}: ` : "";
  if (Array.isArray(record.sections)) {
    const parts = record.sections.map(
      (s: { name?: unknown; tokens?: unknown }) => `${String(s.name)} ${String(s.tokens)}`,
    );
    return `${model}${parts.join(", ")} tokens`;
  }
  const sizes = Object.entries(record).filter(([, v]) => typeof v === "number");
  if (sizes.length === 0) return clip(JSON.stringify(value), CLIP);
  const truncated =
    Array.isArray(record.truncated) && record.truncated.length > 0
      ? ` (cut: ${record.truncated.join(", ")})`
      : "";
  return `${model}${sizes.map(([k, v]) => `${k} ${v}`).join(", ")}${truncated}`;
}

/** Token counts of one call or several, summed. */
function describeTokens(value: unknown): string {
  const calls = (Array.isArray(value) ? value : [value]).filter(
    (v): v is Record<string, unknown> => typeof v === "object" && v !== null,
  );
  const sum = (field: string) =>
    calls.reduce((total, c) => total + (typeof c[field] === "number" ? c[field] : 0), 0);
  const input = sum("input");
  const output = sum("output");
  if (calls.length === 0 || (input === 0 && output === 0 && sum("cacheRead") === 0))
    return clip(JSON.stringify(value), CLIP);
  return `input ${input}, output ${output}, cache write ${sum("cacheWrite")}, cache read ${sum("cacheRead")}`;
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null && "text" in value) return String(value.text);
  return JSON.stringify(value);
}

function quote(text: string): string {
  return `"${clip(text.replace(/\s+/g, " "), CLIP)}"`;
}
