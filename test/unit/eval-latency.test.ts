import { DEFAULT_LATENCY_MODEL, type LatencyModel, modeledCallMs, modeledLatency } from '../../shared/eval/latency';
import type { EvalCall } from '../../shared/eval/records';

/** A model where a call costs exactly its input tokens in ms (no fixed or output cost), so critical paths are easy to check by hand. */
const unit = (concurrency: number): LatencyModel => ({
  roles: {
    seeker: { fixedMs: 0, perInputTokenMs: 1, perOutputTokenMs: 0, quadraticCrossoverTokens: 100 },
    reasoner: { fixedMs: 0, perInputTokenMs: 1, perOutputTokenMs: 0, quadraticCrossoverTokens: 100 },
  },
  concurrency,
  description: 'test: 1 ms per input token',
});

const seek = (stage: number, inputTokens: number): EvalCall => ({ stage, role: 'seeker', inputTokens, outputTokens: 0 });

describe('modeled latency (critical path of the call graph)', () => {
  test('one call costs fixed + per input token + per output token, with the role parameters', () => {
    const call: EvalCall = { stage: 0, role: 'reasoner', inputTokens: 1000, outputTokens: 100 };
    const p = DEFAULT_LATENCY_MODEL.roles.reasoner;
    expect(modeledCallMs(call, DEFAULT_LATENCY_MODEL, false)).toBeCloseTo(p.fixedMs + 1000 * p.perInputTokenMs + 100 * p.perOutputTokenMs, 9);
    const s = DEFAULT_LATENCY_MODEL.roles.seeker;
    expect(modeledCallMs({ ...call, role: 'seeker' }, DEFAULT_LATENCY_MODEL, false)).toBeCloseTo(s.fixedMs + 1000 * s.perInputTokenMs + 100 * s.perOutputTokenMs, 9);
  });

  test('a parallel stage costs the slowest call of each wave of the concurrency bound, waves added', () => {
    // 5 calls, concurrency 2: waves [10, 30] [20, 5] [7] -> 30 + 20 + 7.
    const calls = [seek(0, 10), seek(0, 30), seek(0, 20), seek(0, 5), seek(0, 7)];
    const result = modeledLatency(calls, 'extagents', unit(2));
    expect(result.totalMs).toBe(57);
    expect(result.stages).toEqual([{ stage: 0, calls: 5, waves: 3, ms: 57 }]);
    // Unbounded enough: one wave, the max.
    expect(modeledLatency(calls, 'extagents', unit(8)).totalMs).toBe(30);
  });

  test('sequential stages add, in ascending stage order whatever the record order', () => {
    const calls = [seek(2, 4), seek(0, 10), seek(1, 3), seek(0, 6), { stage: 1, role: 'reasoner', inputTokens: 8, outputTokens: 0 } as EvalCall];
    const result = modeledLatency(calls, 'extagents', unit(4));
    expect(result.stages.map((s) => [s.stage, s.ms])).toEqual([
      [0, 10],
      [1, 8],
      [2, 4],
    ]);
    expect(result.totalMs).toBe(22);
  });

  test('the quadratic prefill term applies to the direct strategy only', () => {
    const calls: EvalCall[] = [{ stage: 0, role: 'reasoner', inputTokens: 200, outputTokens: 0 }];
    // linear 200 ms; quadratic 1 × 200² / 100 = 400 ms.
    expect(modeledLatency(calls, 'direct', unit(1)).totalMs).toBe(600);
    for (const strategy of ['extagents', 'rag', 'official', 'mapreduce'] as const) {
      expect(modeledLatency(calls, strategy, unit(1)).totalMs).toBe(200);
    }
  });

  test('the default model makes a 1M-token direct call far slower than its linear part', () => {
    const call: EvalCall = { stage: 0, role: 'reasoner', inputTokens: 1_000_000, outputTokens: 10 };
    const linear = modeledCallMs(call, DEFAULT_LATENCY_MODEL, false);
    expect(modeledCallMs(call, DEFAULT_LATENCY_MODEL, true)).toBeGreaterThan(5 * linear);
  });

  test('no calls take no time; a bad concurrency is refused', () => {
    expect(modeledLatency([], 'extagents')).toEqual({ totalMs: 0, stages: [] });
    expect(() => modeledLatency([seek(0, 1)], 'extagents', unit(0))).toThrow(RangeError);
  });
});
