/**
 * The per-call latency model (assumed parameters per role, not measurements) that the eval's modeled
 * latency (eval/latency.ts), the capacity model (shared/capacity.ts) and the quota plan
 * (shared/quota.ts) share, and the slot schedule of parallel calls under a concurrency bound.
 */
import type { AgentRole } from './types';

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
    'calls of a stage on 8 slots, each call starting when a slot frees; direct only: + perInputTokenMs × n² / crossover (61k / 107k tokens, from the ' +
    'Llama 3 architectures)',
};

/**
 * Calls on `slots` slots with refill: in order, each call starts when the earliest slot frees.
 * @param times each call's duration, ms, in start order.
 * @returns each call's start time and the time the last call ends (0 for none), ms from the first start.
 */
export function slotSchedule(times: readonly number[], slots: number): { starts: number[]; endMs: number } {
  const free = Array.from({ length: Math.min(slots, times.length) }, () => 0);
  const starts: number[] = [];
  let endMs = 0;
  for (const time of times) {
    let slot = 0;
    for (let i = 1; i < free.length; i++) if (free[i] < free[slot]) slot = i;
    starts.push(free[slot]);
    free[slot] += time;
    endMs = Math.max(endMs, free[slot]);
  }
  return { starts, endMs };
}
