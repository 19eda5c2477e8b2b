/**
 * Reason: one knowledge-accumulating reasoning step (docs/ARCHITECTURE.md, steps 3 and 6; paper 2B):
 * the reasoning agent reads the global top-k messages, fitted to its token budget, and answers or
 * refuses; a refusal doubles k for the next step.
 */
import { ContextOverflowError, isContextOverflow } from '../errors';
import { FORCED_MAX_MESSAGES, afterRefusal, fitForReasoning, halveForReasoning } from '../method';
import type { AgentModel, BlobStore, MessageStore, ReasonResult, StoredStep } from '../ports';
import { checkedVerdict, citedAmong, judgeAnswer } from '../support';
import { NO_ANSWER } from '../types';
import { addUsageInto, zeroUsage } from '../run-counters';
import { loadRunRecord, type RunRecord } from './run-record';
import { countIfTransient } from './seek';
import type { ReasonEvent, WorkflowState } from './state';

export interface ReasonDeps {
  blobs: BlobStore;
  store: MessageStore;
  model: AgentModel;
}

/**
 * Run one KAR step and return the next state.
 * - Empty pool: no model call; the step is "refused" and exhausted (nothing to read).
 * - Run option `karRounds: 'last'` and a round before the last: no step, no model call; the state is
 *   refused and exhausted, so the workflow synchronizes and seeks the next round.
 * - `force` (best effort after the last round): the agent reads the best messages that fit the
 *   budget and is told to answer (a model that still refuses is recorded as refused).
 * - `exhausted` is true when this step already gave every message of the pool, or when the budget
 *   cut the top-k short (a wider k would give the agent the same text again).
 * - A transient model error (ModelThrottledError, …) is counted in the run's counters
 *   (`RunResult.retries`) and rethrown unchanged: Step Functions retries the step by name.
 * - ContextOverflowError is never retried as is: the step is sent once more with its evidence
 *   halved (`halveForReasoning`, shared/method.ts: fewer messages, the first one trimmed when it alone
 *   exceeds half), recorded with a warning and in the step's `messagesUsed` / `evidenceTokens`; if
 *   that overflows too, or nothing is left to send, the step fails.
 * @throws ContextOverflowError naming the KAR step (round, k) and what to change, when the halved
 *   evidence still overflows; other model errors unchanged.
 */
