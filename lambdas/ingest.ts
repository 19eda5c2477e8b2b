/**
 * Lambda entry point of corpus ingestion: reads the ingest queue (SQS), where the EventBridge rule on
 * Object Created events under `corpora/` sends them (infra/ingest.ts); one ingestion per corpus per
 * batch. Clients at module scope; environment validated at cold start.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore } from './adapters/s3-blob-store';
import { logger, withLambdaContext } from './adapters/logging';
import { loadIngestEnv } from './adapters/trigger-env';
import { makeIngestBatchHandler } from './trigger-handlers';

const env = loadIngestEnv();

export const handler = withLambdaContext(
  makeIngestBatchHandler({ blobs: new S3BlobStore(new S3Client({}), env.BUCKET_NAME), chunkTokens: env.INGEST_CHUNK_TOKENS, logger }),
);
