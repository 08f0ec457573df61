/**
 * One figure of a benchmark run. Timing rows carry median/p95 milliseconds; other figures
 * (a prompt's token count, a file's size) carry value and unit. `size` names the input
 * scale ("day", "month", "year") so rows of one name can be compared side by side.
 */
export interface BenchRow {
  suite: string;
  name: string;
  size: string;
  median_ms?: number;
  p95_ms?: number;
  value?: number;
  unit?: string;
  /** The goal in words, e.g. "median < 2 ms". */
  target?: string;
  /** Whether the target was met; absent when the row has no target. */
  met?: boolean;
  note?: string;
}

/** A benchmark suite: builds its own inputs, measures, and returns its rows. */
export type BenchSuite = () => Promise<BenchRow[]>;
