/**
 * Cost before spending: what a run will cost at most, from what Prepare knows (chunk count and
 * tokens, the question, the run options) and the model's price (shared/prices.json), before any
 * model call, in both seeking modes (every call on demand; the seeking calls as batch jobs). `ask --estimate` prints it, `maxCostUsd` (`--max-cost`) refuses a run whose estimate
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
 *   the cap), and the later rounds read only the cap's chunks; with `karStop: 'checked'` each step
 *   adds one sufficiency check (the step's evidence and the answer in, a yes or no out), and with
 *   `synchronization: 'follow-up'` each round but the last adds one follow-up question
 *   (shared/support.ts, shared/pipeline/reason.ts);
 * - a numbered chunk (the sentence ids) holds at most `numberedChunkTokens` of its tokens, plus 32
 *   marker tokens for a chunk under 120 tokens (shared/llm/sentences.ts `numberedUnits`).
 * Tokens are the project tokenizer's (o200k_base); a model's own tokenizer may count differently.
 */
import type { RunOptions } from './config';
import { CostLimitExceededError } from './errors';
import { karSchedule } from './kar';
import { CHECK_MAX_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS, FOLLOW_UP_MAX_TOKENS } from './llm/agents';
import { buildCheckPrompt, buildFollowUpPrompt, buildReasonPrompt, buildSeekPrompt } from './llm/prompts';
import { MAX_CITED_EVIDENCE_TOKENS } from './llm/agents';
import { MARKER_TOKENS_PER_UNIT, MIN_NUMBERED_UNITS, numberedChunkTokens } from './llm/sentences';
import { coverageSchedule } from './coverage';
import { MESSAGE_OVERHEAD_TOKENS } from './method';
import { costUsd, loadPriceTable, type PriceMode, priceOf, type PriceTable, rateOf } from './prices';
import { countTokens } from './tokenizer';
import type { AgentRole, RunEstimate } from './types';

export type { RoleEstimate, RunEstimate } from './types';
export type { PriceMode } from './prices';

/** The price of a role's estimate in one mode (USD at most, at the rate named by `rate`), or why there is none. */
export type RolePrice =
  | {
      model: string;
      priced: true;
      /** USD at most. */
      usd: number;
      /** The price table's key that matched the model. */
      priceKey: string;
      /** The rate the role's calls are billed at in this mode ({@link ROLE_RATE}). */
      rate: PriceMode;
      /** USD per 1,000,000 input tokens at `rate`. */
      inputUsdPerMTok: number;
      /** USD per 1,000,000 output tokens at `rate`. */
      outputUsdPerMTok: number;
      asOf: string;
      source: string;
      verified: boolean;
    }
  | { model: string; priced: false; reason: string };

/** A run's price in one seeking mode. */
export interface ModeCost {
  prices: Record<AgentRole, RolePrice>;
  /** USD at most, the sum over both roles; undefined when a role has no price in this mode. */
  totalUsd?: number;
}

/**
 * The rate each role is billed at in each seeking mode. With batch seeking only the seeking agents'
 * first call per chunk (each call the estimate counts) goes into a batch job; the reasoning agent
 * (KAR, the best-effort answer) stays on demand, as do a seek's follow-up calls (a retry of an
 * unusable reply, a score re-ask), which the estimate does not count. The batch figure assumes every
 * counted seeking call goes into its round's batch job; what a run seeks on demand instead (a round
 * below the model's minimum record count, a record a job failed) is billed on demand, so a caller
 * that knows a run will not batch prices it at `on-demand`.
 */
export const ROLE_RATE: Record<PriceMode, Record<AgentRole, PriceMode>> = {
  'on-demand': { seeker: 'on-demand', reasoner: 'on-demand' },
  batch: { seeker: 'batch', reasoner: 'on-demand' },
};

/** How long batch seeking may wait for its results. */
export interface BatchWait {
  /** Hours a batch job may take at most (its timeout). */
  maxHours: number;
  /** The wait as printed. */
  text: string;
  /** Why, in words. */
  basis: string;
  /** The page the figure comes from. */
  source: string;
}

/**
 * The expected wait of a Bedrock batch job: at most its timeout, CreateModelInvocationJob's
 * `timeoutDurationInHours` (default 24 h), AWS's "24-hour processing window" for batch.
 * Source: https://docs.aws.amazon.com/bedrock/latest/userguide/capacity-limits-cost-optimization.html
 */
export const BATCH_WAIT: BatchWait = {
  maxHours: 24,
  text: 'up to 24 h (often minutes to hours)',
  basis: "Bedrock batch's 24-hour processing window, a job's default timeout (timeoutDurationInHours)",
  source: 'https://docs.aws.amazon.com/bedrock/latest/userguide/capacity-limits-cost-optimization.html',
};

