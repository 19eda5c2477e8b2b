/**
 * MODELED latency of a strategy's run: the critical path of its call graph (`EvalCall` stages of
 * shared/eval/records.ts) under a per-call latency model. Nothing here is measured: every figure
 * derived from it must be labelled "modeled" (the report does).
 *
 * Call graph: calls of one stage run in parallel under a concurrency bound, in waves of at most
 * `concurrency` calls (a wave lasts as long as its slowest call; waves of a stage run one after
 * another); stages run in sequence, in ascending order. The waves are an upper bound of a real
 * Distributed Map, which starts a new call as soon as a slot frees.
 *
 * Per call: `fixedMs + perInputTokenMs × input + perOutputTokenMs × output`, parameters per role.
 * For the `direct` strategy only (one call over the whole, long context), the prefill also gets
 * the quadratic attention term `perInputTokenMs × input² / quadraticCrossoverTokens`; other
 * strategies read at most a chunk (L ≤ 8k tokens by default) per call, where that term is small, and
 * it is left out of their model by design.
 */
import type { AgentRole } from '../types';
import type { EvalCall, StrategyName } from './records';

/** Latency parameters of one role's model. */
export interface RoleLatency {
  /** Per-call overhead (request, queueing, time to first token without prefill), ms. */
  fixedMs: number;
  /** Prefill time per input token (linear part), ms. */
  perInputTokenMs: number;
  /** Decode time per output token, ms. */
  perOutputTokenMs: number;
  /**
   * Context length (tokens) at which the prefill's attention FLOPs equal its parameter FLOPs:
   * P / (layers × d_model) for a dense decoder (prefill FLOPs ≈ 2·P·n + 2·layers·d_model·n²).
   * Used only for the `direct` strategy's quadratic term.
   */
  quadraticCrossoverTokens: number;
}

/** A latency model: parameters per role and the concurrency bound of parallel stages. */
export interface LatencyModel {
  roles: Record<AgentRole, RoleLatency>;
  /** Calls of one stage in flight at once (the runner's / Distributed Map's concurrency). */
  concurrency: number;
  /** Where the defaults come from; printed in the report. */
  description: string;
}

/**
 * Default latency model: ASSUMPTIONS, not measurements of this project, for the project's
 * heterogeneous Bedrock deployment (seeker Llama 3.1 8B Instruct, reasoner Llama 3.3 70B Instruct).
 * - fixed cost: 400 ms (8B) / 600 ms (70B) per call, an assumed round trip plus time to first token
 *   for a short prompt on a managed endpoint;
 * - prefill: 0.1 ms/token (10k tokens/s, 8B) and 0.4 ms/token (2.5k tokens/s, 70B), assumed
 *   serving throughputs of one request on data-centre GPUs;
 * - decode: 10 ms/token (100 tokens/s, 8B) and 30 ms/token (~33 tokens/s, 70B), assumed;
 * - quadratic crossover: 8e9 / (32 layers × 4096) ≈ 61k tokens (8B) and 70e9 / (80 × 8192) ≈ 107k
 *   tokens (70B), from the published Llama 3 architectures (Llama 3 model cards / paper, table 3);
 * - concurrency 8: the CLI's default `--concurrency`.
 * Change them with `options.latency` of the report when measured figures exist.
 */
export const DEFAULT_LATENCY_MODEL: LatencyModel = {
  roles: {
    seeker: { fixedMs: 400, perInputTokenMs: 0.1, perOutputTokenMs: 10, quadraticCrossoverTokens: 61_000 },
    reasoner: { fixedMs: 600, perInputTokenMs: 0.4, perOutputTokenMs: 30, quadraticCrossoverTokens: 107_000 },
  },
  concurrency: 8,
  description:
    'assumed, not measured: seeker (Llama 3.1 8B class) 400 ms + 0.1 ms/input token + 10 ms/output token; ' +
    'reasoner (Llama 3.3 70B class) 600 ms + 0.4 ms/input token + 30 ms/output token; stages in sequence, ' +
    'calls of a stage in waves of 8; direct only: + perInputTokenMs × n² / crossover (61k / 107k tokens, from the ' +
    'Llama 3 architectures)',
};

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
  /** Waves of at most `concurrency` calls. */
  waves: number;
  /** Modeled time of the stage: the sum over its waves of the slowest call of each wave, ms. */
  ms: number;
}

/** Modeled latency of one run. */
export interface ModeledLatency {
  /** Critical path, ms (the sum of the stages). */
  totalMs: number;
  /** Stages in ascending order. */
  stages: StageLatency[];
}

/**
 * The modeled critical path of a run's calls: stages in ascending `stage` order add up; within a
 * stage, calls (in record order) form waves of `model.concurrency`, a wave lasting as long as its
 * slowest call. The quadratic prefill term applies only when `strategy` is `direct`.
 * @throws RangeError when the concurrency is not a positive integer.
 */
export function modeledLatency(calls: readonly EvalCall[], strategy: StrategyName, model: LatencyModel = DEFAULT_LATENCY_MODEL): ModeledLatency {
  if (!Number.isInteger(model.concurrency) || model.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${String(model.concurrency)}`);
  }
  const quadratic = strategy === 'direct';
  const byStage = new Map<number, number[]>();
  for (const call of calls) {
    const list = byStage.get(call.stage) ?? [];
    list.push(modeledCallMs(call, model, quadratic));
    byStage.set(call.stage, list);
  }
  const stages: StageLatency[] = [...byStage.entries()]
    .sort(([a], [b]) => a - b)
    .map(([stage, times]) => {
      let ms = 0;
      let waves = 0;
      for (let i = 0; i < times.length; i += model.concurrency) {
        ms += Math.max(...times.slice(i, i + model.concurrency));
        waves += 1;
      }
      return { stage, calls: times.length, waves, ms };
    });
  return { totalMs: stages.reduce((sum, s) => sum + s.ms, 0), stages };
}
