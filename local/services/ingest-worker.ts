/**
 * One corpus ingestion in a worker thread (local/services/ingestion-queue.ts): decoding, counting and chunking a corpus
 * is CPU-bound for seconds on a large corpus, and on the server's own thread it would hold every
 * request (and every run's progress) until it ends. The worker reads and writes the same local
 * bucket directory; the server only waits for its message.
 *
 * Protocol: `workerData` = {@link IngestJob}; the worker posts one {@link IngestReply} and exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ingestCorpus } from '../../shared/pipeline/ingest';
import { FsBlobStore } from '../engine/fs-blob-store';

/** What the server asks: the bucket directory and the corpus. */
export interface IngestJob {
  bucketDir: string;
  corpusId: string;
}

/** What the worker answers: the outcome name, or the error's name and message. */
export type IngestReply = { ok: true; outcome: string } | { ok: false; name: string; message: string };

if (parentPort !== null) {
  const job = workerData as IngestJob;
  const port = parentPort;
  ingestCorpus(job.corpusId, { blobs: new FsBlobStore(job.bucketDir) }).then(
    (result) => port.postMessage({ ok: true, outcome: result.outcome } satisfies IngestReply),
    (error: unknown) =>
      port.postMessage({
        ok: false,
        name: error instanceof Error ? error.name : 'Error',
        message: error instanceof Error ? error.message : String(error),
      } satisfies IngestReply),
  );
}
