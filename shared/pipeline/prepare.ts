/**
 * Prepare: read the corpus, decode and chunk it, write the chunk objects, the run record and the
 * Distributed Map manifest; return the initial workflow state (docs/ARCHITECTURE.md, step 1).
 *
 * Chunk cache (shared/pipeline/ingest.ts): when the corpus objects (ids and bytes) and `chunkTokens`
 * match an ingested corpus or an earlier run, the cached chunk objects are copied to the run instead
 * of decoding and chunking again; the run record says which (`chunkCache`). A run that chunks writes
 * the cache entry for the next one (without per-file token counts, which ingestion adds). The run's keys are the same either way,
 * so Seek and Finalize read chunks through `chunkKey(runId, index)` unchanged.
 */
import pLimit from 'p-limit';
import { parseRunOptions } from '../config';
import { CostLimitExceededError, EmptyCorpusError, InvalidInputError } from '../errors';
import { enforceCostLimit, estimateRun, priceEstimate } from '../cost';
import type { ModelSpec } from '../llm/model-spec';
import type { BlobStore } from '../ports';
import { TOKENIZER_NAME } from '../tokenizer';
import { documentSummary, type DocumentSummary, type RunEstimate, type SkippedDocument } from '../types';
import {
  IO_CONCURRENCY,
  chunkCacheKey,
  copyCachedChunks,
  writeChunkCache,
  corpusContentHash,
  decodeAndChunk,
  loadChunkCache,
  readCorpusObjects,
} from './ingest';
import { chunkKey, manifestKey, runRecordKey } from './layout';
import type { RunRecord } from './run-record';
import type { PrepareEvent, WorkflowState } from './state';

export interface PrepareDeps {
  blobs: BlobStore;
  /** The deployment's model, which prices the run's estimate for `maxCostUsd` (no spec: no price, so a limit refuses). */
  modelSpec?: ModelSpec;
  /** Clock for the run record (tests pass a fixed one). */
  now?: () => Date;
}

/**
 * Prepare a run.
 * @returns the initial workflow state: round 1, k = 1, no outcome yet.
 * @throws ConfigurationError for invalid options; InvalidInputError when the corpus keys/prefix
 *   match no object or point into `runs/`; EmptyCorpusError when no document has usable text (before
 *   any model call; the message lists each skipped document and why).
 */
