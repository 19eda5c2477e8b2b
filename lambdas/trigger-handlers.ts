/**
 * Handlers of the upload triggers (docs/UPLOADS.md) as factories over ports, like lambdas/handlers.ts:
 * validate the event, call one use case, return a small result. Entry modules: lambdas/ingest.ts
 * (reads the ingest queue, where the `corpora/` rule sends its events) and lambdas/jobs.ts (the jobs
 * state machine's two Lambda tasks).
 */
import { z } from 'zod';
import { corpusIdOfKey } from '../shared/corpus';
import { ingestCorpus } from '../shared/pipeline/ingest';
import type { ExecutionLookup } from '../shared/executions';
import { planJob, writeJobResults, type JobState } from '../shared/pipeline/jobs';
import { createdObjectOf } from '../shared/pipeline/s3-event';
import { parseEvent } from '../shared/pipeline/state';
import type { BlobStore } from '../shared/ports';
import type { HandlerLogger } from './logged';

/** One SQS message as the Lambda event source mapping delivers it (only the fields used here). */
const SqsRecordSchema = z.object({ messageId: z.string().min(1), body: z.string() });
/** A batch of SQS messages ("Using Lambda with Amazon SQS": `{"Records": [...]}`). */
const SqsBatchSchema = z.object({ Records: z.array(SqsRecordSchema) });

/**
 * The partial batch response of an SQS event source mapping with `ReportBatchItemFailures`: the
 * messages listed are received again (and after `INGEST_MAX_RECEIVES` receives go to the
 * dead-letter queue); the others are deleted. Source: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 */
export interface SqsBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/**
 * The ingest queue's handler: a batch of queued S3 Object Created events (each message body is one
 * EventBridge event). Each corpus named in the batch is ingested ONCE, however many of its objects
 * the batch holds (an upload of n files costs a few ingestions, not n). Outcomes:
 * - a corpus whose ingestion fails: every message of it is reported failed (received again later,
 *   then dead-lettered: never dropped), the other corpora are unaffected;
 * - a message whose body is not an Object Created event: reported failed, so it ends in the
 *   dead-letter queue where it can be inspected (an error is logged with the reason);
 * - a key outside `corpora/<valid id>/`: ignored with a reason (logged).
 * @returns the partial batch response.
 * @throws InvalidInputError when the event is not an SQS batch (the whole batch is then retried).
 */
export function makeIngestBatchHandler(deps: { blobs: BlobStore; chunkTokens: number; logger?: HandlerLogger }): (event: unknown) => Promise<SqsBatchResponse> {
  const { blobs, logger } = deps;
  return async (event) => {
    const { Records: records } = parseEvent(SqsBatchSchema, event, 'SQS batch');
    logger?.removePersistentKeys(['corpusId', 'key']);
    logger?.appendPersistentKeys({ task: 'Ingest' });
    const failed: string[] = [];
    const byCorpus = new Map<string, string[]>();
    for (const record of records) {
      let key: string;
      try {
        key = createdObjectOf(JSON.parse(record.body) as unknown).key;
      } catch (error) {
        failed.push(record.messageId);
        logger?.error('Ingest rejected a queued message: not an S3 Object Created event', { messageId: record.messageId, error: errorText(error) });
        continue;
      }
      const corpusId = corpusIdOfKey(key);
      if (corpusId === undefined) {
        logger?.info('Ingest ignored the object', { result: { outcome: 'ignored', key, reason: 'not below corpora/<corpusId>/ with a valid corpus id' } });
        continue;
      }
      byCorpus.set(corpusId, [...(byCorpus.get(corpusId) ?? []), record.messageId]);
    }
    for (const [corpusId, messageIds] of byCorpus) {
      try {
        const done = await ingestCorpus(corpusId, { blobs }, { chunkTokens: deps.chunkTokens });
        const result =
          done.outcome === 'no-objects'
            ? { outcome: done.outcome, corpusId, events: messageIds.length }
            : { outcome: done.outcome, corpusId, events: messageIds.length, chunks: done.ingestion.totals.chunks, cacheKey: done.ingestion.cacheKey };
        logger?.info(`Ingest ${result.outcome}`, { result });
      } catch (error) {
        failed.push(...messageIds);
        logger?.error('Ingest failed; its events will be received again', { corpusId, events: messageIds.length, error: errorText(error) });
      }
    }
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
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
