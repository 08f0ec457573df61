import { describe, expect, it } from "vitest";
import { formatBenchReport } from "../../bench/command.ts";
import type { BenchRow } from "../../bench/types.ts";
import { lines, runInProcess } from "../cli/run.ts";

describe("formatBenchReport", () => {
  const rows: BenchRow[] = [
    { suite: "awareness", name: "build", size: "day", median_ms: 0.2, p95_ms: 0.3, note: "only in --json" },
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
    {
      suite: "cost",
      name: "dollars a simulated day",
      size: "busy workday, 1 day",
      value: 0.0969,
      unit: "$",
      target: "≤ $0.10",
      met: true,
    },
    {
      suite: "cost",
      name: "÷ transcript baseline",
      size: "month, 30 days",
      value: 0.62,
      unit: "ratio",
      target: "≤ 0.5",
      met: false,
    },
    { suite: "prompts", name: "reply prompt (ours)", size: "year, steady", value: 3120, unit: "tokens" },
  ];

  it("groups the rows by suite under a heading, each figure against the smallest size of its kind", () => {
    const report = lines(formatBenchReport(rows));
    expect(report[0]).toBe("awareness");
    expect(report[1]).toMatch(/^ {2}build\s+day\s+0\.200 ms\s+p95 0\.300\s+×1\.0$/);
    expect(report[2]).toMatch(/^ {2}build\s+year\s+0\.500 ms\s+p95 0\.900\s+×2\.5\s+median < 2 ms\s+ok$/);
    expect(report[3]).toBe("");
    expect(report[4]).toBe("store");
    expect(report[6]).toMatch(/^ {2}append\s+year\s+8\.00 ms\s+p95 12\.50\s+×4\.0\s+median < 5 ms\s+MISSED$/);
    expect(report[8]).toBe("cost");
    expect(report[9]).toMatch(/dollars a simulated day\s+busy workday, 1 day\s+\$0\.0969\s+≤ \$0\.10\s+ok$/);
    expect(report).toContainEqual(
      expect.stringMatching(/reply prompt \(ours\)\s+year, steady\s+3120 tokens$/),
    );
    expect(formatBenchReport(rows)).not.toContain("only in --json");
  });

  it("ends with a verdict naming every missed target with its figure", () => {
    const report = lines(formatBenchReport(rows));
    const at = report.indexOf("verdict: 2 of 4 targets met; missed:");
    expect(at).toBeGreaterThan(0);
    expect(report.slice(at + 1)).toEqual([
      "  - store: append (year): 8.00 ms, target median < 5 ms",
      "  - cost: ÷ transcript baseline (month, 30 days): 0.62, target ≤ 0.5",
    ]);
    expect(lines(formatBenchReport(rows.filter((r) => r.met !== false))).at(-1)).toBe(
      "verdict: all 2 targets met",
    );
  });

  it("keeps every line within 120 columns, cutting long names, and aligns the figures of a suite", () => {
    const long: BenchRow[] = [
      ...rows,
      { suite: "prompts", name: "compose", size: "day", median_ms: 12.3456, p95_ms: 20 },
      {
        suite: "prompts",
        name: "a very long benchmark name that goes on and on about what exactly it measures and why ".repeat(
          2,
        ),
        size: "month, heavy (3900 msgs)",
        median_ms: 1.5,
        p95_ms: 2.5,
        target: "median < 2 ms",
        met: true,
      },
    ];
    const report = lines(formatBenchReport(long));
    expect(Math.max(...report.map((line) => line.length))).toBeLessThanOrEqual(120);
    expect(report).toContainEqual(expect.stringMatching(/^ {2}a very long benchmark name.*…\s+month, heavy/));
    const prompts = report.slice(report.indexOf("prompts") + 1);
    const ends = prompts.flatMap((line) => {
      const figure = /\d ms(?= )/.exec(line);
      return figure ? [figure.index + figure[0].length] : [];
    });
    expect(ends).toHaveLength(2);
    expect(new Set(ends).size).toBe(1);
  });
});

describe("presence bench", () => {
  it("names an unknown suite and the ones there are, exit 2", async () => {
    const result = await runInProcess(["bench", "--suite", "nope"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/no suite named "nope" \(suites: awareness, awareness-truth, store[,)]/);
  });
});
