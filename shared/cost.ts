/**
 * Cost before spending: what a run will cost at most, from what Prepare knows (chunk count and
 * tokens, the question, the run options) and the model's price (shared/prices.json), before any
 * model call. `ask --estimate` prints it, `maxCostUsd` (`--max-cost`) refuses a run whose estimate
 * exceeds it, and the run result states it beside the actual usage.
 *
 * An upper bound of the method's calls (paper, section 2), one call per agent task (re-asks after a
 * reply cut off at its output limit or without a score are not counted):
 * - seeking agents: every chunk in every round (`rounds` × chunks); a call reads the prompt's own
 *   text, the question, its chunk and, in rounds >= 2, the synchronized messages (at most
 *   `syncBudgetTokens`), and writes at most the seeker's output limit;
 * - reasoning agent: every KAR step of every round (k = 1, 2, 4, … up to the pool, which holds at
 *   most one message per chunk per round), plus the best-effort answer with `bestEffort`; a step
 *   reads at most `reasonerBudgetTokens` of evidence (or what k messages of at most the seeker's
 *   output limit hold) and writes at most the reasoner's output limit. With `coverage: 'grow'`
 *   (shared/coverage.ts) round 1 runs KAR over every coverage of its schedule (4, 8, … chunks up to
 *   the cap), and the later rounds read only the cap's chunks;
 * - a numbered chunk (the sentence ids) holds at most `numberedChunkTokens` of its tokens, plus 32
 *   marker tokens for a chunk under 120 tokens (shared/llm/sentences.ts `numberedUnits`).
 * Tokens are the project tokenizer's (o200k_base); a model's own tokenizer may count differently.
 */
import type { RunOptions } from './config';
import { CostLimitExceededError } from './errors';
import { karSchedule } from './kar';
import { DEFAULT_MAX_OUTPUT_TOKENS } from './llm/agents';
import { buildReasonPrompt, buildSeekPrompt } from './llm/prompts';
import { MAX_CITED_EVIDENCE_TOKENS } from './llm/agents';
import { MARKER_TOKENS_PER_UNIT, MIN_NUMBERED_UNITS, numberedChunkTokens } from './llm/sentences';
import { coverageSchedule } from './coverage';
import { MESSAGE_OVERHEAD_TOKENS } from './method';
import { costUsd, loadPriceTable, priceOf, type PriceTable } from './prices';
import { countTokens } from './tokenizer';
import type { AgentRole, RunEstimate } from './types';

export type { RoleEstimate, RunEstimate } from './types';

/** The price of a role's estimate, or why there is none. */
export type RolePrice =
  | { model: string; priced: true; usd: number; priceKey: string; inputUsdPerMTok: number; outputUsdPerMTok: number; asOf: string; verified: boolean }
  | { model: string; priced: false; reason: string };

/** An estimate with its price. */
export interface PricedEstimate extends RunEstimate {
  prices: Record<AgentRole, RolePrice>;
  /** USD at most, the sum over both roles; undefined when a role has no price. */
  totalUsd?: number;
  /** The price table's date and caveat. */
  priceTable: { writtenOn: string; warning: string };
}

/** What the estimate is computed from (Prepare's knowledge of the run). */
export interface EstimateInput {
  /** Chunks of the corpus. */
  chunks: number;
  /** Tokens of all chunk texts. */
  chunkTokensTotal: number;
  question: string;
  /** `karFirstK` absent: 1 (the paper's first k). */
  options: Pick<RunOptions, 'rounds' | 'reasonerBudgetTokens' | 'syncBudgetTokens' | 'syncMaxMessages' | 'bestEffort'> &
    Partial<Pick<RunOptions, 'karFirstK' | 'coverage' | 'coverageFirstChunks' | 'coverageMaxChunks'>>;
}

/** Tokens of the prompts' own text (instructions, delimiters) around an empty chunk and no evidence. */
let promptOverhead: { seek: number; seekSync: number; reason: number; force: number } | undefined;

