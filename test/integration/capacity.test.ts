/**
 * The capacity model (shared/capacity.ts) against the local workflow at small scale
 * (test/support/capacity-check.ts): a scripted model that throttles above 48 requests a minute
 * (ModelThrottledError), 40 chunks, seeks of 5 s, the workflow's own Retry (2 s doubling to 60 s,
 * full jitter) on a clock 20 times as fast: each check (its run and a calibration run) takes about 5 s.
 *
 * Tolerances, generous so that a machine twice as slow passes: the measured seeking time within 0.5x
 * to 2x of the model's mean over 20 seeds, given the local engine's own work per seek (measured by a
 * calibration run: 0.3 to 0.6 modeled seconds beside a 5 s seek here); the throttles between 0.35x the
 * lowest and 2.5x the highest of the model's means at that work, at none and at twice it. The throttle
 * count is the loose one: it depends on how the slots' returns line up with the quota's refill, which
 * that work and the machine's load shift (measured 21 and 27 against modeled means of 35 to 54 on the
 * 2-core development machine under load; seeking time ratios 0.86 to 1.25).
 * The test still fails when the model leaves out the quota (it would predict 25 s and no throttles
 * against about 60 s and 30-40 throttles measured) or the Retry's waits (no time spent waiting).
 */
import { LOCAL_CHECK, runCapacityCheck } from '../support/capacity-check';

jest.setTimeout(120_000);

const TIME_SCALE = 0.05;

describe('the capacity model against the local workflow', () => {
  it('predicts the seeking time and the throttles of a run that ignores the quota', async () => {
    const check = await runCapacityCheck({ ...LOCAL_CHECK, timeScale: TIME_SCALE, stateQuota: false });

    expect(check.mapConcurrency).toBe(8);
    expect(check.measured.reportedThrottles).toBe(check.measured.throttles);
    const means = [check.modeled.throttles, check.bounds.noOverhead.throttles, check.bounds.doubleOverhead.throttles];
    expect(Math.min(...means)).toBeGreaterThan(10);
    expect(check.measured.throttles).toBeGreaterThanOrEqual(0.35 * Math.min(...means));
    expect(check.measured.throttles).toBeLessThanOrEqual(2.5 * Math.max(...means));
    expect(check.measured.seekingSeconds / check.modeled.seekingSeconds).toBeGreaterThan(0.5);
    expect(check.measured.seekingSeconds / check.modeled.seekingSeconds).toBeLessThan(2);
  });

  it('predicts no throttles, and the seeking time, of a run that states the quota (quota-aware MaxConcurrency)', async () => {
    const check = await runCapacityCheck({ ...LOCAL_CHECK, timeScale: TIME_SCALE, stateQuota: true });

    // 48 requests a minute × 5 s / 60 = 4 seeks in flight.
    expect(check.mapConcurrency).toBe(4);
    expect(check.modeled.throttles).toBe(0);
    expect(check.measured.throttles).toBeLessThanOrEqual(3);
    expect(check.measured.seekingSeconds / check.modeled.seekingSeconds).toBeGreaterThan(0.5);
    expect(check.measured.seekingSeconds / check.modeled.seekingSeconds).toBeLessThan(2);
  });
});
