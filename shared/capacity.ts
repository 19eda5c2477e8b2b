/**
 * A capacity model of the AWS path (issue 28, item 2): how long a run takes, and how often the model
 * throttles it, when its seeking Map fans out over a large corpus. Pure and deterministic (no AWS
 * SDK, no clock; jitter from a seeded generator), so `ask --estimate`, bench/capacity.ts and the tests
 * use the same code.
 *
 * What is modeled, one discrete-event simulation per run (seconds of modeled time):
 * - the seeking Distributed Map of each round: `mapConcurrency` child executions at once (its
 *   MaxConcurrency, at most {@link DISTRIBUTED_MAP_MAX_CONCURRENCY}), each one seeking one chunk and
 *   holding its slot through its retries; the next chunk starts when a slot frees;
 * - Lambda: each attempt of a Seek task runs in an execution environment; a free one is reused
 *   (warm), else a new one is created, paying `coldStartSeconds`, within the Seek function's
 *   concurrency (its reserved concurrency, 100 by default, under the account's 1,000) and its scaling
 *   rate (a bucket of 1,000 new environments refilled continuously over 10 s) ({@link LAMBDA_DEFAULTS});
 *   an attempt that finds none waits for one. On AWS Lambda answers it 429 and the workflow's Lambda
 *   retry (`LAMBDA_SERVICE_RETRY`, 5 attempts up to 20 s) backs off, and a chunk can fail that way:
 *   the wait is optimistic for a MaxConcurrency far above the function's concurrency;
 * - the model's quota (requests and tokens per minute): {@link QuotaBuckets}; a seek that finds the
 *   quota spent is throttled (`throttledAttemptSeconds`), and the workflow's Retry
 *   (shared/quota.ts `MODEL_RETRY_POLICY`, the policy infra/extagents-workflow.ts is built from)
 *   waits a uniform draw in [0, delay] (full jitter) before the next attempt; after the last attempt
 *   the chunk fails, and more than `toleratedFailurePercentage` failed chunks fail the run;
 * - the reasoning agent: its calls (the cost estimate's upper bound, shared/cost.ts), an equal share
 *   after each round's seeking, one after another, each `reason.seconds`, not throttled (few calls,
 *   often another model with its own quota);
 * - each seek's own work after its model call (`seekOverheadSeconds`: writing its message, the
 *   child's end and the next one's start), holding the slot but not the quota.
 * Not modeled: the Map Run's start-up, Bedrock's latency growing under load, Lambda throttles' own
 * backoff.
 *
 * Bedrock does not document how it enforces a per-minute quota; {@link QuotaBuckets} assumes a token
 * bucket that holds `burstSeconds` of the quota (default 60: one minute's quota) and refills
 * continuously. That assumption sets how a run's first seconds burst; the steady rate is the quota.
 *
 * Sources (read 2026-12-03): Distributed Map, "up to 10,000 parallel child workflow executions" when
 * MaxConcurrency is unset (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html);
 * Lambda, 1,000 concurrent executions per Region by default
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html) and "1,000 execution
 * environment instances every 10 seconds" per function, refilled continuously
 * (https://docs.aws.amazon.com/lambda/latest/dg/scaling-behavior.html); Bedrock quotas, per model and
 * Region, requests and tokens (input + output) per minute
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/quotas-runtime.html).
 */
import { seededRandom } from './prng';
import { DEFAULT_LATENCY_MODEL, type RoleLatency } from './latency';
import { MODEL_RETRY_POLICY, retryDelaysSeconds } from './quota';
import type { ModelQuota, RunEstimate } from './types';

/** The most child executions a Distributed Map runs at once (its MaxConcurrency's upper bound, and the default when unset). */
export const DISTRIBUTED_MAP_MAX_CONCURRENCY = 10_000;

/**
 * Reserved concurrency of the Seek function unless the deployment's `seekReservedConcurrency` says
 * otherwise (infra/extagents-stack.ts): 100 seeking agents at once over all runs (the default run
 * concurrency is 8, a job runs 4 questions).
 */
export const DEFAULT_SEEK_RESERVED_CONCURRENCY = 100;

