/**
 * Prepare: read the corpus, decode and chunk it, write the chunk objects, the run record and the
 * Distributed Map manifest; return the initial workflow state (docs/ARCHITECTURE.md, step 1).
 *
 * Chunk cache (shared/pipeline/ingest.ts): the run's chunks are always those of the cache entry of
 * its corpus content (ids and bytes) and `chunkTokens`, read in place: when an ingested corpus or an
 * earlier run already made the entry, nothing is decoded, chunked or copied; otherwise Prepare
 * decodes and chunks the corpus one object at a time straight into the entry (without per-file token
 * counts, which ingestion adds), for this run and the next. The run record names the entry
 * (`chunksFrom`), and Seek and Finalize read chunk i at `runChunkKey(runId, i, chunksFrom)`. So a run
 * writes only its own run data (record, manifest, results), and Prepare's memory stays flat as the
 * corpus grows.
 */
import pLimit from 'p-limit';
import { parseRunOptions } from '../config';
import { CostLimitExceededError, EmptyCorpusError, InvalidInputError } from '../errors';
import { COST_LIMIT_MODE, enforceCostLimit, estimateRun, priceEstimate, type ModelPricing } from '../cost';
import { enforceQuota, planRunConcurrency, type ModelQuota } from '../quota';
import type { BlobStore } from '../ports';
import { TOKENIZER_NAME } from '../tokenizer';
import type { SkippedDocument } from '../types';
import { IO_CONCURRENCY, chunkCacheKey, chunkIntoCache, hashCorpusObjects, loadChunkCache } from './ingest';
import { cachedChunkKey, coverageItemsKey, coverageOrderKey, manifestKey, reseekDocumentsKey, runRecordKey } from './layout';
import { coverageItems } from '../coverage';
import { chunkDocumentIndexes } from '../reseek';
import { ChunkRetriever } from '../retrieval';
import type { Chunk } from '../types';
import type { RunRecord } from './run-record';
import type { PrepareEvent, WorkflowState } from './state';

export interface PrepareDeps {
  blobs: BlobStore;
  /** How the deployment's model is priced (models/ `modelPricing`), for the run's estimate under `maxCostUsd` (none: no price, so a limit refuses). */
  pricing?: ModelPricing;
  /**
   * The deployment's default quota of the seeking model (CDK context `quotaRequestsPerMinute`,
   * `quotaTokensPerMinute`); a run's options override each limit. Absent: none.
   */
  quota?: ModelQuota;
  /** Clock for the run record (tests pass a fixed one). */
  now?: () => Date;
}

/**
 * Prepare a run. With the run option `coverage: 'grow'` (shared/coverage.ts) it also ranks the
 * chunks by BM25 against the question (reading each chunk once; no model call), writes that order
 * and the first tranche's Map items, and returns a state that seeks only that tranche. With
 * `reseek: 'promising'` and rounds >= 2 (shared/reseek.ts) it writes the documents of each chunk, which
 * Synchronize reads to choose the chunks of each later round.
 * @returns the initial workflow state: round 1, k = 1, no outcome yet; `covered` = the chunks the
 *   first Map seeks (every chunk for `full`), `config.coverageCap` = the most a round covers.
 * @throws ConfigurationError for invalid options; CostLimitExceededError over `maxCostUsd`;
 *   QuotaExceededError when the stated quota cannot carry the seeks (shared/quota.ts `checkQuota`); InvalidInputError when the corpus keys/prefix
 *   match no object or point into `runs/`; EmptyCorpusError when no document has usable text (before
 *   any model call; the message lists each skipped document and why).
 */
