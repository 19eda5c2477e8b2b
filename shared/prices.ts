/**
 * The model price table: USD per 1M input / output tokens per model id, each price dated and sourced
 * (shared/prices.json), used by the cost estimate before a run (shared/cost.ts) and the evaluation
 * report. Prices change: the table says when its figures were taken and whether they were verified;
 * every cost is printed with both. The shipped table is imported (bundled into the Lambdas), not read
 * from a path.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { issuesText } from './validation';
import shippedPrices from './prices.json';

/** One model's on-demand price. */
export interface ModelPrice {
  /** USD per 1,000,000 input tokens. */
  inputUsdPerMTok: number;
  /** USD per 1,000,000 output tokens. */
  outputUsdPerMTok: number;
  /** USD per 1,000,000 input tokens read from the prompt cache (models that cache prompts); default the input price. */
  cacheReadUsdPerMTok?: number;
  /** USD per 1,000,000 input tokens written to the prompt cache; default the input price. */
  cacheWriteUsdPerMTok?: number;
  /** ISO date (yyyy-mm-dd) the figure was taken. */
  asOf: string;
  /** URL (or description) of the source of the figure. */
  source: string;
  /** False when the figure was not checked against its source on `asOf`. */
  verified: boolean;
  note?: string;
}

/** A dated price table. */
export interface PriceTable {
  currency: string;
  /** What the numbers are (unit, tier, region). */
  unit: string;
  /** ISO date the table was written. */
  writtenOn: string;
  /** The caveat printed with every cost (prices change, provenance). */
  warning: string;
  /** Prices by model id (Bedrock base model ids, `extractive`, …). */
  models: Record<string, ModelPrice>;
}

const ModelPriceSchema = z.object({
  inputUsdPerMTok: z.number().nonnegative(),
  outputUsdPerMTok: z.number().nonnegative(),
  cacheReadUsdPerMTok: z.number().nonnegative().optional(),
  cacheWriteUsdPerMTok: z.number().nonnegative().optional(),
  asOf: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  source: z.string().min(1),
  verified: z.boolean(),
  note: z.string().optional(),
});

const PriceTableSchema = z.object({
  currency: z.string(),
  unit: z.string(),
  writtenOn: z.string(),
  warning: z.string(),
  models: z.record(z.string(), ModelPriceSchema),
});

let shippedTable: PriceTable | undefined;

/** The price table shipped with the project (its path, for messages; the table itself is imported). */
export const DEFAULT_PRICES_FILE = path.join(__dirname, 'prices.json');

/**
 * Read and validate a price table (JSON of the `PriceTable` shape).
 * @throws Error naming the file when it is missing, not JSON or not a price table.
 */
export function loadPriceTable(file?: string): PriceTable {
  if (file === undefined) return (shippedTable ??= PriceTableSchema.parse(shippedPrices));
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(`${file}: cannot read the price table (${(error as Error).message})`, { cause: error });
  }
  const parsed = PriceTableSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`${file}: not a price table (${issuesText(parsed.error)})`);
  }
  return parsed.data;
}

/** Cross-region inference profile prefixes: billed at the source region's price of the base model. */
const PROFILE_PREFIX = /^(?:us|eu|apac|us-gov|ca|jp|au|global)\./;

/**
 * The price of a model id, or undefined when the table has none. Tried in order: the id as given;
 * without a model-spec provider prefix (`bedrock:`, `openai:`); without a cross-region inference
 * profile prefix (`us.meta.llama3-1-8b-instruct-v1:0` → `meta.llama3-1-8b-instruct-v1:0`).
 * @returns the table key that matched and its price.
 */
export function priceOf(table: PriceTable, modelId: string): { key: string; price: ModelPrice } | undefined {
  const bare = modelId.replace(/^(?:bedrock|openai):/, '');
  for (const key of [modelId, bare, bare.replace(PROFILE_PREFIX, '')]) {
    const price = table.models[key];
    if (price) return { key, price };
  }
  return undefined;
}

/**
 * USD cost of `inputTokens` + `outputTokens` (and prompt-cache reads and writes, at their prices or
 * else the input price) at a price.
 */
export function costUsd(price: ModelPrice, inputTokens: number, outputTokens: number, cache: { readTokens?: number; writeTokens?: number } = {}): number {
  const read = (cache.readTokens ?? 0) * (price.cacheReadUsdPerMTok ?? price.inputUsdPerMTok);
  const write = (cache.writeTokens ?? 0) * (price.cacheWriteUsdPerMTok ?? price.inputUsdPerMTok);
  return (inputTokens * price.inputUsdPerMTok + outputTokens * price.outputUsdPerMTok + read + write) / 1_000_000;
}
