/**
 * `ask --estimate`: what a run over these files would cost at most, computed as Prepare computes it
 * (the same readers and chunking, shared/pipeline/ingest.ts `decodeAndChunk`, and shared/cost.ts),
 * without starting the workflow and before any model call.
 */
import type { ParsedRunRequest } from '../../shared/run-request';
import { EmptyCorpusError } from '../../shared/errors';
import { COST_LIMIT_MODE, costLimitProblem, estimateRun, type PriceMode, priceEstimate, type PricedEstimate } from '../../shared/cost';
import type { ModelSpec } from '../../shared/model-spec';
import { modelPricing } from '../../models';
import { decodeAndChunk } from '../../shared/pipeline/ingest';
import { checkQuota, planRunConcurrency, type SeekingPlan } from '../../shared/quota';
import { forecastRun, type TimeForecast } from '../../shared/capacity';
import { readCorpusFile, type CorpusFile } from './corpus';

/**
 * @returns the priced estimate (in both seeking modes; `prices`, `totalUsd` and `costRefusal` at the
 *   run's `seekMode`, on demand when the options have none), the corpus it was computed for (chunks, tokens, rounds) and the
 *   seeking concurrency Prepare would derive (shared/quota.ts), with `refusal` when its pre-flight
 *   check would refuse the run, and the run's expected time on the AWS path (shared/capacity.ts
 *   `forecastRun`: modeled, with Bedrock-class latencies; a local `llama:` model is slower).
 * @param request.parsed the question and options, parsed once by the caller (shared/run-request.ts).
 * @throws EmptyCorpusError when no file has usable text.
 */
export async function estimateLocal(request: { files: CorpusFile[]; parsed: ParsedRunRequest; model: ModelSpec }): Promise<{
  estimate: PricedEstimate;
  corpus: { chunks: number; tokens: number; rounds: number };
  concurrency: SeekingPlan & { refusal?: string };
  time: TimeForecast;
  /** Why Prepare would refuse the run under its `maxCostUsd` (shared/cost.ts `costLimitProblem`); absent within it or without one. */
  costRefusal?: string;
}> {
  // The options as the run would take them: fitted to the model when the caller fitted them (the CLI does).
  const options = request.parsed.fitted?.options ?? request.parsed.filled;
  const question = request.parsed.question;
  const objects = await Promise.all(request.files.map((f) => readCorpusFile(f)));
  const corpus = await decodeAndChunk(objects, options.chunkTokens, false);
  if (corpus.chunks.length === 0)
    throw new EmptyCorpusError(
      `No usable text in the ${request.files.length} corpus file(s): ${corpus.skipped.map((s) => `${s.documentId} (${s.reason})`).join('; ')}`,
    );
  const tokens = corpus.chunks.reduce((sum, c) => sum + c.tokens, 0);
  const pricing = modelPricing(request.model);
  const estimate = priceEstimate(
    estimateRun({ chunks: corpus.chunks.length, chunkTokensTotal: tokens, question, options }, pricing),
    pricing,
    undefined,
    seekModeOf(options),
  );
  const plan = planRunConcurrency(estimate, options);
  const check = checkQuota(plan);
  // Held to the mode the run is (Prepare, COST_LIMIT_MODE): on demand, whatever --seek-mode says.
  const costRefusal = options.maxCostUsd !== undefined ? costLimitProblem(estimate, options.maxCostUsd, COST_LIMIT_MODE) : undefined;
  return {
    estimate,
    corpus: { chunks: corpus.chunks.length, tokens, rounds: options.rounds },
    concurrency: { ...plan, warnings: check.warnings, ...(check.refusal !== undefined && { refusal: check.refusal }) },
    time: forecastRun(estimate, plan, options),
    ...(costRefusal !== undefined && { costRefusal }),
  };
}

/** The run's seeking mode: its `seekMode` option when the options carry one, else on demand. */
function seekModeOf(options: object): PriceMode {
  return 'seekMode' in options && options.seekMode === 'batch' ? 'batch' : 'on-demand';
}