/** An estimate with its price in both seeking modes. */
export interface PricedEstimate extends RunEstimate {
  /** The seeking mode `prices` and `totalUsd` are at (the run's; `priceEstimate`'s `mode`). */
  mode: PriceMode;
  /** Each role's price in `mode` (= `modes[mode].prices`). */
  prices: Record<AgentRole, RolePrice>;
  /** USD at most in `mode`, the sum over both roles; undefined when a role has no price. */
  totalUsd?: number;
  /** The price in each seeking mode: every call on demand, or the seeking calls as batch jobs. */
  modes: Record<PriceMode, ModeCost>;
  /** What batch seeking waits for its jobs. */
  batchWait: BatchWait;
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
    Partial<Pick<RunOptions, 'karFirstK' | 'coverage' | 'coverageFirstChunks' | 'coverageMaxChunks' | 'karStop' | 'synchronization' | 'pipelineRounds'>>;
}

/** Tokens of the prompts' own text (instructions, delimiters) around an empty chunk and no evidence. */
let promptOverhead: { seek: number; seekSync: number; reason: number; force: number; check: number; followUp: number } | undefined;

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
    check: tokens(buildCheckPrompt({ question: '', answer: '', messages: [] })),
    followUp: tokens(buildFollowUpPrompt({ question: '', messages: [] })),
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
  let reasonOutput = 0;
  // karStop 'checked': each KAR step may add one sufficiency check over the same evidence and the answer.
  const checked = options.karStop === 'checked';
  const karOver = (pool: number): void => {
    for (const k of karSchedule(pool, options.karFirstK ?? 1)) {
      const evidence = Math.min(options.reasonerBudgetTokens, k * message);
      reasonCalls += 1;
      reasonInput += o.reason + question + evidence;
      reasonOutput += limits.reason;
      if (checked) {
        reasonCalls += 1;
        reasonInput += o.check + question + limits.reason + evidence;
        reasonOutput += CHECK_MAX_TOKENS;
      }
    }
  };
  // A grow run's round 1 runs KAR over each coverage of its schedule in turn; later rounds cover the cap.
  const grow = options.coverage === 'grow' && chunks > 0;
  const covered = grow ? Math.min(options.coverageMaxChunks ?? chunks, chunks) : chunks;
  // (`coverageFirstChunks` absent, as in a call with unparsed options: a schedule from 1 chunk)
  if (grow) for (const coverage of coverageSchedule(options.coverageFirstChunks ?? 1, covered).slice(0, -1)) karOver(coverage);
  for (let round = 1; round <= options.rounds; round++) karOver(covered * round);
  // synchronization 'follow-up': one short call at the end of each round but the last (not pipelined).
  if (options.synchronization === 'follow-up' && options.pipelineRounds !== true) {
    for (let round = 1; round < options.rounds; round++) {
      reasonCalls += 1;
      reasonInput += o.followUp + question + Math.min(options.reasonerBudgetTokens, covered * round * message);
      reasonOutput += FOLLOW_UP_MAX_TOKENS;
    }
  }
  if (options.bestEffort && chunks > 0) {
    reasonCalls += 1;
    reasonInput += o.force + question + Math.min(options.reasonerBudgetTokens, chunks * options.rounds * message);
    reasonOutput += limits.reason;
  }
  // A seeking model that caches prompts reads its chunks as cache writes at most (a cold cache; a
  // warm one, a question within the cache's time to live, reads them at the lower read price).
  const cached = caching ? options.rounds * input.chunkTokensTotal : 0;
  return {
    seeker: { calls: seekCalls, inputTokens: seekInput - cached, outputTokens: seekCalls * limits.seek, ...(caching && { cacheWriteInputTokens: cached }) },
    reasoner: { calls: reasonCalls, inputTokens: reasonInput, outputTokens: reasonOutput },
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
 * Price an estimate for a model spec in both seeking modes ({@link ROLE_RATE}). A model the table
 * does not list has no price ("no price"), never a guess; a model it lists without a batch rate has
 * no batch price; a `llama:` model runs on the local CPU and has none either (`pricing.unpriced`).
 * Prompt-cache tokens are priced at the rate's cache prices, else its input price (a batch rate has
 * no cache prices).
 * @param pricing the spec's pricing, from its provider (models/ `modelPricing`).
 * @param table default the shipped table (shared/prices.json).
 * @param mode the seeking mode the run will use, which `prices` and `totalUsd` (and so the cost limit)
 *   are at; default on demand.
 */
