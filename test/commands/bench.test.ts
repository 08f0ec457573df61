import { describe, expect, it } from "vitest";
import type { BenchRow } from "../../bench/types.ts";
import { formatBenchTable } from "../../src/commands/bench.ts";
import { lines, runInProcess } from "../cli/run.ts";

describe("formatBenchTable", () => {
  const rows: BenchRow[] = [
    { suite: "awareness", name: "build", size: "day", median_ms: 0.2, p95_ms: 0.3 },
    {
      suite: "awareness",
      name: "build",
      size: "year",
      median_ms: 0.5,
      p95_ms: 0.9,
      target: "median < 2 ms",
      met: true,
    },
    { suite: "store", name: "append", size: "day", median_ms: 2, p95_ms: 3 },
    {
      suite: "store",
      name: "append",
      size: "year",
      median_ms: 8,
      p95_ms: 12.5,
      target: "median < 5 ms",
      met: false,
    },
  ];

  it("puts the figures side by side, each against the smallest size of its kind", () => {
    const table = lines(formatBenchTable(rows));
    expect(table[0]).toMatch(/^suite\s+name\s+size\s+median ms\s+p95 ms\s+× smallest\s+target\s+met\?$/);
    expect(table[1]).toMatch(/^-+$/);
    expect(table[2]).toMatch(/^awareness\s+build\s+day\s+0\.200\s+0\.300\s+×1\.0$/);
    expect(table[3]).toMatch(/^awareness\s+build\s+year\s+0\.500\s+0\.900\s+×2\.5\s+median < 2 ms\s+yes$/);
    expect(table[5]).toMatch(/^store\s+append\s+year\s+8\.00\s+12\.50\s+×4\.0\s+median < 5 ms\s+NO$/);
  });

  it("aligns the columns", () => {
    const table = lines(formatBenchTable(rows));
    const medianEnd = (line: string) => line.indexOf("median ms") + "median ms".length;
    const end = medianEnd(table[0] ?? "");
    for (const line of table.slice(2)) expect(line.slice(end - 5, end)).toMatch(/^[ \d.]*\d$/);
  });

  it("shows values, units and notes only when some row has them", () => {
    const table = formatBenchTable([
      { suite: "prompt", name: "tokens", size: "year", value: 3120, unit: "tokens", note: "flat" },
    ]);
    expect(table).toContain("value");
    expect(table).toContain("3120 tokens");
    expect(table).toContain("note");
    expect(table).not.toContain("median ms");
  });
});

describe("presence bench", () => {
  it("names an unknown suite and the ones there are, exit 2", async () => {
    const result = await runInProcess(["bench", "--suite", "nope"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/no suite named "nope" \(suites: awareness, store[,)]/);
  });
});
