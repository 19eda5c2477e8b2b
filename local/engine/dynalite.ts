/**
 * DynamoDB for the local run: dynalite (an in-memory DynamoDB API server on LevelDB) on 127.0.0.1,
 * reached through the real AWS SDK, with the tables of the synthesized template, so the local table
 * is the cloud table (key schema, attribute definitions, GSIs).
 *
 * Verified against dynalite 4 for this project: GSI Query with Limit and ScanIndexForward false,
 * BatchWriteItem, ConditionExpression and UpdateItem ADD work; TransactWriteItems, PartiQL and
 * UpdateTimeToLive do not (so TTL and point-in-time recovery of the template are skipped).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  type CreateTableCommandInput,
  type DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { ConfigurationError } from '../../shared/errors';
import type { CfnTemplate } from './definition';

/** Options of dynalite 4 that the local run uses (from its index.js JSDoc). */
interface DynaliteOptions {
  /** Time tables stay CREATING, ms (default 500). */
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
  /** LevelDB folder; in memory when absent. */
  path?: string;
}

// dynalite ships no type declarations and there is no @types/dynalite: load it through createRequire
// and give it the one signature used here (see the request for a declaration file in the report).
const dynalite = createRequire(__filename)('dynalite') as (options?: DynaliteOptions) => Server;

/** A running dynalite server. */
export interface LocalDynamo {
  /** `http://127.0.0.1:<port>`, for the SDK client's `endpoint`. */
  endpoint: string;
  /** Close the server (open keep-alive connections included) and its store. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start dynalite on 127.0.0.1 on a free port, tables ACTIVE at once (`createTableMs: 0`).
 * @param options.path a LevelDB folder to keep the data across runs; in memory by default.
 * @returns the endpoint and a stop function.
 * @throws the listen error (e.g. EADDRINUSE is impossible with port 0; EACCES on a sandbox).
 */
export async function startDynalite(options: { path?: string } = {}): Promise<LocalDynamo> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.path !== undefined && { path: options.path }) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () => {
      stopped ??= new Promise<void>((resolve, reject) => {
        server.close((error?: Error) => (error ? reject(error) : resolve()));
        // close() waits for idle keep-alive sockets of the SDK's agent; end them now.
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/**
 * Configuration of an SDK client for a local endpoint: region `us-east-1` and dummy static
 * credentials (the SDK signs every request; dynalite does not check the signature), so no real
 * credentials are ever looked up.
 */
export function localClientConfig(endpoint: string): DynamoDBClientConfig {
  return { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
}

/**
 * Create every `AWS::DynamoDB::Table` of a synthesized template: KeySchema, AttributeDefinitions,
 * GlobalSecondaryIndexes, LocalSecondaryIndexes, BillingMode (PAY_PER_REQUEST, or PROVISIONED with
 * its ProvisionedThroughput). Skipped because dynalite does not support them:
 * TimeToLiveSpecification, PointInTimeRecoverySpecification, SSESpecification, StreamSpecification,
 * Tags, ContributorInsights, DeletionProtection. A table that already exists (a persistent dynalite
 * folder) is kept. Waits until each table is ACTIVE.
 *
 * @param client a DynamoDB client for the local endpoint ({@link localClientConfig}).
 * @param template the synthesized template.
 * @param tableNames local table name by logical id (`resolveStateMachineDefinition(...).tableNames`).
 * @returns the names of the tables, in template order.
 * @throws ConfigurationError when a table has no name in `tableNames`, or a schema property is not a
 *   literal (an unresolved intrinsic function), or a table does not become ACTIVE within 5 s.
 * Source: AWS::DynamoDB::Table (CloudFormation) and CreateTable (DynamoDB API reference).
 */
export async function createTablesFromTemplate(client: DynamoDBClient, template: object, tableNames: Record<string, string>): Promise<string[]> {
  const resources = (template as CfnTemplate).Resources ?? {};
  const created: string[] = [];
  for (const [logicalId, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::DynamoDB::Table') continue;
    const tableName = tableNames[logicalId];
    if (tableName === undefined) throw new ConfigurationError(`No local table name for AWS::DynamoDB::Table ${logicalId}`);
    const input = createTableInput(logicalId, tableName, resource.Properties ?? {});
    try {
      await client.send(new CreateTableCommand(input));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilActive(client, tableName);
    created.push(tableName);
  }
  return created;
}

/** The CreateTable request of one template table (exported for tests). */
export function createTableInput(logicalId: string, tableName: string, properties: Record<string, unknown>): CreateTableCommandInput {
  const schema = {
    KeySchema: properties.KeySchema,
    AttributeDefinitions: properties.AttributeDefinitions,
    GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes,
    LocalSecondaryIndexes: properties.LocalSecondaryIndexes,
    BillingMode: properties.BillingMode,
    ProvisionedThroughput: properties.ProvisionedThroughput,
  };
  const text = JSON.stringify(schema);
  if (text.includes('"Ref"') || text.includes('"Fn::')) {
    throw new ConfigurationError(`The key schema of table ${logicalId} uses an intrinsic function; only literal values can be created locally`);
  }
  const payPerRequest = properties.BillingMode === 'PAY_PER_REQUEST';
  const strip = (indexes: unknown): CreateTableCommandInput['GlobalSecondaryIndexes'] =>
    (indexes as Array<Record<string, unknown>> | undefined)?.map((index) => ({
      IndexName: index.IndexName as string,
      KeySchema: index.KeySchema as never,
      Projection: index.Projection as never,
      ...(!payPerRequest && index.ProvisionedThroughput !== undefined && { ProvisionedThroughput: index.ProvisionedThroughput as never }),
    }));
  return {
    TableName: tableName,
    KeySchema: schema.KeySchema as CreateTableCommandInput['KeySchema'],
    AttributeDefinitions: schema.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
    ...(schema.GlobalSecondaryIndexes !== undefined && { GlobalSecondaryIndexes: strip(schema.GlobalSecondaryIndexes) }),
    ...(schema.LocalSecondaryIndexes !== undefined && {
      LocalSecondaryIndexes: (schema.LocalSecondaryIndexes as Array<Record<string, unknown>>).map((index) => ({
        IndexName: index.IndexName as string,
        KeySchema: index.KeySchema as never,
        Projection: index.Projection as never,
      })),
    }),
    ...(payPerRequest
      ? { BillingMode: 'PAY_PER_REQUEST' as const }
      : { BillingMode: 'PROVISIONED' as const, ProvisionedThroughput: schema.ProvisionedThroughput as CreateTableCommandInput['ProvisionedThroughput'] }),
  };
}

/** Poll DescribeTable until the table and its GSIs are ACTIVE (immediate with createTableMs 0). */
async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new ConfigurationError(`Local table ${tableName} did not become ACTIVE within 5 s`);
}
