/**
 * Synchronize: global knowledge synchronization between rounds (docs/ARCHITECTURE.md, step 5;
 * paper 2B). Every seeking agent of the next round sees the same snapshot of the global top-K
 * messages, so the snapshot is written once, before the round starts, instead of each agent querying
 * a pool that the round itself is changing.
 */
import { synchronizationSnapshot } from '../method';
import type { BlobStore, MessageStore } from '../ports';
import { coverageItemsKey, coverageOrderKey, syncKey } from './layout';
import { coverageItems } from '../coverage';
import { loadRunRecord } from './run-record';
import type { WorkflowState } from './state';

export interface SynchronizeDeps {
  blobs: BlobStore;
  store: MessageStore;
}

/**
 * Snapshot the global top-K messages (K <= `syncMaxMessages`, fitted to `syncBudgetTokens`) for the
 * next round and return the state of that round (round + 1, k = 1, no outcome yet). A grow run
 * (`coverage: 'grow'`, whose coverage is final here: the workflow grows it before any next round)
 * seeks in the next round the chunks it covers, `runs/<runId>/coverage/items-0-<covered>.json`.
 */
export async function synchronizeRound(state: WorkflowState, deps: SynchronizeDeps): Promise<WorkflowState> {
  const record = await loadRunRecord(deps.blobs, state.runId);
  const { syncMaxMessages, syncBudgetTokens } = record.options;
  const top = syncMaxMessages > 0 && syncBudgetTokens > 0 ? await deps.store.topK(state.runId, syncMaxMessages, state.round, state.covered) : [];
  const fitted = synchronizationSnapshot(top, { syncMaxMessages, syncBudgetTokens });
  const round = state.round + 1;
  await deps.blobs.put(syncKey(state.runId, round), JSON.stringify(fitted), 'application/json');
  let { manifestKey } = state;
  if (record.options.coverage === 'grow') {
    const order = JSON.parse(await deps.blobs.getText(coverageOrderKey(state.runId))) as number[];
    manifestKey = coverageItemsKey(state.runId, 0, state.covered);
    await deps.blobs.put(manifestKey, JSON.stringify(coverageItems(order, 0, state.covered)), 'application/json');
  }
  return { ...state, manifestKey, round, k: 1, outcome: null, exhausted: false, poolSize: 0 };
}
