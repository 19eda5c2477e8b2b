/**
 * Prepare: read the corpus, decode and chunk it, write the chunk objects, the run record and the
 * Distributed Map manifest; return the initial workflow state (docs/ARCHITECTURE.md, step 1).
 */
import pLimit from 'p-limit';
import { parseRunOptions } from '../config';
import { chunkCorpus } from '../chunking';
import { EmptyCorpusError, InvalidInputError } from '../errors';
import type { BlobStore } from '../ports';
import { decodeDocument } from '../text';
import { TOKENIZER_NAME } from '../tokenizer';
import type { SkippedDocument, SourceDocument } from '../types';
import { chunkKey, manifestKey, runRecordKey } from './layout';
import type { RunRecord } from './run-record';
import type { PrepareEvent, WorkflowState } from './state';

/** Parallel object reads/writes of one Prepare invocation (S3 handles far more; this bounds memory). */
const IO_CONCURRENCY = 16;

export interface PrepareDeps {
  blobs: BlobStore;
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

  const keys = await resolveCorpusKeys(event.corpus, blobs);
  const prefix = event.corpus.prefix ?? '';
  const decoded = await Promise.all(
    keys.map((key) => limit(async () => decodeDocument(key.slice(prefix.length) || key, await blobs.get(key)))),
  );
  const docs: SourceDocument[] = [];
  const skipped: SkippedDocument[] = [];
  for (const d of decoded) {
    if ('doc' in d) docs.push(d.doc);
    else skipped.push(d.skipped);
  }
  if (docs.length === 0) {
    const why = skipped.map((s) => `${s.documentId}: ${s.reason}`).join('; ');
    throw new EmptyCorpusError(`The corpus has no usable text (${keys.length} object(s): ${why})`);
  }

  const chunks = chunkCorpus(docs, { chunkTokens: options.chunkTokens });
  await Promise.all(
    chunks.map((chunk) => limit(() => blobs.put(chunkKey(event.runId, chunk.index), JSON.stringify(chunk), 'application/json'))),
  );
  const record: RunRecord = {
    runId: event.runId,
    question: event.question.trim(),
    options,
    documents: docs.map((d) => ({ id: d.id, chars: d.text.length })),
    skipped,
    chunks: chunks.length,
    tokens: chunks.reduce((sum, c) => sum + c.tokens, 0),
    tokenizer: TOKENIZER_NAME,
    createdAt: (deps.now ?? (() => new Date()))().toISOString(),
  };
  await blobs.put(runRecordKey(event.runId), JSON.stringify(record), 'application/json');
  // The manifest is written last: its presence means the run's chunks are all in place.
  const manifest = JSON.stringify(chunks.map((c) => ({ chunk: c.index })));
  await blobs.put(manifestKey(event.runId), manifest, 'application/json');

  return {
    runId: event.runId,
    manifestKey: manifestKey(event.runId),
    chunks: chunks.length,
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
    },
  };
}

async function resolveCorpusKeys(corpus: PrepareEvent['corpus'], blobs: BlobStore): Promise<string[]> {
  const keys = corpus.keys ?? (await blobs.list(corpus.prefix ?? '')).map((o) => o.key);
  const inRuns = keys.filter((k) => k.startsWith('runs/'));
  if (inRuns.length > 0) {
    throw new InvalidInputError(`Corpus keys must not point into runs/ (the workflow's own output): ${inRuns.slice(0, 3).join(', ')}`);
  }
  if (corpus.keys) {
    const missing: string[] = [];
    for (const key of keys) if (!(await blobs.exists(key))) missing.push(key);
    if (missing.length > 0) throw new InvalidInputError(`Corpus object(s) not found: ${missing.slice(0, 5).join(', ')}`);
  }
  if (keys.length === 0) throw new InvalidInputError(`No corpus object under prefix "${corpus.prefix}"`);
  return [...new Set(keys)];
}
