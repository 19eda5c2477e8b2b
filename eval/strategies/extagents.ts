/**
 * The ExtAgents method in memory (paper, section 2; the same semantics as the Step Functions
 * workflow of shared/pipeline/*, without the storage), and its two ablations.
 *
 * Mapping onto the `AgentModel` port:
 * - round r (1-based): one `seek` per chunk, all in one stage (round 1 without synchronized
 *   messages; round >= 2 with the global top-K of the pool fitted to `syncBudgetTokens`) —
 *   `seekRound` of shared/survey/survey.ts, which builds the messages exactly as the Seek task does
 *   (ids `r<round>-c<chunk>`, quotes located in the documents, pool order `compareMessages`);
 * - knowledge-accumulating reasoning (KAR): one `reason` per step, one stage each, over the top-k
 *   of the pool (both rounds' messages) for k = 1, 2, 4, … (`nextK` of shared/kar.ts), fitted to
 *   `reasonerBudgetTokens` (`fitForReasoning` of shared/method.ts, as the Reason task); the steps
 *   stop at the first answer, when k covers the pool, or when the budget already cut the top-k short
 *   (`afterRefusal`: a wider k would give the same text); an answer stops them only when the
 *   stopping rule accepts it (`judgeAnswer` of shared/support.ts, as the Reason task);
 * - after the last round: refuse ("NO ANSWER"), or with `bestEffort` one forced `reason` over the
 *   best messages that fit the budget.
 * Ablations: `extagents-no-sync` = 1 round; `extagents-no-kar` = one `reason` per round over ALL
 * messages of the pool, trimmed to the budget (no k schedule); `extagents-rank-score` and
 * `extagents-rank-retrieval` = the pool ranked by another `ranking` mode (shared/ranking.ts).
 *
 * With `input.workflow` (the eval command always gives it), `extagents` and `extagents-no-sync` run
 * through the product's workflow instead (`runExtAgentsWorkflow`: the local stack, the synthesized
 * state machine, as `extagents ask` runs it), so the eval measures what users run. So do the ranking
 * ablations (a run option). The no-KAR ablation is not a product behaviour and always runs here.
 */
import { FORCED_MAX_MESSAGES, afterRefusal, fitForReasoning, sameCitations, synchronizationSnapshot } from '../../shared/method';
import { compareMessages } from '../../shared/pool';
import { DEFAULT_RANKING, type RankingMode } from '../../shared/ranking';
import { seekRound } from '../../shared/survey/survey';
import { NO_ANSWER, type Message } from '../../shared/types';
import { CallRecorder } from './recorder';
import { checkedVerdict, citedAmong, judgeAnswer, type AnswerVerdict } from '../../shared/support';
import type { KarRounds, SynchronizationMode } from '../../shared/kar';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import type { StrategyInput, StrategyResult } from './types';
import type { RunOptionsInput } from '../../shared/config';

/** Which variant of the method. */
export interface ExtAgentsVariant {
  /** Seeking rounds (1 = no global knowledge synchronization). */
  rounds: number;
  /** false = the no-KAR ablation: one reasoning call per round over all messages. */
  kar: boolean;
  /** How the pool is ranked (the run option `ranking`). Default `DEFAULT_RANKING`. */
  ranking?: RankingMode;
  /** What synchronization gives round 2 (the run option `synchronization`). Default: the strategy options'. */
  synchronization?: SynchronizationMode;
  /** k of each round's first KAR step (the run option `karFirstK`). Default: the strategy options'. */
  firstK?: number;
  /** After which rounds KAR runs (the run option `karRounds`). Default: the strategy options'. */
  karRounds?: KarRounds;
}

/**
 * Run ExtAgents (or an ablation) on one example.
 * @returns the first answer of a KAR step (or the forced answer / the refusal) and every call:
 *   stage 0 = round-1 seeks, then one stage per KAR step, one for the round-2 seeks, …
 * @throws the model's errors unchanged.
 */