/** Lambda's defaults (see the file comment for the sources). */
export interface LambdaCapacity {
  /**
   * Concurrent executions of the Seek function: its reserved concurrency (the deployment's
   * `seekReservedConcurrency`, default {@link DEFAULT_SEEK_RESERVED_CONCURRENCY}), at most the
   * account's concurrency in the Region (1,000 by default; a quota increase raises it).
   */
  concurrency: number;
  /** New execution environments a function may create per 10 s (1,000), refilled continuously. */
  scalingPer10Seconds: number;
  /**
   * Seconds a new environment adds to its first invocation (init: runtime, bundle, SDK clients).
   * ASSUMED, 1 s, not measured for this project's bundles (AWS publishes no figure; Node.js functions
   * of a few MB commonly report init durations of 0.2 to 1 s).
   */
  coldStartSeconds: number;
}

/** The Seek function of the default deployment: 100 reserved, Lambda's documented scaling rate, an assumed cold start (see {@link LambdaCapacity}). */
export const LAMBDA_DEFAULTS: LambdaCapacity = { concurrency: DEFAULT_SEEK_RESERVED_CONCURRENCY, scalingPer10Seconds: 1_000, coldStartSeconds: 1 };

/** Seconds a throttled attempt takes before the task fails and the Retry waits: ASSUMED (an invocation and a 429 round trip). */
export const DEFAULT_THROTTLED_ATTEMPT_SECONDS = 0.2;

/**
 * Seconds a seek holds its Map slot beyond its model call: the handler writing its message, the
 * child's end and the next child's start. ASSUMED for AWS (0.1 s); the local check measures the
 * local engine's own (test/support/capacity-check.ts). A throttled attempt takes
 * {@link DEFAULT_THROTTLED_ATTEMPT_SECONDS} in all.
 */
export const DEFAULT_SEEK_OVERHEAD_SECONDS = 0.1;

/** Seconds of quota {@link QuotaBuckets} holds by default: one minute's (an assumption: Bedrock does not document its algorithm). */
export const DEFAULT_QUOTA_BURST_SECONDS = 60;

/**
 * Rounding allowance of a bucket's level: a refill computed as elapsed time × rate may fall short of
 * a whole unit by a rounding error, and a wait for that error would not move the clock.
 */
const EPSILON = 1e-9;

/**
 * A token bucket: holds at most `capacity`, refills at `ratePerSecond`, starts full. Times are
 * seconds on the caller's clock (modeled time, or real time scaled by the caller).
 */
export class TokenBucket {
  private level: number;
  private at: number;
  constructor(
    readonly capacity: number,
    readonly ratePerSecond: number,
    start = 0,
  ) {
    this.level = capacity;
    this.at = start;
  }
  private refill(now: number): void {
    if (now > this.at) {
      this.level = Math.min(this.capacity, this.level + (now - this.at) * this.ratePerSecond);
      this.at = now;
    }
  }
  /** Whether `amount` is available at `now` (nothing taken), within rounding ({@link EPSILON}). */
  has(now: number, amount: number): boolean {
    this.refill(now);
    return this.level >= amount - EPSILON;
  }
  /** Take `amount` at `now` if the bucket holds it; false (nothing taken) otherwise. */
  take(now: number, amount: number): boolean {
    if (!this.has(now, amount)) return false;
    this.level -= amount;
    return true;
  }
  /**
   * Take `amount` now or on credit: returns when it is available (now, or when the refill has
   * covered it and every earlier reservation), the bucket owing it until then.
   */
  reserve(now: number, amount: number): number {
    this.refill(now);
    this.level -= amount;
    return this.level >= -EPSILON ? now : now - this.level / this.ratePerSecond;
  }
}

/**
 * A model's quota as the model enforces it (the assumption of the file comment): one bucket of
 * requests and one of tokens, each holding `burstSeconds` of its per-minute limit; a request passes
 * when both hold enough (1 request, its reserved tokens: input + output at its limit, which Bedrock
 * reserves at the request's start), and takes from both. An absent limit never throttles.
 */
export class QuotaBuckets {
  private readonly requests?: TokenBucket;
  private readonly tokens?: TokenBucket;
  constructor(quota: ModelQuota, burstSeconds = DEFAULT_QUOTA_BURST_SECONDS, start = 0) {
    if (quota.requestsPerMinute !== undefined)
      this.requests = new TokenBucket((quota.requestsPerMinute * burstSeconds) / 60, quota.requestsPerMinute / 60, start);
    if (quota.tokensPerMinute !== undefined) this.tokens = new TokenBucket((quota.tokensPerMinute * burstSeconds) / 60, quota.tokensPerMinute / 60, start);
  }
  /** Admit one request of `tokens` at `now` (taken from the quota), or refuse it (throttled, nothing taken). */
  admit(now: number, tokens: number): boolean {
    if (this.requests && !this.requests.has(now, 1)) return false;
    if (this.tokens && !this.tokens.has(now, tokens)) return false;
    this.requests?.take(now, 1);
    this.tokens?.take(now, tokens);
    return true;
  }
}

