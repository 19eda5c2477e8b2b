/**
 * Context fitting of a small-context model (a `llama:` model's, or a stand-in's in tests): how large a
 * chunk its seeking prompt can hold, and the run option defaults fitted to its context. One home for
 * these numbers: the local stack, the eval command and the tests read them here.
 */
import { parseRunOptions, runOptionDefaultsForContext } from '../shared/config';
import { ConfigurationError } from '../shared/errors';
import { withFittedOptions, type ParsedRunRequest } from '../shared/run-request';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../shared/llm/agents';
import { MARKER_TOKEN_SHARE } from '../shared/llm/sentences';
import type { ModelRunDefaults } from './port';

/** Tokens of a seeking agent's prompt besides its chunk (system prompt, question, tags), a generous estimate. */
export const SEEK_PROMPT_OVERHEAD_TOKENS = 700;

/**
 * How many tokens of the model's own tokenizer one o200k token (the unit of `chunkTokens`) may
 * take: SmolLM2's tokenizer counted 18.6% more on English prose; 1.3 leaves room for other text.
 */
export const TOKENIZER_RATIO_ALLOWANCE = 1.3;

/**
 * The largest `chunkTokens` (o200k tokens) whose seeking prompt fits a context of `contextTokens`
 * (the model's tokens): the chunk at `TOKENIZER_RATIO_ALLOWANCE` with its sentence-id markers
 * (`MARKER_TOKEN_SHARE`, shared/llm/sentences.ts), the instructions
 * (`SEEK_PROMPT_OVERHEAD_TOKENS`) and the reply budget `replyTokens`.
 */
export function largestChunkTokens(contextTokens: number, replyTokens: number): number {
  return Math.max(0, Math.floor((contextTokens - SEEK_PROMPT_OVERHEAD_TOKENS - replyTokens) / TOKENIZER_RATIO_ALLOWANCE / (1 + MARKER_TOKEN_SHARE)));
}

/**
 * Run option defaults of a small-context model (`runOptionDefaultsForContext`), with a chunk size
 * that also passes `chunkFitProblem`: 40% of a context under about 2,900 tokens leaves no room for the
 * seeking prompt's instructions and reply, so there the default is the largest chunk that fits (at
 * least the schema's 64). A model's own measured defaults (`modelDefaults`, its profile) replace the
 * fitted ones, the chunk size still capped so that it fits.
 * @param contextTokens the model's context per sequence, tokens.
 * @param modelDefaults the loaded model's `runDefaults` (models/port.ts `LoadedModel`).
 * @returns chunkTokens, syncBudgetTokens, reasonerBudgetTokens, tokens.
 */
export function contextFittedRunOptionDefaults(
  contextTokens: number,
  modelDefaults: ModelRunDefaults = {},
): ReturnType<typeof runOptionDefaultsForContext> & ModelRunDefaults {
  const fitted = { ...runOptionDefaultsForContext(contextTokens), ...modelDefaults };
  const largest = largestChunkTokens(contextTokens, DEFAULT_MAX_OUTPUT_TOKENS.seek);
  return { ...fitted, chunkTokens: Math.max(64, Math.min(fitted.chunkTokens, largest)) };
}

/**
 * The problem with a run's chunk size for a small-context model, or undefined when its seeking
 * prompt fits (`largestChunkTokens`: the chunk with room for a longer count in the model's own
 * tokenizer, the instructions and the reply budget). The one check of a run against the model's
 * context: `fitRunRequest` (CLI, library, engine) and the API's `runOptionProblems` use it.
 * @param chunkTokens the run's chunk size, tokens; `contextTokens` the model's context, tokens.
 * @param setting how the caller sets the chunk size, named in the advice: `--chunk-tokens` (CLI,
 *   the default) or `options.chunkTokens` (the API).
 */
export function chunkFitProblem(chunkTokens: number, contextTokens: number, setting = '--chunk-tokens'): string | undefined {
  const reply = DEFAULT_MAX_OUTPUT_TOKENS.seek;
  const largest = largestChunkTokens(contextTokens, reply);
  if (chunkTokens <= largest) return undefined;
  return (
    `chunks of ${chunkTokens} tokens do not fit the model's context of ${contextTokens} tokens (a seeking prompt also holds about ` +
    `${SEEK_PROMPT_OVERHEAD_TOKENS} tokens of instructions and a reply of up to ${reply}, and the model's tokenizer may count up to ` +
    `${Math.round((TOKENIZER_RATIO_ALLOWANCE - 1) * 100)}% more tokens than o200k, and the sentence ids shown with the chunk about ` +
    `${Math.round(MARKER_TOKEN_SHARE * 100)}% more): use ${setting} ${largest} or less ` +
    `(leave it unset for this model's default, ${contextFittedRunOptionDefaults(contextTokens).chunkTokens})`
  );
}

/**
 * Fit a parsed run request to its model, once: the options it leaves unset take the model's
 * defaults (`contextFittedRunOptionDefaults` for a model with a known context, else the schema's),
 * and its chunks must fit the model's context (`chunkFitProblem`). A request already fitted to the
 * same context is returned as it is, so an entry that fitted it early (the CLI, before it makes the
 * state directory) is not checked again below.
 * @param contextTokens the model's context per sequence, tokens; undefined when unknown (Bedrock,
 *   an OpenAI-compatible server without a stated context, the extractive reader): nothing to check.
 * @param modelDefaults the loaded model's measured defaults (`LoadedModel.runDefaults`).
 * @returns the request with `fitted` set.
 * @throws ConfigurationError naming the chunk size, the context and the largest chunk size that fits.
 */
export function fitRunRequest(request: ParsedRunRequest, contextTokens: number | undefined, modelDefaults: ModelRunDefaults = {}): ParsedRunRequest {
  if (request.fitted !== undefined && request.fitted.contextTokens === contextTokens) return request;
  const defaults = contextTokens !== undefined ? contextFittedRunOptionDefaults(contextTokens, modelDefaults) : modelDefaults;
  const options = parseRunOptions({ ...defaults, ...request.options }); // fills; the given values were checked by parseRunRequest
  if (contextTokens !== undefined) {
    const problem = chunkFitProblem(options.chunkTokens, contextTokens);
    if (problem !== undefined) throw new ConfigurationError(problem);
  }
  return withFittedOptions(request, contextTokens, options);
}
