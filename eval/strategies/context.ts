/**
 * Corpus text as reasoning context: a chunk (or a part of it) as a message whose quotes locate it in
 * the documents, and token-bounded prefixes / suffixes of a text. Used by the strategies that give
 * the reasoning agent raw corpus text (`direct`, `rag`).
 */
import { spanToQuotes } from '../../shared/method';
import { tokenBoundaries } from '../../shared/tokenizer';
import { countTokens } from '../../shared/tokenizer';
import type { Chunk, Message } from '../../shared/types';

/**
 * The chunk text `[start, end)` (chunk offsets; default the whole chunk) as a message: id
 * `chunk-<index>`, score 0, quotes = the document ranges it covers.
 */
export function chunkMessage(chunk: Chunk, start = 0, end = chunk.text.length): Message {
  const evidence = chunk.text.slice(start, end);
  const quotes = spanToQuotes(chunk, start, end);
  return {
    id: `chunk-${chunk.index}`,
    round: 1,
    chunkIndex: chunk.index,
    score: 0,
    evidence,
    tokens: start === 0 && end === chunk.text.length ? chunk.tokens : countTokens(evidence),
    quotes,
    sources: [...new Set((quotes.length > 0 ? quotes : chunk.segments).map((q) => q.documentId))],
  };
}

/** Length (characters) of the longest prefix of `text` with at most `maxTokens` tokens, ending on a token and code point boundary. */
export function prefixWithin(text: string, maxTokens: number): number {
  if (maxTokens <= 0 || text.length === 0) return 0;
  const boundaries = tokenBoundaries(text);
  let j = boundaries.length - 1;
  while (j >= 0 && boundaries[j].tokens > maxTokens) j--;
  // Re-encoding a prefix can cost more tokens than that prefix of the encoding: shrink until it fits.
  while (j >= 0 && countTokens(text.slice(0, boundaries[j].offset)) > maxTokens) j--;
  return j < 0 ? 0 : boundaries[j].offset;
}

/** Start offset (characters) of the longest suffix of `text` with at most `maxTokens` tokens, starting on a token and code point boundary. */
export function suffixStartWithin(text: string, maxTokens: number): number {
  if (maxTokens <= 0 || text.length === 0) return text.length;
  const boundaries = tokenBoundaries(text);
  const total = boundaries.at(-1)?.tokens ?? 0;
  // Candidate starts: 0, then every boundary; tokens before each.
  const starts = [{ offset: 0, tokens: 0 }, ...boundaries];
  let j = 0;
  while (j < starts.length - 1 && total - starts[j].tokens > maxTokens) j++;
  while (j < starts.length - 1 && countTokens(text.slice(starts[j].offset)) > maxTokens) j++;
  return starts[j].offset;
}
