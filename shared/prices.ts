/**
 * The model price table: USD per 1M input / output tokens per model id, on demand and (where known)
 * as a batch job, each rate dated and sourced (shared/prices.json), used by the cost estimate before a run (shared/cost.ts) and the evaluation
 * report. Prices change: the table says when its figures were taken and whether they were verified;
 * every cost is printed with both. The shipped table is imported (bundled into the Lambdas), not read
 * from a path.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import shippedPrices from './prices.json';

/** How a seeking phase is billed: each call on demand, or the first call per chunk as a batch job. */
export type PriceMode = 'on-demand' | 'batch';

/** A rate in USD per 1,000,000 tokens, with where and when it was taken. */
export interface PriceRate {
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
  /** False when the figure was not checked against its source on `asOf` (or derives from one that was not). */
  verified: boolean;
  note?: string;
}

/**
 * One model's batch-inference rate (Amazon Bedrock model invocation jobs), in USD per 1,000,000
 * tokens, with its own date and source. A model without one has no batch price ("no price"), never
 * a figure derived here.
 */
export type BatchPrice = Pick<PriceRate, 'inputUsdPerMTok' | 'outputUsdPerMTok' | 'asOf' | 'source' | 'verified' | 'note'>;

/** One model's price: the on-demand rate (its own fields) and, where the table has one, the batch rate. */
export interface ModelPrice extends PriceRate {
  /** The batch rate; absent: the model has no batch price in the table. */
  batch?: BatchPrice;
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

const usdPerMTok = z.number().nonnegative();
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected an ISO date (yyyy-mm-dd)');

const BatchPriceSchema = z.object({
  inputUsdPerMTok: usdPerMTok,
  outputUsdPerMTok: usdPerMTok,
  asOf: isoDate,
  source: z.string().min(1),
  verified: z.boolean(),
  note: z.string().optional(),
});

const ModelPriceSchema = z.object({
  inputUsdPerMTok: usdPerMTok,
  outputUsdPerMTok: usdPerMTok,
  cacheReadUsdPerMTok: usdPerMTok.optional(),
  cacheWriteUsdPerMTok: usdPerMTok.optional(),
  asOf: isoDate,
  source: z.string().min(1),
  verified: z.boolean(),
  note: z.string().optional(),
  batch: BatchPriceSchema.optional(),
});

const PriceTableSchema = z.object({
  currency: z.string(),
  unit: z.string(),
  writtenOn: z.string(),
  warning: z.string(),
  models: z.record(z.string(), ModelPriceSchema),
});

/**
 * The issues of a price table's validation in one line, an issue under `models` named by its model
 * (model ids hold dots, so a joined path would not say where the id ends):
 * `model meta.llama3-1-8b-instruct-v1:0, batch.inputUsdPerMTok: Too small: …`.
 */
function tableIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const [top, model, ...rest] = issue.path;
      if (top !== 'models' || model === undefined) return `${issue.path.join('.') || 'the table'}: ${issue.message}`;
      return `model ${String(model)}${rest.length > 0 ? `, ${rest.join('.')}` : ''}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Validate a price table (the `PriceTable` shape).
 * @param where the table's name in the message (its file).
 * @throws Error `<where>: not a price table (model <id>, <field>: <problem>; …)`.
 */
function parsePriceTable(value: unknown, where: string): PriceTable {
  const parsed = PriceTableSchema.safeParse(value);
  if (!parsed.success) throw new Error(`${where}: not a price table (${tableIssues(parsed.error)})`);
  return parsed.data;
}

let shippedTable: PriceTable | undefined;

/** The price table shipped with the project (its path, for messages; the table itself is imported). */
export const DEFAULT_PRICES_FILE = path.join(__dirname, 'prices.json');

/**
 * Read and validate a price table (JSON of the `PriceTable` shape).
 * @param file default the shipped table (shared/prices.json), validated once.
 * @throws Error naming the file when it is missing, not JSON or not a price table (a malformed entry
 *   is named by its model id and field, e.g. `model <id>, batch.outputUsdPerMTok: …`).
 */
export function loadPriceTable(file?: string): PriceTable {
  if (file === undefined) return (shippedTable ??= parsePriceTable(shippedPrices, DEFAULT_PRICES_FILE));
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new Error(`${file}: cannot read the price table (${(error as Error).message})`, { cause: error });
  }
  return parsePriceTable(value, file);
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
 * A model's rate in a mode: its on-demand rate, or its batch rate (undefined when the table has none
 * for it: "no price", never derived from the on-demand rate here).
 */
export function rateOf(price: ModelPrice, mode: PriceMode): PriceRate | undefined {
  return mode === 'on-demand' ? price : price.batch;
}

/**
 * USD cost of `inputTokens` + `outputTokens` (and prompt-cache reads and writes, at their prices or
 * else the input price) at a rate in USD per 1,000,000 tokens.
 * @returns USD.
 */
export function costUsd(
  price: Pick<PriceRate, 'inputUsdPerMTok' | 'outputUsdPerMTok' | 'cacheReadUsdPerMTok' | 'cacheWriteUsdPerMTok'>,
  inputTokens: number,
  outputTokens: number,
  cache: { readTokens?: number; writeTokens?: number } = {},
): number {
  const read = (cache.readTokens ?? 0) * (price.cacheReadUsdPerMTok ?? price.inputUsdPerMTok);
  const write = (cache.writeTokens ?? 0) * (price.cacheWriteUsdPerMTok ?? price.inputUsdPerMTok);
  return (inputTokens * price.inputUsdPerMTok + outputTokens * price.outputUsdPerMTok + read + write) / 1_000_000;
}