export async function reasonStep(event: ReasonEvent, deps: ReasonDeps): Promise<WorkflowState> {
  const { state, force } = event;
  const { blobs, store, model } = deps;
  const record = await loadRunRecord(blobs, state.runId);
  // The pool only changes between rounds: count it at a round's first step, reuse it after.
  // The pool of rounds 1..state.round only: a resumed run replaying an earlier round must not read
  // messages a later round recorded before the kill, nor (a grow run) messages of a later tranche.
  const poolSize = state.outcome === null || state.poolSize === 0 ? await store.poolSize(state.runId, state.round, state.covered) : state.poolSize;

  if (poolSize === 0) {
    return { ...state, outcome: 'refused', exhausted: true, poolSize };
  }
  // karRounds 'last': a round before the last is not read; the Choice goes on to synchronize and seek
  // the next round (no step is recorded, no model call: a replay takes the same path).
  if (!force && deferredToLastRound(record, state)) {
    return { ...state, outcome: 'refused', exhausted: true, poolSize };
  }
  const k = Math.min(state.k, poolSize);
  const top = await store.topK(state.runId, force ? Math.min(poolSize, FORCED_MAX_MESSAGES) : k, state.round, state.covered);
  let fitted = fitForReasoning(top, record.options.reasonerBudgetTokens);
  // The run's recorded steps, read once (the replay check, a reused reply, the step to agree with).
  const steps = await store.getSteps(state.runId);
  const recorded = recordedStep(steps, state, k, force);
  if (recorded) {
    // A resumed run (or a retried task) replays this step: the recorded outcome is reused without a
    // model call, so the replay reaches the same answer even with a model that is not deterministic.
    // Evidence tokens other than today's fit mean the step was sent with halved evidence: budget-bound.
    return afterStep(state, recorded, poolSize, fitted.truncated || recorded.evidenceTokens !== fitted.tokens);
  }
  const step = `KAR step ${state.seq + 1} (round ${state.round}, k=${k}${force ? ', best-effort answer' : ''})`;
  const warnings: string[] = [];
  const messageIds = fitted.messages.map((m) => m.id);
  // The same prompt as an earlier step that did not end KAR (round 2 found nothing that enters the
  // top k): its reply stands, reused without a model call (the same messages, the same question,
  // the same reply), and is judged again by the stopping rule below.
  const repeated = force ? undefined : repliedOver(steps, messageIds);
  if (repeated !== undefined) {
    warnings.push(`the same messages as KAR step ${repeated.seq} (${repeated.outcome}); its reply reused, no model call`);
  }
  let result: ReasonResult;
  try {
    result = repeated === undefined ? await model.reason({ question: record.question, messages: fitted.messages, force }) : reusedReply(repeated);
  } catch (error) {
    await countIfTransient(store, state.runId, 'reasoner', error);
    if (!isContextOverflow(error)) throw error;
    // Never retried as is: once more with the evidence halved (fewer messages; the first one
    // trimmed when it alone exceeds half), then a clear failure.
    const smaller = halveForReasoning(fitted);
    const shrunk = `its evidence shrunk from ${fitted.messages.length} message(s) (${fitted.tokens} tokens) to ${smaller.messages.length} (${smaller.tokens} tokens)`;
    const advice = `lower the reasoning budget (run option reasonerBudgetTokens, CLI --reasoner-budget; now ${record.options.reasonerBudgetTokens}) or use a reasoning model with a larger context window`;
    if (smaller.messages.length === 0) {
      throw new ContextOverflowError(`${step} exceeds the reasoning model's context window and its evidence cannot be shrunk further: ${advice}`, {
        cause: error,
      });
    }
    try {
      result = await model.reason({ question: record.question, messages: smaller.messages, force });
    } catch (retryError) {
      await countIfTransient(store, state.runId, 'reasoner', retryError);
      if (!isContextOverflow(retryError)) throw retryError;
      throw new ContextOverflowError(`${step} exceeds the reasoning model's context window even with ${shrunk}: ${advice}`, { cause: retryError });
    }
    fitted = smaller;
    warnings.push(`context window exceeded; sent once more with ${shrunk}`);
  }
  // The stopping rule (shared/support.ts): an answer stands only when its cited quotes hold it and,
  // under karStop 'confirmed', the next, wider step gives it again (or no wider step exists).
  const cited = result.answerable ? citedAmong(fitted.messages, result.citedMessageIds) : [];
  let verdict = result.answerable
    ? judgeAnswer({
        answer: result.answer,
        question: record.question,
        cited,
        rule: record.options.karStop,
        previousAnswer: force ? undefined : previousAnswer(steps, state),
        widest: force || k >= poolSize || fitted.truncated,
      })
    : undefined;
  // The step's usage: the reasoning call, and the check or follow-up question it made.
  const usage = zeroUsage();
  addUsageInto(usage, result.usage);
  if (result.answerable && verdict?.outcome === 'answered' && !force && record.options.karStop === 'checked') {
    if (model.checkAnswer === undefined) {
      warnings.push(`karStop 'checked': ${model.description} has no sufficiency check; the answer stands on its support alone`);
    } else {
      let check: Awaited<ReturnType<NonNullable<AgentModel['checkAnswer']>>>;
      try {
        check = await model.checkAnswer({ question: record.question, answer: result.answer, messages: cited });
      } catch (error) {
        // Retried as the step (Step Functions matches the error's name); the step is not recorded yet.
        await countIfTransient(store, state.runId, 'reasoner', error);
        throw error;
      }
      addUsageInto(usage, check.usage);
      warnings.push(...check.warnings);
      verdict = checkedVerdict(check.verdict);
    }
  }
  if (verdict !== undefined && verdict.outcome !== 'answered') {
    warnings.push(
      `answer ${JSON.stringify(result.answer)} ${verdict.outcome === 'unsupported' ? 'not supported' : 'not yet confirmed'}: ${verdict.reason}${force ? '' : '; KAR reads on'}`,
    );
  }
  const stored: StoredStep = {
    seq: state.seq + 1,
    round: state.round,
    k,
    messagesUsed: fitted.messages.length,
    evidenceTokens: fitted.tokens,
    outcome: result.filtered === true ? 'filtered' : (verdict?.outcome ?? 'refused'),
    ...(force ? { forced: true } : {}),
    answer: result.answer,
    citedMessageIds: result.citedMessageIds,
    ...(result.answerBasis !== undefined && { answerBasis: result.answerBasis }),
    messageIds: fitted.messages.map((m) => m.id),
  };
  // The round ends here without an answer: under synchronization 'follow-up' the reasoning agent
  // says what it still needs, for the next round's seeking agents (recorded with the step, so a
  // replay asks nothing again).
  const roundEnds = stored.outcome !== 'answered' && stored.outcome !== 'filtered' && !force && afterRefusal(k, poolSize, fitted.truncated).exhausted;
  if (roundEnds && wantsFollowUp(record, state) && model.followUp === undefined) {
    warnings.push(`synchronization 'follow-up': ${model.description} asks no follow-up question; round ${state.round + 1} is synchronized plainly`);
  } else if (roundEnds && wantsFollowUp(record, state) && model.followUp !== undefined) {
    try {
      const asked = await model.followUp({ question: record.question, messages: fitted.messages });
      addUsageInto(usage, asked.usage);
      warnings.push(...asked.warnings);
      if (asked.followUp !== null) stored.followUp = asked.followUp;
    } catch (error) {
      // Never fatal: the round is synchronized plainly instead.
      await countIfTransient(store, state.runId, 'reasoner', error);
      warnings.push(`no follow-up question (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}); plain synchronization`);
    }
  }
  // The step, its usage and its warnings in one write: counted once, when its result is recorded.
  await store.putStep(state.runId, stored, {
    usage,
    warnings: [...warnings, ...result.warnings].map((w) => `KAR step ${state.seq + 1}: ${w}`),
  });
  // Budget-bound: the token budget dropped or trimmed messages it was given, so a wider k would give
  // the agent the same text again. (Fewer messages than k from the GSI — which DynamoDB updates
  // asynchronously — is not budget-bound: the next, wider step reads them.)
  return afterStep(state, stored, poolSize, fitted.truncated);
}

