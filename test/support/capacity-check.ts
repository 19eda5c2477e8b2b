/**
 * The capacity model (shared/capacity.ts) against the local engine at small scale: a scripted model
 * that enforces a quota (shared/capacity.ts `QuotaBuckets`, the model's own assumption of how Bedrock
 * enforces it) and raises the Bedrock adapter's typed throttling error (ModelThrottledError) when the
 * quota is spent, run through the local workflow (`runLocal`, the synthesized state machine: the
 * seeking Distributed Map, the Seek task's Retry) with the workflow's retry policy on a faster clock
 * (`retryTimeScale`), and the model run on the same scenario. Used by
 * test/integration/capacity.test.ts and `bench/capacity.ts --check-local`.
 *
 * Time: modeled seconds = real seconds / `timeScale`; the scripted seek sleeps `seekSeconds ×
 * timeScale`, and the Retry's 2 s … 60 s become 2 × timeScale … 60 × timeScale real seconds. The
 * measured seeking time runs from the first seek attempt to the last one settled, on the model's side
 * of the port, so the local stack's start, Prepare and reasoning are not in it; the local engine's own
 * work per seek (the handler's DynamoDB writes, the Map's bookkeeping) is, and is measured for the
 * model by a calibration run ({@link runCapacityCheck}).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveCorpus, type CorpusFile } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { DEFAULT_THROTTLED_ATTEMPT_SECONDS, QuotaBuckets, simulateCapacity, type CapacityResult } from '../../shared/capacity';
import { ModelThrottledError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import type { ModelQuota, RunResult } from '../../shared/types';
import { hundredNotes, scriptedModel, writeCorpus } from './corpus';

/** One check's scenario. Seconds are modeled seconds. */
export interface CapacityCheckScenario {
  /** Chunks of the corpus (one-chunk notes at chunkTokens 64). */
  chunks: number;
  /** The run's concurrency option: the Map's MaxConcurrency when the run states no quota. */
  concurrency: number;
  /** The quota the scripted model enforces (requests per minute; tokens are not counted here). */
  quota: ModelQuota;
  /** Seconds of quota its buckets hold. */
  burstSeconds: number;
  /** Seconds one admitted seek takes. */
  seekSeconds: number;
  /** Real seconds per modeled second. */
  timeScale: number;
  /** State the quota to the run (quota-aware MaxConcurrency, shared/quota.ts) instead of only enforcing it. */
  stateQuota: boolean;
  /** Model runs (seeds 1..n) whose mean is compared. */
  modelRuns: number;
}

export interface CapacityCheckResult {
  scenario: CapacityCheckScenario;
  /** The Map's MaxConcurrency the run used (its result's `concurrency.concurrency`). */
  mapConcurrency: number;
  /** The local engine's own seconds per seek (modeled seconds), measured by the calibration run. */
  seekOverheadSeconds: number;
  measured: { seekingSeconds: number; throttles: number; reportedThrottles: number; failedChunks: number; wallSeconds: number };
  /** The model's means at the calibrated overhead, with its runs (seeds 1..n). */
  modeled: { seekingSeconds: number; throttles: number; failedChunks: number; runs: CapacityResult[] };
  /**
   * The model's means at no overhead and at twice the calibrated one: the local engine's own work
   * varies with the machine's load from one run to the next (the calibration is one sample), and it
   * moves the throttle count (slots that come back sooner find the quota spent more often).
   */
  bounds: { noOverhead: { seekingSeconds: number; throttles: number }; doubleOverhead: { seekingSeconds: number; throttles: number } };
}

/**
 * The check's scenario (modeled seconds, without the clock and whether the run knows the quota):
 * 40 chunks, 8 slots, 48 requests a minute enforced with 5 s of burst, seeks of 5 s, so the quota
 * carries 48 / 60 × 5 = 4 seeks at once, half the slots; the model's mean over 20 seeds.
 */
export const LOCAL_CHECK = {
  chunks: 40,
  concurrency: 8,
  quota: { requestsPerMinute: 48 },
  burstSeconds: 5,
  seekSeconds: 5,
  modelRuns: 20,
} as const satisfies Omit<CapacityCheckScenario, 'timeScale' | 'stateQuota'>;

/** A scripted model whose seeks take `seekSeconds` and are throttled when the quota is spent, with its own counts (modeled seconds). */
function throttlingModel(scenario: CapacityCheckScenario): { model: AgentModel; stats: () => { first: number; last: number; throttles: number } } {
  const inner = scriptedModel({ everyChunk: true });
  const origin = performance.now();
  const clock = (): number => (performance.now() - origin) / 1000 / scenario.timeScale;
  const buckets = new QuotaBuckets(scenario.quota, scenario.burstSeconds);
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let throttles = 0;
  return {
    model: {
      ...inner,
      seek: async (request) => {
        const now = clock();
        first = Math.min(first, now);
        if (!buckets.admit(now, 0)) {
          throttles += 1;
          await sleep(DEFAULT_THROTTLED_ATTEMPT_SECONDS * scenario.timeScale * 1000);
          last = Math.max(last, clock());
          throw new ModelThrottledError('ThrottlingException: Too many requests, please wait before trying again (scripted quota)');
        }
        await sleep(scenario.seekSeconds * scenario.timeScale * 1000);
        const result = await inner.seek(request);
        last = Math.max(last, clock());
        return result;
      },
    },
    stats: () => ({ first, last, throttles }),
  };
}