/** One run as the capacity model sees it. Seconds of modeled time; tokens as shared/cost.ts counts them. */
export interface CapacityScenario {
  /** Chunks of the corpus: the seeks of one round. */
  chunks: number;
  rounds: number;
  /** One seek: its duration once admitted (seconds) and the tokens it counts against the quota. */
  seek: { seconds: number; tokens: number };
  /** The reasoning agent: calls over the whole run, one after another, each this many seconds. */
  reason: { calls: number; seconds: number };
  quota: ModelQuota;
  /** Seconds of quota the model's buckets hold (default {@link DEFAULT_QUOTA_BURST_SECONDS}). */
  quotaBurstSeconds?: number;
  /** The seeking Map's MaxConcurrency (shared/quota.ts `deriveConcurrency`), at most {@link DISTRIBUTED_MAP_MAX_CONCURRENCY}. */
  mapConcurrency: number;
  /** Default {@link LAMBDA_DEFAULTS}. */
  lambda?: LambdaCapacity;
  /** Default {@link DEFAULT_THROTTLED_ATTEMPT_SECONDS}. */
  throttledAttemptSeconds?: number;
  /** Seconds a seek holds its slot after its model call; default {@link DEFAULT_SEEK_OVERHEAD_SECONDS}. */
  seekOverheadSeconds?: number;
  /** The workflow's Retry of a throttled call; default `MODEL_RETRY_POLICY` (shared/quota.ts). */
  retry?: typeof MODEL_RETRY_POLICY;
  /** More failed chunks than this percentage of a round's fail the run (run option, default 5). */
  toleratedFailurePercentage: number;
  /** Seed of the retries' jitter (default 1): the same seed, the same result. */
  seed?: number;
}

/** One round of the model. */
export interface CapacityRound {
  /** Seconds from the round's first seek to its last chunk settled (sought or failed). */
  seekingSeconds: number;
  /** Seek attempts: admitted ones (model calls) plus throttled ones. */
  attempts: number;
  throttles: number;
  /** Chunks whose attempts ran out. */
  failedChunks: number;
  coldStarts: number;
  /** Seconds spent waiting for the Retry, summed over chunks. */
  retryWaitSeconds: number;
  /** Most seeks admitted and in flight at once. */
  peakInFlight: number;
}

/** What the model predicts for a run. */
export interface CapacityResult {
  rounds: CapacityRound[];
  /** Seconds of seeking, all rounds. */
  seekingSeconds: number;
  /** Seconds of reasoning (the reasoner's calls one after another). */
  reasoningSeconds: number;
  /** Seconds from the first seek to the answer (seeking + reasoning; no Step Functions overhead). */
  totalSeconds: number;
  /** Model calls made (admitted seeks + reasoning calls); throttled attempts are not calls (not billed). */
  calls: number;
  throttles: number;
  failedChunks: number;
  /** Set when a round's failed chunks exceed the tolerance: the run fails there (States.ExceedToleratedFailureThreshold). */
  failedRound?: number;
}

