import { type PriceTable, pricesInWords } from "../src/model/prices.ts";
import { type BaselinePrompt, type Baselines, baselineCosts } from "./baselines.ts";
import type { CallRecord, SimEvent } from "./events.ts";
import { readIn } from "./zones.ts";

/**
 * What a run cost in dollars: every model call priced with the price table (the same one
 * the bot reads, PRESENCE_PRICES_FILE or the shipped prices.json) from the usage the API
 * reported, summed per local day of the person's and per purpose, beside what the two
 * baselines (baselines.ts) would have cost over the same timeline.
 */

/** What pricing a run needs: the table, the person's zone at each instant, and the baselines' prompts. */
export interface CostOptions {
  prices: PriceTable;
  zoneAt: (at: Date) => string;
  baseline: BaselinePrompt;
}

/** The run's bill. */
export interface CostFigures {
  dollars: number;
  /** Per local day of the person's (every day the run lived through, silent ones at 0). */
  perDay: { date: string; dollars: number }[];
  /** Dollars per call purpose: reply, reflect, heartbeat-decide, heartbeat-write… */
  byPurpose: Record<string, number>;
  baselines: Baselines;
  /** Which price table, as a sentence quotes it: "the 2026-10 prices (source: …)". */
  prices: string;
}

/** Dollars as people read them: cents for a dollar or more, four decimals below. */
export function formatDollars(dollars: number): string {
  return `$${dollars.toFixed(Math.abs(dollars) >= 1 ? 2 : 4)}`;
}

/**
 * What a baseline bot costs as a multiple of presence's dollars ("×2.2": 2.2 times as much),
 * the one direction every cost ratio is shown in (simulate, its report, bench, the README);
 * "–" when presence spent nothing.
 */
export function timesPresence(baseline: number, presence: number): string {
  return presence > 0 ? `×${(baseline / presence).toFixed(1)}` : "–";
}

/** Dollars rounded to a millionth, so figures stay readable in metrics.json. */
function roundDollars(dollars: number): number {
  return Math.round(dollars * 1_000_000) / 1_000_000;
}

/** Sums the priced calls per day and purpose, and replays the baselines over the same events. */
export function costFigures(
  events: readonly SimEvent[],
  calls: readonly (CallRecord & { dollars: number })[],
  options: CostOptions,
): CostFigures {
  const perDay = new Map<string, number>();
  for (const event of events) perDay.set(readIn(new Date(event.at), event.zone).date, 0);
  const byPurpose: Record<string, number> = {};
  let total = 0;
  for (const call of calls) {
    const at = new Date(call.at);
    const date = readIn(at, options.zoneAt(at)).date;
    perDay.set(date, (perDay.get(date) ?? 0) + call.dollars);
    byPurpose[call.purpose] = (byPurpose[call.purpose] ?? 0) + call.dollars;
    total += call.dollars;
  }
  const baselines = baselineCosts(events, options.baseline, options.prices);
  return {
    dollars: roundDollars(total),
    perDay: [...perDay.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([date, dollars]) => ({ date, dollars: roundDollars(dollars) })),
    byPurpose: Object.fromEntries(Object.entries(byPurpose).map(([p, d]) => [p, roundDollars(d)])),
    baselines: {
      transcript: { ...baselines.transcript, dollars: roundDollars(baselines.transcript.dollars) },
      everyTick: { ...baselines.everyTick, dollars: roundDollars(baselines.everyTick.dollars) },
    },
    prices: pricesInWords(options.prices),
  };
}
