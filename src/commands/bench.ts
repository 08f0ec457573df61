import type { BenchRow } from "../../bench/types.ts";
import { defineCommand, UsageError } from "./command.ts";

/**
 * `presence bench` (`npm run bench`): runs the benchmark suites listed in bench/index.ts and
 * prints their figures side by side in one table. Figures, not assertions: a missed target
 * is shown, and the exit code stays 0.
 */

interface Column {
  title: string;
  cell: (row: BenchRow, ratio: number | undefined) => string;
  right?: boolean;
}

const COLUMNS: Column[] = [
  { title: "suite", cell: (r) => r.suite },
  { title: "name", cell: (r) => r.name },
  { title: "size", cell: (r) => r.size },
  { title: "median ms", cell: (r) => ms(r.median_ms), right: true },
  { title: "p95 ms", cell: (r) => ms(r.p95_ms), right: true },
  {
    title: "× smallest",
    cell: (_, ratio) => (ratio === undefined ? "" : `×${ratio.toFixed(1)}`),
    right: true,
  },
  {
    title: "value",
    cell: (r) => (r.value === undefined ? "" : `${r.value}${r.unit ? ` ${r.unit}` : ""}`),
    right: true,
  },
  { title: "target", cell: (r) => r.target ?? "" },
  { title: "met?", cell: (r) => (r.met === undefined ? "" : r.met ? "yes" : "NO") },
  { title: "note", cell: (r) => r.note ?? "" },
];

function ms(value: number | undefined): string {
  if (value === undefined) return "";
  return value < 1 ? value.toFixed(3) : value < 100 ? value.toFixed(2) : value.toFixed(1);
}

/**
 * Each timed row's median against the first row of the same suite and name: the suites list
 * their sizes smallest first, so this shows how a cost grows from a day to a year.
 */
function ratios(rows: readonly BenchRow[]): (number | undefined)[] {
  const baseline = new Map<string, number>();
  return rows.map((row) => {
    if (row.median_ms === undefined) return undefined;
    const key = `${row.suite}\u0000${row.name}`;
    const base = baseline.get(key);
    if (base === undefined) baseline.set(key, row.median_ms);
    return base === undefined ? 1 : base > 0 ? row.median_ms / base : undefined;
  });
}

/** The rows as one aligned plain-text table; columns nobody filled are left out. */
export function formatBenchTable(rows: readonly BenchRow[]): string {
  const rowRatios = ratios(rows);
  const cells = rows.map((row, i) => COLUMNS.map((c) => c.cell(row, rowRatios[i])));
  const used = COLUMNS.map((_, col) => cells.some((line) => line[col] !== ""));
  const columns = COLUMNS.filter((_, col) => used[col]);
  const body = cells.map((line) => line.filter((_, col) => used[col]));
  const widths = columns.map((c, col) =>
    Math.max(c.title.length, ...body.map((line) => (line[col] ?? "").length)),
  );
  const render = (line: string[]) =>
    line
      .map((text, col) =>
        columns[col]?.right ? text.padStart(widths[col] ?? 0) : text.padEnd(widths[col] ?? 0),
      )
      .join("  ")
      .trimEnd();
  const header = render(columns.map((c) => c.title));
  return [header, "-".repeat(header.length), ...body.map(render)].join("\n");
}

export const benchCommand = defineCommand({
  name: "bench",
  summary: "run the performance benchmarks and print their figures side by side",
  usage: "bench [--suite NAME]... [--json]",
  help: [
    "Runs the benchmark suites (bench/index.ts) on generated data (a day, a month and a year of",
    "heavy use) and prints one table: median and 95th-percentile milliseconds, the ratio to the",
    "smallest size, and the target where there is one. Takes a minute or so; writes only to",
    "temporary directories.",
    "",
    "Options:",
    "  --suite NAME   run only this suite (repeatable)",
    "  --json         print the rows as a JSON array instead of the table",
  ].join("\n"),
  options: {
    suite: { type: "string", multiple: true },
    json: { type: "boolean", default: false },
  },
  async run({ values }, io) {
    const { benchSuites } = await import("../../bench/index.ts");
    const wanted = values.suite ?? benchSuites.map((s) => s.name);
    const unknown = wanted.filter((name) => !benchSuites.some((s) => s.name === name));
    if (unknown.length > 0) {
      throw new UsageError(
        `bench: no suite named "${unknown[0]}" (suites: ${benchSuites.map((s) => s.name).join(", ")})`,
      );
    }
    const rows: BenchRow[] = [];
    for (const suite of benchSuites.filter((s) => wanted.includes(s.name))) {
      if (!values.json) io.stderr(`running ${suite.name}…\n`);
      rows.push(...(await suite.run()));
    }
    io.stdout(values.json ? `${JSON.stringify(rows, null, 2)}\n` : `${formatBenchTable(rows)}\n`);
    return 0;
  },
});
