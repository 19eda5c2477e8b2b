/**
 * `chain-of-agents` (Zhang et al., 2024, "Chain of Agents"): workers read the chunks in corpus order,
 * each passing a bounded note to the next; a manager answers from the last note.
 *
 * Mapping onto the `AgentModel` port:
 * - worker i (stage i): one `seek` of chunk i; the previous note is given as its synchronized
 *   messages (round 2 semantics: "known evidence, find new evidence"; round 1 while the note is
 *   empty). The note is a list of messages: the worker's message plus the previous note, in pool
 *   order (best score first), trimmed to `syncBudgetTokens` (`fitToBudget`). Only neighbours
 *   communicate: this is the limited "bandwidth" the ExtAgents paper contrasts with global
 *   synchronization.
 * - manager (stage = number of chunks): one `reason` over the last note (forced when `bestEffort`).
 * The workers are sequential by construction: latency grows with the number of chunks.
 */
import { compareMessages, fitToBudget } from '../../shared/pool';
import { seekRound } from '../../shared/survey/survey';
import type { Message } from '../../shared/types';
import { MESSAGE_OVERHEAD_TOKENS } from '../../shared/method';
import { answerFrom, CallRecorder } from './recorder';
import type { StrategyInput, StrategyResult } from './types';

/** @throws the model's errors unchanged. */
export async function runChainOfAgents(input: StrategyInput): Promise<StrategyResult> {
  const { question, chunks, options } = input;
  const model = new CallRecorder(input.model);
  const warnings: string[] = [];
  let note: Message[] = [];
  for (const [i, chunk] of chunks.entries()) {
    model.stage = i;
    const round = note.length === 0 ? 1 : 2;
    const sought = await seekRound([chunk], { query: question, round, synchronized: note, idPrefix: `w${i}-`, concurrency: 1 }, model);
    warnings.push(...sought.warnings);
    note = fitToBudget([...sought.messages, ...note].sort(compareMessages), options.syncBudgetTokens).messages;
  }
  model.stage = chunks.length;
  const context = fitToBudget(note, options.reasonerBudgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS }).messages;
  return answerFrom(model, question, context, options.bestEffort, warnings);
}
