/**
 * `CallRecorder`: an `AgentModel` decorator that records every model call as an `EvalCall` with the
 * stage the strategy is in, so that strategies can reuse domain functions (e.g. `seekRound`) that
 * call the model themselves.
 */
import type {
  AgentModel,
  CheckRequest,
  CheckResult,
  FollowUpRequest,
  FollowUpResult,
  ReasonRequest,
  ReasonResult,
  SeekRequest,
  SeekResult,
} from '../../shared/ports';
import { NO_ANSWER, type AgentRole, type Message, type RoleUsage } from '../../shared/types';
import type { EvalCall } from '../records';
import type { StrategyResult } from './types';

export class CallRecorder implements AgentModel {
  /** The calls recorded so far, in completion order. */
  readonly calls: EvalCall[] = [];
  /**
   * The stage given to calls started from now on (read when a call starts, so a stage of parallel
   * calls keeps its number even if the strategy moves on before they finish).
   */
  stage = 0;

  /** The inner model's follow-up question, recorded as a reasoner call; absent when the inner model has none. */
  readonly followUp?: (request: FollowUpRequest) => Promise<FollowUpResult>;

  /** The inner model's sufficiency check, recorded as a reasoner call; absent when the inner model has none. */
  readonly checkAnswer?: (request: CheckRequest) => Promise<CheckResult>;

  constructor(private readonly inner: AgentModel) {
    // The inner model's optional reasoner calls, recorded as its `reason` calls are.
    const recorded =
      <Q, R extends { usage: RoleUsage }>(call: (request: Q) => Promise<R>) =>
      async (request: Q): Promise<R> => {
        const stage = this.stage;
        const result = await call(request);
        this.record(stage, 'reasoner', result.usage);
        return result;
      };
    if (inner.checkAnswer !== undefined) this.checkAnswer = recorded(inner.checkAnswer.bind(inner));
    if (inner.followUp !== undefined) this.followUp = recorded(inner.followUp.bind(inner));
  }

  get description(): string {
    return this.inner.description;
  }

  /** Start the next stage and return its number (stages are 0, 1, 2, … in order). */
  nextStage(): number {
    return ++this.stage;
  }

  async seek(request: SeekRequest): Promise<SeekResult> {
    const stage = this.stage;
    const result = await this.inner.seek(request);
    this.record(stage, 'seeker', result.usage);
    return result;
  }

  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const stage = this.stage;
    const result = await this.inner.reason(request);
    this.record(stage, 'reasoner', result.usage);
    return result;
  }

  /**
   * One `EvalCall` per model call of `usage` (an LLM adapter may re-ask once, e.g. for a missing
   * score: `usage.calls` = 2); the tokens are split evenly between them, the first taking the rest.
   */
  private record(stage: number, role: AgentRole, usage: RoleUsage): void {
    const n = Math.max(1, usage.calls);
    for (let i = 0; i < n; i++) {
      const share = (total: number): number => Math.floor(total / n) + (i === 0 ? total % n : 0);
      this.calls.push({ stage, role, inputTokens: share(usage.inputTokens), outputTokens: share(usage.outputTokens) });
    }
  }
}

/**
 * A strategy's final step: one reasoning call over `context` (already fitted to the budget; forced
 * when `bestEffort`), and the result with every call `model` recorded. `context` becomes the
 * result's `finalContext`; `warnings` come first, then the reasoning call's.
 * @throws the model's errors unchanged.
 */
export async function answerFrom(
  model: CallRecorder,
  question: string,
  context: Message[],
  bestEffort: boolean,
  warnings: readonly string[],
): Promise<StrategyResult> {
  const result = await model.reason({ question, messages: context, force: bestEffort });
  return {
    prediction: result.answerable ? result.answer : NO_ANSWER,
    answerable: result.answerable,
    calls: model.calls,
    finalContext: context,
    warnings: [...warnings, ...result.warnings],
  };
}