export async function runExtAgents(input: StrategyInput, variant: ExtAgentsVariant): Promise<StrategyResult> {
  const { question, chunks, options } = input;
  const model = new CallRecorder(input.model);
  const warnings: string[] = [];
  let pool: Message[] = [];
  let lastContext: Message[] = [];
  let first = true;
  // The question the reasoning agent said is still open when the round before ended (synchronization 'follow-up').
  let followUp: string | undefined;
  const asksFollowUp = (variant.synchronization ?? options.synchronization) === 'follow-up';
  for (let round = 1; round <= variant.rounds; round++) {
    if (round > 1 && pool.length === 0) break; // nothing to synchronize: another round would repeat round 1
    const synchronized = round > 1 ? synchronizationSnapshot(pool, options) : [];
    if (!first) model.nextStage();
    first = false;
    const sought = await seekRound(
      chunks,
      {
        query: question,
        round,
        synchronized,
        ...(followUp !== undefined && { followUp }),
        idPrefix: `r${round}-`,
        concurrency: options.callConcurrency,
        ranking: variant.ranking ?? DEFAULT_RANKING,
      },
      model,
    );
    followUp = undefined;
    warnings.push(...sought.warnings.map((w) => `round ${round}: ${w}`));
    pool = mergePool(pool, sought.messages);
    if (pool.length === 0) continue;
    // karRounds 'last': a round before the last is not read (the workflow's Reason task returns at once).
    if ((variant.karRounds ?? options.karRounds) === 'last' && round < variant.rounds) continue;

    if (!variant.kar) {
      model.nextStage();
      const fitted = fitForReasoning(pool, options.reasonerBudgetTokens);
      const result = await model.reason({ question, messages: fitted.messages, force: false });
      lastContext = fitted.messages;
      if (result.answerable && (await judge(result, fitted.messages, undefined, true)).outcome === 'answered')
        return done(result.answer, true, fitted.messages);
      continue;
    }
    let k = Math.min(variant.firstK ?? options.karFirstK, pool.length);
    // The answer of the step before, when it awaits confirmation (karStop 'confirmed').
    let unconfirmed: string | undefined;
    for (;;) {
      model.nextStage();
      const fitted = fitForReasoning(pool.slice(0, k), options.reasonerBudgetTokens);
      const result = await model.reason({ question, messages: fitted.messages, force: false });
      lastContext = fitted.messages;
      const verdict = result.answerable ? await judge(result, fitted.messages, unconfirmed, k >= pool.length || fitted.truncated) : undefined;
      if (verdict?.outcome === 'answered') return done(result.answer, true, fitted.messages);
      // The content filter withheld the reply: the run ends refused, as the workflow's Answered? ends it.
      if (result.filtered === true) return done(NO_ANSWER, false, fitted.messages);
      unconfirmed = verdict?.outcome === 'unconfirmed' ? result.answer : undefined;
      const next = afterRefusal(k, pool.length, fitted.truncated);
      if (next.exhausted) break;
      k = next.k;
    }
    // The round ended without an answer: what the next round's seeking agents are asked beside the pool.
    if (asksFollowUp && round < variant.rounds && model.followUp !== undefined) {
      followUp = (await model.followUp({ question, messages: lastContext })).followUp ?? undefined;
    }
  }
  if (options.bestEffort && pool.length > 0) {
    model.nextStage();
    const fitted = fitForReasoning(pool.slice(0, FORCED_MAX_MESSAGES), options.reasonerBudgetTokens);
    const result = await model.reason({ question, messages: fitted.messages, force: true });
    // A best-effort answer its cited quotes do not hold is refused, as the workflow's Finalize does.
    const stands = result.answerable && (await judge(result, fitted.messages, undefined, true, true)).outcome === 'answered';
    return done(stands ? result.answer : NO_ANSWER, stands, fitted.messages);
  }
  return done(NO_ANSWER, false, lastContext);

  /** The stopping rule (shared/support.ts), as the workflow's Reason task applies it. */
  async function judge(
    result: ReasonResult & { answerable: true },
    given: Message[],
    previousAnswer: string | undefined,
    widest: boolean,
    force = false,
  ): Promise<AnswerVerdict> {
    const cited = citedAmong(given, result.citedMessageIds);
    const verdict = judgeAnswer({ answer: result.answer, question, cited, rule: options.karStop, previousAnswer, widest });
    if (verdict.outcome !== 'answered' || force || options.karStop !== 'checked' || model.checkAnswer === undefined) return verdict;
    return checkedVerdict((await model.checkAnswer({ question, answer: result.answer, messages: cited })).verdict);
  }

  function done(prediction: string, answerable: boolean, finalContext: Message[]): StrategyResult {
    return { prediction, answerable, calls: model.calls, finalContext, warnings };
  }
}

