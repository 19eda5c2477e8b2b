/**
 * Handlers of the upload triggers (docs/UPLOADS.md) as factories over ports, like lambdas/handlers.ts:
 * validate the event, call one use case, return a small result. Entry modules: lambdas/ingest.ts
 * (the `corpora/` rule's target) and lambdas/jobs.ts (the jobs state machine's two Lambda tasks).
 */
import { z } from 'zod';
import { corpusIdOfKey, ingestCorpus } from '../shared/pipeline/ingest';
import { planJob, writeJobResults, type ExecutionLookup, type JobState } from '../shared/pipeline/jobs';
import { createdObjectOf } from '../shared/pipeline/s3-event';
import { parseEvent } from '../shared/pipeline/state';
import type { BlobStore } from '../shared/ports';
import type { HandlerLogger } from './handlers';

/** What the ingest handler did with one event (its Lambda result; EventBridge ignores it). */
export type IngestHandlerResult =
  | { outcome: 'ignored'; key: string; reason: string }
  | { outcome: 'ingested' | 'reused' | 'unchanged' | 'no-objects'; corpusId: string; chunks?: number; cacheKey?: string };

/**
 * The ingest handler: an Object Created event under `corpora/<corpusId>/` ingests that corpus (see
 * `ingestCorpus`); any other key is ignored with a reason.
 * @throws InvalidInputError for an event that is not an S3 Object Created event.
 */
export function makeIngestHandler(deps: { blobs: BlobStore; chunkTokens: number; logger?: HandlerLogger }): (event: unknown) => Promise<IngestHandlerResult> {
  const { blobs, logger } = deps;
  return async (event) => {
    const object = createdObjectOf(event);
    const corpusId = corpusIdOfKey(object.key);
    logger?.removePersistentKeys(['corpusId']);
    logger?.appendPersistentKeys({ ...(corpusId !== undefined && { corpusId }), key: object.key, task: 'Ingest' });
    if (corpusId === undefined) {
      const result: IngestHandlerResult = { outcome: 'ignored', key: object.key, reason: 'not below corpora/<corpusId>/ with a valid corpus id' };
      logger?.info('Ingest ignored the object', { result });
      return result;
    }
    const done = await ingestCorpus(corpusId, { blobs }, { chunkTokens: deps.chunkTokens });
    const result: IngestHandlerResult =
      done.outcome === 'no-objects'
        ? { outcome: 'no-objects', corpusId }
        : { outcome: done.outcome, corpusId, chunks: done.ingestion.totals.chunks, cacheKey: done.ingestion.cacheKey };
    logger?.info(`Ingest ${result.outcome}`, { result });
    return result;
  };
}

/** The jobs state machine's state after planning (the results task's input). */
const JobStateSchema = z.object({
  jobId: z.string().min(1),
  name: z.string().min(1),
  itemsKey: z.string().min(1),
  questions: z.number().int().min(1),
});

/** Output of the results task (the jobs execution's output). */
export interface JobResultsOutput {
  job: string;
  questions: number;
  succeeded: number;
  failed: number;
  answerable: number;
  resultsKey?: string;
}

/** The two Lambda tasks of the jobs state machine. */
export interface JobHandlers {
  /** `PlanJob`: input the S3 Object Created event of `jobs/<name>.json`; output the job state. */
  plan(event: unknown): Promise<JobState>;
  /** `WriteResults`: input the job state; writes `results/<name>.jsonl` and the summary. */
  results(event: unknown): Promise<JobResultsOutput>;
}

/** Build the job handlers over the given adapters. */
export function makeJobHandlers(deps: { blobs: BlobStore; executions: ExecutionLookup; logger?: HandlerLogger }): JobHandlers {
  const { blobs, executions, logger } = deps;
  return {
    async plan(event) {
      const object = createdObjectOf(event);
      // A warm container keeps persistent keys: drop the previous invocation's job id.
      logger?.removePersistentKeys(['jobId']);
      logger?.appendPersistentKeys({ key: object.key, task: 'PlanJob' });
      try {
        const state = await planJob({ key: object.key, etag: object.etag, versionId: object.versionId }, { blobs });
        logger?.appendPersistentKeys({ jobId: state.jobId });
        logger?.info('Job planned', { questions: state.questions });
        return state;
      } catch (error) {
        logger?.error('Job rejected', error as Error);
        throw error;
      }
    },
    async results(event) {
      const state = parseEvent(JobStateSchema, event, 'WriteResults');
      logger?.appendPersistentKeys({ jobId: state.jobId, task: 'WriteResults' });
      const summary = await writeJobResults(state.jobId, { blobs, executions });
      const output: JobResultsOutput = {
        job: summary.job,
        questions: summary.questions,
        succeeded: summary.succeeded,
        failed: summary.failed,
        answerable: summary.answerable,
        resultsKey: summary.resultsKey,
      };
      logger?.info('Job results written', { result: output });
      return output;
    },
  };
}
