/**
 * Quota-aware fan-out (shared/quota.ts): the seeking Map's MaxConcurrency by Little's law under the
 * model's requests and tokens per minute, capped by the run's concurrency, at least 1, and the
 * pre-flight check that refuses a run the quota cannot carry.
 */
import { estimateRun } from '../../shared/cost';
import { parseRunOptions } from '../../shared/config';
import { InvalidRunOptionsError } from '../../shared/errors';
import {
  LONG_SEEKING_WARNING_SECONDS,
  checkQuota,
  defaultSeekLatency,
  deriveConcurrency,
  planRunConcurrency,
  retryBudgetSeconds,
  retryDelaysSeconds,
  tokensPerSeek,
  type ConcurrencyInput,
} from '../../shared/quota';

/** 10,000 tokens a seek, 3 s each, the run's concurrency 50. */
const base = (quota: ConcurrencyInput['quota'], extra: Partial<ConcurrencyInput> = {}): ConcurrencyInput => ({
  quota,
  requested: 50,
  tokensPerSeek: 10_000,
  seekLatencySeconds: 3,
  latencySource: 'test',
  ...extra,
});

describe('deriveConcurrency', () => {
  it("keeps the run's concurrency when no quota is stated", () => {
    const plan = deriveConcurrency(base({}));

    expect(plan.concurrency).toBe(50);
    expect(plan.boundBy).toBe('concurrency');
    expect(plan.byRequests).toBeUndefined();
    expect(plan.byTokens).toBeUndefined();
    expect(plan.reasoning).toEqual(["no quota stated: the run's concurrency, 50"]);
  });

  it('stays under a request quota: concurrency = requests per second × latency, rounded down', () => {
    // 200 requests/min × 3 s / 60 = 10 in flight.
    const plan = deriveConcurrency(base({ requestsPerMinute: 200 }));

    expect(plan.concurrency).toBe(10);
    expect(plan.boundBy).toBe('requestsPerMinute');
    expect(plan.byRequests).toBe(10);
    expect(plan.expectedRequestsPerMinute).toBeLessThanOrEqual(200);
  });

  it('stays under a token quota: concurrency = tokens per second × latency / tokens per seek', () => {
    // 1,000,000 tokens/min × 3 s / (60 × 10,000) = 5 in flight.
    const plan = deriveConcurrency(base({ tokensPerMinute: 1_000_000 }));

    expect(plan.concurrency).toBe(5);
    expect(plan.boundBy).toBe('tokensPerMinute');
    expect(plan.byTokens).toBe(5);
    expect(plan.expectedTokensPerMinute).toBeLessThanOrEqual(1_000_000);
  });

  it('takes the tighter of both limits, and both rates stay under their quota', () => {
    // Requests allow 10, tokens 7.5 -> 7.
    const plan = deriveConcurrency(base({ requestsPerMinute: 200, tokensPerMinute: 1_500_000 }));

    expect(plan.concurrency).toBe(7);
    expect(plan.boundBy).toBe('tokensPerMinute');
    expect(plan.expectedRequestsPerMinute).toBeLessThanOrEqual(200);
    expect(plan.expectedTokensPerMinute).toBeLessThanOrEqual(1_500_000);
    expect(plan.reasoning.join('\n')).toMatch(
      /requests: 200\/min × 3 s \/ 60 = 10 seeks in flight\ntokens: 1,500,000\/min × 3 s \/ \(60 × 10,000\) = 7\.5 seeks in flight/,
    );
  });

  it("is capped by the run's concurrency when the quota allows more", () => {
    const plan = deriveConcurrency(base({ requestsPerMinute: 100_000, tokensPerMinute: 1_000_000_000 }, { requested: 8 }));

    expect(plan.concurrency).toBe(8);
    expect(plan.boundBy).toBe('concurrency');
    expect(plan.byRequests).toBe(5000);
  });

  it('is at least 1 when even one seek at a time is over the quota', () => {
    // 10 requests/min × 3 s / 60 = 0.5 in flight.
    const plan = deriveConcurrency(base({ requestsPerMinute: 10 }));

    expect(plan.concurrency).toBe(1);
    expect(plan.boundBy).toBe('minimum');
    expect(plan.byRequests).toBe(0.5);
  });

  it('models the seeking time from the seeks, the latency and the concurrency', () => {
    // 100 seeks on 10 slots of 3 s: 30 s.
    expect(deriveConcurrency(base({ requestsPerMinute: 200 }, { seeks: { chunks: 100, rounds: 1 } })).seekingSeconds).toBe(30);
    // Rounds one after another: 2 rounds of 5 chunks on 10 slots take 2 × 3 s.
    expect(deriveConcurrency(base({ requestsPerMinute: 200 }, { seeks: { chunks: 5, rounds: 2 } })).seekingSeconds).toBe(6);
    // One at a time, paced by the quota (10 requests/min: 6 s a seek, not 3): 100 seeks take 600 s.
    expect(deriveConcurrency(base({ requestsPerMinute: 10 }, { seeks: { chunks: 100, rounds: 1 } })).seekingSeconds).toBe(600);
  });
});

