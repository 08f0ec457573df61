import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/**
 * What a model call costs, in one data file rather than constants scattered around: per
 * model, the price per million tokens of input, output, cache writes (five-minute and
 * one-hour TTL) and cache reads, in tiers by prompt length, and the shortest prompt the
 * API caches at all. The shipped table is `prices.json` beside this file, with its source
 * and date; PRESENCE_PRICES_FILE points at another one. The same minimums decide where
 * presence puts cache breakpoints, so the file is read by the bot too, not only by the
 * simulations that turn usage into dollars.
 */

/** The table presence ships with. */
export const SHIPPED_PRICES_FILE = fileURLToPath(new URL("./prices.json", import.meta.url));

const perMillion = z.number().nonnegative();

/** Prices of one model for prompts up to `maxPromptTokens` (the last tier has no bound). */
const tierSchema = z.strictObject({
  maxPromptTokens: z.number().int().positive().optional(),
  input: perMillion,
  output: perMillion,
  cacheWrite5m: perMillion,
  cacheWrite1h: perMillion,
  cacheRead: perMillion,
});

const modelPriceSchema = z.strictObject({
  /** The model id; a dated snapshot of it (`<id>-20261001`) is priced the same. */
  model: z.string().min(1),
  /** Below this many prompt tokens a cache breakpoint is ignored: nothing is written or read. */
  minCacheableTokens: z.number().int().positive(),
  tiers: z
    .array(tierSchema)
    .min(1)
    .superRefine((tiers, ctx) => {
      tiers.forEach((tier, i) => {
        const last = i === tiers.length - 1;
        if (last && tier.maxPromptTokens !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: [i, "maxPromptTokens"],
            message: "the last tier must have no maxPromptTokens (it covers every longer prompt)",
          });
        }
        if (!last && tier.maxPromptTokens === undefined) {
          ctx.addIssue({
            code: "custom",
            path: [i, "maxPromptTokens"],
            message: "every tier but the last needs maxPromptTokens",
          });
        }
        const previous = tiers[i - 1]?.maxPromptTokens;
        if (
          previous !== undefined &&
          tier.maxPromptTokens !== undefined &&
          tier.maxPromptTokens <= previous
        ) {
          ctx.addIssue({
            code: "custom",
            path: [i, "maxPromptTokens"],
            message: `must be larger than the tier before it (${previous})`,
          });
        }
      });
    }),
  note: z.string().optional(),
});

/** The price file as written: where the figures come from, and one entry per model. */
const priceFileSchema = z.strictObject({
  /** Who quoted the figures, as words that follow "source:" ("public price trackers, not checked online"). */
  source: z.string().min(1),
  /** When the figures held ("2026-10"). */
  date: z.string().min(1),
  unit: z.literal("US dollars per million tokens"),
  models: z
    .array(modelPriceSchema)
    .min(1)
    .superRefine((models, ctx) => {
      const seen = new Set<string>();
      models.forEach((entry, i) => {
        if (seen.has(entry.model)) {
          ctx.addIssue({ code: "custom", path: [i, "model"], message: `"${entry.model}" is listed twice` });
        }
        seen.add(entry.model);
      });
    }),
});

/** One model's prices. */
export type ModelPrice = z.infer<typeof modelPriceSchema>;
/** A price file, read and checked, with the path it came from (errors name it). */
export type PriceTable = z.infer<typeof priceFileSchema> & { file: string };

/** The price file cannot be used; names the file, the field and what is wrong with it. */
export class PriceFileError extends Error {
  override readonly name = "PriceFileError";
  readonly file: string;
  /** The field at fault (`models.1.tiers.0.input`), empty when the whole file is. */
  readonly field: string;

  constructor(file: string, field: string, problem: string) {
    super(`${file}${field ? `: ${field}` : ""}: ${problem}`);
    this.file = file;
    this.field = field;
  }
}

/**
 * What to say of a model the price table does not list: usageDollars throws it, and
 * `simulate --live` says it before a run it could not price.
 */
export function unpricedModelMessage(model: string, file: string): string {
  return `model "${model}" has no price in ${file}; add it there or point PRESENCE_PRICES_FILE at a table that lists it`;
}

/**
 * The table as a sentence quotes it, "the 2026-10 prices (source: public price trackers,
 * not checked online)": the source is a label's value, so any file's own words read.
 */
export function pricesInWords(table: Pick<PriceTable, "date" | "source">): string {
  return `the ${table.date} prices (source: ${table.source})`;
}

/** Reads and checks a price file. Throws PriceFileError naming the file and the field. */
export function loadPriceTable(file: string): PriceTable {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new PriceFileError(file, "", code === "ENOENT" ? "no such file" : `cannot be read (${code})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new PriceFileError(file, "", `is not valid JSON (${(error as Error).message})`);
  }
  const parsed = priceFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new PriceFileError(file, issue?.path.join(".") ?? "", issue?.message ?? "is not a price table");
  }
  return { ...parsed.data, file };
}

let shipped: PriceTable | undefined;

/** The shipped table, read once. */
export function shippedPriceTable(): PriceTable {
  shipped ??= loadPriceTable(SHIPPED_PRICES_FILE);
  return shipped;
}

/** Whether `model` is `listed` itself or a dated snapshot of it (`listed-YYYYMMDD`). */
export function isSnapshotOf(model: string, listed: string): boolean {
  return (
    model === listed || (model.startsWith(`${listed}-`) && /^\d{8}$/.test(model.slice(listed.length + 1)))
  );
}

/** A model's prices: by its id, or a dated snapshot of a listed id; undefined when not listed. */
export function modelPrice(table: PriceTable, model: string): ModelPrice | undefined {
  return (
    table.models.find((m) => m.model === model) ?? table.models.find((m) => isSnapshotOf(model, m.model))
  );
}

/**
 * The shortest prompt a model caches (tokens). For a model the table does not list, the
 * largest minimum it knows: a breakpoint is then placed only where it would surely count.
 */
export function minCacheableTokens(table: PriceTable, model: string): number {
  return (
    modelPrice(table, model)?.minCacheableTokens ?? Math.max(...table.models.map((m) => m.minCacheableTokens))
  );
}

/** One call's usage as the API reports it: what a price applies to. */
export interface PricedUsage {
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  /** Every token written to the cache, whatever its TTL. */
  cacheWrite: number;
  /** Of `cacheWrite`, the tokens written with the one-hour TTL (the rest have five minutes). */
  cacheWrite1h?: number;
}

/**
 * What one call cost, in dollars. The whole call is priced at the tier its prompt length
 * (input + cache read + cache write) falls in, as the API bills long prompts.
 */
export function usageDollars(usage: PricedUsage, table: PriceTable): number {
  const price = modelPrice(table, usage.model);
  if (!price) throw new Error(unpricedModelMessage(usage.model, table.file));
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  const tier =
    price.tiers.find((t) => t.maxPromptTokens === undefined || prompt <= t.maxPromptTokens) ??
    (price.tiers.at(-1) as ModelPrice["tiers"][number]);
  const oneHour = Math.min(usage.cacheWrite1h ?? 0, usage.cacheWrite);
  const micro =
    usage.input * tier.input +
    usage.output * tier.output +
    (usage.cacheWrite - oneHour) * tier.cacheWrite5m +
    oneHour * tier.cacheWrite1h +
    usage.cacheRead * tier.cacheRead;
  return micro / 1_000_000;
}
