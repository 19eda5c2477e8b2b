/**
 * The ingestion queue of `extagents serve` (local/services/serve.ts): each upload under
 * `corpora/<id>/` queues an ingestion of that corpus in the background, what the upload trigger runs
 * in AWS (`ingestCorpus` of shared/pipeline/ingest.ts), each in a worker thread so that it never holds
 * the server's requests (local/services/ingest-worker.ts), one at a time per corpus, coalescing
 * uploads that arrive meanwhile. At every start, the ingestions a previous server left undone are
 * queued again ({@link LocalIngestion.resumeStale}).
 */
import { surveyRecordKey } from '../../shared/pipeline/layout';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { IngestJob, IngestReply } from './ingest-worker';
import { LOCAL_CORPUS_ID_PREFIX } from '../engine/runs';
import { CORPORA_PREFIX, CorpusIdSchema, corpusPrefix } from '../../shared/corpus';
import { readIngestedCounts } from '../../shared/api/corpus-index';
import type { BlobStore } from '../../shared/ports';

/**
 * Background ingestion of uploaded corpora, like the upload trigger in AWS: at most one ingestion
 * per corpus at a time; uploads arriving meanwhile cause one more ingestion afterwards.
 */
export class LocalIngestion {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  /**
   * @param blobs the local bucket (listing and summaries, on this thread).
   * @param bucketDir its directory, which each ingestion's worker thread opens itself.
   */
  constructor(
    private readonly blobs: BlobStore,
    private readonly bucketDir: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Ingest the corpus soon (now, or once more after the ingestion in progress), in a worker thread. */
  request(corpusId: string): void {
    if (this.running.has(corpusId)) {
      this.again.add(corpusId);
      return;
    }
    const run = (async () => {
      do {
        this.again.delete(corpusId);
        const reply = await ingestInWorker({ bucketDir: this.bucketDir, corpusId });
        this.log(reply.ok ? `ingested corpus ${corpusId}: ${reply.outcome}` : `ingestion of corpus ${corpusId} failed: ${reply.name}: ${reply.message}`);
      } while (this.again.has(corpusId));
    })().finally(() => this.running.delete(corpusId));
    this.running.set(corpusId, run);
  }

  /**
   * Queue the ingestion of every corpus with a file that its summary does not list at its current
   * size: what a server stopped (or killed) in the middle of ingesting, or stopped before it could
   * ingest an upload, left undone. The upload trigger's queue keeps such events in AWS; locally this
   * runs at every start. The content-addressed corpora of `ask` (`corpora/local-<content hash>/`,
   * local/engine/run.ts) are not among them: nobody uploads into them, their files never change (the
   * id is their content's hash) and no ingestion was asked for them (`ask`'s Prepare caches their
   * chunks itself); nor are the sources a survey copied (`corpora/<surveyId>/`, beside its
   * `runs/<surveyId>/survey/survey.json`).
   * @returns the corpus ids queued.
   */
  async resumeStale(): Promise<string[]> {
    const byCorpus = new Map<string, Array<{ key: string; size: number }>>();
    for (const object of await this.blobs.list(CORPORA_PREFIX)) {
      const id = object.key.slice(CORPORA_PREFIX.length).split('/')[0];
      if (!CorpusIdSchema.safeParse(id).success || object.key === `${CORPORA_PREFIX}${id}` || id.startsWith(LOCAL_CORPUS_ID_PREFIX)) continue;
      byCorpus.set(id, [...(byCorpus.get(id) ?? []), object]);
    }
    const queued: string[] = [];
    for (const [id, objects] of byCorpus) {
      // A survey's copy of its sources (corpora/<surveyId>/) is read by its survey, never ingested.
      if (await this.blobs.exists(surveyRecordKey(id))) continue;
      const ingested = await readIngestedCounts(this.blobs, id, corpusPrefix(id), objects);
      const missing = objects.filter((o) => !ingested.has(o.key)).length;
      if (missing === 0) continue;
      this.log(`ingesting corpus ${id} again: ${missing} file(s) not ingested at their current size`);
      this.request(id);
      queued.push(id);
    }
    return queued;
  }

  /** Wait until no ingestion runs. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }
}

/**
 * Set by the banner of a bundle (scripts/bundle.cjs: the prebuilt CLI, the packaged library) to the
 * bundle's directory, which holds the bundled worker `ingest-worker.cjs`; undefined when the sources
 * run (tsx, jest).
 */
declare const __extagentsBundleDir: string | undefined;

/**
 * The worker thread's entry: in a bundle, the bundled worker beside it (an installed package has no
 * TypeScript sources, nor tsx); from the sources, local/services/ingest-worker.cjs, which registers
 * tsx and loads ingest-worker.ts (a worker does not inherit the main thread's TypeScript hook).
 */
function ingestWorkerEntry(): string {
  return typeof __extagentsBundleDir === 'string' ? path.join(__extagentsBundleDir, 'ingest-worker.cjs') : path.join(__dirname, 'ingest-worker.cjs');
}

/**
 * Run one ingestion in a worker thread (local/services/ingest-worker.ts) and wait for its reply; a worker that
 * dies without one (out of memory, a crash) is reported as a failed ingestion, never thrown.
 */
function ingestInWorker(job: IngestJob): Promise<IngestReply> {
  return new Promise((resolve) => {
    const worker = new Worker(ingestWorkerEntry(), { workerData: job });
    let reply: IngestReply | undefined;
    worker.once('message', (message: IngestReply) => (reply = message));
    worker.once('error', (error) => (reply ??= { ok: false, name: error.name, message: error.message }));
    worker.once('exit', (code) =>
      resolve(reply ?? { ok: false, name: 'WorkerExit', message: `the ingestion worker exited with code ${code} without a result` }),
    );
  });
}
