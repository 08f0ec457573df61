import { runScenario } from "../simulations/harness.ts";
import type { RunResult } from "../simulations/result.ts";
import { loadScenarios, naiveRunModel } from "../simulations/run.ts";
import type { BenchRow } from "./types.ts";

/**
 * What a day with presence costs, in modelled dollars: two shipped scenarios lived offline
 * exactly as `npm run simulate` lives them (the naive model behind the Messages API fake,
 * whose prompt cache runs on the virtual clock), each call priced with the price table.
 * Beside them, the two baselines of the same run (a transcript bot, and one that also
 * calls on every cron tick), each as a multiple of presence's dollars. The naive model's outputs are short, so these are floors for
 * the output side; a `--live` simulation prices what the real API reports.
 */

const SUITE = "cost";
const BUSY = "busy-workday-sporadic-replies";
const MONTH = "a-month-with-a-close-companion";
/** How the report names them (the rows' size column). */
const LABELS: Record<string, string> = { [BUSY]: "busy workday", [MONTH]: "month, close companion" };
/** The busy workday with the default models, the cache modelled honestly. */
const BUSY_DAY_DOLLARS = 0.1;
/**
 * What each bot at least costs as a multiple of presence on the month of ordinary days, the
 * direction simulate and the README show it in: ×2 and ×5, the same targets as presence
 * costing at most 0.5 and 0.2 of the bot.
 */
const MONTH_TRANSCRIPT_TIMES = 2;
const MONTH_EVERY_TICK_TIMES = 5;

/** Lives the busy workday and the month, and returns their dollars and ratios beside the targets. */
export async function runCostBench(): Promise<BenchRow[]> {
  const [busy, month] = await Promise.all([live(BUSY), live(MONTH)]);
  return [...scenarioRows(busy, BUSY_DAY_DOLLARS), ...scenarioRows(month), suppressedRow(busy, month)];
}

async function live(name: string): Promise<RunResult> {
  const [scenario] = await loadScenarios([name]);
  if (!scenario) throw new Error(`bench: the scenario ${name} is missing`);
  const model = await naiveRunModel();
  try {
    return await runScenario(scenario, { model: model.access });
  } finally {
    await model.close();
  }
}

function scenarioRows(result: RunResult, dayTarget?: number): BenchRow[] {
  const { cost } = result.metrics;
  const days = Math.max(cost.perDay.length, 1);
  const size = `${LABELS[result.scenario.name] ?? result.scenario.name}, ${days} ${days === 1 ? "day" : "days"}`;
  const perDay = round(cost.dollars / days, 4);
  const transcript = round(cost.baselines.transcript.dollars / cost.dollars, 2);
  const everyTick = round(cost.baselines.everyTick.dollars / cost.dollars, 2);
  const isMonth = result.scenario.name === MONTH;
  return [
    {
      suite: SUITE,
      name: "dollars a simulated day",
      size,
      value: perDay,
      unit: "$",
      ...(dayTarget === undefined ? {} : { target: `≤ $${dayTarget.toFixed(2)}`, met: perDay <= dayTarget }),
      note: `$${cost.dollars} over the run: ${Object.entries(cost.byPurpose)
        .map(([purpose, dollars]) => `${purpose} $${dollars}`)
        .join(", ")}`,
    },
    {
      suite: SUITE,
      name: "transcript bot costs × presence",
      size,
      value: transcript,
      unit: "×",
      ...(isMonth
        ? { target: `≥ ×${MONTH_TRANSCRIPT_TIMES}`, met: transcript >= MONTH_TRANSCRIPT_TIMES }
        : {}),
      note: `transcript bot $${cost.baselines.transcript.dollars} (${cost.baselines.transcript.calls} calls, ${cost.baselines.transcript.compactions} compactions)`,
    },
    {
      suite: SUITE,
      name: "every-tick bot costs × presence",
      size,
      value: everyTick,
      unit: "×",
      ...(isMonth
        ? { target: `≥ ×${MONTH_EVERY_TICK_TIMES}`, met: everyTick >= MONTH_EVERY_TICK_TIMES }
        : {}),
      note: `every-tick bot $${cost.baselines.everyTick.dollars} (${cost.baselines.everyTick.calls} calls)`,
    },
  ];
}

/** What check-ins held back by the pre-check cost: no model call, so nothing. */
function suppressedRow(...results: RunResult[]): BenchRow {
  let held = 0;
  let dollars = 0;
  for (const result of results) {
    const suppressed = new Set(
      result.events.filter((e) => e.kind === "checkin-held" && e.stage === "pre-check").map((e) => e.at),
    );
    held += suppressed.size;
    for (const call of result.metrics.tokens.calls) {
      if (call.purpose.startsWith("heartbeat") && suppressed.has(call.at)) dollars += call.dollars;
    }
  }
  return {
    suite: SUITE,
    name: "check-ins the pre-check held",
    size: `${held} in both runs`,
    value: round(dollars, 4),
    unit: "$",
    target: "= $0",
    met: dollars === 0,
    note: "dollars of model calls at the moments the pre-check said no: none is made",
  };
}

function round(value: number, decimals: number): number {
  const scale = 10 ** decimals;
  return Math.round(value * scale) / scale;
}
