import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatTable, loadModelConfig, OUTPUT_WIDTH, wrapWords } from "../src/app/runtime.ts";
import { SettableClock, systemClock } from "../src/core/clock.ts";
import { ModelClient } from "../src/model/llm.ts";
import { startMessagesApiFake } from "../testkit/messages-api.ts";
import { formatDollars, timesPresence } from "./cost.ts";
import { type ModelAccess, runScenario } from "./harness.ts";
import { judgeRun } from "./judge.ts";
import { NaiveModel } from "./naive-model.ts";
import { planScenario } from "./plan.ts";
import { renderReport } from "./report.ts";
import type { RunResult } from "./result.ts";
import { loadScenarioFile, type Scenario, ScenarioError } from "./scenario.ts";
import { renderTranscript } from "./transcript.ts";

/**
 * Running scenarios as a batch: finding them, giving each its model, writing each run's
 * transcript, figures and report, and summing the batch up in one table.
 */

/** The shipped scenario files. */
const SCENARIOS_DIR = fileURLToPath(new URL("./scenarios/", import.meta.url));
/** Where run outputs go unless PRESENCE_SIMULATIONS_OUT says otherwise (ignored by git). */
export const OUT_DIR = fileURLToPath(new URL("./out/", import.meta.url));

/** The shipped scenarios' names, alphabetically. */
export async function scenarioNames(dir: string = SCENARIOS_DIR): Promise<string[]> {
  const files = await readdir(dir);
  return files
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

/**
 * Loads scenarios by name (all shipped ones when none is given) or by path to a `.json`
 * file (your own scenario), and checks that each one can be planned; an unknown name
 * lists the known ones.
 */
export async function loadScenarios(
  names: readonly string[],
  dir: string = SCENARIOS_DIR,
): Promise<Scenario[]> {
  const known = await scenarioNames(dir);
  const wanted = names.length > 0 ? names : known;
  const isPath = (n: string) => n.endsWith(".json");
  const unknown = wanted.filter((n) => !isPath(n) && !known.includes(n));
  if (unknown.length > 0) {
    throw new ScenarioError(
      `no scenario named ${unknown.join(", ")} in ${dir}; the scenarios are: ${known.join(", ")}`,
    );
  }
  const scenarios = await Promise.all(
    wanted.map((n) => loadScenarioFile(isPath(n) ? n : join(dir, `${n}.json`))),
  );
  // Every wall time must resolve now, so a bad time fails as a usage mistake before any run starts.
  for (const scenario of scenarios) planScenario(scenario);
  return scenarios;
}

/** A model for one run and how to let it go. */
export interface RunModel {
  access: ModelAccess;
  close(): Promise<void>;
}

/**
 * A fresh naive model behind a fresh Messages API fake, reached through its in-process fetch:
 * each run starts its topic rotation and the fake's prompt cache from scratch, so a run's
 * figures do not depend on the others.
 * The fake's cache runs on the run's virtual clock, so a prefix written an hour of
 * scenario time ago has expired, as it would have for real.
 */
export async function naiveRunModel(): Promise<RunModel> {
  const clock = new SettableClock(new Date(0));
  const api = await startMessagesApiFake({ clock });
  const naive = new NaiveModel();
  api.setHandler(naive.handler);
  const config = loadModelConfig({
    ANTHROPIC_API_KEY: api.apiKey,
    ANTHROPIC_BASE_URL: api.url,
    PRESENCE_MAX_RETRIES: "0",
  });
  return {
    access: {
      kind: "naive",
      config,
      fetch: api.fetch,
      clock,
      endTurn: () => naive.endTurn(),
      problems: () => api.problems,
    },
    close: () => api.close(),
  };
}

/** The real model, configured like the bot (ANTHROPIC_API_KEY, PRESENCE_MODEL…); ConfigError when missing. */
function liveRunModel(env: Record<string, string | undefined>): RunModel {
  return { access: { kind: "live", config: loadModelConfig(env) }, close: async () => undefined };
}

/** How a batch runs: which model, whether to judge, where outputs go, who hears of progress. */
export interface BatchOptions {
  live: boolean;
  judge: boolean;
  env: Record<string, string | undefined>;
  outDir?: string;
  /** Called as each run finishes (progress). */
  onResult?: (result: RunResult, outputDir: string) => void;
}

/** How many offline runs share the machine at once: each waits on its own disk writes. */
const OFFLINE_CONCURRENCY = 4;

/**
 * Runs scenarios (offline ones a few at a time, each with its own model, clock and data
 * directory), writing each run's outputs as soon as it is done. Results come back in the
 * order the scenarios were given.
 */
export async function runBatch(scenarios: readonly Scenario[], options: BatchOptions): Promise<RunResult[]> {
  const judge = options.judge
    ? new ModelClient(loadModelConfig(options.env), { clock: systemClock })
    : undefined;
  const live = options.live ? liveRunModel(options.env) : undefined;
  const runOne = async (scenario: Scenario): Promise<RunResult> => {
    const model = live ?? (await naiveRunModel());
    let result: RunResult;
    try {
      result = await runScenario(scenario, { model: model.access });
    } finally {
      await model.close();
    }
    if (judge) result.judge = await judgeRun(result, judge);
    const dir = await writeRunOutputs(result, options.outDir ?? OUT_DIR);
    options.onResult?.(result, dir);
    return result;
  };
  const results: RunResult[] = new Array(scenarios.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < scenarios.length; i = next++)
      results[i] = await runOne(scenarios[i] as Scenario);
  };
  const lanes = live ? 1 : Math.min(OFFLINE_CONCURRENCY, scenarios.length);
  await Promise.all(Array.from({ length: lanes }, worker));
  return results;
}

