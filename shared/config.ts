/**
 * Run options: validated once, at load, with a clear message (zod). Every field has a documented
 * default; units are in the names (tokens) or the docs.
 */
import { z } from 'zod';
import { InvalidRunOptionsError } from './errors';
import { COVERAGE_MODES } from './coverage';
import { RESEEK_MODES } from './reseek';
import { DEFAULT_RANKING, RANKING_MODES } from './ranking';
import { issuesText } from './validation';
import { SEEK_MODES } from './seek-mode';
import { KAR_ROUNDS, KAR_STOP_RULES, SYNCHRONIZATION_MODES } from './kar';

export { SEEK_MODES, type SeekMode } from './seek-mode';

export const RunOptionsSchema = z
  .object({
    /** Maximum tokens per chunk (L in the paper). */
    chunkTokens: z.number().int().min(64).max(200_000).default(8000),
    /** Seeking rounds (1 = no global knowledge synchronization). */
    rounds: z.number().int().min(1).max(10).default(2),
    /**
     * k of the first knowledge-accumulating reasoning step of each round (paper 2B starts at 1): the
     * reasoning agent first reads the top `karFirstK` messages, then 2×, 4×, … after each refusal. A
     * larger first k costs one longer prompt instead of several short ones and lets a model that
     * rarely refuses see more than the top message (docs/EVAL.md, "Defaults for a model that can answer").
     */
    karFirstK: z.number().int().min(1).max(1024).default(1),
    /**
     * When a KAR step's answer stands (shared/support.ts; docs/CONCEPTS.md, "When an answer
     * stands"). In every mode the answer must be held by the quotes of the messages it cites.
     * `first`: the first such answer (the paper's rule); `confirmed`: it must be given again by the
     * next step, which reads twice the messages, unless the step already read the whole pool;
     * `checked`: one short call of the reasoning agent must say its cited passages state it.
     */
    karStop: z.enum(KAR_STOP_RULES).default('first'),
    /**
     * After which rounds KAR runs (shared/kar.ts `KAR_ROUNDS`; docs/CONCEPTS.md, "When an answer
     * stands"): `each` round, a round that answers ending the run; or only the `last`, every round
     * sought first (each after synchronization), so every run pays for all `rounds` of seeking.
     */
    karRounds: z.enum(KAR_ROUNDS).default('each'),
    /** Token budget of the evidence given to the reasoning agent in one KAR step. */
    reasonerBudgetTokens: z.number().int().min(256).max(1_000_000).default(16_000),
    /** Token budget of the synchronized top-K messages given to each seeking agent in rounds >= 2. */
    syncBudgetTokens: z.number().int().min(0).max(200_000).default(4000),
    /**
     * What global knowledge synchronization gives the next round's seeking agents (docs/CONCEPTS.md,
     * "Synchronization that asks for what is missing"): `plain`, the global top-K messages (the
     * paper); `follow-up`, those and the question the reasoning agent says is still open when its
     * round ends without an answer (one short reasoning call per such round; a model that cannot
     * say, the offline extractive reader, and pipelined rounds synchronize plainly).
     */
    synchronization: z.enum(SYNCHRONIZATION_MODES).default('plain'),
    /** Upper bound on K of the synchronized messages (before the token budget). */
    syncMaxMessages: z.number().int().min(0).max(1000).default(16),
    /** Answer from the best evidence after the last round instead of refusing. */
    bestEffort: z.boolean().default(false),
    /**
     * Pipelined rounds (the paper's interleaved pipeline, section 2B "Parallelism"): as soon as round
     * r's seeking ends, round r+1's synchronization and seeking start speculatively while KAR of round
     * r runs; when KAR of round r answers, the speculative round is stopped and its model calls are
     * reported as `usage.speculative`; when it refuses, KAR of round r+1 starts without seeking again.
     * Lower time-to-answer for questions that need round r+1, at the price of those extra calls.
     */
    pipelineRounds: z.boolean().default(false),
    /**
     * How the seeking agents' first calls are made (shared/pipeline/seek-batch.ts; docs/CONCEPTS.md,
     * "Batch seeking"): `on-demand`, one call per chunk as the round runs (default); `batch`, each
     * round's calls as batch inference jobs (Amazon Bedrock model invocation jobs: about half the
     * on-demand price, results within the job's timeout, typically minutes to hours), for work
     * nobody waits for. A round below the model's minimum record count, or a model without batch
     * inference, is sought on demand and the result says so (`RunResult.batch`). KAR and
     * synchronization are always on demand. Not with `pipelineRounds` (a speculative round is for
     * time-to-answer; batch trades time for price).
     */
    seekMode: z.enum(SEEK_MODES).default('on-demand'),
    /**
     * How the message pool is ranked (shared/ranking.ts): `score`, the seeking agents' scores (the
     * paper); `hybrid`, their mean with a lexical prior of the cited text (default); `retrieval`,
     * the lexical prior alone (a retriever's order, as the official code's HotpotQA runs).
     */
    ranking: z.enum(RANKING_MODES).default(DEFAULT_RANKING),
    /**
     * Seeking agents run at once (Distributed Map MaxConcurrency); with a stated quota
     * (`quotaRequestsPerMinute`, `quotaTokensPerMinute`) the most, the quota deciding below it.
     */
    concurrency: z.number().int().min(1).max(10_000).default(8),
    /**
     * The seeking model's quota of requests per minute (Service Quotas → Amazon Bedrock → "On-demand
     * InvokeModel requests per minute for <model>"; "Cross-Region …" for an inference profile). With
     * it, the seeking Map's MaxConcurrency is derived so that the expected request rate stays under it
     * (shared/quota.ts); `concurrency` stays the cap. Absent = the deployment's (CDK context
     * `quotaRequestsPerMinute`), else none.
     */
    quotaRequestsPerMinute: z.number().int().min(1).max(100_000_000).optional(),
    /**
     * The seeking model's quota of tokens per minute, input + output ("On-demand InvokeModel tokens per
     * minute for <model>"), as `quotaRequestsPerMinute`. Absent = the deployment's (CDK context
     * `quotaTokensPerMinute`), else none.
     */
    quotaTokensPerMinute: z.number().int().min(1).max(10_000_000_000).optional(),
    /**
     * Expected duration of one seek, seconds, for the quota's Little's law (concurrency = rate ×
     * latency). Absent = the eval's assumed seeker latency for the run's seek size (shared/quota.ts
     * `defaultSeekLatency`, about 3 s over 8,000-token chunks (SOTU: 3.1 s)). Shorter is safer (fewer in flight).
     */
    seekLatencySeconds: z.number().min(0.1).max(900).optional(),
    /**
     * Which chunks the seeking agents read (shared/coverage.ts; docs/CONCEPTS.md, "Coverage that grows only when
     * needed"): `full`, every chunk in every round (the paper); `grow`, an extension of the method:
     * first the `coverageFirstChunks` chunks a BM25 retriever ranks highest for the question (no model
     * call), then, each time the reasoning agent refuses at every k, twice as many, up to
     * `coverageMaxChunks`; rounds >= 2 read the chunks covered.
     */
    coverage: z.enum(COVERAGE_MODES).default('full'),
    /** With `coverage: 'grow'`: chunks sought first (the first tranche), in chunks. */
    coverageFirstChunks: z.number().int().min(1).max(100_000).default(4),
    /**
     * With `coverage: 'grow'`: the most chunks sought per round, in chunks. Absent = every chunk, so
     * the worst case reads what `full` reads.
     */
    coverageMaxChunks: z.number().int().min(1).max(1_000_000).optional(),
    /**
     * Which chunks rounds >= 2 seek (shared/reseek.ts; docs/CONCEPTS.md, "Later rounds that re-read only promising
     * chunks"): `all`, every chunk the run covers (the paper); `promising`, an extension of the method:
     * only the chunks whose seeking agent found something in the round before, the chunks of the
     * synchronized messages and the chunks that share a document with them. No effect with `rounds` 1.
     */
    reseek: z.enum(RESEEK_MODES).default('all'),
    /** Share of chunks whose seeking agent may fail permanently before the run fails (percent). */
    toleratedFailurePercentage: z.number().min(0).max(100).default(5),
    /**
     * Refuse the run before any model call when its cost estimate (shared/cost.ts: at most, in USD,
     * from the dated price table) is over this, or when its model has no price. Absent = no limit.
     */
    maxCostUsd: z.number().min(0).max(1_000_000).optional(),
  })
  .strict()
  .superRefine((options, ctx) => {
    // Every problem of the coverage options at once (zod runs this only when the fields are valid).
    if (options.coverageMaxChunks !== undefined && options.coverage !== 'grow') {
      ctx.addIssue({ code: 'custom', path: ['coverageMaxChunks'], message: "only with coverage 'grow' (a full read covers every chunk)" });
    }
    if (options.seekMode === 'batch' && options.pipelineRounds) {
      ctx.addIssue({
        code: 'custom',
        path: ['seekMode'],
        message: "'batch' cannot be combined with pipelineRounds (a speculative round is for time-to-answer; batch trades time for price)",
      });
    }
    if (options.coverageMaxChunks !== undefined && options.coverageMaxChunks < options.coverageFirstChunks) {
      ctx.addIssue({ code: 'custom', path: ['coverageMaxChunks'], message: `must be at least coverageFirstChunks (${options.coverageFirstChunks})` });
    }
  });