/** A binary min-heap of events by (time, sequence): the same order on every run. */
class EventQueue<T> {
  private readonly heap: Array<{ time: number; seq: number; value: T }> = [];
  private seq = 0;
  get size(): number {
    return this.heap.length;
  }
  push(time: number, value: T): void {
    const h = this.heap;
    h.push({ time, seq: this.seq++, value });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }
  pop(): { time: number; value: T } | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l], h[m])) m = l;
        if (r < h.length && this.less(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
  private less(a: { time: number; seq: number }, b: { time: number; seq: number }): boolean {
    return a.time < b.time || (a.time === b.time && a.seq < b.seq);
  }
}

type SeekEvent = { kind: 'invoke'; chunk: number } | { kind: 'call'; chunk: number } | { kind: 'end'; chunk: number; admitted: boolean };

/**
 * Simulate a run (see the file comment).
 * @returns per-round and total seconds, calls, throttles and failed chunks; `failedRound` when a
 *   round's failures exceed the tolerance (later rounds are then not run).
 * @throws RangeError for a scenario without chunks, rounds or concurrency, or with a negative duration.
 */
export function simulateCapacity(scenario: CapacityScenario): CapacityResult {
  const { chunks, rounds, seek, quota } = scenario;
  if (!(chunks >= 1 && rounds >= 1 && scenario.mapConcurrency >= 1))
    throw new RangeError(`A capacity scenario needs chunks, rounds and mapConcurrency of at least 1 (got ${chunks}, ${rounds}, ${scenario.mapConcurrency})`);
  if (!(seek.seconds >= 0 && scenario.reason.seconds >= 0)) throw new RangeError('A capacity scenario needs non-negative seek and reason seconds');
  const lambda = scenario.lambda ?? LAMBDA_DEFAULTS;
  const retry = scenario.retry ?? MODEL_RETRY_POLICY;
  const delays = retryDelaysSeconds(retry);
  const throttled = scenario.throttledAttemptSeconds ?? DEFAULT_THROTTLED_ATTEMPT_SECONDS;
  const overhead = scenario.seekOverheadSeconds ?? DEFAULT_SEEK_OVERHEAD_SECONDS;
  const random = seededRandom(scenario.seed ?? 1);
  const buckets = new QuotaBuckets(quota, scenario.quotaBurstSeconds ?? DEFAULT_QUOTA_BURST_SECONDS);
  const scaling = new TokenBucket(lambda.scalingPer10Seconds, lambda.scalingPer10Seconds / 10);
  const slots = Math.min(scenario.mapConcurrency, DISTRIBUTED_MAP_MAX_CONCURRENCY);
  // Lambda environments live across rounds (warm between them).
  let environments = 0;
  let freeEnvironments = 0;

  const result: CapacityResult = { rounds: [], seekingSeconds: 0, reasoningSeconds: 0, totalSeconds: 0, calls: 0, throttles: 0, failedChunks: 0 };
  let now = 0;
  for (let round = 1; round <= rounds; round++) {
    const start = now;
    const stats: CapacityRound = { seekingSeconds: 0, attempts: 0, throttles: 0, failedChunks: 0, coldStarts: 0, retryWaitSeconds: 0, peakInFlight: 0 };
    const attemptsOf = new Uint8Array(chunks);
    const events = new EventQueue<SeekEvent>();
    const waitingForEnvironment: number[] = [];
    let next = 0;
    let inFlight = 0;
    let settled = 0;
    const startNext = (time: number): void => {
      if (next < chunks) events.push(time, { kind: 'invoke', chunk: next++ });
    };
    for (let i = 0; i < slots; i++) startNext(now);
    for (let event = events.pop(); event !== undefined; event = events.pop()) {
      now = event.time;
      const e = event.value;
      if (e.kind === 'invoke') {
        if (freeEnvironments > 0) {
          freeEnvironments -= 1;
          events.push(now, { kind: 'call', chunk: e.chunk });
        } else if (environments < lambda.concurrency) {
          // A new environment, as soon as the scaling rate allows one (in arrival order).
          environments += 1;
          stats.coldStarts += 1;
          events.push(scaling.reserve(now, 1) + lambda.coldStartSeconds, { kind: 'call', chunk: e.chunk });
        } else {
          waitingForEnvironment.push(e.chunk);
        }
      } else if (e.kind === 'call') {
        stats.attempts += 1;
        attemptsOf[e.chunk] += 1;
        const admitted = buckets.admit(now, seek.tokens);
        if (admitted) {
          inFlight += 1;
          stats.peakInFlight = Math.max(stats.peakInFlight, inFlight);
        }
        events.push(now + (admitted ? seek.seconds + overhead : throttled), { kind: 'end', chunk: e.chunk, admitted });
      } else {
        // The environment is free again: a waiting attempt takes it.
        const waiting = waitingForEnvironment.shift();
        if (waiting !== undefined) events.push(now, { kind: 'call', chunk: waiting });
        else freeEnvironments += 1;
        if (e.admitted) {
          inFlight -= 1;
          result.calls += 1;
          settled += 1;
          startNext(now);
        } else {
          stats.throttles += 1;
          const retryIndex = attemptsOf[e.chunk] - 1;
          if (retryIndex < delays.length) {
            const wait = random() * delays[retryIndex];
            stats.retryWaitSeconds += wait;
            events.push(now + wait, { kind: 'invoke', chunk: e.chunk });
          } else {
            stats.failedChunks += 1;
            settled += 1;
            startNext(now);
          }
        }
      }
    }
    if (settled !== chunks) throw new Error(`capacity model: ${settled} of ${chunks} chunks settled in round ${round}`);
    stats.seekingSeconds = now - start;
    result.rounds.push(stats);
    result.seekingSeconds += stats.seekingSeconds;
    result.throttles += stats.throttles;
    result.failedChunks += stats.failedChunks;
    if ((stats.failedChunks / chunks) * 100 > scenario.toleratedFailurePercentage) {
      result.failedRound = round;
      break;
    }
    // The round's reasoning (its share of the reasoner's calls) before the next round's seeks.
    const reasoning = (scenario.reason.calls / rounds) * scenario.reason.seconds;
    now += reasoning;
    result.reasoningSeconds += reasoning;
  }
  result.calls += result.failedRound === undefined ? scenario.reason.calls : 0;
  result.totalSeconds = result.seekingSeconds + result.reasoningSeconds;
  return result;
}

/** Seconds of one call of `role` under a latency model (fixed + per input token + per output token). */
function callSeconds(latency: RoleLatency, inputTokens: number, outputTokens: number): number {
  return (latency.fixedMs + latency.perInputTokenMs * inputTokens + latency.perOutputTokenMs * outputTokens) / 1000;
}

/**
 * The scenario of a run from its cost estimate (shared/cost.ts `estimateRun`, the one count of a
 * run's calls and tokens) and its seeking plan (shared/quota.ts `planRunConcurrency`: MaxConcurrency,
 * tokens per seek, seek latency): the reasoner's calls at the eval's latency model
 * (shared/latency.ts `DEFAULT_LATENCY_MODEL`, assumed), averaged over its calls.
 */
export function scenarioOfRun(
  estimate: RunEstimate,
  plan: { concurrency: number; tokensPerSeek: number; seekLatencySeconds: number; quota: ModelQuota },
  options: { rounds: number; toleratedFailurePercentage: number },
): CapacityScenario {
  const r = estimate.reasoner;
  const reasonSeconds = r.calls === 0 ? 0 : callSeconds(DEFAULT_LATENCY_MODEL.roles.reasoner, r.inputTokens / r.calls, r.outputTokens / r.calls);
  return {
    chunks: Math.max(1, Math.round(estimate.seeker.calls / options.rounds)),
    rounds: options.rounds,
    seek: { seconds: plan.seekLatencySeconds, tokens: plan.tokensPerSeek },
    reason: { calls: r.calls, seconds: Math.round(reasonSeconds * 100) / 100 },
    quota: plan.quota,
    mapConcurrency: plan.concurrency,
    toleratedFailurePercentage: options.toleratedFailurePercentage,
  };
}

/** What `ask --estimate` prints beside the cost: the model's time to the answer (see {@link forecastRun}). */
export interface TimeForecast {
  /** Seconds of seeking per round (modeled). */
  seekingSecondsPerRound: number[];
  /** Seconds of reasoning, at most (every KAR step of the estimate, one after another). */
  reasoningSeconds: number;
  /** Seconds from the first seek to the answer (modeled). */
  totalSeconds: number;
  /** Throttled attempts expected. */
  throttles: number;
  failedChunks: number;
  /** The round whose failed chunks would fail the run, if one would. */
  failedRound?: number;
  /** The assumptions the figures rest on, one line. */
  assumptions: string;
}

/**
 * The expected time of a run on the AWS path: {@link scenarioOfRun} of its estimate and seeking plan,
 * simulated once (seed 1), with Lambda's defaults and the assumed cold start, seek overhead and quota
 * bucket of this file. Deterministic.
 */
export function forecastRun(
  estimate: RunEstimate,
  plan: { concurrency: number; tokensPerSeek: number; seekLatencySeconds: number; quota: ModelQuota },
  options: { rounds: number; toleratedFailurePercentage: number },
): TimeForecast {
  const scenario = scenarioOfRun(estimate, plan, options);
  const result = simulateCapacity(scenario);
  const r1 = (v: number): number => Math.round(v * 10) / 10;
  return {
    seekingSecondsPerRound: result.rounds.map((r) => r1(r.seekingSeconds)),
    reasoningSeconds: r1(result.reasoningSeconds),
    totalSeconds: r1(result.totalSeconds),
    throttles: result.throttles,
    failedChunks: result.failedChunks,
    ...(result.failedRound !== undefined && { failedRound: result.failedRound }),
    assumptions:
      `a seek ${plan.seekLatencySeconds} s + ${DEFAULT_SEEK_OVERHEAD_SECONDS} s, a reasoning call ${scenario.reason.seconds} s, ` +
      `MaxConcurrency ${plan.concurrency}, Lambda cold start ${LAMBDA_DEFAULTS.coldStartSeconds} s, the quota a bucket of ${DEFAULT_QUOTA_BURST_SECONDS} s (docs/CAPACITY.md)`,
  };
}
