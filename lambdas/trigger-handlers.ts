/**
 * Handlers of the upload triggers (docs/UPLOADS.md) as factories over ports, like lambdas/handlers.ts:
 * validate the event, call one use case, return a small result. Entry modules: lambdas/ingest.ts
 * (reads the ingest queue, where the `corpora/` rule sends its events) and lambdas/jobs.ts (the jobs
 * state machine's two Lambda tasks).
 */
import type { RunOptionsInput } from '../shared/config';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { PartialItemFailureResponse } from '@aws-lambda-powertools/batch/types';
import { SqsSchema } from '@aws-lambda-powertools/parser/schemas/sqs';
import type { SqsRecord } from '@aws-lambda-powertools/parser/types';
import { z } from 'zod';
import { corpusIdOfKey } from '../shared/corpus';
import { ingestCorpus, type IngestOutcome } from '../shared/pipeline/ingest';
import type { ExecutionLookup } from '../shared/executions';
import { planJob, writeJobResults, type JobState } from '../shared/pipeline/jobs';
import { createdObjectOf } from '../shared/pipeline/s3-event';
import { parseEvent } from '../shared/pipeline/state';
import type { BlobStore } from '../shared/ports';
import type { HandlerLogger } from './logged';

/**
 * The partial batch response of an SQS event source mapping with `ReportBatchItemFailures`
 * (Powertools batch's `PartialItemFailureResponse`, `{"batchItemFailures": [{"itemIdentifier":
 * messageId}]}`): the messages listed are received again (and after `INGEST_MAX_RECEIVES` receives
 * go to the dead-letter queue); the others are deleted.
 * Source: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 */
export type SqsBatchResponse = PartialItemFailureResponse;

/**
 * The ingest queue's handler: a batch of queued S3 Object Created events (each message body is one
 * EventBridge event). Each corpus named in the batch is ingested ONCE, however many of its objects
 * the batch holds (an upload of n files costs a few ingestions, not n). Outcomes per message:
 * - a message of a corpus whose ingestion fails: reported failed, like every message of that corpus
 *   (received again later, then dead-lettered: never dropped); the other corpora are unaffected;
 * - a message whose body is not an Object Created event: reported failed, so it ends in the
 *   dead-letter queue where it can be inspected (an error is logged with the reason);
 * - a key outside `corpora/<valid id>/`: ignored with a reason (logged), not failed.
 *
 * Built on Powertools batch (`BatchProcessor`, `EventType.SQS`, `processPartialResponse`): the
 * record handler throws for a failed message and Powertools builds the partial batch response. The
 * records are processed one after another (`processInParallel: false`), so at most one corpus is
 * ingested at a time, in the order the batch first names them; a record of a corpus already met in
 * this batch awaits that corpus's one ingestion. A batch whose every message fails is reported as
 * such, not thrown (`throwOnFullBatchFailure: false`): the event source mapping then receives them
 * all again, as it would after an error, but the invocation is not counted as a function error.
 * The ingest queue is a standard queue (infra/ingest.ts), hence `BatchProcessor`, not the FIFO one.
 * Sources: https://docs.aws.amazon.com/powertools/typescript/latest/features/batch/ and
 * https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 * @returns the partial batch response.
 * @throws InvalidInputError when the event is not an SQS batch (Powertools parser's `SqsSchema`;
 *   the whole batch is then retried), naming every invalid field.
 */
export function makeIngestBatchHandler(deps: { blobs: BlobStore; chunkTokens: number; logger?: HandlerLogger }): (event: unknown) => Promise<SqsBatchResponse> {
  const { blobs, logger } = deps;
  // One processor per handler (per container in Lambda): it holds one batch's state at a time, and
  // Lambda gives a container one event at a time.
  const processor = new BatchProcessor(EventType.SQS);
  return async (event) => {
    const batch = parseEvent(SqsSchema, event, 'SQS batch');
    logger?.removePersistentKeys(['corpusId', 'key']);
    logger?.appendPersistentKeys({ task: 'Ingest' });
    /** This batch's corpora: the one ingestion of each, and how many of the batch's messages name it. */
    const corpora = new Map<string, { ingestion: Promise<IngestOutcome>; events: number }>();
    const ingestRecord = async (record: SqsRecord): Promise<void> => {
      let key: string;
      try {
        key = createdObjectOf(JSON.parse(record.body) as unknown).key;
      } catch (error) {
        logger?.error('Ingest rejected a queued message: not an S3 Object Created event', { messageId: record.messageId, error: errorText(error) });
        throw error;
      }
      const corpusId = corpusIdOfKey(key);
      if (corpusId === undefined) {
        logger?.info('Ingest ignored the object', { result: { outcome: 'ignored', key, reason: 'not below corpora/<corpusId>/ with a valid corpus id' } });
        return;
      }
      let corpus = corpora.get(corpusId);
      if (corpus === undefined) {
        corpus = { ingestion: ingestCorpus(corpusId, { blobs }, { chunkTokens: deps.chunkTokens }), events: 0 };
        corpora.set(corpusId, corpus);
      }
      corpus.events += 1;
      await corpus.ingestion;
    };
    const response = await processPartialResponse(batch, ingestRecord, processor, { processInParallel: false, throwOnFullBatchFailure: false });
    // One log line per corpus, once the batch is done (when its count of events is known).
    for (const [corpusId, { ingestion, events }] of corpora) {
      try {
        const done = await ingestion;
        const result =
          done.outcome === 'no-objects'
            ? { outcome: done.outcome, corpusId, events }
            : { outcome: done.outcome, corpusId, events, chunks: done.ingestion.totals.chunks, cacheKey: done.ingestion.cacheKey };
        logger?.info(`Ingest ${result.outcome}`, { result });
      } catch (error) {
        logger?.error('Ingest failed; its events will be received again', { corpusId, events, error: errorText(error) });
      }
    }
    return response;
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
export function makeJobHandlers(deps: {
  blobs: BlobStore;
  executions: ExecutionLookup;
  logger?: HandlerLogger;
  /** Run options of every question under the job's own (JOB_SEEK_MODE: `{seekMode: 'batch'}` with a bedrock: model). */
  defaultOptions?: RunOptionsInput;
}): JobHandlers {
  const { blobs, executions, logger } = deps;
  return {
    async plan(event) {
      const object = createdObjectOf(event);
      // A warm container keeps persistent keys: drop the previous invocation's job id.
      logger?.removePersistentKeys(['jobId']);
      logger?.appendPersistentKeys({ key: object.key, task: 'PlanJob' });
      try {
        const state = await planJob({ key: object.key, etag: object.etag, versionId: object.versionId }, { blobs, defaultOptions: deps.defaultOptions });
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
