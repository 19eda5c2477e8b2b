/**
 * `official`: the reference ExtAgents procedure of the authors' code (as we read it: a separate
 * scoring call per agent, `get_info_score`; the extracted information sorted by score and cut to a
 * token budget, `process_info_list`; several rounds; an answer forced in the last round), on the same
 * model port and chunks as our `extagents`, to compare cost.
 *
 * Mapping onto the `AgentModel` port, per round r = 1..`officialMaxRounds`:
 * - stage A (extraction): one `seek` per chunk; in r >= 2 with the broadcast (all extracted
 *   information so far, best score first, cut to `syncBudgetTokens`: no top-K cap);
 * - stage B (scoring): one more `seek`-like call per chunk: the chunk is a pseudo-chunk holding only
 *   that agent's extracted information (or "No relevant information." when it found none, since the
 *   reference scores every agent's output), and the returned relevance score (0-100) becomes the
 *   message's score. With the extractive reader this is the weighted share of the question's terms
 *   the information covers; with an LLM it is the model's own rating. Its usage is counted like any
 *   call (role seeker). So every round costs exactly 2 calls per chunk;
 * - stage C (reasoning): one `reason` over ALL messages so far (best score first) cut to
 *   `reasonerBudgetTokens` (no KAR), forced in the last round.
 * It stops at the first answer. When no agent found anything after a round, further rounds would
 * repeat it (same input, no broadcast), so the run stops there with "NO ANSWER" (the reference would
 * re-ask; with a deterministic reader that changes nothing).
 */
import { compareMessages, fitToBudget } from '../../shared/pool';
import { spanToQuotes } from '../../shared/method';
import { countTokens } from '../../shared/tokenizer';
import { NO_ANSWER, type Message } from '../../shared/types';
import pLimit from 'p-limit';
import { MESSAGE_OVERHEAD_TOKENS } from '../../shared/method';
import { pseudoChunk } from './pseudo-chunk';
import { CallRecorder } from './recorder';
import type { StrategyInput, StrategyResult } from './types';

/**
 * Run the reference procedure on one example.
 * @returns stages 3(r-1) = extraction, 3(r-1)+1 = scoring, 3(r-1)+2 = reasoning of round r.
 * @throws the model's errors unchanged.
 */
export async function runOfficial(input: StrategyInput): Promise<StrategyResult> {
  const { question, chunks, options } = input;
  const model = new CallRecorder(input.model);
  const limit = pLimit(options.callConcurrency);
  const warnings: string[] = [];
  let pool: Message[] = [];
  const rounds = Math.max(1, options.officialMaxRounds);
  for (let round = 1; round <= rounds; round++) {
    const broadcast = round > 1 ? fitToBudget(pool, options.syncBudgetTokens).messages : [];
    model.stage = 3 * (round - 1);
    const extracted = await Promise.all(
      chunks.map((chunk) => limit(async () => ({ chunk, result: await model.seek({ question, chunk, round, synchronized: broadcast }) }))),
    );
    model.stage = 3 * (round - 1) + 1;
    const scored = await Promise.all(
      extracted.map(({ chunk, result }) =>
        limit(async (): Promise<Message | null> => {
          const evidence = result.evidence !== null && result.evidence.trim() !== '' ? result.evidence : null;
          const id = `r${round}-c${chunk.index}`;
          const info: Message[] = evidence === null ? [] : [{ id, round, chunkIndex: chunk.index, score: 0, evidence, tokens: 0, quotes: [], sources: [] }];
          const rating = await model.seek({ question, chunk: pseudoChunk(chunk.index, info), round: 1, synchronized: [] });
          warnings.push(...result.warnings.map((w) => `round ${round}, chunk ${chunk.index}: ${w}`));
          if (evidence === null) return null;
          const quotes = result.spans.flatMap((s) => spanToQuotes(chunk, s.start, s.end));
          return {
            id,
            round,
            chunkIndex: chunk.index,
            score: rating.score,
            evidence,
            tokens: countTokens(evidence),
            quotes,
            sources: [...new Set((quotes.length > 0 ? quotes : chunk.segments).map((q) => q.documentId))],
          };
        }),
      ),
    );
    pool = [...pool, ...scored.filter((m): m is Message => m !== null)].sort(compareMessages);
    if (pool.length === 0) break;
    model.stage = 3 * (round - 1) + 2;
    const force = round === rounds;
    const fitted = fitToBudget(pool, options.reasonerBudgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS });
    const result = await model.reason({ question, messages: fitted.messages, force });
    if (result.answerable || force) {
      return {
        prediction: result.answerable ? result.answer : NO_ANSWER,
        answerable: result.answerable,
        calls: model.calls,
        finalContext: fitted.messages,
        warnings,
      };
    }
  }
  return { prediction: NO_ANSWER, answerable: false, calls: model.calls, finalContext: [], warnings };
}
