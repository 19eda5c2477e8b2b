/**
 * `mapreduce`: LLM×MapReduce style (Zhou et al., 2024): map every chunk, collapse the mapped results
 * in groups until they fit the reasoning budget, reduce to one answer, conflicts resolved by the
 * confidence each result carries.
 *
 * Mapping onto the `AgentModel` port:
 * - map (stage 0): one `seek` per chunk: the extracted information is the mapped result and its
 *   relevance score (0-100) becomes the confidence 1-5 (`confidenceOf`: 0-19 → 1, 20-39 → 2, …,
 *   80-100 → 5);
 * - collapse (one stage per level, while the results exceed `reasonerBudgetTokens`): consecutive
 *   results (corpus order) are grouped up to `chunkTokens` tokens (a group fits a seeking call like a
 *   chunk) and each group with two or more results is one `seek` over a pseudo-chunk holding them
 *   (extract what answers the question from these results, rescored); a single-result group passes
 *   through. Stops when a level merges nothing;
 * - reduce (last stage): one `reason` over the results by confidence, then pool order, trimmed to
 *   the budget (forced when `bestEffort`). The confidences order the context; they are not shown as
 *   numbers (the port's messages have no such field).
 */
import { compareMessages, fitToBudget } from '../../shared/pool';
import { seekRound } from '../../shared/survey/survey';
import { countTokens } from '../../shared/tokenizer';
import type { Chunk, Message } from '../../shared/types';
import pLimit from 'p-limit';
import { MESSAGE_OVERHEAD_TOKENS } from '../../shared/method';
import { pseudoChunk, quotesBehind } from './pseudo-chunk';
import { answerFrom, CallRecorder } from './recorder';
import type { StrategyInput, StrategyResult } from './types';

/** Confidence 1-5 of LLM×MapReduce from a relevance score 0-100. */
export function confidenceOf(score: number): number {
  return 1 + Math.min(4, Math.max(0, Math.floor(score / 20)));
}

/** @throws the model's errors unchanged. */
export async function runMapReduce(input: StrategyInput): Promise<StrategyResult> {
  const { question, chunks, options } = input;
  const model = new CallRecorder(input.model);
  const limit = pLimit(options.callConcurrency);
  const warnings: string[] = [];
  const mapped = await seekRound(chunks, { query: question, round: 1, synchronized: [], idPrefix: 'map-', concurrency: options.callConcurrency }, model);
  warnings.push(...mapped.warnings);
  // Collapse works in corpus order (LLM×MapReduce collapses neighbouring results).
  let results = [...mapped.messages].sort((a, b) => a.chunkIndex - b.chunkIndex);
  const groupBudget = Math.max(1, ...chunks.map((c) => c.tokens));
  const size = (ms: readonly Message[]): number => ms.reduce((sum, m) => sum + m.tokens + MESSAGE_OVERHEAD_TOKENS, 0);
  for (let level = 1; size(results) > options.reasonerBudgetTokens && results.length > 1; level++) {
    const groups = groupConsecutive(results, groupBudget);
    if (groups.every((g) => g.length < 2)) break;
    model.nextStage();
    const collapsed = await Promise.all(
      groups.map((group, g) =>
        limit(async (): Promise<Message | null> => {
          if (group.length < 2) return group[0];
          const chunk: Chunk = pseudoChunk(g, group);
          const r = await model.seek({ question, chunk, round: 1, synchronized: [] });
          if (r.evidence === null || r.evidence.trim() === '') return null;
          const quotes = quotesBehind(chunk, group, r.spans);
          return {
            id: `collapse${level}-g${g}`,
            round: 1,
            chunkIndex: group[0].chunkIndex,
            score: r.score,
            evidence: r.evidence,
            tokens: countTokens(r.evidence),
            quotes,
            sources: [...new Set(quotes.length > 0 ? quotes.map((q) => q.documentId) : group.flatMap((m) => m.sources))],
          };
        }),
      ),
    );
    results = collapsed.filter((m): m is Message => m !== null);
  }
  model.nextStage();
  const ordered = [...results].sort((a, b) => confidenceOf(b.score) - confidenceOf(a.score) || compareMessages(a, b));
  const context = fitToBudget(ordered, options.reasonerBudgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS }).messages;
  return answerFrom(model, question, context, options.bestEffort, warnings);
}

/** Consecutive groups whose evidence tokens (plus overhead) stay within `budget`; a result larger than the budget is a group alone. */
function groupConsecutive(results: readonly Message[], budget: number): Message[][] {
  const groups: Message[][] = [];
  let current: Message[] = [];
  let tokens = 0;
  for (const m of results) {
    const cost = m.tokens + MESSAGE_OVERHEAD_TOKENS;
    if (current.length > 0 && tokens + cost > budget) {
      groups.push(current);
      current = [];
      tokens = 0;
    }
    current.push(m);
    tokens += cost;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
