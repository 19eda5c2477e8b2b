/**
 * The DynamoDB message store against dynalite on 127.0.0.1 (the real SDK): the pool order through the
 * GSI, conditional writes, counters, steps.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoMessageStore } from '../../lambdas/adapters/dynamo-message-store';
import { startRunTable, type TestRunTable } from '../support/dynamo';
import { describeMessageStoreConformance, message, NO_USAGE, put } from '../support/message-store-conformance';

const TABLE = 'messages';

// Over HTTP, as the adapter reaches DynamoDB in the cloud, and in process, as the local stack reaches
// dynalite (local/engine/dynalite.ts `inProcessHandler`): the same SDK, the same requests, the same answers.
// And in process as the table's sole writer (the local stack's store): every behaviour the same.
describe.each(['over HTTP', 'in process', 'in process, sole writer'] as const)('DynamoMessageStore against dynalite, %s', (transport) => {
  let table: TestRunTable;

  beforeAll(async () => {
    table = await startRunTable(TABLE, { inProcess: transport !== 'over HTTP', soleWriter: transport === 'in process, sole writer' });
  });

  afterAll(async () => {
    await table.stop();
  });

  describeMessageStoreConformance(() => table.store);

  it('records a seek in one write, with or without a message (no shared counter item)', async () => {
    // Arrange: a store whose client logs each command it sends
    const sent: string[] = [];
    const client = DynamoDBDocumentClient.from(table.raw);
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    (client as unknown as { send: (command: { constructor: { name: string } }) => Promise<unknown> }).send = (command) => {
      sent.push(command.constructor.name);
      return send(command);
    };
    const counted = new DynamoMessageStore(client, { tableName: TABLE });
    const usage = { calls: 2, inputTokens: 900, outputTokens: 40 };

    // Act
    await counted.recordSeek('writes', { round: 1, chunkIndex: 0, message: message(1, 0, 70), usage, warnings: ['w'] });
    const withMessage = sent.splice(0);
    await counted.recordSeek('writes', { round: 1, chunkIndex: 1, usage, warnings: ['w'] });
    const without = sent.splice(0);

    // Assert: one PutItem each (and one consistent read); no UpdateItem of COUNTERS
    for (const commands of [withMessage, without]) {
      expect(commands.filter((name) => name !== 'GetCommand')).toEqual(['PutCommand']);
    }
    expect((await counted.getCounters('writes')).usage.seeker).toEqual({ calls: 4, inputTokens: 1800, outputTokens: 80 });
  });
});

describe('DynamoMessageStore as the sole writer of its table (local mode)', () => {
  let table: TestRunTable;

  beforeAll(async () => {
    table = await startRunTable(TABLE, { inProcess: true });
  });

  afterAll(async () => {
    await table.stop();
  });

  /** A store (sole writer unless told) whose client logs each command it sends, and fails the PutItems `failPuts` says. */
  function loggedStore(failPuts: (sk: string) => boolean = () => false, soleWriter = true): { store: DynamoMessageStore; sent: string[] } {
    const sent: string[] = [];
    const client = DynamoDBDocumentClient.from(table.raw);
    const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
    (client as unknown as { send: (command: { constructor: { name: string }; input: { Item?: { sk?: string } } }) => Promise<unknown> }).send = (command) => {
      sent.push(command.constructor.name);
      if (command.constructor.name === 'PutCommand' && failPuts(String(command.input.Item?.sk))) return Promise.reject(new Error('connection reset'));
      return send(command);
    };
    return { store: new DynamoMessageStore(client, { tableName: TABLE, soleWriter }), sent };
  }

  it('costs one PutItem per seek after one read of the round, where a store that is not the sole writer sends three requests', async () => {
    // Arrange: a round of 20 chunks, each task asking its state then recording (as seekChunk does)
    const { store, sent } = loggedStore();
    const seek = async (s: DynamoMessageStore, run: string, chunk: number) => {
      expect((await s.seekState(run, 1, chunk)).sought).toBe(false);
      return chunk % 4 === 0 ? put(s, run, message(1, chunk, 50)) : s.recordSeek(run, { round: 1, chunkIndex: chunk, usage: NO_USAGE, warnings: [] });
    };
    // Act
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, chunk) => seek(store, 'sole-costs', chunk)));
    // Assert
    expect(outcomes).toEqual(Array(20).fill('recorded'));
    expect(sent.filter((name) => name === 'PutCommand')).toHaveLength(20);
    expect(sent.filter((name) => name !== 'PutCommand').sort()).toEqual(['QueryCommand', 'QueryCommand', 'QueryCommand']); // SEEK#, MSG#, FAIL# of round 1
    expect(await store.soughtChunks('sole-costs', 1)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const plain = loggedStore(undefined, false);
    await seek(plain.store, 'plain-costs', 1);
    expect(plain.sent.sort()).toEqual(['BatchGetCommand', 'GetCommand', 'PutCommand']);
  });

  it('writes one record of a chunk that two tasks record at once, message or not', async () => {
    const { store } = loggedStore();
    const outcomes = await Promise.all([
      put(store, 'sole-race', message(1, 3, 70)),
      store.recordSeek('sole-race', { round: 1, chunkIndex: 3, usage: { calls: 1, inputTokens: 5, outputTokens: 1 }, warnings: [] }),
    ]);
    expect(outcomes.sort()).toEqual(['already-recorded', 'recorded']);
    expect(await store.soughtChunks('sole-race', 1)).toEqual([3]);
    // Exactly one record in the table: the message, or the seek record, not both
    const fresh = new DynamoMessageStore(DynamoDBDocumentClient.from(table.raw), { tableName: TABLE });
    expect((await fresh.poolSize('sole-race', 1)) + (await fresh.getCounters('sole-race')).usage.seeker.calls).toBe(1);
  });

  it('knows what a process before it wrote (a resumed run), and its own failures', async () => {
    const { store: before } = loggedStore();
    await put(before, 'sole-resume', message(1, 2, 60));
    await before.recordSeekFailure('sole-resume', 1, 5, { error: 'ModelThrottledError', message: 'slow down', at: 7 });
    const { store: after } = loggedStore();
    expect(await after.seekState('sole-resume', 1, 2)).toEqual({ sought: true });
    expect(await after.seekState('sole-resume', 1, 5)).toEqual({
      sought: false,
      lastFailure: { chunk: 5, error: 'ModelThrottledError', message: 'slow down', at: 7 },
    });
    // Its own failure, after its round was read, is known without reading again
    await after.recordSeekFailure('sole-resume', 1, 6, { error: 'ModelError', message: 'bad reply' });
    expect(await after.seekState('sole-resume', 1, 6)).toEqual({ sought: false, lastFailure: { chunk: 6, error: 'ModelError', message: 'bad reply' } });
    expect(await after.recordSeek('sole-resume', { round: 1, chunkIndex: 2, usage: NO_USAGE, warnings: [] })).toBe('already-recorded');
  });

  it('does not count a chunk as sought when its write failed, and forgets a deleted run', async () => {
    let fail = true;
    const { store } = loggedStore((sk) => fail && sk === 'SEEK#01#0000004');
    await expect(store.recordSeek('sole-fail', { round: 1, chunkIndex: 4, usage: NO_USAGE, warnings: [] })).rejects.toThrow('connection reset');
    expect((await store.seekState('sole-fail', 1, 4)).sought).toBe(false);
    fail = false;
    expect(await store.recordSeek('sole-fail', { round: 1, chunkIndex: 4, usage: NO_USAGE, warnings: [] })).toBe('recorded');
    expect((await store.seekState('sole-fail', 1, 4)).sought).toBe(true);
    expect(await store.deleteRun('sole-fail')).toBe(1);
    expect((await store.seekState('sole-fail', 1, 4)).sought).toBe(false);
    expect(await store.recordSeek('sole-fail', { round: 1, chunkIndex: 4, usage: NO_USAGE, warnings: [] })).toBe('recorded');
  });
});