export async function prepareRun(event: PrepareEvent, deps: PrepareDeps): Promise<WorkflowState> {
  const options = parseRunOptions(event.options);
  const { blobs } = deps;
  const limit = pLimit(IO_CONCURRENCY);

  const { keys, sizes } = await resolveCorpusKeys(event.corpus, blobs, limit);
  const prefix = event.corpus.prefix ?? '';
  const now = (deps.now ?? (() => new Date()))().toISOString();
  const contentHash = await hashCorpusObjects(blobs, keys, prefix, sizes);
  const cacheKey = chunkCacheKey(contentHash, options.chunkTokens);
  const cached = await loadChunkCache(blobs, cacheKey);
  // A miss chunks the corpus into the cache entry (one object at a time), which the run then reads.
  const entry =
    cached ?? (await chunkIntoCache(blobs, keys, prefix, { cacheKey, contentHash, chunkTokens: options.chunkTokens, createdAt: now }, false, sizes));
  if (entry.chunks === 0) throw emptyCorpus(keys.length, entry.skipped);
  // What the run costs at most, before any model call and before the run writes anything: a cost
  // limit refuses it here, leaving no run objects behind (the cache entry is not the run's).
  const estimate = estimateRun({ chunks: entry.chunks, chunkTokensTotal: entry.chunkTokensTotal, question: event.question.trim(), options }, deps.pricing);
  if (options.maxCostUsd !== undefined) {
    if (!deps.pricing)
      throw new CostLimitExceededError(
        `Refused before any model call: maxCostUsd ${options.maxCostUsd} cannot be checked: the deployment's model is not known to Prepare`,
      );
    enforceCostLimit(priceEstimate(estimate, deps.pricing), options.maxCostUsd, COST_LIMIT_MODE);
  }
  // The seeking Map's MaxConcurrency under the model's quota (shared/quota.ts), refused here when
  // the quota cannot carry the seeks at all.
  const plan = enforceQuota(planRunConcurrency(estimate, options, deps.quota));
  const chunkCount = entry.chunks;
  const record: RunRecord = {
    runId: event.runId,
    question: event.question.trim(),
    options,
    documents: entry.documents,
    skipped: entry.skipped,
    chunks: chunkCount,
    tokens: entry.chunkTokensTotal,
    tokenizer: TOKENIZER_NAME,
    createdAt: now,
    chunkCache: { key: cacheKey, hit: cached !== undefined },
    chunksFrom: cacheKey,
    ...(event.corpus.prefix !== undefined && { corpusPrefix: event.corpus.prefix }),
    estimate,
    concurrency: plan,
    ...(deps.pricing !== undefined && { models: deps.pricing.models }),
  };
  await blobs.put(runRecordKey(event.runId), JSON.stringify(record), 'application/json');
  // A grow run seeks first the best chunks of its coverage order (shared/coverage.ts).
  const grow = options.coverage === 'grow';
  const coverageCap = grow ? Math.min(options.coverageMaxChunks ?? chunkCount, chunkCount) : chunkCount;
  const covered = grow ? Math.min(options.coverageFirstChunks, coverageCap) : chunkCount;
  // A promising run's rounds >= 2 choose chunks by their documents (shared/reseek.ts): their map,
  // read in the same pass over the chunks as a grow run's ranking.
  const promising = options.reseek === 'promising' && options.rounds >= 2;
  if (grow || promising) {
    const retriever = grow ? new ChunkRetriever(record.question) : undefined;
    const segments: string[][] = [];
    await scanChunks(blobs, cacheKey, chunkCount, (index, chunk) => {
      retriever?.add({ index, text: chunk.text });
      segments.push(chunk.segments.map((segment) => segment.documentId));
    });
    if (retriever) {
      const order = retriever.order(Array.from({ length: chunkCount }, (_, i) => i));
      await blobs.put(coverageOrderKey(event.runId), JSON.stringify(order), 'application/json');
      await blobs.put(coverageItemsKey(event.runId, 0, covered), JSON.stringify(coverageItems(order, 0, covered)), 'application/json');
    }
    if (promising) {
      const documents = chunkDocumentIndexes(
        segments,
        record.documents.map((d) => d.id),
      );
      await blobs.put(reseekDocumentsKey(event.runId), JSON.stringify(documents), 'application/json');
    }
  }
  // The manifest is written last: its presence means the run's chunks are all in place.
  const manifest = JSON.stringify(Array.from({ length: chunkCount }, (_, chunk) => ({ chunk })));
  await blobs.put(manifestKey(event.runId), manifest, 'application/json');

  return {
    runId: event.runId,
    manifestKey: grow ? coverageItemsKey(event.runId, 0, covered) : manifestKey(event.runId),
    chunks: chunkCount,
    covered,
    round: 1,
    k: options.karFirstK,
    seq: 0,
    outcome: null,
    exhausted: false,
    poolSize: 0,
    config: {
      rounds: options.rounds,
      concurrency: plan.concurrency,
      toleratedFailurePercentage: options.toleratedFailurePercentage,
      bestEffort: options.bestEffort,
      pipelineRounds: options.pipelineRounds,
      seekMode: options.seekMode,
      coverageCap,
      karFirstK: options.karFirstK,
    },
  };
}

/**
 * Read every chunk of the cache entry once, IO_CONCURRENCY at a time, and hand each to `visit` in
 * index order (each chunk's text is dropped once visited): a grow run's coverage order (BM25 of the
 * chunk texts against the question, shared/retrieval.ts; no model call) and a promising run's map of
 * chunk documents. In index order, so minisearch's running averages see the same sequence on every
 * replay and equal corpora give equal scores to the last bit: a replayed Prepare writes the same bytes.
 */
async function scanChunks(blobs: BlobStore, cacheKey: string, chunks: number, visit: (index: number, chunk: Chunk) => void): Promise<void> {
  for (let from = 0; from < chunks; from += IO_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(IO_CONCURRENCY, chunks - from) }, (_, i) => from + i);
    const read = await Promise.all(batch.map(async (i) => JSON.parse(await blobs.getText(cachedChunkKey(cacheKey, i))) as Chunk));
    batch.forEach((index, j) => visit(index, read[j]));
  }
}

function emptyCorpus(objects: number, skipped: SkippedDocument[]): EmptyCorpusError {
  const why = skipped.map((s) => `${s.documentId}: ${s.reason}`).join('; ');
  return new EmptyCorpusError(`The corpus has no usable text (${objects} object(s): ${why})`);
}

async function resolveCorpusKeys(
  corpus: PrepareEvent['corpus'],
  blobs: BlobStore,
  limit: pLimit.Limit,
): Promise<{ keys: string[]; sizes?: Map<string, number> }> {
  const listing = corpus.keys === undefined ? await blobs.list(corpus.prefix ?? '') : undefined;
  const keys = corpus.keys ?? listing!.map((o) => o.key);
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
  // The listing's sizes: an object too large to read is known without reading it (ingest.ts).
  return { keys: [...new Set(keys)], ...(listing && { sizes: new Map(listing.map((o) => [o.key, o.size])) }) };
}
