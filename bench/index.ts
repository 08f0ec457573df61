import { runAwarenessBench } from "./awareness.ts";
import { runAwarenessTruthBench } from "./awareness-truth.ts";
import { runCostBench } from "./cost.ts";
import { runPromptsBench } from "./prompts.ts";
import { runStoreBench } from "./store.ts";
import type { BenchSuite } from "./types.ts";

/** A suite as `presence bench` lists it; `--suite NAME` runs only the suites named. */
export interface RegisteredSuite {
  name: string;
  run: BenchSuite;
}

/**
 * Every benchmark `npm run bench` runs, in order. A new suite is one file in bench/ and one
 * line here; its rows are printed side by side with the others.
 */
export const benchSuites: readonly RegisteredSuite[] = [
  { name: "awareness", run: runAwarenessBench },
  { name: "awareness-truth", run: runAwarenessTruthBench },
  { name: "store", run: runStoreBench },
  { name: "prompts", run: runPromptsBench },
  { name: "cost", run: runCostBench },
];