/** Validated run options (all fields present). */
export type RunOptions = z.infer<typeof RunOptionsSchema>;
/** Run options as a caller gives them (all optional). */
export type RunOptionsInput = z.input<typeof RunOptionsSchema>;

/**
 * Validate run options, filling defaults.
 * @throws InvalidRunOptionsError naming each invalid field.
 */
export function parseRunOptions(input: unknown): RunOptions {
  const result = RunOptionsSchema.safeParse(input ?? {});
  if (!result.success) {
    throw new InvalidRunOptionsError(`Invalid run options: ${issuesText(result.error, '(options)')}`);
  }
  return result.data;
}

/**
 * Run option defaults for a model whose context window is small (a `llama:` model: 8,192 tokens for
 * the test model), so that the default prompts fit: a seeking agent's prompt holds its chunk, the
 * synchronized messages of round >= 2 and the system prompt; the reasoning agent's prompt holds its
 * KAR step's evidence. Fractions of the context: chunk 40%, synchronized messages 12%, reasoner
 * evidence 55% (options are counted in o200k tokens, the model's own tokenizer may count ~20% more;
 * the rest is the system prompt and the reply budget). Only the options a caller leaves unset take
 * these values; a prompt that still does not fit fails with ContextOverflowError naming both sizes.
 * @param contextTokens the model's context size per sequence, tokens.
 * @returns chunkTokens, syncBudgetTokens, reasonerBudgetTokens (within their schema ranges).
 */
export function runOptionDefaultsForContext(contextTokens: number): Pick<RunOptions, 'chunkTokens' | 'syncBudgetTokens' | 'reasonerBudgetTokens'> {
  const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, Math.floor(value)));
  return {
    chunkTokens: clamp(contextTokens * 0.4, 64, 8000),
    syncBudgetTokens: clamp(contextTokens * 0.12, 0, 4000),
    reasonerBudgetTokens: clamp(contextTokens * 0.55, 256, 16_000),
  };
}