/**
 * The pool after a round: both lists merged in pool order (score desc, chunk asc, round asc); a new
 * message citing exactly what its chunk's earlier message cited is not added again (`sameCitations`,
 * as the workflow's Seek task records it).
 */
function mergePool(pool: Message[], added: Message[]): Message[] {
  const fresh = added.filter((m) => !pool.some((p) => p.chunkIndex === m.chunkIndex && sameCitations(p, m)));
  return [...pool, ...fresh].sort(compareMessages);
}

/**
 * A `CallRecorder` for a run of the workflow, which calls the model itself: every seek of round r
 * gets the stage of that round's Distributed Map (its calls run in parallel), every reasoning call
 * (one KAR step) a stage of its own, in the order they start. Keeps the last reasoning request, whose
 * messages are the final context.
 */
class WorkflowCallRecorder extends CallRecorder {
  private readonly seekStages = new Map<number, number>();
  private last = -1;
  lastReason: ReasonRequest | undefined;

  constructor(inner: AgentModel) {
    super(inner);
  }

  override async seek(request: SeekRequest): Promise<SeekResult> {
    let stage = this.seekStages.get(request.round);
    if (stage === undefined) {
      stage = ++this.last;
      this.seekStages.set(request.round, stage);
    }
    this.stage = stage;
    return super.seek(request);
  }

  override async reason(request: ReasonRequest): Promise<ReasonResult> {
    this.stage = ++this.last;
    this.lastReason = request;
    return super.reason(request);
  }
}

/**
 * ExtAgents with `rounds` rounds, the pool ranked by `ranking` (the run option; default the
 * product's default) and the run options of an extension of the method (`extension`, e.g.
 * `{ coverage: 'grow' }`, `{ reseek: 'promising' }`; default none: the paper's method) through the product's workflow (`input.workflow`): the run's answer,
 * every model call with its stage, and the last reasoning step's messages as the final context
 * (their documents named as in the eval's corpus).
 * @throws Error when `input.workflow` is missing; the workflow's errors unchanged.
 */
export async function runExtAgentsWorkflow(
  input: StrategyInput,
  rounds: number,
  ranking: RankingMode = DEFAULT_RANKING,
  extension: Pick<RunOptionsInput, 'coverage' | 'reseek' | 'karFirstK' | 'karRounds' | 'synchronization'> = {},
): Promise<StrategyResult> {
  if (!input.workflow) throw new Error('runExtAgentsWorkflow needs input.workflow');
  const { options } = input;
  const model = new WorkflowCallRecorder(input.model);
  const { result, originalId } = await input.workflow({
    question: input.question,
    documents: input.documents,
    model,
    options: {
      chunkTokens: input.chunkTokens ?? 8000,
      rounds,
      reasonerBudgetTokens: options.reasonerBudgetTokens,
      syncBudgetTokens: options.syncBudgetTokens,
      syncMaxMessages: options.syncMaxMessages,
      karFirstK: options.karFirstK,
      karStop: options.karStop,
      karRounds: options.karRounds,
      synchronization: options.synchronization,
      bestEffort: options.bestEffort,
      concurrency: options.callConcurrency,
      ranking,
      ...extension,
    },
  });
  const finalContext = (model.lastReason?.messages ?? []).map((m) => ({
    ...m,
    quotes: m.quotes.map((q) => ({ ...q, documentId: originalId(q.documentId) })),
    sources: m.sources.map(originalId),
  }));
  return { prediction: result.answer, answerable: result.answerable, calls: model.calls, finalContext, warnings: result.warnings };
}
