/**
 * DynamoDB for the local run: dynalite (an in-memory DynamoDB API server on LevelDB) on 127.0.0.1,
 * reached through the real AWS SDK, with the tables of the synthesized template, so the local table
 * is the cloud table (key schema, attribute definitions, GSIs).
 *
 * Verified against dynalite 4 for this project: GSI Query with Limit and ScanIndexForward false,
 * BatchWriteItem, ConditionExpression and UpdateItem ADD work; TransactWriteItems, PartiQL and
 * UpdateTimeToLive do not (so TTL and point-in-time recovery of the template are skipped).
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  type CreateTableCommandInput,
  DynamoDBClient,
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
  /**
   * The SDK's request handler that hands each request to this dynalite in the same process, without
   * a socket or HTTP parsing (`inProcessHandler`); for the SDK client's `requestHandler`.
   */
  requestHandler: InProcessHandler;
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
    requestHandler: inProcessHandler(server),
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

/** The SDK request as `inProcessHandler` reads it (a subset of @smithy/protocol-http's `HttpRequest`). */
interface SdkRequest {
  method: string;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** An SDK request handler (@smithy/protocol-http's `HttpHandler`, the members the SDK calls). */
export interface InProcessHandler {
  handle(request: SdkRequest): Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Readable } }>;
  updateHttpClientConfig(): void;
  httpHandlerConfigs(): Record<string, never>;
  destroy(): void;
}

/**
 * An SDK request handler that gives each request to `server`'s request listener (dynalite's HTTP
 * handler) in this process: the request as a readable body with its headers, the reply collected from
 * what the listener writes. The SDK's serialization, signing, retries and parsing run as over HTTP,
 * and dynalite reads the same request (method, path, headers, body) and checks it the same way; only
 * the socket, the HTTP framing and parsing and the agent are skipped (about a fifth of a warm local
 * run's CPU time went to them, issue 27 item 1). The adapters' own tests run over HTTP
 * and over this handler (test/integration/dynamo-message-store.test.ts, test/support/dynamo.ts).
 */
export function inProcessHandler(server: Server): InProcessHandler {
  const listener = server.listeners('request')[0] as RequestListener | undefined;
  if (listener === undefined) throw new ConfigurationError('dynalite has no request listener');
  return {
    handle: (request) =>
      new Promise((resolve, reject) => {
        const query = Object.entries(request.query ?? {})
          .flatMap(([key, value]) => (value === null ? [key] : [value].flat().map((v) => `${encodeURIComponent(key)}=${encodeURIComponent(v)}`)))
          .join('&');
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
        const req = Object.assign(new EventEmitter(), { method: request.method, url: query === '' ? request.path : `${request.path}?${query}`, headers });
        const replyHeaders: Record<string, string> = {};
        const res = {
          statusCode: 200,
          contentType: undefined as string | undefined,
          setHeader: (name: string, value: string | number) => {
            replyHeaders[name.toLowerCase()] = String(value);
          },
          end: (body?: string) => {
            resolve({
              response: { statusCode: res.statusCode, headers: replyHeaders, body: Readable.from(body === undefined ? [] : [Buffer.from(body, 'utf8')]) },
            });
          },
        };
        try {
          listener(req as unknown as IncomingMessage, res as unknown as ServerResponse);
        } catch (error) {
          reject(error);
          return;
        }
        // The body after the listener has attached its handlers, as a socket would deliver it.
        const body = request.body;
        // (A Uint8Array's bytes by their buffer: Buffer.from(view) would call the SDK's body's `valueOf`, a string.)
        if (body !== undefined && body.length > 0)
          req.emit('data', typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
        req.emit('end');
      }),
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
    destroy: () => undefined,
  };
}

/**
 * Configuration of an SDK client for a local endpoint: region `us-east-1` and dummy static
 * credentials (the SDK signs every request; dynalite does not check the signature), so no real
 * credentials are ever looked up; with `requestHandler` (`LocalDynamo.requestHandler`), its requests
 * reach dynalite in this process instead of over HTTP.
 */
export function localClientConfig(endpoint: string, requestHandler?: InProcessHandler): DynamoDBClientConfig {
  return {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    ...(requestHandler !== undefined && { requestHandler: requestHandler as unknown as DynamoDBClientConfig['requestHandler'] }),
  };
}

/**
 * A DynamoDB client for a local endpoint ({@link localClientConfig}), made without the AWS SDK's
 * Node-version support warning (8 lines on stderr under Node < 22): the client only reaches the
 * stand-in on 127.0.0.1, so the warning about future SDK releases says nothing about this run, yet
 * every library call and command printed it. The SDK reads `AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED`
 * when a client is constructed, once per process: when the variable is unset it is set to `true`
 * for this construction only and removed again; a value the user set (e.g. `false`, to see the
 * warning) is left as it is. The SDK keeps one "warned" flag per process, so a client the caller
 * makes later does not warn either.
 */
export function localDynamoClient(endpoint: string, requestHandler?: InProcessHandler): DynamoDBClient {
  const variable = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
  const unset = process.env[variable] === undefined;
  if (unset) process.env[variable] = 'true';
  try {
    return new DynamoDBClient(localClientConfig(endpoint, requestHandler));
  } finally {
    if (unset) delete process.env[variable];
  }
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
export async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new ConfigurationError(`Local table ${tableName} did not become ACTIVE within 5 s`);
}
