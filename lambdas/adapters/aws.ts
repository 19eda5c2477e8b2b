/**
 * The workflow handlers' dependencies in this Lambda container: the S3 and DynamoDB clients at module
 * scope (reused across invocations; `mockClient` patches the classes, so tests can still mock them),
 * the model provider's own dependencies built from the environment at cold start (models/index.ts
 * `lambdaProviderDeps`), and the agent model, loaded and built on first use from MODEL_SPEC. With a `bedrock:`
 * spec and BATCH_ROLE_ARN (the Seek function only), batch seeking's Bedrock model invocation jobs
 * (lambdas/adapters/bedrock-batch.ts); otherwise no batch service, and batch runs seek on demand.
 */
import { BedrockClient } from '@aws-sdk/client-bedrock';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { HandlerDeps } from '../handlers';
import { seekQuotaOf } from './lambda-env';
import type { BlobStore } from '../../shared/ports';
import { lambdaProviderDeps, loadModels, modelPricing, type LoadedModels, type ProviderDeps } from '../../models';
import { modelTraits } from '../../models/traits';
import { BedrockBatchInference } from './bedrock-batch';
import { DynamoMessageStore } from './dynamo-message-store';
import { loadEnv, type LambdaEnv } from './env';
import { logger } from './logging';
import { runMetrics, tracer, withUsageMetrics } from './telemetry';
import { S3BlobStore } from './s3-blob-store';

const env = loadEnv();
const s3 = new S3Client({});
// Every item of a run shares one partition key and all Seeks update one counters item, so DynamoDB
// may throttle a fast, highly concurrent run: the SDK's own bounded, jittered retries absorb that
// (8 attempts, adaptive mode) rather than failing the chunk.
const dynamo = DynamoDBDocumentClient.from(tracer.captureAWSv3Client(new DynamoDBClient({ maxAttempts: 8, retryMode: 'adaptive' })));

/**
 * What the model table builds the agents with in this container: the spec's provider's own
 * dependencies from this function's environment (models/index.ts `lambdaProviderDeps`: a traced
 * Bedrock client per built model set, an OpenAI-compatible server's base URL and key reader), built
 * once at cold start.
 */
export const modelDeps: ProviderDeps = lambdaProviderDeps(env.MODEL_SPEC, env, {
  trace: (client) => tracer.captureAWSv3Client(client),
  warn: (message, detail) => logger.warn(message, detail),
});

/**
 * A value made once per container on first use; a failed attempt is not kept (the next invocation
 * tries again, and its typed error is the task's).
 */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

/** MODEL_SPEC's models, loaded on first use (a service's load reads nothing: models/index.ts `loadModels`). */
export const containerModels: () => Promise<LoadedModels<ProviderDeps>> = onFirstUse(() => loadModels(env.MODEL_SPEC));

/**
 * Batch seeking of this container (`HandlerDeps.batch`): Bedrock model invocation jobs run by the
 * batch service role, and the agents with their seeker wrapped, built like the on-demand model.
 * Undefined without BATCH_ROLE_ARN (every function but Seek, or a stack without the role) or for a
 * spec that is not `bedrock:` (no Bedrock model to batch).
 */
export function batchDepsOf(lambdaEnv: LambdaEnv, blobs: BlobStore, bedrock: () => BedrockClient): HandlerDeps['batch'] {
  if (lambdaEnv.BATCH_ROLE_ARN === undefined || modelTraits(lambdaEnv.MODEL_SPEC).invokedModels === undefined) return undefined;
  // Loaded once per container, as the on-demand model is; each task wraps its own seeker.
  const models = onFirstUse(() => loadModels(lambdaEnv.MODEL_SPEC));
  return {
    inference: new BedrockBatchInference(bedrock(), blobs, { bucket: lambdaEnv.BUCKET_NAME, roleArn: lambdaEnv.BATCH_ROLE_ARN, logger }),
    agents: async (wrapSeeker) => withUsageMetrics((await models()).agents({ ...modelDeps, wrapSeeker })),
  };
}

const blobs = new S3BlobStore(s3, env.BUCKET_NAME);

/** The handler dependencies of this container. */
export const awsDeps: HandlerDeps = {
  blobs,
  store: new DynamoMessageStore(dynamo, { tableName: env.TABLE_NAME, retentionDays: env.RUN_RETENTION_DAYS }),
  // Each agent call's usage becomes metrics; each Bedrock call a trace subsegment.
  model: onFirstUse(async () => withUsageMetrics((await containerModels()).agents(modelDeps))),
  batch: batchDepsOf(env, blobs, () => tracer.captureAWSv3Client(new BedrockClient({}))),
  pricing: modelPricing(env.MODEL_SPEC),
  quota: seekQuotaOf(env),
  logger,
  metrics: runMetrics,
};
