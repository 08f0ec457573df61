import type { CallRecord, SimEvent } from "./events.ts";
import type { ExpectationResult, Metrics } from "./metrics.ts";
import type { Scenario } from "./scenario.ts";

/** Which model played the companion's mind. */
export type ModelKind = "naive" | "live";

/** A judge's grade of how contextually appropriate the companion was (`--judge`). */
export interface JudgeGrade {
  /** 1 (tone-deaf) to 5 (exactly what a perceptive friend would do). */
  score: number;
  verdict: string;
}

/** Everything one run of one scenario produced: what the transcript, report and table are made of. */
export interface RunResult {
  scenario: Scenario;
  model: ModelKind;
  /** The scenario's span as instants (ISO UTC). */
  span: { start: string; end: string };
  events: SimEvent[];
  calls: CallRecord[];
  metrics: Metrics;
  expectations: ExpectationResult[];
  passed: boolean;
  judge?: JudgeGrade;
  /** Wall-clock duration of the run, for the progress line. */
  elapsedMs: number;
}
