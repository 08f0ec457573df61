import type { PriceTable } from "./prices.ts";

/**
 * The model side's settings, as the rooms that use them need them. Declared here, below the
 * companion and the mind that read them, and filled in from the environment by
 * app/config.ts (`loadModelSettings`, `loadModelConfig`), which checks every value.
 */

/** The default models, from the SDK's own model list. */
export const DEFAULT_MODEL = "claude-sonnet-5-5";
export const DEFAULT_REFLECT_MODEL = "claude-haiku-5-5";

/**
 * The model settings that are not secret: which models, limits, the daily budget, the
 * reflect mode. Split from the key so that read-only commands (`status`) can know the
 * budget without asking for a secret they do not use.
 */
export interface ModelSettings {
  baseURL: string | undefined;
  model: string;
  reflectModel: string;
  /** The model that decides whether a check-in goes out (structured, validated); the reflect model unless set. */
  decideModel: string;
  maxRetries: number;
  timeoutMs: number;
  /** Tokens per local day after which check-ins stop; 0 means no budget. */
  dailyTokenBudget: number;
  promptCeiling: number;
  reflectMode: "two-phase" | "single-phase" | "off";
  answeredTopicHours: number;
  /** Prices and minimum cacheable lengths per model (PRESENCE_PRICES_FILE, or the shipped table). */
  prices: PriceTable;
}

/** Settings for talking to the model: the non-secret settings and the API key. */
export interface ModelConfig extends ModelSettings {
  apiKey: string;
}
