import { join, relative } from "node:path";
import { defineCommand, loadModelConfig, outputWidth, UsageError } from "../src/app/runtime.ts";
import { plural } from "../src/core/text.ts";
import { modelPrice, unpricedModelMessage } from "../src/model/prices.ts";
import { ScenarioError } from "./scenario.ts";

/**
 * `presence simulate` (`npm run simulate`): lives whole days with the companion in
 * seconds and says whether it behaved — one table, a report per run, and a failing exit
 * code when any scenario's expectations are not met, so CI can hold the line.
 */
export const simulateCommand = defineCommand({
  name: "simulate",
  summary: "day-long simulations with a virtual clock, a table and an HTML report per run",
  usage: "simulate [SCENARIO…] [--live] [--judge]",
  help: [
    "Runs the scenarios in simulations/scenarios (all of them, or the ones named; a path to a",
    ".json file runs your own) against the real companion code with a virtual clock.",
    "The model is the offline naive model unless --live is given, which uses the real model",
    "(ANTHROPIC_API_KEY, PRESENCE_MODEL…) and needs exactly one scenario. --judge grades each",
    "run's appropriateness with one extra call to the real model.",
    "Progress goes to stderr, one table to stdout; each run writes simulations/out/<run>/",
    "transcript.md, metrics.json and report.html (PRESENCE_SIMULATIONS_OUT: another directory).",
    "Exit code: 0 when every expectation is met, 1 when any is not, 2 for usage mistakes.",
  ].join("\n"),
  positionals: true,
  options: {
    live: { type: "boolean", default: false },
    judge: { type: "boolean", default: false },
  },
  async run({ values, positionals }, io) {
    // The harness and all it runs load here, not with the command line: every other command,
    // the bot's start included, would load them for nothing (about 0.06 s of CPU each time).
    const { loadScenarios, OUT_DIR, progressLines, runBatch, summaryTable } = await import("./run.ts");
    if (values.live && positionals.length !== 1) {
      throw new UsageError("--live runs one scenario against the real model; name exactly one");
    }
    let scenarios: Awaited<ReturnType<typeof loadScenarios>>;
    try {
      scenarios = await loadScenarios(positionals);
    } catch (error) {
      if (error instanceof ScenarioError) {
        throw new UsageError(error.message);
      }
      throw error;
    }
    // A missing key is a ConfigError now, before any run starts, not after the first one.
    if (values.live || values.judge) {
      const config = loadModelConfig(io.env);
      // A live run is priced at its end: a model the table does not list would waste it.
      const unpriced = values.live
        ? [config.model, config.decideModel, config.reflectModel].find((m) => !modelPrice(config.prices, m))
        : undefined;
      if (unpriced !== undefined) {
        throw new UsageError(unpricedModelMessage(unpriced, config.prices.file));
      }
    }
    const started = performance.now();
    const width = outputWidth(io);
    const outDir = io.env.PRESENCE_SIMULATIONS_OUT || OUT_DIR;
    const model = values.live ? "live model" : "naive model, offline";
    // Where the files go is said once (a path may run past the width); each run then gets a line.
    io.stderr(
      `simulating ${plural(scenarios.length, "scenario")} (${model}); each run's report:\n` +
        `  ${join(relative(process.cwd(), outDir) || ".", "<run>", "report.html")}\n`,
    );
    const results = await runBatch(scenarios, {
      live: values.live === true,
      judge: values.judge === true,
      env: io.env,
      outDir,
      onResult: (result) => io.stderr(`${progressLines(result, width).join("\n")}\n`),
    });
    io.stdout(`${summaryTable(results, width)}\n`);
    const failed = results.filter((r) => !r.passed).length;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    io.stderr(`${results.length - failed} of ${results.length} met their expectations in ${seconds} s\n`);
    return failed === 0 ? 0 : 1;
  },
});
