import type Anthropic from "@anthropic-ai/sdk";
import type { CallPurpose, UsageRecord } from "../core/usage.ts";
import { isSnapshotOf, modelPrice, type PriceTable } from "./prices.ts";

/**
 * Whether a call marks its stable prefix for the prompt cache, chosen by the reuse to
 * expect. A breakpoint is not free: writing the prefix costs 1.25× the input price, and
 * only a call with the same prefix within five minutes reads it back cheaply (0.1×). So
 * the choice follows what the ledger says about this person's rhythm: how often a call
 * with this prefix came within five minutes of the previous one (a burst of conversation,
 * a check-in's decision and its message on the same model). With that share and the
 * model's prices it marks the prefix only when that is cheaper on average; until the
 * ledger has a few calls to go by, it does not (a breakpoint is paid for only where read).
 *
 * The one-hour TTL (2× to write) is not offered: measured on the simulations it cost more
 * than it saved, because check-ins come on the hour and an entry an hour old has expired.
 */

/** How a call marks its stable prefix. */
export type PrefixCache = "none" | "5m";

/** The purposes that carry the reply and check-in prefix (tools, protocol, persona). */
export const TURN_PREFIX_PURPOSES: ReadonlySet<CallPurpose> = new Set([
  "reply",
  "heartbeat-decide",
  "heartbeat-write",
]);

/** The purposes that carry reflection's prefix (its tool, guidance and persona). */
export const REFLECTION_PREFIX_PURPOSES: ReadonlySet<CallPurpose> = new Set(["reflect"]);

/** How many of the latest gaps between calls the estimate looks at. */
const REUSE_WINDOW = 20;
/** Fewer gaps than this and the prefix is not marked. */
const MIN_REUSE_SAMPLES = 3;

const FIVE_MINUTES = 5 * 60_000;

/** How many recent gaps between calls with one prefix were measured, and the share under five minutes. */
export interface Reuse {
  samples: number;
  within5m: number;
}

/**
 * How soon calls with one prefix followed each other lately: the `purposes` that share it,
 * on `model` (a dated snapshot of it counts as the same).
 */
export function recentReuse(
  usage: readonly Pick<UsageRecord, "ts" | "purpose" | "model">[],
  purposes: ReadonlySet<CallPurpose>,
  model: string,
): Reuse {
  const times = latestTimes(
    usage,
    (u) => purposes.has(u.purpose) && isSnapshotOf(u.model, model),
    REUSE_WINDOW + 1,
  );
  const gaps = times.slice(1).map((t, i) => t - (times[i] as number));
  const within = gaps.filter((gap) => gap < FIVE_MINUTES).length;
  return { samples: gaps.length, within5m: gaps.length === 0 ? 0 : within / gaps.length };
}

/**
 * The latest `count` times, oldest first, of the calls `wanted` picks. Every call plans its
 * prefix from a week of ledger: one in time order with its times as toISOString writes them
 * (so text order is time order), which is the ledger the bot writes, is read from its end;
 * any other (a file edited by hand) is parsed and sorted whole. Parsing and sorting every time
 * was 0.15 s of a simulated month.
 */
function latestTimes<C extends Pick<UsageRecord, "ts">>(
  calls: readonly C[],
  wanted: (call: C) => boolean,
  count: number,
): number[] {
  let inOrder = true;
  for (let i = 0; i < calls.length && inOrder; i++) {
    const ts = (calls[i] as C).ts;
    inOrder = ts.length === 24 && ts.endsWith("Z") && (i === 0 || ts >= (calls[i - 1] as C).ts);
  }
  if (!inOrder) {
    const times = calls.filter(wanted).map((call) => Date.parse(call.ts));
    return times.sort((a, b) => a - b).slice(-count);
  }
  const latest: number[] = [];
  for (let i = calls.length - 1; i >= 0 && latest.length < count; i--) {
    const call = calls[i] as C;
    if (wanted(call)) latest.unshift(Date.parse(call.ts));
  }
  return latest;
}

/**
 * Whether marking the prefix is cheaper on average, per call and relative to sending it
 * unmarked (1): a marked prefix the previous call left in the cache costs the read price,
 * any other costs the five-minute write price.
 */
export function choosePrefixCache(reuse: Reuse, prices: PriceTable, model: string): PrefixCache {
  const tier = modelPrice(prices, model)?.tiers[0];
  if (!tier || tier.input === 0 || reuse.samples < MIN_REUSE_SAMPLES) return "none";
  const marked =
    reuse.within5m * (tier.cacheRead / tier.input) + (1 - reuse.within5m) * (tier.cacheWrite5m / tier.input);
  return marked < 1 ? "5m" : "none";
}

/** The plan for a call: what the ledger says, priced for its model. */
export function prefixCacheFor(
  usage: readonly Pick<UsageRecord, "ts" | "purpose" | "model">[],
  purposes: ReadonlySet<CallPurpose>,
  model: string,
  prices: PriceTable,
): PrefixCache {
  return choosePrefixCache(recentReuse(usage, purposes, model), prices, model);
}

/** The system blocks with the first one (the stable prefix) marked as planned; nothing else carries a breakpoint. */
export function withPrefixCache(
  system: readonly Anthropic.TextBlockParam[],
  cache: PrefixCache,
): Anthropic.TextBlockParam[] {
  return system.map((block, i) => {
    const { cache_control: _, ...rest } = block;
    if (i > 0 || cache === "none") return rest;
    return { ...rest, cache_control: { type: "ephemeral" } };
  });
}
