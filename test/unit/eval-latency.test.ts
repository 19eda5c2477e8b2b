import { DEFAULT_LATENCY_MODEL, type LatencyModel, modeledCallMs, modeledLatency, modeledPipelinedLatency, slotSchedule } from '../../eval/latency';
import type { EvalCall } from '../../eval/records';

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
    expect(modeledCallMs({ ...call, role: 'seeker' }, DEFAULT_LATENCY_MODEL, false)).toBeCloseTo(
      s.fixedMs + 1000 * s.perInputTokenMs + 100 * s.perOutputTokenMs,
      9,
    );
  });

  test('a parallel stage runs its calls on the concurrency bound with slot refill: each starts when a slot frees', () => {
    // 5 calls, concurrency 2: slot A 10, slot B 30; the 20 starts at 10 on A (ends 30), the 5 at 30 on A or B (ends 35),
    // the 7 at 30 on the other (ends 37). Waves would give 30 + 20 + 7 = 57.
    const calls = [seek(0, 10), seek(0, 30), seek(0, 20), seek(0, 5), seek(0, 7)];
    const result = modeledLatency(calls, 'extagents', unit(2));
    expect(result.totalMs).toBe(37);
    expect(result.stages).toEqual([{ stage: 0, calls: 5, ms: 37 }]);
    expect(slotSchedule([10, 30, 20, 5, 7], 2).starts).toEqual([0, 0, 10, 30, 30]);
    // Unbounded enough: all at once, the max.
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

describe('modeled latency of pipelined rounds (pipelineRounds)', () => {
  const reason = (stage: number, inputTokens: number): EvalCall => ({ stage, role: 'reasoner', inputTokens, outputTokens: 0 });
  /** Round 1: 4 seeks of 10 on 2 slots (20), KAR 15 + 15; round 2: 4 seeks of 12 (24), KAR 5 + 5. */
  const twoRounds = [
    ...[10, 10, 10, 10].map((t) => seek(0, t)),
    reason(1, 15),
    reason(2, 15),
    ...[12, 12, 12, 12].map((t) => seek(3, t)),
    reason(4, 5),
    reason(5, 5),
  ];

  test("a run that needs round 2: round 2's seeking overlaps round 1's KAR", () => {
    // sequential 20 + 30 + 24 + 10 = 84; pipelined 20 + max(30, 24) + 10 = 60.
    expect(modeledPipelinedLatency(twoRounds, 2, unit(2))).toEqual({ totalMs: 60, sequentialMs: 84, speculativeCalls: 0 });
    expect(modeledLatency(twoRounds, 'extagents', unit(2)).totalMs).toBe(84);
  });

  test('a run answered in round 1 of 2: the same critical path, and the speculative seeks started before its KAR ended', () => {
    // Round 1 only: 20 + 30 = 50 either way. Speculative round 2 (as round 1's seeks, starts 0, 0, 10, 10) during KAR (30): 4 calls.
    const oneRound = twoRounds.slice(0, 6);
    expect(modeledPipelinedLatency(oneRound, 2, unit(2))).toEqual({ totalMs: 50, sequentialMs: 50, speculativeCalls: 4 });
    // A KAR of 5 ends before the second pair of speculative seeks starts (at 10): only the first 2.
    expect(modeledPipelinedLatency([...oneRound.slice(0, 4), reason(1, 5)], 2, unit(2)).speculativeCalls).toBe(2);
    // The last round allowed: nothing to speculate.
    expect(modeledPipelinedLatency(oneRound, 1, unit(2)).speculativeCalls).toBe(0);
  });
});
