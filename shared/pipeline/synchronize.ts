/**
 * Synchronize: global knowledge synchronization between rounds (docs/ARCHITECTURE.md, step 5;
 * paper 2B). Every seeking agent of the next round sees the same snapshot of the global top-K
 * messages, so the snapshot is written once, before the round starts, instead of each agent querying
 * a pool that the round itself is changing.
 */
import { synchronizationSnapshot } from '../method';
import type { BlobStore, MessageStore } from '../ports';
import { coverageItemsKey, coverageOrderKey, followUpKey, reseekDocumentsKey, reseekItemsKey, syncKey } from './layout';
import { coverageItems } from '../coverage';
import { promisingChunks } from '../reseek';
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
 * A promising run (`reseek: 'promising'`, shared/reseek.ts) seeks only the chunks of the rule, among
 * those: `runs/<runId>/reseek/items-round-<r+1>.json`. When the rule chooses none, the round is
 * skipped: the state returned is that round's, refused at every k (`outcome: 'refused'`,
 * `exhausted: true`, the pool of the rounds before), which the workflow sends to `Answered?` without
 * seeking (the Choices `RoundToSeek?`, `SpeculativeRoundToSeek?` and `Pipelined?`). Everything written
 * is a function of the pool of rounds 1..r, so a replay writes the same bytes.
 */
export async function synchronizeRound(state: WorkflowState, deps: SynchronizeDeps): Promise<WorkflowState> {
  const record = await loadRunRecord(deps.blobs, state.runId);
  const { syncMaxMessages, syncBudgetTokens } = record.options;
  const top = syncMaxMessages > 0 && syncBudgetTokens > 0 ? await deps.store.topK(state.runId, syncMaxMessages, state.round, state.covered) : [];
  const fitted = synchronizationSnapshot(top, { syncMaxMessages, syncBudgetTokens });
  const round = state.round + 1;
  await deps.blobs.put(syncKey(state.runId, round), JSON.stringify(fitted), 'application/json');
  // The question the reasoning agent said is still open at the round's last step (run option
  // synchronization 'follow-up', shared/pipeline/reason.ts), for every seeking agent of the next round.
  const followUp = record.options.synchronization === 'follow-up' ? await roundFollowUp(deps.store, state) : undefined;
  await deps.blobs.put(followUpKey(state.runId, round), JSON.stringify(followUp !== undefined ? { followUp } : {}), 'application/json');
  const grow = record.options.coverage === 'grow';
  const order = grow ? (JSON.parse(await deps.blobs.getText(coverageOrderKey(state.runId))) as number[]) : undefined;
  let { manifestKey } = state;
  if (order) {
    manifestKey = coverageItemsKey(state.runId, 0, state.covered);
    await deps.blobs.put(manifestKey, JSON.stringify(coverageItems(order, 0, state.covered)), 'application/json');
  }
  const next: WorkflowState = { ...state, manifestKey, round, k: record.options.karFirstK, outcome: null, exhausted: false, poolSize: 0 };
  if (record.options.reseek !== 'promising') return next;

  const [found, chunkDocuments] = await Promise.all([
    deps.store.messageChunks(state.runId, state.round),
    deps.blobs.getText(reseekDocumentsKey(state.runId)).then((text) => JSON.parse(text) as number[][]),
  ]);
  const chunks = promisingChunks({
    covered: order ? order.slice(0, state.covered) : Array.from({ length: state.chunks }, (_, i) => i),
    found,
    synchronized: fitted,
    chunkDocuments,
    documentIds: record.documents.map((d) => d.id),
  });
  const key = reseekItemsKey(state.runId, round);
  await deps.blobs.put(key, JSON.stringify(chunks.map((chunk) => ({ chunk }))), 'application/json');
  if (chunks.length > 0) return { ...next, manifestKey: key };
  // Nothing to seek: round r + 1's pool is round r's, which the reasoning agent refused at every k.
  return { ...next, manifestKey: key, outcome: 'refused', exhausted: true, poolSize: await deps.store.poolSize(state.runId, state.round, state.covered) };
}

/**
 * The follow-up question of round `state.round`: that of its last step of this execution that
 * asked one (steps numbered up to `state.seq`; an earlier, interrupted execution's are ignored).
 */
async function roundFollowUp(store: MessageStore, state: WorkflowState): Promise<string | undefined> {
  const steps = await store.getSteps(state.runId);
  return steps.filter((s) => s.seq <= state.seq && s.round === state.round && s.followUp !== undefined).at(-1)?.followUp;
}
