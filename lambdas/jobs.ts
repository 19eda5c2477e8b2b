/**
 * Lambda entry points of the jobs state machine (infra/ingest.ts): `planHandler` (task PlanJob, input
 * the S3 Object Created event of `jobs/<name>.json`) and `resultsHandler` (task WriteResults).
 * Clients at module scope; environment validated at cold start.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { S3BlobStore } from './adapters/s3-blob-store';
import { logger, withLambdaContext } from './adapters/logging';
import { SfnRunLauncher } from './adapters/sfn-run-launcher';
import { loadJobsEnv } from './adapters/trigger-env';
import { makeJobHandlers } from './trigger-handlers';

const env = loadJobsEnv();
const handlers = makeJobHandlers({
  blobs: new S3BlobStore(new S3Client({}), env.BUCKET_NAME),
  executions: new SfnRunLauncher(new SFNClient({}), env.STATE_MACHINE_ARN),
  logger,
  ...(env.JOB_SEEK_MODE !== undefined && { defaultOptions: { seekMode: env.JOB_SEEK_MODE } }),
});

export const planHandler = withLambdaContext(handlers.plan);
export const resultsHandler = withLambdaContext(handlers.results);
