/**
 * Lambda entry point of corpus ingestion: target of the EventBridge rule on Object Created events
 * under `corpora/` (infra/ingest.ts). Clients at module scope; environment validated at cold start.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore } from './adapters/s3-blob-store';
import { logger, withLambdaContext } from './adapters/logging';
import { loadIngestEnv } from './adapters/trigger-env';
import { makeIngestHandler } from './trigger-handlers';

const env = loadIngestEnv();

export const handler = withLambdaContext(
  makeIngestHandler({ blobs: new S3BlobStore(new S3Client({}), env.BUCKET_NAME), chunkTokens: env.INGEST_CHUNK_TOKENS, logger }),
);
