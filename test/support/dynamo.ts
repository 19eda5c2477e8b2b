/**
 * A run table on dynalite (127.0.0.1) for tests of the DynamoDB message store: the key schema and
 * the `byRelevance` GSI the adapter uses (lambdas/adapters/dynamo-message-store.ts), as in
 * infra/extagents-stack.ts. `local/engine/stack.ts` creates its table from the synthesized template instead.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoMessageStore } from '../../lambdas/adapters/dynamo-message-store';
import { RELEVANCE_INDEX_NAME } from '../../shared/pool';
import { localClientConfig, startDynalite, waitUntilActive, type LocalDynamo } from '../../local/engine/dynalite';

/** A started dynalite with one run table, its store, and `stop` (closes the client, then the server). */
export interface TestRunTable {
  server: LocalDynamo;
  raw: DynamoDBClient;
  store: DynamoMessageStore;
  stop: () => Promise<void>;
}

/**
 * Start dynalite and create the run table `tableName` on it; reached over HTTP, or in process (as the
 * local stack reaches it) with `inProcess`; its store the table's sole writer (as the local stack's) with `soleWriter`.
 */
export async function startRunTable(tableName: string, options: { inProcess?: boolean; soleWriter?: boolean } = {}): Promise<TestRunTable> {
  const server = await startDynalite();
  const raw = new DynamoDBClient(localClientConfig(server.endpoint, options.inProcess === true ? server.requestHandler : undefined));
  await raw.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: RELEVANCE_INDEX_NAME,
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  // ACTIVE before the first request (dynalite makes it so on a timer: in process, a request can come first).
  await waitUntilActive(raw, tableName);
  const store = new DynamoMessageStore(DynamoDBDocumentClient.from(raw), { tableName, soleWriter: options.soleWriter === true });
  return {
    server,
    raw,
    store,
    stop: async () => {
      raw.destroy();
      await server.stop();
    },
  };
}
