/**
 * Coverage that grows only when needed (run option `coverage: 'grow'`; docs/CONCEPTS.md, "Coverage that grows
 * only when needed"). An extension of the method, not the paper's: the paper's seeking agents read
 * every chunk in every round. A grow run orders the chunks by a cheap local retriever (BM25 of the
 * chunk texts against the question, shared/retrieval.ts, no model call) and seeks first only the
 * `coverageFirstChunks` best; KAR runs over their messages, and only when the reasoning agent has
 * refused at every k does the run seek more, doubling the chunks covered as KAR doubles k
 * (n, 2n, 4n, …), up to `coverageMaxChunks` (absent: every chunk, so the worst case is the paper's
 * full read of round 1, plus the KAR steps of the smaller coverages). Rounds >= 2 (global knowledge
 * synchronization) start only once the coverage is final, and read the chunks covered.
 *
 * The counts here are chunks (not tokens). A coverage of n means: the first n chunks of the run's
 * coverage order are sought in each round (`runs/<runId>/coverage/order.json`, written by Prepare).
 */
import { InvalidInputError } from './errors';

/** The coverage modes: `full`, every chunk (the paper); `grow`, tranches by a retriever's order. */
export const COVERAGE_MODES = ['full', 'grow'] as const;
export type CoverageMode = (typeof COVERAGE_MODES)[number];

function requireCount(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) throw new InvalidInputError(`${name} must be an integer >= ${min}, got ${String(value)}`);
}

/**
 * The chunks covered after one more tranche: min(2 × covered, cap). `covered >= cap` gives `cap`
 * (nothing more to read).
 * @param covered chunks covered so far, integer >= 1.
 * @param cap the most chunks the run covers, integer >= 1.
 * @throws InvalidInputError for counts that are not such integers.
 */
export function nextCoverage(covered: number, cap: number): number {
  requireCount('covered', covered, 1);
  requireCount('cap', cap, 1);
  return Math.min(2 * covered, cap);
}

/**
 * Every coverage a grow run can pass through: [first', 2·first', 4·first', …, cap] with
 * first' = min(first, cap); the last is `cap` (so [4, 8, 10] for first 4, cap 10). The chunks sought
 * in round 1 by a run that stops at the j-th entry are that entry's count: each chunk once.
 * @param first `coverageFirstChunks`, integer >= 1.
 * @param cap the most chunks covered: min(`coverageMaxChunks`, chunks), integer >= 1.
 * @throws InvalidInputError for counts that are not such integers.
 */
export function coverageSchedule(first: number, cap: number): number[] {
  requireCount('first', first, 1);
  requireCount('cap', cap, 1);
  const schedule = [Math.min(first, cap)];
  while (schedule[schedule.length - 1] < cap) schedule.push(nextCoverage(schedule[schedule.length - 1], cap));
  return schedule;
}

/** The items of positions `from`..`to`-1 of a coverage order, as the Distributed Map reads them. */
export function coverageItems(order: readonly number[], from: number, to: number): Array<{ chunk: number }> {
  return order.slice(from, to).map((chunk) => ({ chunk }));
}