function overheads(): NonNullable<typeof promptOverhead> {
  if (promptOverhead) return promptOverhead;
  const chunk = { index: 0, text: '', tokens: 0, chars: 0, segments: [] };
  const tokens = (p: { system: string; user: string }): number => countTokens(p.system) + countTokens(p.user);
  const message = { id: 'r1-c0', round: 1, chunkIndex: 0, score: 0, evidence: '', tokens: 0, quotes: [], sources: [] };
  promptOverhead = {
    seek: tokens(buildSeekPrompt({ question: '', chunk, round: 1, synchronized: [] })),
    seekSync: tokens(buildSeekPrompt({ question: '', chunk, round: 2, synchronized: [message] })),
    reason: tokens(buildReasonPrompt({ question: '', messages: [], force: false })),
    force: tokens(buildReasonPrompt({ question: '', messages: [], force: true })),
  };
  return promptOverhead;
}

/**
 * The upper bound of a run's calls and tokens (see the file comment).
 * Output at the LLM adapters' limits (`DEFAULT_MAX_OUTPUT_TOKENS`).
 * @param pricing the run's model's pricing, when known (models/ `modelPricing`): a seeking model that
 *   caches prompts (`seekerCaches`) has its chunk tokens counted as cache writes
 *   (`cacheWriteInputTokens`), not in `inputTokens`.
 */
export function estimateRun(input: EstimateInput, pricing?: ModelPricing): RunEstimate {
  const { chunks, options } = input;
  const limits = DEFAULT_MAX_OUTPUT_TOKENS;
  const caching = pricing?.seekerCaches ?? false;
  const o = overheads();
  const question = countTokens(input.question);
  const seekCalls = chunks * options.rounds;
  const message = Math.max(limits.seek, MAX_CITED_EVIDENCE_TOKENS) + MESSAGE_OVERHEAD_TOKENS;
  const syncTokens = Math.min(options.syncBudgetTokens, options.syncMaxMessages * message);
  const seekInput =
    seekCalls * (o.seek + question) +
    options.rounds * (numberedChunkTokens(input.chunkTokensTotal) + chunks * MIN_NUMBERED_UNITS * MARKER_TOKENS_PER_UNIT) +
    (options.rounds - 1) * chunks * (o.seekSync - o.seek + (options.syncMaxMessages > 0 ? syncTokens : 0));
  let reasonCalls = 0;
  let reasonInput = 0;
  const karOver = (pool: number): void => {
    for (const k of karSchedule(pool, options.karFirstK ?? 1)) {
      reasonCalls += 1;
      reasonInput += o.reason + question + Math.min(options.reasonerBudgetTokens, k * message);
    }
  };
  // A grow run's round 1 runs KAR over each coverage of its schedule in turn; later rounds cover the cap.
  const grow = options.coverage === 'grow' && chunks > 0;
  const covered = grow ? Math.min(options.coverageMaxChunks ?? chunks, chunks) : chunks;
  // (`coverageFirstChunks` absent, as in a call with unparsed options: a schedule from 1 chunk)
  if (grow) for (const coverage of coverageSchedule(options.coverageFirstChunks ?? 1, covered).slice(0, -1)) karOver(coverage);
  for (let round = 1; round <= options.rounds; round++) karOver(covered * round);
  if (options.bestEffort && chunks > 0) {
    reasonCalls += 1;
    reasonInput += o.force + question + Math.min(options.reasonerBudgetTokens, chunks * options.rounds * message);
  }
  // A seeking model that caches prompts reads its chunks as cache writes at most (a cold cache; a
  // warm one, a question within the cache's time to live, reads them at the lower read price).
  const cached = caching ? options.rounds * input.chunkTokensTotal : 0;
  return {
    seeker: { calls: seekCalls, inputTokens: seekInput - cached, outputTokens: seekCalls * limits.seek, ...(caching && { cacheWriteInputTokens: cached }) },
    reasoner: { calls: reasonCalls, inputTokens: reasonInput, outputTokens: reasonCalls * limits.reason },
  };
}

/**
 * How a model spec is priced: what the cost estimate needs to know of the model, given by its
 * provider (models/ `modelPricing`, one per kind), so this module never branches on a model kind.
 */
