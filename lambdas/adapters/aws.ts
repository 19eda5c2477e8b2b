/**
 * AWS clients and adapters, created once per Lambda container at module scope (SDK clients reuse
 * connections across invocations; `mockClient` patches the classes, so tests can still mock them).
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { HandlerDeps } from '../handlers';
import type { AgentModel } from '../../shared/ports';
import { createBedrockClient } from './bedrock';
import { DynamoMessageStore } from './dynamo-message-store';
import { loadEnv } from './env';
import { logger } from './logging';
import { createAgentModel } from './model';
import { S3BlobStore } from './s3-blob-store';

const env = loadEnv();
const s3 = new S3Client({});
const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}));
let model: AgentModel | undefined;

/** The handler dependencies of this container. */
export const awsDeps: HandlerDeps = {
  blobs: new S3BlobStore(s3, env.BUCKET_NAME),
  store: new DynamoMessageStore(dynamo, { tableName: env.TABLE_NAME, retentionDays: env.RUN_RETENTION_DAYS }),
  model: () => (model ??= createAgentModel(env.MODEL_SPEC, (): BedrockRuntimeClient => createBedrockClient())),
  logger,
};
