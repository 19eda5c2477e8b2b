/**
 * The message pool of global knowledge synchronization (paper, section 2B): ids, the pool order, the
 * DynamoDB sort key that realises that order, and fitting the top-k to a token budget.
 *
 * Pool order: relevance score descending, then chunk index ascending (corpus order), then round
 * ascending. The top-k of the pool are its first k messages in that order.
 */
import { InvalidInputError } from './errors';
import { countTokens, tokenBoundaries } from './tokenizer';
import type { Message } from './types';

/**
 * Name of the run table's GSI that orders a run's messages in pool order (`gsi1pk` = the run's
 * pool, `gsi1sk` = {@link relevanceSortKey}): the stack creates it (infra/extagents-stack.ts), the
 * DynamoDB message store queries it (lambdas/adapters/dynamo-message-store.ts).
 */
export const RELEVANCE_INDEX_NAME = 'byRelevance';

/** Largest chunk index the sort key can hold (7 digits). */
export const MAX_CHUNK_INDEX = 9_999_999;
/** Largest round the sort key can hold (2 digits). Rounds are 1-based. */
export const MAX_ROUND = 99;
/** Relevance scores are integers in [0, MAX_SCORE]. */
export const MAX_SCORE = 100;

function requireInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(`${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
}

/**
 * The id of the message of one chunk in one round: `r<round>-c<chunkIndex>`, e.g. `r2-c17`.
 * @param round 1-based round, at most 99.
 * @param chunkIndex zero-based chunk index, at most 9999999.
 * @throws InvalidInputError when either is not an integer in range.
 */
export function messageId(round: number, chunkIndex: number): string {
  requireInteger('round', round, 1, MAX_ROUND);
  requireInteger('chunkIndex', chunkIndex, 0, MAX_CHUNK_INDEX);
  return `r${round}-c${chunkIndex}`;
}

/** The fields that decide a message's place in the pool. */
export type PoolOrderKey = Pick<Message, 'score' | 'chunkIndex' | 'round'>;

/**
 * Comparator of the pool order, for `Array.prototype.sort`: score descending, then chunk index
 * ascending, then round ascending. Negative when `a` comes first.
 */
export function compareMessages(a: PoolOrderKey, b: PoolOrderKey): number {
  return b.score - a.score || a.chunkIndex - b.chunkIndex || a.round - b.round;
}

/**
 * The sort key of the `byRelevance` GSI (docs/ARCHITECTURE.md, Storage):
 * `<score:03>#<9999999-chunkIndex:07>#<99-round:02>`, e.g. score 87, chunk 12, round 1 ->
 * `087#9999987#98`. Fixed-width digits make string order numeric order, and the complements make a
 * descending Query (`ScanIndexForward: false`) return the pool order.
 * @param score integer 0-100; @param chunkIndex integer 0-9999999; @param round integer 1-99.
 * @throws InvalidInputError when a value is not an integer in range.
 */
export function relevanceSortKey(score: number, chunkIndex: number, round: number): string {
  requireInteger('score', score, 0, MAX_SCORE);
  requireInteger('chunkIndex', chunkIndex, 0, MAX_CHUNK_INDEX);
  requireInteger('round', round, 1, MAX_ROUND);
  const pad = (n: number, width: number): string => String(n).padStart(width, '0');
  return `${pad(score, 3)}#${pad(MAX_CHUNK_INDEX - chunkIndex, 7)}#${pad(MAX_ROUND - round, 2)}`;
}

/** Options of `fitToBudget`. */
export interface FitOptions {
  /**
   * Tokens each message costs beyond its evidence in the prompt (label, score, separators); default 0.
   */
  overheadTokensPerMessage?: number;
}

/** Result of `fitToBudget`. */
export interface FittedMessages {
  /** The kept messages, in the given order; the first may have trimmed evidence. */
  messages: Message[];
  /** Tokens of the kept messages: sum of `message.tokens` (evidence) plus the overhead per message. */
  tokens: number;
  /** True when messages were left out or the first message's evidence was trimmed. */
  truncated: boolean;
}

/**
 * Keep the longest prefix of `messages` (in the given order, normally the pool order) whose evidence
 * tokens plus overhead fit `budgetTokens`. Used for the reasoning agent's top-k in a knowledge-
 * accumulating reasoning step and for the synchronized messages of global knowledge synchronization.
 *
 * When even the first message does not fit but the budget leaves room for some evidence after its
 * overhead, that message is kept with its evidence trimmed at a token boundary that is also a code
 * point boundary (no U+FFFD, no lone surrogate), so at least one message is given whenever the budget
 * allows any text; its `tokens` is recounted. Other fields (quotes, sources) are kept.
 *
 * `message.tokens` is trusted as the evidence's token count (shared/tokenizer.ts), except for the
 * trimmed message.
 * @param budgetTokens finite, >= 0, in tokens.
 * @throws InvalidInputError when `budgetTokens` or the overhead is negative or not finite.
 */
export function fitToBudget(messages: Message[], budgetTokens: number, options: FitOptions = {}): FittedMessages {
  const overhead = options.overheadTokensPerMessage ?? 0;
  if (!Number.isFinite(budgetTokens) || budgetTokens < 0) {
    throw new InvalidInputError(`budgetTokens must be a finite number >= 0, got ${String(budgetTokens)}`);
  }
  if (!Number.isFinite(overhead) || overhead < 0) {
    throw new InvalidInputError(`overheadTokensPerMessage must be a finite number >= 0, got ${String(overhead)}`);
  }

  const kept: Message[] = [];
  let tokens = 0;
  for (const message of messages) {
    const cost = message.tokens + overhead;
    if (tokens + cost > budgetTokens) break;
    kept.push(message);
    tokens += cost;
  }
  if (kept.length > 0 || messages.length === 0) return { messages: kept, tokens, truncated: kept.length < messages.length };

  const first = messages[0];
  const room = Math.floor(budgetTokens - overhead);
  const evidence = room > 0 ? trimToTokens(first.evidence, room) : '';
  if (evidence.length === 0) return { messages: [], tokens: 0, truncated: true };
  const evidenceTokens = countTokens(evidence);
  return { messages: [{ ...first, evidence, tokens: evidenceTokens }], tokens: evidenceTokens + overhead, truncated: true };
}

/**
 * The longest prefix of `text` that ends on a token boundary and a whole code point and whose own
 * token count is at most `maxTokens` (>= 1). Re-encoding a prefix can give more tokens than the
 * prefix of the encoding, so the result is recounted and shortened until it fits.
 */
function trimToTokens(text: string, maxTokens: number): string {
  const boundaries = tokenBoundaries(text);
  for (let i = boundaries.length - 1; i >= 0; i--) {
    const boundary = boundaries[i];
    if (boundary.tokens > maxTokens) continue;
    const prefix = text.slice(0, boundary.offset);
    if (countTokens(prefix) <= maxTokens) return prefix;
  }
  return '';
}
