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
      name: "transcript bot costs × presence",
      size: "month, 30 days",
      value: 1.61,
      unit: "×",
      target: "≥ ×2",
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
    // Each bot as a multiple of presence, in the words simulate, its report and the README use.
    expect(report).toContainEqual(
      expect.stringMatching(
        /^ {2}transcript bot costs × presence\s+month, 30 days\s+×1\.61\s+≥ ×2\s+MISSED$/,
      ),
    );
    expect(formatBenchReport(rows)).not.toContain("only in --json");
  });

  it("ends with a verdict naming every missed target with its figure", () => {
    const report = lines(formatBenchReport(rows));
    const at = report.indexOf("verdict: 2 of 4 targets met; missed:");
    expect(at).toBeGreaterThan(0);
    expect(report.slice(at + 1)).toEqual([
      "  - store: append (year): 8.00 ms, target median < 5 ms",
      "  - cost: transcript bot costs × presence (month, 30 days): ×1.61, target ≥ ×2",
    ]);
    expect(lines(formatBenchReport(rows.filter((r) => r.met !== false))).at(-1)).toBe(
      "verdict: all 2 targets met",
    );
  });

  it("keeps every line within 100 columns, a name too long for its row above the rest, cut only when it cannot fit", () => {
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
    expect(Math.max(...report.map((line) => line.length))).toBeLessThanOrEqual(100);
    const at = report.findIndex((line) => line.startsWith("  a very long benchmark name"));
    expect(report[at]).toMatch(/…$/);
    expect(report[at + 1]).toMatch(/^ {4}month, heavy \(3900 msgs\)\s+1\.50 ms/);
    const prompts = report.slice(report.indexOf("prompts") + 1);
    const ends = prompts.flatMap((line) => {
      const figure = /\d ms(?= )/.exec(line);
      return figure ? [figure.index + figure[0].length] : [];
    });
    expect(ends).toHaveLength(2);
    expect(new Set(ends).size).toBe(1);
    // A suite that fits stays a row a line.
    expect(report[1]).toMatch(/^ {2}build\s+day\s+0\.200 ms/);
  });

  it("on a narrower terminal stacks only the suites too wide for it, and wraps a missed target", () => {
    const report = lines(formatBenchReport(rows, 80));
    expect(Math.max(...report.map((line) => line.length))).toBeLessThanOrEqual(80);
    expect(report[1]).toMatch(/^ {2}build\s+day\s+0\.200 ms/);
    const narrow = lines(formatBenchReport(rows, 70));
    expect(Math.max(...narrow.map((line) => line.length))).toBeLessThanOrEqual(70);
    expect(narrow[1]).toMatch(/^ {2}build\s+day\s+0\.200 ms/);
    const costAt = narrow.indexOf("cost");
    expect(narrow[costAt + 1]).toBe("  dollars a simulated day");
    expect(narrow[costAt + 2]).toMatch(/^ {4}busy workday, 1 day\s+\$0\.0969\s+≤ \$0\.10\s+ok$/);
    expect(lines(formatBenchReport(rows, 60)).slice(-2)).toEqual([
      "  - cost: transcript bot costs × presence (month, 30 days):",
      "      ×1.61, target ≥ ×2",
    ]);
  });
});

describe("presence bench", () => {
  it("names an unknown suite and the ones there are, exit 2", async () => {
    const result = await runInProcess(["bench", "--suite", "nope"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/no suite named "nope" \(suites: awareness, awareness-truth, store[,)]/);
  });

  it("prints the prompts suite within 100 columns through the real command, and within 80 on such a terminal", async () => {
    for (const columns of [undefined, 80]) {
      const result = await runInProcess(
        ["bench", "--suite", "prompts"],
        {},
        columns === undefined ? {} : { columns },
      );
      expect(result.code).toBe(0);
      const printed = lines(result.stdout);
      expect(printed[0]).toBe("prompts");
      expect(Math.max(...printed.map((line) => line.length)), `columns ${columns}`).toBeLessThanOrEqual(
        columns ?? 100,
      );
      expect(printed).toContain("  reply prompt (ours)");
      expect(printed.at(-1)).toMatch(/^verdict: /);
    }
  }, 30_000);
});
