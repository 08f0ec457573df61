import {
  defineCommand,
  formatTable,
  OUTPUT_WIDTH,
  outputWidth,
  UsageError,
  wrapWords,
} from "../src/app/runtime.ts";
import type { BenchRow } from "./types.ts";

/**
 * `presence bench` (`npm run bench`): runs the benchmark suites listed in bench/index.ts and
 * prints their figures, suite by suite, in lines a person can read (within the terminal's
 * width, at most 100 columns; the notes and every detail are in `--json`), then a verdict
 * that names each missed target.
 * Figures, not assertions: a missed target is reported, and the exit code stays 0.
 */

const INDENT = "  ";

function ms(value: number): string {
  return value < 1 ? value.toFixed(3) : value < 100 ? value.toFixed(2) : value.toFixed(1);
}

/** A row's figure: its median in ms, or its value in its unit. */
function figure(row: BenchRow): string {
  if (row.median_ms !== undefined) return `${ms(row.median_ms)} ms`;
  if (row.value === undefined) return "";
  if (row.unit === "$") return `$${row.value.toFixed(4)}`;
  if (row.unit === "×") return `×${row.value}`;
  return row.unit && row.unit !== "ratio" && row.unit !== "share"
    ? `${row.value} ${row.unit}`
    : String(row.value);
}

/**
 * Each timed row's median against the first row of the same suite and name: the suites list
 * their sizes smallest first, so this shows how a cost grows from a day to a year.
 */
function ratios(rows: readonly BenchRow[]): string[] {
  const baseline = new Map<string, number>();
  return rows.map((row) => {
    if (row.median_ms === undefined) return "";
    const key = `${row.suite}\u0000${row.name}`;
    const base = baseline.get(key);
    if (base === undefined) {
      baseline.set(key, row.median_ms);
      return "×1.0";
    }
    return base > 0 ? `×${(row.median_ms / base).toFixed(1)}` : "";
  });
}

/**
 * The rows as a report within `width`: a heading per suite, one line per row (name, size,
 * figure, p95, growth against the smallest size, target, whether it was met), aligned within
 * the suite; a suite too wide for that puts each name on a line of its own above the rest of
 * its row; then the verdict.
 */
export function formatBenchReport(rows: readonly BenchRow[], width: number = OUTPUT_WIDTH): string {
  const growth = ratios(rows);
  const suites = [...new Set(rows.map((r) => r.suite))];
  const out: string[] = [];
  for (const suite of suites) {
    const indexes = rows.flatMap((row, i) => (row.suite === suite ? [i] : []));
    const cells = indexes.map((i) => {
      const row = rows[i] as BenchRow;
      return [
        row.name,
        row.size === "-" ? "" : row.size,
        figure(row),
        row.p95_ms === undefined ? "" : `p95 ${ms(row.p95_ms)}`,
        growth[i] ?? "",
        row.target ?? "",
        row.met === undefined ? "" : row.met ? "ok" : "MISSED",
      ];
    });
    if (out.length > 0) out.push("");
    out.push(suite, ...formatTable(cells, { right: FIGURES, indent: INDENT, width }));
  }
  out.push("", ...verdict(rows, width));
  return out.join("\n");
}

/** The figure, p95 and growth columns. */
const FIGURES = new Set([2, 3, 4]);

/** Which targets were met, and each missed one in a line of its own (wrapped within `width`). */
function verdict(rows: readonly BenchRow[], width: number): string[] {
  const judged = rows.filter((r) => r.met !== undefined);
  const missed = judged.filter((r) => r.met === false);
  if (judged.length === 0) return ["verdict: no targets in the suites run"];
  if (missed.length === 0) return [`verdict: all ${judged.length} targets met`];
  return [
    `verdict: ${judged.length - missed.length} of ${judged.length} targets met; missed:`,
    ...missed.flatMap((r) =>
      wrapWords(
        `${INDENT}- ${r.suite}: ${r.name}${r.size === "-" ? "" : ` (${r.size})`}: ${figure(r)}, target ${r.target}`,
        width,
        `${INDENT}    `,
      ),
    ),
  ];
}

export const benchCommand = defineCommand({
  name: "bench",
  summary: "run the performance benchmarks and print their figures side by side",
  usage: "bench [--suite NAME]... [--json]",
  help: [
    "Runs the benchmark suites (bench/index.ts) on generated data (a day, a month and a year of",
    "heavy use) and on two simulated scenarios (the cost suite: a busy workday and a month, in",
    "modelled dollars beside two baselines), and prints them suite by suite: median and",
    "95th-percentile milliseconds or the figure, the growth from the smallest size, the target",
    "where there is one; then a verdict listing each missed target. Takes a few minutes; writes",
    "only to temporary directories.",
    "",
    "Options:",
    "  --suite NAME   run only this suite (repeatable)",
    "  --json         print the rows as a JSON array, with their notes, instead of the report",
  ].join("\n"),
  options: {
    suite: { type: "string", multiple: true },
    json: { type: "boolean", default: false },
  },
  async run({ values }, io) {
    const { benchSuites } = await import("./index.ts");
    const wanted = values.suite ?? benchSuites.map((s) => s.name);
    const unknown = wanted.filter((name) => !benchSuites.some((s) => s.name === name));
    if (unknown.length > 0) {
      throw new UsageError(
        `no suite named "${unknown[0]}" (suites: ${benchSuites.map((s) => s.name).join(", ")})`,
      );
    }
    const rows: BenchRow[] = [];
    for (const suite of benchSuites.filter((s) => wanted.includes(s.name))) {
      if (!values.json) io.stderr(`running ${suite.name}…\n`);
      rows.push(...(await suite.run()));
    }
    io.stdout(
      values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${formatBenchReport(rows, outputWidth(io))}\n`,
    );
    return 0;
  },
});
