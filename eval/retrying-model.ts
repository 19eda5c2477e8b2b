/**
 * One retry policy for every strategy of the eval (issue 51, item 9): the strategies that run through
 * the product's workflow have its Retry (infra/extagents-workflow.ts `MODEL_RETRY`: the transient
 * model errors, `RETRYABLE_ERRORS`, retried up to 6 times after 2, 4, 8, … s, at most 60 s, full
 * jitter); the strategies that call the model in memory (direct, rag, chain-of-agents, …) get the
 * same policy from this wrapper, so a server error is retried alike whichever strategy met it. Built
 * on p-retry (its backoff randomizes each wait between 1× and 2× of the step, not Step Functions'
 * full jitter: the same number of attempts and the same order of waits).
 */
import pRetry from 'p-retry';
import { RETRYABLE_ERRORS } from '../shared/errors';
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
} from '../shared/ports';
import { MODEL_RETRY_POLICY } from '../shared/quota';

/** An `AgentModel` whose calls retry the transient model errors with the workflow's policy. */
export class RetryingModel implements AgentModel {
  readonly checkAnswer?: (request: CheckRequest) => Promise<CheckResult>;
  readonly followUp?: (request: FollowUpRequest) => Promise<FollowUpResult>;

  /**
   * @param inner the model.
   * @param firstWaitMs the first wait, ms (the policy's 2,000; tests pass less); later waits double,
   *   up to the policy's cap scaled alike.
   */
  constructor(
    private readonly inner: AgentModel,
    private readonly firstWaitMs: number = MODEL_RETRY_POLICY.intervalSeconds * 1000,
  ) {
    if (inner.checkAnswer !== undefined) {
      const check = inner.checkAnswer.bind(inner);
      this.checkAnswer = (request) => this.retry(() => check(request));
    }
    if (inner.followUp !== undefined) {
      const follow = inner.followUp.bind(inner);
      this.followUp = (request) => this.retry(() => follow(request));
    }
  }

  get description(): string {
    return this.inner.description;
  }

  seek(request: SeekRequest): Promise<SeekResult> {
    return this.retry(() => this.inner.seek(request));
  }

  reason(request: ReasonRequest): Promise<ReasonResult> {
    return this.retry(() => this.inner.reason(request));
  }

  /** `call`, again after a transient error while retries are left; any other error at once, unchanged. */
  private retry<T>(call: () => Promise<T>): Promise<T> {
    const scale = this.firstWaitMs / (MODEL_RETRY_POLICY.intervalSeconds * 1000);
    return pRetry(
      async () => {
        try {
          return await call();
        } catch (error) {
          const name = error instanceof Error ? error.name : '';
          if ((RETRYABLE_ERRORS as readonly string[]).includes(name)) throw error;
          throw new pRetry.AbortError(error instanceof Error ? error : new Error(String(error)));
        }
      },
      {
        retries: MODEL_RETRY_POLICY.retries,
        factor: MODEL_RETRY_POLICY.backoffRate,
        minTimeout: this.firstWaitMs,
        maxTimeout: MODEL_RETRY_POLICY.maxDelaySeconds * 1000 * scale,
        randomize: true,
      },
    );
  }
}
