/**
 * Single-call baselines: `direct` (the input truncated to the model's context window) and `rag`
 * (BM25-retrieved chunks packed into one context). Neither has seeking agents.
 *
 * Mapping onto the `AgentModel` port: ONE `reason` call (stage 0), forced when `bestEffort`. The
 * retrieval of `rag` is not a model call (BM25, minisearch) and costs nothing in the records.
 */
import { rankChunks } from '../../shared/retrieval';
import { fitToBudget } from '../../shared/pool';
import type { Chunk, Message } from '../../shared/types';
import { countTokens } from '../../shared/tokenizer';
import { MESSAGE_OVERHEAD_TOKENS } from '../../shared/method';
import { chunkMessage, prefixWithin, suffixStartWithin } from './context';
import { answerFrom, CallRecorder } from './recorder';
import type { StrategyInput, StrategyResult } from './types';

/**
 * `direct`: the corpus (the chunks' texts in order, i.e. the documents joined by "\n\n") truncated to
 * W = `contextWindowTokens` - `promptReserveTokens` - question tokens, given to the reasoning agent as
 * ONE message. `front` keeps the first W tokens; `middle` (InfiniteBench's `truncate_input` for
 * books) keeps the first W/2 and the last W/2. Token counts are the chunks' (the join adds about one
 * token per chunk boundary, within the reserve). The message's quotes are the kept document ranges.
 */
export async function runDirect(input: StrategyInput): Promise<StrategyResult> {
  const { question, chunks, options } = input;
  const window = Math.max(0, options.contextWindowTokens - options.promptReserveTokens - countTokens(question));
  const total = chunks.reduce((sum, c) => sum + c.tokens, 0);
  let parts: Message[];
  if (total <= window) parts = chunks.map((c) => chunkMessage(c));
  else if (options.truncation === 'front') parts = frontParts(chunks, window);
  else {
    const head = frontParts(chunks, Math.floor(window / 2));
    const tail = backParts(chunks, window - Math.floor(window / 2));
    // The halves never share a chunk part: a chunk in both is given once (only when W nearly covers the input).
    const headChunks = new Set(head.map((m) => m.chunkIndex));
    parts = [...head, ...tail.filter((m) => !headChunks.has(m.chunkIndex))];
  }
  const evidence = parts.map((p) => p.evidence).join('\n\n');
  const message: Message = {
    id: 'direct',
    round: 1,
    chunkIndex: 0,
    score: 0,
    evidence,
    tokens: countTokens(evidence),
    quotes: parts.flatMap((p) => p.quotes),
    sources: [...new Set(parts.flatMap((p) => p.sources))],
  };
  return reasonOnce(input, [message], total > window ? [`input truncated (${options.truncation}) from ${total} to ${window} tokens`] : []);
}

/** Whole chunks from the front while they fit, then the fitting prefix of the next one. */
function frontParts(chunks: readonly Chunk[], budget: number): Message[] {
  const parts: Message[] = [];
  let left = budget;
  for (const chunk of chunks) {
    if (chunk.tokens <= left) {
      parts.push(chunkMessage(chunk));
      left -= chunk.tokens;
      continue;
    }
    const end = prefixWithin(chunk.text, left);
    if (end > 0) parts.push(chunkMessage(chunk, 0, end));
    break;
  }
  return parts;
}

/** Whole chunks from the back while they fit, then the fitting suffix of the one before; in corpus order. */
function backParts(chunks: readonly Chunk[], budget: number): Message[] {
  const parts: Message[] = [];
  let left = budget;
  for (let i = chunks.length - 1; i >= 0; i--) {
    const chunk = chunks[i];
    if (chunk.tokens <= left) {
      parts.unshift(chunkMessage(chunk));
      left -= chunk.tokens;
      continue;
    }
    const start = suffixStartWithin(chunk.text, left);
    if (start < chunk.text.length) parts.unshift(chunkMessage(chunk, start));
    break;
  }
  return parts;
}

/**
 * `rag`: the chunks ranked by BM25 (minisearch, over the content terms of shared/extractive/text.ts:
 * stemmed, stop words removed) against the question; chunks with no question term follow in corpus
 * order; packed in that order as one message per chunk into `reasonerBudgetTokens` (12 tokens of
 * overhead per message, as the KAR steps), the first one trimmed if it alone does not fit.
 */
export async function runRag(input: StrategyInput): Promise<StrategyResult> {
  const { question, chunks, options } = input;
  const ranked = rankChunks(question, chunks);
  const fitted = fitToBudget(
    ranked.map((c) => chunkMessage(c)),
    options.reasonerBudgetTokens,
    { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS },
  );
  // A trimmed first chunk keeps only the quotes of its kept prefix.
  const messages = fitted.messages.map((m) => {
    const chunk = chunks[m.chunkIndex];
    return m.evidence.length < chunk.text.length ? { ...chunkMessage(chunk, 0, m.evidence.length), tokens: m.tokens } : m;
  });
  return reasonOnce(input, messages, []);
}

/**
 * `question-only`: the question with no passage at all (a closed-book baseline): ONE `reason` call
 * whose only message is empty, forced when `bestEffort`. It shows what the model answers from the
 * question alone: comparison questions name their candidates (a yes/no or one of two names), so a
 * strategy's score there is only worth what it adds over this row (docs/EVAL.md, "The curve").
 * An empty message rather than none: the reasoning agent refuses an empty list without a model call.
 */
export async function runQuestionOnly(input: StrategyInput): Promise<StrategyResult> {
  const empty: Message = { id: 'none', round: 1, chunkIndex: 0, score: 0, evidence: '', tokens: 0, quotes: [], sources: [] };
  return reasonOnce(input, [empty], []);
}

/** One reasoning call over `messages` (stage 0). */
async function reasonOnce(input: StrategyInput, messages: Message[], warnings: string[]): Promise<StrategyResult> {
  return answerFrom(new CallRecorder(input.model), input.question, messages, input.options.bestEffort, warnings);
}
