/**
 * Token counting for budgets and chunking.
 *
 * Library: gpt-tokenizer (pure JavaScript BPE, the `o200k_base` encoding; no network, no native code).
 * Bedrock models use their own tokenizers (Llama 3 uses a 128k-vocabulary BPE of similar
 * granularity), so counts here are an estimate of the model's count: budgets keep a margin for that.
 * Usage figures reported by Bedrock come from the model's response, not from here.
 */
import { countTokens as countGptTokens, encode } from 'gpt-tokenizer';

/** Number of tokens of `text` (o200k_base). Special-token strings in the text are counted as text. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return countGptTokens(text, { disallowedSpecial: new Set() });
}

/** Token ids of `text` (o200k_base), special-token strings encoded as ordinary text. */
export function encodeTokens(text: string): number[] {
  return encode(text, { disallowedSpecial: new Set() });
}

// No decodeTokens here on purpose: gpt-tokenizer 4.0.0 decodes through one shared stateful decoder,
// so decoding ids that end inside a character returns "" and corrupts the NEXT decode call with
// U+FFFD. Cut text at token boundaries with `tokenBoundaries` (shared/text.ts) instead.

/** Name of the encoding, recorded in results and cache keys. */
export const TOKENIZER_NAME = 'gpt-tokenizer/o200k_base';