/**
 * The step this execution is about to take, if an earlier execution of the same run (killed, then
 * resumed) or an earlier attempt of this task already recorded it: same sequence number, round, k
 * and best-effort flag. Anything else recorded under that number belongs to another path and is
 * overwritten by the new step.
 */
function recordedStep(steps: readonly StoredStep[], state: WorkflowState, k: number, force: boolean): StoredStep | undefined {
  const seq = state.seq + 1;
  const step = steps.find((s) => s.seq === seq);
  return step !== undefined && step.round === state.round && step.k === k && (step.forced === true) === force ? step : undefined;
}

/**
 * An earlier step of the run, not best-effort and not answered, over exactly these messages (same
 * ids, same order), if any: its reply is this step's (shared/pipeline/reason.ts `reusedReply`).
 */
function repliedOver(steps: readonly StoredStep[], messageIds: readonly string[]): StoredStep | undefined {
  if (messageIds.length === 0) return undefined;
  const same = (ids: readonly string[] | undefined): boolean =>
    ids !== undefined && ids.length === messageIds.length && ids.every((id, i) => id === messageIds[i]);
  return steps.find((s) => s.outcome !== 'answered' && s.outcome !== 'filtered' && s.forced !== true && same(s.messageIds));
}

/** The reply a recorded step got, as a reasoning result with no model call (no usage). */
function reusedReply(step: StoredStep): ReasonResult {
  const usage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  if (step.outcome === 'refused') return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
  return {
    answerable: true,
    answer: step.answer,
    citedMessageIds: step.citedMessageIds,
    usage,
    warnings: [],
    ...(step.answerBasis !== undefined && { answerBasis: step.answerBasis }),
  };
}

/**
 * Whether KAR waits for the last round (run option `karRounds: 'last'`): a round before the last,
 * once the coverage is final (a grow run reads its next tranche only after a refusal, which needs KAR).
 */
export function deferredToLastRound(record: Pick<RunRecord, 'options'>, state: WorkflowState): boolean {
  const grows = record.options.coverage === 'grow' && state.covered < state.config.coverageCap;
  return record.options.karRounds === 'last' && state.round < record.options.rounds && !grows;
}

/**
 * Whether a round that ends without an answer asks the reasoning agent for a follow-up question:
 * run option `synchronization: 'follow-up'`, a next round to come, rounds not pipelined (a
 * speculative round starts before KAR ends), and no coverage left to grow first.
 */
function wantsFollowUp(record: RunRecord, state: WorkflowState): boolean {
  // A grow run whose coverage can still grow reads its next tranche before it synchronizes.
  const grows = record.options.coverage === 'grow' && state.covered < state.config.coverageCap;
  return record.options.synchronization === 'follow-up' && state.round < record.options.rounds && !record.options.pipelineRounds && !grows;
}

/**
 * The answer of the step before this one when it belongs to the same round, was not the best-effort
 * answer and answered (supported, awaiting confirmation): what this step must agree with under
 * karStop 'confirmed'. Undefined at a round's first step or after a refusal.
 */
function previousAnswer(steps: readonly StoredStep[], state: WorkflowState): string | undefined {
  if (state.seq === 0) return undefined;
  const before = steps.find((s) => s.seq === state.seq);
  return before !== undefined && before.round === state.round && before.forced !== true && before.outcome === 'unconfirmed' ? before.answer : undefined;
}

/**
 * The workflow state after a recorded step (answered: done; filtered: done, refused — Answered? sends
 * it to Finalize; any other outcome: k doubles, or the round is exhausted).
 */
function afterStep(state: WorkflowState, step: StoredStep, poolSize: number, budgetBound: boolean): WorkflowState {
  if (step.outcome === 'answered') return { ...state, seq: step.seq, outcome: 'answered', exhausted: false, poolSize };
  if (step.outcome === 'filtered') return { ...state, seq: step.seq, outcome: 'filtered', exhausted: true, poolSize };
  const next = afterRefusal(step.k, poolSize, budgetBound);
  return { ...state, seq: step.seq, k: next.k, outcome: 'refused', exhausted: next.exhausted, poolSize };
}
