/**
 * Reason: one knowledge-accumulating reasoning step (docs/ARCHITECTURE.md, steps 3 and 6; paper 2B):
 * the reasoning agent reads the global top-k messages, fitted to its token budget, and answers or
 * refuses; a refusal doubles k for the next step.
 */
import { nextK } from '../kar';
import { fitToBudget } from '../pool';
import type { AgentModel, BlobStore, MessageStore } from '../ports';
import { loadRunRecord } from './run-record';
import type { ReasonEvent, WorkflowState } from './state';

export interface ReasonDeps {
  blobs: BlobStore;
  store: MessageStore;
  model: AgentModel;
}

/** The forced answer reads at most this many of the best messages (then the token budget applies). */
const FORCED_MAX_MESSAGES = 1024;

/** Tokens reserved per message for its label and separators in the reasoning prompt. */
const MESSAGE_OVERHEAD_TOKENS = 12;

/**
 * Run one KAR step and return the next state.
 * - Empty pool: no model call; the step is "refused" and exhausted (nothing to read).
 * - `force` (best effort after the last round): the agent reads the best messages that fit the
 *   budget and is told to answer (a model that still refuses is recorded as refused).
 * - `exhausted` is true when this step already gave every message of the pool, or when the budget
 *   cut the top-k short (a wider k would give the agent the same text again).
 * @throws model errors unchanged (Step Functions retries the retryable ones by name).
 */
export async function reasonStep(event: ReasonEvent, deps: ReasonDeps): Promise<WorkflowState> {
  const { state, force } = event;
  const { blobs, store, model } = deps;
  const record = await loadRunRecord(blobs, state.runId);
  // The pool only changes between rounds: count it at a round's first step, reuse it after.
  const poolSize = state.outcome === null || state.poolSize === 0 ? await store.poolSize(state.runId) : state.poolSize;

  if (poolSize === 0) {
    return { ...state, outcome: 'refused', exhausted: true, poolSize };
  }
  const k = Math.min(state.k, poolSize);
  const top = await store.topK(state.runId, force ? Math.min(poolSize, FORCED_MAX_MESSAGES) : k);
  const fitted = fitToBudget(top, record.options.reasonerBudgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS });
  const result = await model.reason({ question: record.question, messages: fitted.messages, force });
  await store.addUsage(state.runId, 'reasoner', result.usage, result.warnings.map((w) => `KAR step ${state.seq + 1}: ${w}`));

  const answered = result.answerable;
  const seq = state.seq + 1;
  await store.putStep(state.runId, {
    seq,
    round: state.round,
    k,
    messagesUsed: fitted.messages.length,
    evidenceTokens: fitted.tokens,
    outcome: answered ? 'answered' : 'refused',
    ...(force ? { forced: true } : {}),
    answer: result.answer,
    citedMessageIds: result.citedMessageIds,
  });
  if (answered) return { ...state, seq, outcome: 'answered', exhausted: false, poolSize };

  const next = nextK(k, poolSize);
  const budgetBound = fitted.messages.length < k;
  return { ...state, seq, k: next.k, outcome: 'refused', exhausted: next.exhausted || budgetBound, poolSize };
}
