/**
 * The knowledge-accumulating reasoning (KAR) schedule (paper, section 2B): in iteration s the
 * reasoning agent reads the top-2^s messages of the pool (s = 0, 1, 2, …), so k runs 1, 2, 4, 8, …
 * until the agent answers or k covers the whole pool; the last k is the pool size itself when that is
 * not a power of two.
 */
import { InvalidInputError } from './errors';

/**
 * The stopping rules of the run option `karStop`: when a KAR step's answer stands (the rule itself
 * is shared/support.ts `judgeAnswer`). `first`: the first answer its cited quotes hold (the paper's
 * rule, with the support check); `confirmed`: the next step, reading 2k messages, must give it again;
 * `checked`: one short call of the reasoning agent must say that the cited passages state it (a
 * sufficiency check, as in "Sufficient Context", arXiv 2411.06037).
 */
export const KAR_STOP_RULES = ['first', 'confirmed', 'checked'] as const;
/** One stopping rule. */
export type KarStopRule = (typeof KAR_STOP_RULES)[number];

/**
 * The modes of the run option `karRounds`: after which rounds the reasoning agent reads (paper 2B).
 * `each`: after every round, so a round that answers ends the run (a next round runs only after a
 * refusal); `last`: every round is sought first, each after global knowledge synchronization of the
 * round before (the paper's fixed synchronization steps), and KAR runs once, after the last round,
 * over the pool of all rounds.
 */
export const KAR_ROUNDS = ['each', 'last'] as const;
/** One `karRounds` mode. */
export type KarRounds = (typeof KAR_ROUNDS)[number];

/**
 * The modes of the run option `synchronization`: `plain`, the global top-K messages (paper 2B);
 * `follow-up`, those and the reasoning agent's follow-up question (shared/pipeline/reason.ts).
 */
export const SYNCHRONIZATION_MODES = ['plain', 'follow-up'] as const;
/** One synchronization mode. */
export type SynchronizationMode = (typeof SYNCHRONIZATION_MODES)[number];

function requireInteger(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidInputError(`${name} must be an integer >= ${min}, got ${String(value)}`);
  }
}

/**
 * Every k of the KAR iterations over a pool of `poolSize` messages: [f, 2f, 4f, …, 2^m·f, poolSize],
 * where 2^m·f < poolSize, and the last entry is `poolSize` (with f = 1: [1, 2, 4] for 4, [1, 2, 4, 5]
 * for 5, [1] for 1, [] for an empty pool; with f = 4: [4, 8, 10] for 10, [3] for 3).
 * @param poolSize number of messages in the pool, integer >= 0.
 * @param firstK f, the first step's k (run option `karFirstK`), integer >= 1; default 1 (the paper).
 * @throws InvalidInputError when `poolSize` is not a non-negative integer or `firstK` not a positive one.
 */
export function karSchedule(poolSize: number, firstK = 1): number[] {
  requireInteger('poolSize', poolSize, 0);
  requireInteger('firstK', firstK, 1);
  const schedule: number[] = [];
  for (let k = firstK; k < poolSize; k *= 2) schedule.push(k);
  if (poolSize > 0) schedule.push(poolSize);
  return schedule;
}

/**
 * The k of the KAR iteration after a refusal at `k`.
 * - `k >= poolSize` (k already gave every message, including an empty pool): `{ k, exhausted: true }`,
 *   k unchanged: there is nothing more to read.
 * - otherwise `{ k: min(2k, poolSize), exhausted: false }`.
 * Starting from k = 1 and following `nextK` until exhausted visits exactly `karSchedule(poolSize)`.
 * @param k the k just used, integer >= 1 (0 is accepted for an empty pool and gives exhausted).
 * @param poolSize number of messages in the pool, integer >= 0.
 * @throws InvalidInputError when `k` or `poolSize` is not a non-negative integer, or k is 0 with a non-empty pool.
 */
export function nextK(k: number, poolSize: number): { k: number; exhausted: boolean } {
  requireInteger('poolSize', poolSize, 0);
  requireInteger('k', k, poolSize === 0 ? 0 : 1);
  if (k >= poolSize) return { k, exhausted: true };
  return { k: Math.min(2 * k, poolSize), exhausted: false };
}
