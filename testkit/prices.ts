import { readFileSync } from "node:fs";

/**
 * The test kit's own copy of the price table (prices.json beside this file): what the
 * Messages API fake's cache takes its minimum cacheable lengths from, and what tests
 * price usage with independently of production. It is never imported from production
 * code, and production's table is never imported here, so a test that compares the two
 * (test/model/prices.test.ts) catches a wrong value on either side.
 */

/** Prices of one model for prompts up to `maxPromptTokens`, per million tokens. */
interface FakeTier {
  maxPromptTokens?: number;
  input: number;
  output: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
}

/** One model's entry in the test kit's table. */
export interface FakeModelPrice {
  model: string;
  minCacheableTokens: number;
  tiers: FakeTier[];
}

/** The test kit's table, as written in prices.json. */
export const FAKE_PRICES: { source: string; date: string; models: FakeModelPrice[] } = JSON.parse(
  readFileSync(new URL("./prices.json", import.meta.url), "utf8"),
);

function entryOf(model: string): FakeModelPrice | undefined {
  return FAKE_PRICES.models.find((m) => model === m.model || model.startsWith(`${m.model}-`));
}

/** The shortest prompt the fake caches for a model; an unknown model gets the largest minimum listed. */
export function fakeMinCacheableTokens(model: string): number {
  return (
    entryOf(model)?.minCacheableTokens ?? Math.max(...FAKE_PRICES.models.map((m) => m.minCacheableTokens))
  );
}

/** A call's usage in the test kit's terms. */
export interface FakePricedUsage {
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
}

/** What a call costs by the test kit's table (dollars), computed without production code. */
export function fakeDollars(usage: FakePricedUsage): number {
  const entry = entryOf(usage.model);
  if (!entry) throw new Error(`the test kit has no price for ${usage.model}`);
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  const tier = entry.tiers.find((t) => t.maxPromptTokens === undefined || prompt <= t.maxPromptTokens);
  if (!tier) throw new Error(`the test kit's tiers for ${usage.model} do not cover ${prompt} tokens`);
  const oneHour = usage.cacheWrite1h ?? 0;
  return (
    (usage.input * tier.input +
      usage.output * tier.output +
      (usage.cacheWrite - oneHour) * tier.cacheWrite5m +
      oneHour * tier.cacheWrite1h +
      usage.cacheRead * tier.cacheRead) /
    1_000_000
  );
}
