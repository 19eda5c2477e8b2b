/**
 * Object keys of a run in the bucket (docs/ARCHITECTURE.md, "Storage"). One place, so the Lambdas,
 * the local runner and the CLI agree.
 */

/** Prefix of everything a run writes. */
export const runPrefix = (runId: string): string => `runs/${runId}/`;

/**
 * `runs/<surveyId>/survey/survey.json`: a survey's record (shared/survey/workflow.ts). A survey keeps
 * its state under `runs/<surveyId>/` and its sources under `corpora/<surveyId>/`: this key tells its
 * ids from a run's and an ingested corpus's.
 */
export const surveyRecordKey = (surveyId: string): string => `${runPrefix(surveyId)}survey/survey.json`;
/** The run record: question, validated options, documents, skipped documents, chunk count. */
export const runRecordKey = (runId: string): string => `${runPrefix(runId)}run.json`;
/** The Distributed Map's ItemReader object: a JSON array `[{"chunk":0}, …]`. */
export const manifestKey = (runId: string): string => `${runPrefix(runId)}manifest.json`;
/** One chunk object (`Chunk` as JSON) in a run's own folder (survey runs; runs prepared before chunks were read in place). */
export const chunkKey = (runId: string, index: number): string => `${runPrefix(runId)}chunks/${String(index).padStart(7, '0')}.json`;
/** Folder of one chunk cache entry (shared/pipeline/ingest.ts). */
export const chunkCachePrefix = (cacheKey: string): string => `cache/chunks/${cacheKey}/`;
/** One cached chunk object (`Chunk` as JSON). */
export const cachedChunkKey = (cacheKey: string, index: number): string => `${chunkCachePrefix(cacheKey)}chunks/${String(index).padStart(7, '0')}.json`;
/**
 * The key of chunk `index` of a run, the one rule Seek and Finalize read chunks by: in the chunk
 * cache entry the run reads in place (`chunksFrom`: its cache key, from the run record), else in the
 * run's own folder.
 */
export const runChunkKey = (runId: string, index: number, chunksFrom?: string): string =>
  chunksFrom !== undefined ? cachedChunkKey(chunksFrom, index) : chunkKey(runId, index);
/** The synchronized top-K messages given to every seeking agent of `round` (>= 2). */
export const syncKey = (runId: string, round: number): string => `${runPrefix(runId)}sync/round-${round}.json`;
/**
 * The follow-up question given to every seeking agent of `round` (>= 2) beside the synchronized
 * messages (run option `synchronization: 'follow-up'`): `{"followUp": "..."}`, or `{}` for none.
 */
export const followUpKey = (runId: string, round: number): string => `${runPrefix(runId)}sync/round-${round}-follow-up.json`;
/** The final `RunResult`. */
export const resultKey = (runId: string): string => `${runPrefix(runId)}result.json`;
/** Where the Distributed Map's ResultWriter writes. */
export const mapResultsPrefix = (runId: string): string => `${runPrefix(runId)}map/`;
/**
 * The seeking agents' query of one round of a survey run (`SeekQuery`: the topic in round 1, a
 * section's query in its synchronized round); read by Seek when its event says `task: "survey"`.
 */
export const seekQueryKey = (runId: string, round: number): string => `${runPrefix(runId)}queries/round-${round}.json`;
/** The coverage order of a grow run (shared/coverage.ts): every chunk index once, best first (BM25 against the question). */
export const coverageOrderKey = (runId: string): string => `${runPrefix(runId)}coverage/order.json`;
/**
 * The Distributed Map's items (`[{"chunk": i}, …]`) of the chunks at positions `from`..`to`-1 of a
 * grow run's coverage order: a tranche (`from` = the coverage before it) or, for rounds >= 2, the
 * whole coverage (`from` = 0).
 */
export const coverageItemsKey = (runId: string, from: number, to: number): string => `${runPrefix(runId)}coverage/items-${from}-${to}.json`;
/**
 * The documents of each chunk of a run with `reseek: 'promising'` (shared/reseek.ts): a JSON array whose
 * entry i lists the indexes into the run record's `documents` of the documents chunk i holds a part
 * of. Written by Prepare, read by Synchronize.
 */
export const reseekDocumentsKey = (runId: string): string => `${runPrefix(runId)}reseek/chunk-documents.json`;
/** The Distributed Map's items (`[{"chunk": i}, …]`) of round `round` (>= 2) of a run with `reseek: 'promising'`, written by Synchronize. */
export const reseekItemsKey = (runId: string, round: number): string => `${runPrefix(runId)}reseek/items-round-${round}.json`;
