/**
 * The API Lambda's environment and AWS adapters, created once per container at module scope
 * (`mockClient` patches the SDK classes, so tests can still mock them). Separate from
 * lambdas/adapters/aws.ts: the API function needs no model and has its own variables.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { ApiDeps } from '../../shared/api/core';
import { DynamoMessageStore } from './dynamo-message-store';
import { S3BlobStore } from './s3-blob-store';
import { S3IdempotencyStore } from './s3-idempotency-store';
import { S3Presigner, createPresigningS3Client } from './s3-presigner';
import { SfnRunLauncher } from './sfn-run-launcher';
import { SEEK_QUOTA_ENV, StateMachineArnSchema, loadLambdaEnv, seekQuotaOf } from './lambda-env';
import { modelPricing } from '../../models';

const ApiEnvSchema = z.object({
  /** DynamoDB table of messages and runs. */
  TABLE_NAME: z.string().min(1),
  /** The project bucket (corpora, runs, api records). */
  BUCKET_NAME: z.string().min(1),
  /** The workflow's state machine. */
  STATE_MACHINE_ARN: StateMachineArnSchema,
  /** The workflow's model spec: prices a run's estimate for `maxCostUsd` (absent: Prepare checks the limit). */
  MODEL_SPEC: z.string().min(1).optional(),
  /** The deployment's quota of the seeking model: a run it cannot carry over an ingested corpus is a 422 up front (absent: Prepare checks the run's own). */
  ...SEEK_QUOTA_ENV,
});

export type ApiEnv = z.infer<typeof ApiEnvSchema>;

/**
 * Read and validate the API function's environment.
 * @throws ConfigurationError naming each missing or invalid variable.
 */
export function loadApiEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  return loadLambdaEnv(ApiEnvSchema, source, 'API Lambda');
}

const env = loadApiEnv();
const s3 = new S3Client({});
const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const sfn = new SFNClient({});

/** The API's ports in this container. */
export const apiDeps: ApiDeps = {
  blobs: new S3BlobStore(s3, env.BUCKET_NAME),
  store: new DynamoMessageStore(dynamo, { tableName: env.TABLE_NAME }),
  launcher: new SfnRunLauncher(sfn, env.STATE_MACHINE_ARN),
  presigner: new S3Presigner(createPresigningS3Client(), env.BUCKET_NAME),
  idempotency: new S3IdempotencyStore(s3, env.BUCKET_NAME),
  ...(env.MODEL_SPEC !== undefined && { pricing: modelPricing(env.MODEL_SPEC) }),
  quota: seekQuotaOf(env),
};
