import { bootstrapMeanInterval, pairedBootstrap } from '../../eval/stats';

describe('bootstrap intervals and paired tests (eval/stats.ts)', () => {
  it('gives a 95% interval around the mean that narrows with more data and is the same for the same seed', () => {
    const small = [0, 1, 0, 1, 1, 0, 0, 1, 0, 1];
    const large = Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? 1 : 0));
    const a = bootstrapMeanInterval(small, 's');
    const b = bootstrapMeanInterval(large, 's');

    expect(a.mean).toBe(0.5);
    expect(a.low).toBeLessThan(0.5);
    expect(a.high).toBeGreaterThan(0.5);
    expect(b.high - b.low).toBeLessThan((a.high - a.low) / 4);
    expect(bootstrapMeanInterval(small, 's')).toEqual(a);
  });

  it('a single value has a degenerate interval', () => {
    expect(bootstrapMeanInterval([0.7])).toEqual({ mean: 0.7, low: 0.7, high: 0.7, n: 1 });
  });

  it('the paired test finds a consistent difference (small p) and none between equal strategies (p = 1)', () => {
    const better = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? 0.5 : 1));
    const worse = better.map((x) => x - 0.4);
    const clear = pairedBootstrap(better, worse);
    expect(clear.mean).toBeCloseTo(0.4);
    expect(clear.low).toBeGreaterThan(0);
    expect(clear.p).toBeLessThan(0.01);
    expect(pairedBootstrap(better, better).p).toBe(1);
    const noise = pairedBootstrap([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]);
    expect(noise.p).toBeGreaterThan(0.5);
    expect(() => pairedBootstrap([1], [1, 2])).toThrow(/1 and 2 values/);
  });
});
