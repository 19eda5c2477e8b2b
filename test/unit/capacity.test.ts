/**
 * The capacity model of the AWS path (shared/capacity.ts): the Map's slots, Lambda's concurrency,
 * scaling rate and cold starts, the quota's buckets, the workflow's jittered Retry and the failed-chunk
 * tolerance, each in a scenario whose answer is known by hand.
 */
import { parseRunOptions } from '../../shared/config';
import { estimateRun } from '../../shared/cost';
import { QuotaBuckets, TokenBucket, scenarioOfRun, simulateCapacity, type CapacityScenario } from '../../shared/capacity';
import { MODEL_RETRY_POLICY, planRunConcurrency, retryBudgetSeconds } from '../../shared/quota';

/** No quota, no Lambda limit or cold start, one round, seeks of 2 s, nothing tolerated. */
const scenario = (extra: Partial<CapacityScenario> = {}): CapacityScenario => ({
  chunks: 100,
  rounds: 1,
  seek: { seconds: 2, tokens: 1000 },
  reason: { calls: 0, seconds: 0 },
  quota: {},
  mapConcurrency: 10,
  lambda: { concurrency: 1000, scalingPer10Seconds: 1000, coldStartSeconds: 0 },
  toleratedFailurePercentage: 0,
  seekOverheadSeconds: 0,
  ...extra,
});

describe('TokenBucket and QuotaBuckets', () => {
  it('starts full, refills at its rate up to its capacity, and reserves on credit in arrival order', () => {
    const bucket = new TokenBucket(10, 2);
    expect(bucket.take(0, 10)).toBe(true);
    expect(bucket.take(0, 1)).toBe(false);
    expect(bucket.reserve(0, 4)).toBe(2);
    expect(bucket.reserve(1, 2)).toBe(3);
    expect(bucket.has(3, 0)).toBe(true);
    expect(bucket.has(3, 1)).toBe(false);
    expect(bucket.has(100, 10)).toBe(true);
    expect(bucket.has(100, 10.5)).toBe(false);
  });

  it('admits a request only when both its request and its tokens fit, and takes nothing from either otherwise', () => {
    // 60 requests and 600 tokens a minute, 1 s of burst: 1 request and 10 tokens.
    const quota = new QuotaBuckets({ requestsPerMinute: 60, tokensPerMinute: 600 }, 1);
    expect(quota.admit(0, 20)).toBe(false);
    expect(quota.admit(0, 10)).toBe(true);
    expect(quota.admit(0.5, 1)).toBe(false);
    expect(quota.admit(1, 10)).toBe(true);
  });
});

