/**
 * MODELED latency of a strategy's run: the critical path of its call graph (`EvalCall` stages of
 * eval/records.ts) under a per-call latency model. Nothing here is measured: every figure
 * derived from it must be labelled "modeled" (the report does).
 *
 * Call graph: calls of one stage run in parallel under a concurrency bound with slot refill, as a
 * Distributed Map runs them: `concurrency` slots, each call (in record order) starts as soon as a
 * slot frees, and the stage lasts until its last call ends; stages run in sequence, in ascending
 * order. ExtAgents with pipelined rounds (run option pipelineRounds): {@link modeledPipelinedLatency}.
 *
 * Per call: `fixedMs + perInputTokenMs × input + perOutputTokenMs × output`, parameters per role.
 * For the `direct` strategy only (one call over the whole, long context), the prefill also gets
 * the quadratic attention term `perInputTokenMs × input² / quadraticCrossoverTokens`; other
 * strategies read at most a chunk (L ≤ 8k tokens by default) per call, where that term is small, and
 * it is left out of their model by design.
 */
import { DEFAULT_LATENCY_MODEL, type LatencyModel, slotSchedule } from '../shared/latency';
import type { EvalCall, StrategyName } from './records';

export { DEFAULT_LATENCY_MODEL, type LatencyModel, type RoleLatency, slotSchedule } from '../shared/latency';

/** Modeled time of one call, ms. `quadratic`: add the attention prefill term (the direct strategy). */
export function modeledCallMs(call: EvalCall, model: LatencyModel, quadratic: boolean): number {
  const p = model.roles[call.role];
  const linear = p.fixedMs + p.perInputTokenMs * call.inputTokens + p.perOutputTokenMs * call.outputTokens;
  return quadratic ? linear + (p.perInputTokenMs * call.inputTokens * call.inputTokens) / p.quadraticCrossoverTokens : linear;
}

/** One stage on the modeled critical path. */
export interface StageLatency {
  stage: number;
  calls: number;
  /** Modeled time of the stage: when its last call ends, its calls run on `concurrency` slots with refill, ms. */
  ms: number;
}

/** Modeled latency of one run. */
export interface ModeledLatency {
  /** Critical path, ms (the sum of the stages). */
  totalMs: number;
  /** Stages in ascending order. */
  stages: StageLatency[];
}

function checkConcurrency(model: LatencyModel): void {
  if (!Number.isInteger(model.concurrency) || model.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${String(model.concurrency)}`);
  }
}

/** Modeled time of each stage, ascending, with its calls' times in record order. */
function stageTimes(calls: readonly EvalCall[], model: LatencyModel, quadratic: boolean): Array<StageLatency & { roles: Set<string>; times: number[] }> {
  const byStage = new Map<number, EvalCall[]>();
  for (const call of calls) {
    const list = byStage.get(call.stage) ?? [];
    list.push(call);
    byStage.set(call.stage, list);
  }
  return [...byStage.entries()]
    .sort(([a], [b]) => a - b)
    .map(([stage, list]) => {
      const times = list.map((call) => modeledCallMs(call, model, quadratic));
      return { stage, calls: list.length, ms: slotSchedule(times, model.concurrency).endMs, roles: new Set(list.map((c) => c.role)), times };
    });
}

/**
 * The modeled critical path of a run's calls: stages in ascending `stage` order add up; within a
 * stage, calls (in record order) run on `model.concurrency` slots with refill. The quadratic prefill
 * term applies only when `strategy` is `direct`.
 * @throws RangeError when the concurrency is not a positive integer.
 */
export function modeledLatency(calls: readonly EvalCall[], strategy: StrategyName, model: LatencyModel = DEFAULT_LATENCY_MODEL): ModeledLatency {
  checkConcurrency(model);
  const stages = stageTimes(calls, model, strategy === 'direct').map(({ stage, calls: n, ms }) => ({ stage, calls: n, ms }));
  return { totalMs: stages.reduce((sum, s) => sum + s.ms, 0), stages };
}

/** The modeled latency of an ExtAgents run had it pipelined its rounds (see {@link modeledPipelinedLatency}). */
export interface ModeledPipelinedLatency {
  /** Critical path with pipelined rounds, ms. */
  totalMs: number;
  /** The same calls unpipelined ({@link modeledLatency}), ms. */
  sequentialMs: number;
  /** Modeled speculative seeking calls: those of a round r+1 started before KAR of the run's last round r stopped it. */
  speculativeCalls: number;
}

/**
 * MODELED latency of an ExtAgents run's recorded calls (made unpipelined: a stage of seeking calls
 * per round, then one stage per KAR step) had the run pipelined its rounds (run option
 * pipelineRounds): round r+1's seeking starts when round r's ends and runs beside KAR of round r,
 * and KAR of round r+1 starts when both ended:
 *
 *   total = seek(1) + Σ_{r < R} max(KAR(r), seek(r+1)) + KAR(R)     (R = the run's last round)
 *
 * (KAR(r): the sum of round r's reasoning stages, a best-effort answer included). When the run
 * stopped at R < `rounds` (answered, or nothing left to seek), round R+1 was sought speculatively
 * during KAR(R) and stopped at its end, off the critical path: its calls are modeled as round R's
 * (the same chunks) on the same slots, and those started before KAR(R) ended are the speculative
 * calls (they run to their end). Synchronization, a few ms of one table read, is left out.
 * @param rounds the run's rounds option.
 * @throws RangeError when the concurrency is not a positive integer.
 */
export function modeledPipelinedLatency(calls: readonly EvalCall[], rounds: number, model: LatencyModel = DEFAULT_LATENCY_MODEL): ModeledPipelinedLatency {
  checkConcurrency(model);
  const seekRounds: Array<{ seekMs: number; times: number[]; karMs: number }> = [];
  for (const stage of stageTimes(calls, model, false)) {
    if (!stage.roles.has('reasoner')) seekRounds.push({ seekMs: stage.ms, times: stage.times, karMs: 0 });
    else if (seekRounds.length > 0) seekRounds[seekRounds.length - 1].karMs += stage.ms;
    else seekRounds.push({ seekMs: 0, times: [], karMs: stage.ms });
  }
  const sequentialMs = seekRounds.reduce((sum, r) => sum + r.seekMs + r.karMs, 0);
  if (seekRounds.length === 0) return { totalMs: 0, sequentialMs: 0, speculativeCalls: 0 };
  let totalMs = seekRounds[0].seekMs;
  for (let i = 0; i < seekRounds.length; i++) {
    const next = seekRounds[i + 1];
    totalMs += next ? Math.max(seekRounds[i].karMs, next.seekMs) : seekRounds[i].karMs;
  }
  const last = seekRounds[seekRounds.length - 1];
  const speculativeCalls = seekRounds.length < rounds ? slotSchedule(last.times, model.concurrency).starts.filter((start) => start < last.karMs).length : 0;
  return { totalMs, sequentialMs, speculativeCalls };
}