describe('checkQuota (pre-flight)', () => {
  it('refuses a run whose one seek counts more tokens than the quota of a whole minute, with the numbers', () => {
    const check = checkQuota(deriveConcurrency(base({ tokensPerMinute: 8000 })));

    expect(check.refusal).toMatch(/one seek counts 10,000 tokens against a quota of 8,000 tokens per minute/);
  });

  it('refuses a run whose seeks would wait for the quota longer than the retries wait on average', () => {
    // 1 request/min and 10,000 tokens a seek at 10,000/min: a seek every 60 s, 57 s of waiting, within 61 s.
    const check = checkQuota(deriveConcurrency(base({ tokensPerMinute: 10_000, requestsPerMinute: 1 }, { tokensPerSeek: 10_000 })));
    expect(check.refusal).toBeUndefined();

    // Half a request a minute: a seek every 120 s, 117 s of waiting.
    const refused = checkQuota(deriveConcurrency(base({ requestsPerMinute: 0.5 })));
    expect(refused.refusal).toMatch(
      /one seek at a time needs 120 s per seek .* each seek would wait 117 s for the quota, more than its retries wait on average \(61 s of at most 122 s over 6 retries\)/,
    );
  });

  it('warns, with the numbers, when one seek at a time is still over the quota', () => {
    const check = checkQuota(deriveConcurrency(base({ requestsPerMinute: 10 })));

    expect(check.refusal).toBeUndefined();
    expect(check.warnings).toEqual([expect.stringMatching(/one seek at a time is over the quota \(10 requests\/min\): each seek waits about 3 s/)]);
  });

  it('warns when the modeled seeking time is over an hour', () => {
    const chunks = ((LONG_SEEKING_WARNING_SECONDS + 60) * 10) / 3;
    const check = checkQuota(deriveConcurrency(base({ requestsPerMinute: 200 }, { seeks: { chunks, rounds: 1 } })));

    expect(check.refusal).toBeUndefined();
    expect(check.warnings).toEqual([expect.stringMatching(/^seeking would take about 61 min at MaxConcurrency 10 \(3 s a seek\): over 60 min$/)]);
  });

  it('has nothing to say without a quota', () => {
    expect(checkQuota(deriveConcurrency(base({}, { seeks: { chunks: 10, rounds: 2 } })))).toEqual({ warnings: [] });
  });
});

describe('the retry budget', () => {
  it("is the workflow's Retry of a throttled call: 2, 4, 8, 16, 32, 60 s, half of it on average with full jitter", () => {
    expect(retryDelaysSeconds()).toEqual([2, 4, 8, 16, 32, 60]);
    expect(retryBudgetSeconds()).toEqual({ expected: 61, longest: 122 });
  });
});

describe('planRunConcurrency', () => {
  const estimate = estimateRun({ chunks: 100, chunkTokensTotal: 800_000, question: 'Who was the first librarian?', options: parseRunOptions({}) });

  it('takes the tokens of a seek from the cost estimate, output at its limit included', () => {
    const s = estimate.seeker;
    expect(tokensPerSeek(estimate)).toBe(Math.ceil((s.inputTokens + s.outputTokens) / s.calls));
    expect(tokensPerSeek(estimate)).toBeGreaterThan(8000);
  });

  it("defaults the latency to the eval's assumed seeker latency, and says so", () => {
    const latency = defaultSeekLatency(estimate);

    expect(latency.seconds).toBeGreaterThan(2);
    expect(latency.seconds).toBeLessThan(4);
    expect(latency.source).toMatch(/shared\/latency\.ts/);
  });

  it("prefers the run's own quota and latency over the deployment's", () => {
    const options = parseRunOptions({ concurrency: 100, quotaRequestsPerMinute: 60, seekLatencySeconds: 5 });
    const plan = planRunConcurrency(estimate, options, { requestsPerMinute: 6000, tokensPerMinute: 400_000 });

    expect(plan.quota).toEqual({ requestsPerMinute: 60, tokensPerMinute: 400_000 });
    expect(plan.seekLatencySeconds).toBe(5);
    expect(plan.concurrency).toBe(Math.floor(Math.min(5, (400_000 * 5) / (60 * tokensPerSeek(estimate)))));
    expect(plan.seekingSeconds).toBeDefined();
  });
});

describe('the quota run options', () => {
  it('are validated with the other run options', () => {
    expect(() => parseRunOptions({ quotaTokensPerMinute: 0 })).toThrow(InvalidRunOptionsError);
    expect(() => parseRunOptions({ quotaRequestsPerMinute: 1.5 })).toThrow(/quotaRequestsPerMinute/);
    expect(() => parseRunOptions({ seekLatencySeconds: 0 })).toThrow(/seekLatencySeconds/);
    expect(parseRunOptions({ quotaRequestsPerMinute: 600, quotaTokensPerMinute: 300_000, seekLatencySeconds: 2.5 })).toMatchObject({
      quotaRequestsPerMinute: 600,
      quotaTokensPerMinute: 300_000,
      seekLatencySeconds: 2.5,
    });
  });
});