export async function prepareRun(event: PrepareEvent, deps: PrepareDeps): Promise<WorkflowState> {
  const options = parseRunOptions(event.options);
  const { blobs } = deps;
  const limit = pLimit(IO_CONCURRENCY);

  const keys = await resolveCorpusKeys(event.corpus, blobs, limit);
  const objects = await readCorpusObjects(blobs, keys, event.corpus.prefix ?? '');
  const contentHash = corpusContentHash(objects);
  const cacheKey = chunkCacheKey(contentHash, options.chunkTokens);
  const cached = await loadChunkCache(blobs, cacheKey);

  let documents: DocumentSummary[];
  let skipped: SkippedDocument[];
  let chunkCount: number;
  let tokens: number;
  let estimate: RunEstimate;
  // What the run costs at most, before any model call and before the run writes anything: a cost
  // limit refuses it here, leaving no run objects behind.
  const estimateOrRefuse = (chunks: number, chunkTokensTotal: number): RunEstimate => {
    const e = estimateRun({ chunks, chunkTokensTotal, question: event.question.trim(), options }, deps.modelSpec);
    if (options.maxCostUsd !== undefined) {
      if (!deps.modelSpec) throw new CostLimitExceededError(`Refused before any model call: maxCostUsd ${options.maxCostUsd} cannot be checked: the deployment's model is not known to Prepare`);
      enforceCostLimit(priceEstimate(e, deps.modelSpec), options.maxCostUsd);
    }
    return e;
  };
  if (cached) {
    ({ documents, skipped } = cached);
    chunkCount = cached.chunks;
    tokens = cached.chunkTokensTotal;
    if (chunkCount === 0) throw emptyCorpus(keys.length, skipped);
    estimate = estimateOrRefuse(chunkCount, tokens);
    await copyCachedChunks(blobs, cacheKey, chunkCount, event.runId);
  } else {
    const corpus = await decodeAndChunk(objects, options.chunkTokens, false);
    if (corpus.documents.length === 0) throw emptyCorpus(keys.length, corpus.skipped);
    documents = corpus.documents.map(documentSummary);
    skipped = corpus.skipped;
    chunkCount = corpus.chunks.length;
    tokens = corpus.chunks.reduce((sum, c) => sum + c.tokens, 0);
    estimate = estimateOrRefuse(chunkCount, tokens);
    await Promise.all(
      corpus.chunks.map((chunk) => limit(() => blobs.put(chunkKey(event.runId, chunk.index), JSON.stringify(chunk), 'application/json'))),
    );
    // The next run over the same files and chunk size copies these chunks instead of chunking
    // (its manifest last, so a Prepare killed meanwhile leaves no entry; equal content, equal objects).
    await writeChunkCache(blobs, { cacheKey, contentHash, chunkTokens: options.chunkTokens, corpus, createdAt: (deps.now ?? (() => new Date()))().toISOString() });
  }
  const record: RunRecord = {
    runId: event.runId,
    question: event.question.trim(),
    options,
    documents,
    skipped,
    chunks: chunkCount,
    tokens,
    tokenizer: TOKENIZER_NAME,
    createdAt: (deps.now ?? (() => new Date()))().toISOString(),
    chunkCache: { key: cacheKey, hit: cached !== undefined },
    estimate,
  };
  await blobs.put(runRecordKey(event.runId), JSON.stringify(record), 'application/json');
  // The manifest is written last: its presence means the run's chunks are all in place.
  const manifest = JSON.stringify(Array.from({ length: chunkCount }, (_, chunk) => ({ chunk })));
  await blobs.put(manifestKey(event.runId), manifest, 'application/json');

  return {
    runId: event.runId,
    manifestKey: manifestKey(event.runId),
    chunks: chunkCount,
    round: 1,
    k: 1,
    seq: 0,
    outcome: null,
    exhausted: false,
    poolSize: 0,
    config: {
      rounds: options.rounds,
      concurrency: options.concurrency,
      toleratedFailurePercentage: options.toleratedFailurePercentage,
      bestEffort: options.bestEffort,
      pipelineRounds: options.pipelineRounds,
    },
  };
}

function emptyCorpus(objects: number, skipped: SkippedDocument[]): EmptyCorpusError {
  const why = skipped.map((s) => `${s.documentId}: ${s.reason}`).join('; ');
  return new EmptyCorpusError(`The corpus has no usable text (${objects} object(s): ${why})`);
}

async function resolveCorpusKeys(corpus: PrepareEvent['corpus'], blobs: BlobStore, limit: pLimit.Limit): Promise<string[]> {
  const keys = corpus.keys ?? (await blobs.list(corpus.prefix ?? '')).map((o) => o.key);
  const inRuns = keys.filter((k) => k.startsWith('runs/'));
  if (inRuns.length > 0) {
    throw new InvalidInputError(`Corpus keys must not point into runs/ (the workflow's own output): ${inRuns.slice(0, 3).join(', ')}`);
  }
  if (corpus.keys) {
    const found = await Promise.all(keys.map((key) => limit(() => blobs.exists(key))));
    const missing = keys.filter((_, i) => !found[i]);
    if (missing.length > 0) throw new InvalidInputError(`Corpus object(s) not found: ${missing.slice(0, 5).join(', ')}`);
  }
  if (keys.length === 0) throw new InvalidInputError(`No corpus object under prefix "${corpus.prefix}"`);
  return [...new Set(keys)];
}