/** The run's directory name: the scenario, marked when the real model played. */
function runName(result: RunResult): string {
  return result.model === "live" ? `${result.scenario.name}-live` : result.scenario.name;
}

/** Writes transcript.md, metrics.json and report.html into `<outDir>/<run>/` and returns that directory. */
export async function writeRunOutputs(result: RunResult, outDir: string = OUT_DIR): Promise<string> {
  const dir = join(outDir, runName(result));
  await mkdir(dir, { recursive: true });
  const figures = {
    scenario: result.scenario.name,
    model: result.model,
    span: result.span,
    passed: result.passed,
    expectations: result.expectations,
    metrics: result.metrics,
    judge: result.judge ?? null,
    events: result.events,
  };
  await Promise.all([
    writeFile(join(dir, "transcript.md"), renderTranscript(result)),
    writeFile(join(dir, "metrics.json"), `${JSON.stringify(figures, null, 2)}\n`),
    writeFile(join(dir, "report.html"), renderReport(result)),
  ]);
  return dir;
}

/**
 * One finished run for progress on stderr, within `width`: its verdict, what it sent and held
 * and how long it took; the names of the expectations it missed wrap onto further lines.
 */
export function progressLines(result: RunResult, width: number = OUTPUT_WIDTH): string[] {
  const failed = result.expectations.filter((e) => !e.ok).map((e) => e.name);
  const verdict = failed.length === 0 ? "ok" : `FAILED (${failed.join("; ")})`;
  const seconds = (result.elapsedMs / 1000).toFixed(1);
  return wrapWords(
    `  ${result.scenario.name}: ${verdict} · ${result.metrics.fired} sent, ${result.metrics.held} held · ${seconds} s`,
    width,
  );
}

/**
 * The batch as one table within `width`: a row per scenario, and under it what the re-ask
 * column means, since a re-ask after the answered-topic window is allowed and one inside it
 * is a failure; then what each run cost beside the two baselines.
 */
export function summaryTable(results: readonly RunResult[], width: number = OUTPUT_WIDTH): string {
  const judged = results.some((r) => r.judge);
  const headings = [
    ["scenario"],
    ["expectations"],
    ["fired"],
    ["held"],
    ["longest", "unanswered"],
    ["re-asks", "in window", "(later)"],
    ["leaks", "(stripped)"],
    ...(judged ? [["judge"]] : []),
  ];
  const rows = results.map((r) => {
    const met = r.expectations.filter((e) => e.ok).length;
    return [
      r.scenario.name,
      `${r.passed ? "met" : "NOT MET"} ${met}/${r.expectations.length}`,
      String(r.metrics.fired),
      String(r.metrics.held),
      String(r.metrics.longestUnansweredRun),
      `${r.metrics.reasksOfAnswered} (${r.metrics.reasksAfterWindow})`,
      `${r.metrics.leaksDelivered} (${r.metrics.leaksStripped})`,
      ...(r.judge ? [`${r.judge.score}/5`] : []),
    ];
  });
  const windows = [...new Set(results.map((r) => r.metrics.answeredTopicHours))].join("/");
  return [
    ...formatTable(rows, { headings, right: FIGURES, width }),
    "",
    ...wrapWords(
      `re-asks: check-ins on a topic the person had answered; "in window" (less than ${windows} h after the answer) must be 0, "later" (the same day, after the window) is allowed by design and shown in each report.`,
      width,
      "",
    ),
    "",
    costTable(results, width),
  ].join("\n");
}

/** Every column but the scenario's holds a figure. */
const FIGURES = new Set([1, 2, 3, 4, 5, 6, 7]);

/**
 * What each run cost in dollars, a day on average, and beside it what each baseline bot
 * would have cost over the same timeline, in dollars and as a multiple of presence's
 * (timesPresence: the direction every cost ratio is shown in).
 */
function costTable(results: readonly RunResult[], width: number): string {
  const headings = [
    ["scenario"],
    ["days"],
    ["dollars"],
    ["a day"],
    ["dollars"],
    ["costs ×", "presence"],
    ["dollars"],
    ["costs ×", "presence"],
  ];
  const groups = [
    { label: "transcript bot", from: 4, to: 5 },
    { label: "every-tick bot", from: 6, to: 7 },
  ];
  const rows = results.map((r) => {
    const { cost } = r.metrics;
    const days = Math.max(cost.perDay.length, 1);
    const { transcript, everyTick } = cost.baselines;
    return [
      r.scenario.name,
      String(days),
      formatDollars(cost.dollars),
      formatDollars(cost.dollars / days),
      formatDollars(transcript.dollars),
      timesPresence(transcript.dollars, cost.dollars),
      formatDollars(everyTick.dollars),
      timesPresence(everyTick.dollars, cost.dollars),
    ];
  });
  const prices = [...new Set(results.map((r) => r.metrics.cost.prices))].join("; ");
  return [
    ...formatTable(rows, { headings, groups, right: FIGURES, width }),
    "",
    ...[
      "costs × presence: what the bot would have cost as a multiple of presence's dollars (×2.0: twice as much; under ×1: less).",
      `Dollars are modelled: each call's usage is priced at ${prices}.`,
      "The bots replay the whole log on the same timeline (transcript: a call per message sent; every tick: plus one per cron tick) with the same cache model. The naive model's outputs are short.",
    ].flatMap((paragraph) => wrapWords(paragraph, width, "")),
  ].join("\n");
}
