/**
 * GrowCoverage: the next tranche of a grow run (run option `coverage: 'grow'`; shared/coverage.ts;
 * docs/ARCHITECTURE.md, "Coverage that grows"). Runs after the reasoning agent refused at every k of
 * the coverage so far, while `covered < config.coverageCap`.
 */
import { coverageItems, nextCoverage } from '../coverage';
import { InvalidInputError } from '../errors';
import type { BlobStore } from '../ports';
import { coverageItemsKey, coverageOrderKey } from './layout';
import type { WorkflowState } from './state';

export interface GrowCoverageDeps {
  blobs: BlobStore;
}

/**
 * Write the items of the next tranche — positions `covered`..min(2·covered, cap)-1 of the coverage
 * order Prepare wrote — and return the state that seeks them in the same round: `manifestKey` the
 * tranche's items, `covered` the new coverage, and KAR from k = `config.karFirstK` over the grown pool. Deterministic
 * (same order, same bytes), so a replay after a crash writes the same tranche.
 * @throws InvalidInputError when the coverage cannot grow (`covered >= config.coverageCap`: the
 *   workflow's Choice never sends such a state); NotFoundError when the run has no coverage order.
 */
export async function growCoverage(state: WorkflowState, deps: GrowCoverageDeps): Promise<WorkflowState> {
  const { runId, covered } = state;
  const cap = state.config.coverageCap;
  const next = nextCoverage(covered, cap);
  if (next <= covered) throw new InvalidInputError(`Run ${runId}: coverage ${covered} cannot grow (cap ${cap})`);
  const order = JSON.parse(await deps.blobs.getText(coverageOrderKey(runId))) as number[];
  const key = coverageItemsKey(runId, covered, next);
  await deps.blobs.put(key, JSON.stringify(coverageItems(order, covered, next)), 'application/json');
  return { ...state, manifestKey: key, covered: next, k: state.config.karFirstK, outcome: null, exhausted: false, poolSize: 0 };
}