export function priceEstimate(
  estimate: RunEstimate,
  pricing: ModelPricing,
  table: PriceTable = loadPriceTable(),
  mode: PriceMode = 'on-demand',
): PricedEstimate {
  const price = (role: AgentRole, rate: PriceMode): RolePrice => {
    const model = pricing.models[role];
    if (pricing.unpriced !== undefined) return { model, priced: false, reason: pricing.unpriced };
    const found = priceOf(table, model);
    const where = `in the price table (shared/prices.json, written ${table.writtenOn})`;
    if (!found) return { model, priced: false, reason: `no price for ${model} ${where}` };
    const r = rateOf(found.price, rate);
    if (!r) return { model, priced: false, reason: `no ${rate} price for ${model} ${where}` };
    const e = estimate[role];
    return {
      model,
      priced: true,
      usd: costUsd(r, e.inputTokens, e.outputTokens, { writeTokens: e.cacheWriteInputTokens }),
      priceKey: found.key,
      rate,
      inputUsdPerMTok: r.inputUsdPerMTok,
      outputUsdPerMTok: r.outputUsdPerMTok,
      asOf: r.asOf,
      source: r.source,
      verified: r.verified,
    };
  };
  const cost = (m: PriceMode): ModeCost => {
    const prices = { seeker: price('seeker', ROLE_RATE[m].seeker), reasoner: price('reasoner', ROLE_RATE[m].reasoner) };
    const totalUsd = prices.seeker.priced && prices.reasoner.priced ? prices.seeker.usd + prices.reasoner.usd : undefined;
    return { prices, ...(totalUsd !== undefined && { totalUsd }) };
  };
  const modes = { 'on-demand': cost('on-demand'), batch: cost('batch') };
  return {
    ...estimate,
    mode,
    ...modes[mode],
    modes,
    batchWait: BATCH_WAIT,
    priceTable: { writtenOn: table.writtenOn, warning: table.warning },
  };
}

/** ` with batch seeking` in batch mode, nothing on demand (the messages' wording of a mode). */
function modeWords(mode: PriceMode): string {
  return mode === 'batch' ? ' with batch seeking' : '';
}

/**
 * The seeking mode a run's `maxCostUsd` is held to, in every seeking mode: on demand, the most it can
 * cost (a run with `seekMode: 'batch'` may seek any round on demand: a round under the batch minimum,
 * a failed or missing record, a failed job). One rule for Prepare, the API's up-front check and
 * `ask --estimate` (docs/COST.md).
 */
export const COST_LIMIT_MODE: PriceMode = 'on-demand';

/**
 * Why a run's estimate is over `maxCostUsd` (USD), or undefined when it is within it.
 * A run without a price cannot be checked against a cost limit, and is refused too (the limit would
 * otherwise be silently ignored).
 * @param mode the seeking mode the run will use; default the mode the estimate was priced at.
 */
export function costLimitProblem(priced: PricedEstimate, maxCostUsd: number, mode: PriceMode = priced.mode): string | undefined {
  const cost = priced.modes[mode];
  if (cost.totalUsd === undefined) {
    const missing = [cost.prices.seeker, cost.prices.reasoner].filter((p) => !p.priced).map((p) => `${p.model} (${(p as { reason: string }).reason})`);
    return `maxCostUsd ${maxCostUsd} cannot be checked${modeWords(mode)}: ${[...new Set(missing)].join('; ')}`;
  }
  if (cost.totalUsd <= maxCostUsd) return undefined;
  return `the run would cost at most $${formatUsd(cost.totalUsd)}${modeWords(mode)} (seeker ${priced.seeker.calls} calls, reasoner ${priced.reasoner.calls} calls; prices of ${priced.priceTable.writtenOn}), over maxCostUsd $${formatUsd(maxCostUsd)}`;
}

/**
 * Refuse a run over its cost limit (`maxCostUsd`, USD): the CostLimitExceededError (with the
 * estimate, `totalUsd` in `mode`) when {@link costLimitProblem} finds one.
 * @param mode the seeking mode the run will use; default the mode the estimate was priced at.
 * @throws CostLimitExceededError `Refused before any model call: <problem>`.
 */
export function enforceCostLimit(priced: PricedEstimate, maxCostUsd: number, mode: PriceMode = priced.mode): void {
  const problem = costLimitProblem(priced, maxCostUsd, mode);
  if (problem === undefined) return;
  const totalUsd = priced.modes[mode].totalUsd;
  throw new CostLimitExceededError(`Refused before any model call: ${problem}`, {
    estimate: { seeker: priced.seeker, reasoner: priced.reasoner, ...(totalUsd !== undefined && { totalUsd }), maxCostUsd },
  });
}

/** USD with enough digits for small amounts (`0.0042`, `12.35`). */
export function formatUsd(usd: number): string {
  return usd >= 1 ? usd.toFixed(2) : usd === 0 ? '0' : usd.toPrecision(2);
}