const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

/**
 * Run the scenario through the local workflow (one round, every failed chunk tolerated so the run
 * ends) and through the capacity model (mean of `modelRuns` seeds, no Lambda limits or cold starts:
 * the local engine has none). The model's `seekOverheadSeconds` is the local engine's own, measured
 * after it by a run of one seek at a time with seeks that take no time and no quota enforced: its
 * seeking time divided by its chunks less one, so that a slower machine's engine is in the model too.
 */
export async function runCapacityCheck(scenario: CapacityCheckScenario): Promise<CapacityCheckResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'extagents-capacity-'));
  try {
    const files = await resolveCorpus([writeCorpus(dir, hundredNotes(scenario.chunks))]);
    const { result, stats: s, wallSeconds } = await runThrough(files, scenario, path.join(dir, 'state'));
    const mapConcurrency = result.concurrency?.concurrency ?? scenario.concurrency;
    // The calibration: one seek at a time, seeks that take no time, no quota. From the first call to
    // the last, (chunks - 1) seeks' own work passed (the last one's comes after the last call). One
    // at a time: seeks that end together queue for the local DynamoDB (one process), which seeks
    // ending at staggered times, as under a quota, mostly do not.
    const calibration = await runThrough(files, { ...scenario, concurrency: 1, stateQuota: false, quota: {}, seekSeconds: 0 }, path.join(dir, 'calibration'));
    const seekOverheadSeconds =
      calibration.result.chunks > 1 ? Math.max(0, calibration.stats.last - calibration.stats.first) / (calibration.result.chunks - 1) : 0;
    const model = (overhead: number): CapacityResult[] =>
      Array.from({ length: scenario.modelRuns }, (_, i) =>
        simulateCapacity({
          chunks: result.chunks,
          rounds: 1,
          seek: { seconds: scenario.seekSeconds, tokens: 0 },
          reason: { calls: 0, seconds: 0 },
          quota: scenario.quota,
          quotaBurstSeconds: scenario.burstSeconds,
          mapConcurrency,
          lambda: { concurrency: Number.POSITIVE_INFINITY, scalingPer10Seconds: Number.POSITIVE_INFINITY, coldStartSeconds: 0 },
          seekOverheadSeconds: overhead,
          toleratedFailurePercentage: 100,
          seed: i + 1,
        }),
      );
    const runs = model(seekOverheadSeconds);
    const means = (results: CapacityResult[]): { seekingSeconds: number; throttles: number } => ({
      seekingSeconds: mean(results.map((r) => r.seekingSeconds)),
      throttles: mean(results.map((r) => r.throttles)),
    });
    return {
      scenario,
      mapConcurrency,
      seekOverheadSeconds,
      measured: {
        seekingSeconds: s.last - s.first,
        throttles: s.throttles,
        reportedThrottles: result.concurrency?.throttledCalls ?? 0,
        failedChunks: result.chunkFailures.length,
        wallSeconds,
      },
      modeled: {
        seekingSeconds: mean(runs.map((r) => r.seekingSeconds)),
        throttles: mean(runs.map((r) => r.throttles)),
        failedChunks: mean(runs.map((r) => r.failedChunks)),
        runs,
      },
      bounds: { noOverhead: means(model(0)), doubleOverhead: means(model(2 * seekOverheadSeconds)) },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One run of the scenario through `runLocal` with the throttling model. */
async function runThrough(
  files: CorpusFile[],
  scenario: CapacityCheckScenario,
  stateDir: string,
): Promise<{ result: RunResult; stats: ReturnType<ReturnType<typeof throttlingModel>['stats']>; wallSeconds: number }> {
  const { model, stats } = throttlingModel(scenario);
  const started = performance.now();
  const result = await runLocal({
    files,
    question: 'What is the answer?',
    options: {
      chunkTokens: 64,
      rounds: 1,
      concurrency: scenario.concurrency,
      toleratedFailurePercentage: 100,
      ...(scenario.stateQuota && {
        quotaRequestsPerMinute: scenario.quota.requestsPerMinute,
        quotaTokensPerMinute: scenario.quota.tokensPerMinute,
        seekLatencySeconds: scenario.seekSeconds,
      }),
    },
    model,
    retryTimeScale: scenario.timeScale,
    stateDir,
  });
  return { result, stats: stats(), wallSeconds: (performance.now() - started) / 1000 };
}