describe('simulateCapacity', () => {
  it('runs the chunks in waves of MaxConcurrency without a quota', () => {
    const result = simulateCapacity(scenario({ rounds: 2, reason: { calls: 4, seconds: 3 } }));
    expect(result.rounds.map((r) => r.seekingSeconds)).toEqual([20, 20]);
    expect(result).toMatchObject({ reasoningSeconds: 12, totalSeconds: 52, calls: 204, throttles: 0, failedChunks: 0 });
    expect(result.rounds[0].peakInFlight).toBe(10);
  });

  it('pays a cold start once per environment, not again in the next round', () => {
    const result = simulateCapacity(scenario({ rounds: 2, lambda: { concurrency: 1000, scalingPer10Seconds: 1000, coldStartSeconds: 1 } }));
    expect(result.rounds.map((r) => [r.seekingSeconds, r.coldStarts])).toEqual([
      [21, 10],
      [20, 0],
    ]);
  });

  it("adds each seek's own work to the time it holds its slot", () => {
    expect(simulateCapacity(scenario({ seekOverheadSeconds: 0.5 })).rounds[0].seekingSeconds).toBe(25);
  });

  it("holds the seeks to Lambda's account concurrency when the Map allows more", () => {
    const result = simulateCapacity(scenario({ lambda: { concurrency: 5, scalingPer10Seconds: 1000, coldStartSeconds: 0 } }));
    expect(result.rounds[0]).toMatchObject({ seekingSeconds: 40, peakInFlight: 5, coldStarts: 5 });
  });

  it("ramps up at Lambda's scaling rate: 1,000 environments at once, then 100 a second", () => {
    const result = simulateCapacity(
      scenario({
        chunks: 3000,
        mapConcurrency: 3000,
        seek: { seconds: 100, tokens: 0 },
        lambda: { concurrency: 3000, scalingPer10Seconds: 1000, coldStartSeconds: 0 },
      }),
    );
    // The last of 2,000 further environments is created at 20 s; its seek ends 100 s later.
    expect(result.rounds[0].seekingSeconds).toBeCloseTo(120, 6);
    expect(result.rounds[0].coldStarts).toBe(3000);
  });

  it('keeps to the quota: at the concurrency it carries no throttles, above it throttles and the same steady rate', () => {
    // 60 requests a minute (1 a second), 1 s of burst, 1 s seeks: the quota carries one seek at a time.
    const quota = { requestsPerMinute: 60 };
    const aware = simulateCapacity(
      scenario({ chunks: 30, seek: { seconds: 1, tokens: 0 }, quota, quotaBurstSeconds: 1, mapConcurrency: 1, toleratedFailurePercentage: 100 }),
    );
    const unaware = simulateCapacity(
      scenario({ chunks: 30, seek: { seconds: 1, tokens: 0 }, quota, quotaBurstSeconds: 1, mapConcurrency: 8, toleratedFailurePercentage: 100 }),
    );
    expect(aware).toMatchObject({ seekingSeconds: 30, throttles: 0, failedChunks: 0 });
    expect(unaware.throttles).toBeGreaterThan(30);
    // No faster than the quota's rate: 30 requests at 1 a second after the first.
    expect(unaware.seekingSeconds).toBeGreaterThanOrEqual(29);
    expect(unaware.calls + unaware.failedChunks).toBe(30);
  });

  it("fails a chunk after the Retry's attempts, its waits drawn with full jitter, and fails the run past the tolerance", () => {
    // One seek counts more tokens than the bucket ever holds: every attempt is throttled.
    const result = simulateCapacity(scenario({ chunks: 200, mapConcurrency: 200, quota: { tokensPerMinute: 500 }, toleratedFailurePercentage: 5, seed: 7 }));
    const attempts = MODEL_RETRY_POLICY.retries + 1;
    expect(result.rounds[0]).toMatchObject({ attempts: 200 * attempts, throttles: 200 * attempts, failedChunks: 200 });
    expect(result).toMatchObject({ failedRound: 1, calls: 0 });
    // Each chunk waits uniform [0, delay] per retry: 61 s on average, at most 122 s.
    const { expected, longest } = retryBudgetSeconds();
    const perChunk = result.rounds[0].retryWaitSeconds / 200;
    expect(perChunk).toBeGreaterThan(expected * 0.85);
    expect(perChunk).toBeLessThan(expected * 1.15);
    expect(result.rounds[0].seekingSeconds).toBeLessThanOrEqual(longest + attempts * 0.2 + 1e-9);
  });

  it('gives the same result for the same seed and another for another seed', () => {
    const storm = scenario({ chunks: 60, mapConcurrency: 20, quota: { requestsPerMinute: 120 }, quotaBurstSeconds: 2, toleratedFailurePercentage: 100 });
    expect(simulateCapacity({ ...storm, seed: 3 })).toEqual(simulateCapacity({ ...storm, seed: 3 }));
    expect(simulateCapacity({ ...storm, seed: 3 }).rounds[0].retryWaitSeconds).not.toBe(simulateCapacity({ ...storm, seed: 4 }).rounds[0].retryWaitSeconds);
  });

  it('refuses a scenario without chunks or concurrency', () => {
    expect(() => simulateCapacity(scenario({ chunks: 0 }))).toThrow(RangeError);
    expect(() => simulateCapacity(scenario({ mapConcurrency: 0 }))).toThrow(/mapConcurrency of at least 1/);
  });
});

describe('scenarioOfRun', () => {
  it("takes the chunks, tokens per seek, latency and MaxConcurrency of the run's estimate and plan", () => {
    const options = parseRunOptions({ concurrency: 1000, quotaTokensPerMinute: 2_000_000 });
    const estimate = estimateRun({ chunks: 1250, chunkTokensTotal: 10_000_000, question: 'What happened?', options });
    const plan = planRunConcurrency(estimate, options);
    const s = scenarioOfRun(estimate, plan, options);
    expect(s).toMatchObject({
      chunks: 1250,
      rounds: 2,
      seek: { seconds: plan.seekLatencySeconds, tokens: plan.tokensPerSeek },
      mapConcurrency: plan.concurrency,
      quota: { tokensPerMinute: 2_000_000 },
    });
    expect(s.reason.calls).toBe(estimate.reasoner.calls);
    // At the quota-aware concurrency the model predicts the plan's seeking time (which has no term for
    // a seek's own work beyond its call) and no throttles.
    const result = simulateCapacity({ ...s, seekOverheadSeconds: 0 });
    expect(result.throttles).toBe(0);
    expect(result.seekingSeconds).toBeCloseTo(plan.seekingSeconds ?? 0, -1);
  });
});
