/**
 * `CallMemo`: an `AgentModel` decorator that answers a call from memory when the same request was
 * sent before (the eval's `reuseCalls`, one memo per example). The strategies of one example send many
 * identical requests: every round-1 seek of `extagents`, its ablations and the ranking ablations reads
 * the same chunk with the same question and no synchronized messages, and their first KAR steps often
 * reason over the same messages. For a deterministic model (the test model at temperature 0 and a fixed
 * thread count; docs/EVAL.md, "Thread count") the reply is the one the model would give again, so the
 * records are the same and only the model time is saved; the caller's `CallRecorder` still records each
 * call with its usage, so calls, tokens and cost count what the strategy would spend.
 *
 * The key is a SHA-256 of the whole request as JSON (question, chunk, round, synchronized or reasoning
 * messages with their scores, `force`): any difference the prompt could depend on makes another key.
 * A call in flight is shared (the promise is kept); a failed call is forgotten, so it is not reused.
 */
import { createHash } from 'node:crypto';
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

export class CallMemo implements AgentModel {
  private readonly seeks = new Map<string, Promise<SeekResult>>();
  private readonly reasons = new Map<string, Promise<ReasonResult>>();
  /** Calls answered from memory so far (seek and reason). */
  hits = 0;

  /** The inner model's follow-up question, answered from memory like the others; absent when the inner model has none. */
  readonly followUp?: (request: FollowUpRequest) => Promise<FollowUpResult>;
  private readonly followUps = new Map<string, Promise<FollowUpResult>>();

  /** The inner model's sufficiency check, answered from memory like the others; absent when the inner model has none. */
  readonly checkAnswer?: (request: CheckRequest) => Promise<CheckResult>;
  private readonly checks = new Map<string, Promise<CheckResult>>();

  constructor(private readonly inner: AgentModel) {
    const checkAnswer = inner.checkAnswer?.bind(inner);
    if (checkAnswer !== undefined) this.checkAnswer = (request) => this.remember(this.checks, request, () => checkAnswer(request));
    const followUp = inner.followUp?.bind(inner);
    if (followUp !== undefined) this.followUp = (request) => this.remember(this.followUps, request, () => followUp(request));
  }

  get description(): string {
    return this.inner.description;
  }

  seek(request: SeekRequest): Promise<SeekResult> {
    return this.remember(this.seeks, request, () => this.inner.seek(request));
  }

  reason(request: ReasonRequest): Promise<ReasonResult> {
    return this.remember(this.reasons, request, () => this.inner.reason(request));
  }

  private remember<T>(
    memo: Map<string, Promise<T>>,
    request: SeekRequest | ReasonRequest | FollowUpRequest | CheckRequest,
    call: () => Promise<T>,
  ): Promise<T> {
    const key = createHash('sha256').update(JSON.stringify(request)).digest('hex');
    const known = memo.get(key);
    if (known !== undefined) {
      this.hits++;
      return known;
    }
    const pending = call();
    memo.set(key, pending);
    pending.catch(() => memo.delete(key));
    return pending;
  }
}
