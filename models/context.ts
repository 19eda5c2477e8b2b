/**
 * Context fitting of a small-context model (a `llama:` model's, or a stand-in's in tests): how large a
 * chunk its seeking prompt can hold, and the run option defaults fitted to its context. One home for
 * these numbers: the local stack, the eval command and the tests read them here.
 */
import { runOptionDefaultsForContext } from '../shared/config';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../shared/llm/agents';
import { MARKER_TOKEN_SHARE } from '../shared/llm/sentences';

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
 * least the schema's 64).
 * @param contextTokens the model's context per sequence, tokens.
 * @returns chunkTokens, syncBudgetTokens, reasonerBudgetTokens, tokens.
 */
export function contextFittedRunOptionDefaults(contextTokens: number): ReturnType<typeof runOptionDefaultsForContext> {
  const fitted = runOptionDefaultsForContext(contextTokens);
  const largest = largestChunkTokens(contextTokens, DEFAULT_MAX_OUTPUT_TOKENS.seek);
  return { ...fitted, chunkTokens: Math.max(64, Math.min(fitted.chunkTokens, largest)) };
}