export interface ModelPricing {
  /** The model of each role as the price table keys it (`bedrock:<id>`, `openai:<model>`, `extractive` for the offline reader). */
  models: Record<AgentRole, string>;
  /** Does the seeking model cache prompts (a Bedrock Claude or Nova model: `supportsPromptCaching`)? Its chunk tokens are then priced as cache writes. */
  seekerCaches: boolean;
  /** Why the spec has no service price at all (a `llama:` model runs on this machine), or undefined when the table decides. */
  unpriced?: string;
}

/**
 * Price an estimate for a model spec. A model the table does not list has no price ("no price"),
 * never a guess; a `llama:` model runs on the local CPU and has none either (`pricing.unpriced`).
 * @param pricing the spec's pricing, from its provider (models/ `modelPricing`).
 * @param table default the shipped table (shared/prices.json).
 */
export function priceEstimate(estimate: RunEstimate, pricing: ModelPricing, table: PriceTable = loadPriceTable()): PricedEstimate {
  const price = (role: AgentRole): RolePrice => {
    const model = pricing.models[role];
    if (pricing.unpriced !== undefined) return { model, priced: false, reason: pricing.unpriced };
    const found = priceOf(table, model);
    if (!found) return { model, priced: false, reason: `no price for ${model} in the price table (shared/prices.json, written ${table.writtenOn})` };
    const e = estimate[role];
    return {
      model,
      priced: true,
      usd: costUsd(found.price, e.inputTokens, e.outputTokens, { writeTokens: e.cacheWriteInputTokens }),
      priceKey: found.key,
      inputUsdPerMTok: found.price.inputUsdPerMTok,
      outputUsdPerMTok: found.price.outputUsdPerMTok,
      asOf: found.price.asOf,
      verified: found.price.verified,
    };
  };
  const prices = { seeker: price('seeker'), reasoner: price('reasoner') };
  const totalUsd = prices.seeker.priced && prices.reasoner.priced ? prices.seeker.usd + prices.reasoner.usd : undefined;
  return { ...estimate, prices, ...(totalUsd !== undefined && { totalUsd }), priceTable: { writtenOn: table.writtenOn, warning: table.warning } };
}

/**
 * Why a run's estimate is over `maxCostUsd`, or undefined when it is within it.
 * A run without a price cannot be checked against a cost limit, and is refused too (the limit would
 * otherwise be silently ignored).
 */
export function costLimitProblem(priced: PricedEstimate, maxCostUsd: number): string | undefined {
  if (priced.totalUsd === undefined) {
    const missing = [priced.prices.seeker, priced.prices.reasoner].filter((p) => !p.priced).map((p) => `${p.model} (${(p as { reason: string }).reason})`);
    return `maxCostUsd ${maxCostUsd} cannot be checked: ${[...new Set(missing)].join('; ')}`;
  }
  if (priced.totalUsd <= maxCostUsd) return undefined;
  return `the run would cost at most $${formatUsd(priced.totalUsd)} (seeker ${priced.seeker.calls} calls, reasoner ${priced.reasoner.calls} calls; prices of ${priced.priceTable.writtenOn}), over maxCostUsd $${formatUsd(maxCostUsd)}`;
}

/**
 * Refuse a run over its cost limit: the CostLimitExceededError (with the estimate) when
 * {@link costLimitProblem} finds one.
 * @throws CostLimitExceededError `Refused before any model call: <problem>`.
 */
export function enforceCostLimit(priced: PricedEstimate, maxCostUsd: number): void {
  const problem = costLimitProblem(priced, maxCostUsd);
  if (problem === undefined) return;
  throw new CostLimitExceededError(`Refused before any model call: ${problem}`, {
    estimate: { seeker: priced.seeker, reasoner: priced.reasoner, ...(priced.totalUsd !== undefined && { totalUsd: priced.totalUsd }), maxCostUsd },
  });
}

/** USD with enough digits for small amounts (`0.0042`, `12.35`). */
export function formatUsd(usd: number): string {
  return usd >= 1 ? usd.toFixed(2) : usd === 0 ? '0' : usd.toPrecision(2);
}
