/**
 * MessageStore on Amazon DynamoDB (single table; docs/ARCHITECTURE.md, "Storage").
 * The global top-k is one Query on the GSI `byRelevance` (ScanIndexForward false, Limit k), whose
 * sort key encodes the relevance score then corpus order. Each seeking agent's task is one
 * conditional PutItem (`recordSeek`): its message item, or a seek record when it found nothing, with
 * its usage and warnings on the same item, summed by `getCounters`.
 * Items besides those of docs/ARCHITECTURE.md: `FAIL#<round:02>#<chunk:07>` (the last error of a
 * failed Seek task: `error`, `message`), and on `COUNTERS` the transient model error counts
 * `<role>TransientErrors` and `transient#<ErrorName>` (UpdateItem ADD).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { InvalidInputError, StorageError } from '../../shared/errors';
import { RELEVANCE_INDEX_NAME, relevanceSortKey } from '../../shared/pool';
import {
  MAX_FAILURE_MESSAGE_CHARS,
  MAX_STORED_WARNINGS,
  type MessagePage,
  type MessageStore,
  type RunCounters,
  type SeekRecord,
  type SeekFailure,
  type StoredStep,
} from '../../shared/ports';
import type { AgentRole, Message, RoleUsage } from '../../shared/types';
import { storedUsage, sumRunCounters, USAGE_FIELDS, type UsageField, OPTIONAL_USAGE } from '../../shared/run-counters';

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const runPk = (runId: string): string => `RUN#${runId}`;
const poolPk = (runId: string): string => `POOL#${runId}`;
const messageSk = (round: number, chunk: number): string => `MSG#${pad(round, 2)}#${pad(chunk, 7)}`;
const seekSk = (round: number, chunk: number): string => `SEEK#${pad(round, 2)}#${pad(chunk, 7)}`;
const stepSk = (seq: number): string => `STEP#${pad(seq, 4)}`;
const failureSk = (round: number, chunk: number): string => `FAIL#${pad(round, 2)}#${pad(chunk, 7)}`;
const COUNTERS_SK = 'COUNTERS';
/** Counter attributes of transient model errors: `<role>TransientErrors` and `transient#<ErrorName>`. */
const TRANSIENT_BY_ERROR_PREFIX = 'transient#';
/** BatchWriteItem takes at most 25 requests. */
const BATCH_WRITE_SIZE = 25;
/** BatchGetItem takes at most 100 keys per request. */
const BATCH_GET_MAX = 100;
/** Bounded retries of BatchGetItem's UnprocessedKeys and BatchWriteItem's UnprocessedItems (then an error, never a loop). */
const BATCH_GET_ROUNDS = 8;

// Usage attributes of a seek record are named as RoleUsage's fields (shared/run-counters.ts
// USAGE_FIELDS); on COUNTERS they carry a role prefix.

/**
 * The usage stored on an item: a seek record's plain attributes, or COUNTERS' `<role><Field>` ones.
 * Optional fields are present only when stored.
 */
/** The COUNTERS attribute of a role's usage field, e.g. `seekerInputTokens`. */
function countersAttribute(role: AgentRole, field: string): string {
  return `${role}${field[0].toUpperCase()}${field.slice(1)}`;
}

function usageOf(item: Record<string, unknown>, role?: AgentRole): RoleUsage {
  const name = (field: UsageField): string => (role ? countersAttribute(role, field) : field);
  const usage: RoleUsage = {
    calls: Number(item[name('calls')] ?? 0),
    inputTokens: Number(item[name('inputTokens')] ?? 0),
    outputTokens: Number(item[name('outputTokens')] ?? 0),
  };
  for (const field of OPTIONAL_USAGE) if (item[name(field)] !== undefined) usage[field] = Number(item[name(field)]);
  return usage;
}

/**
 * The coverage bound of a pool read (`MessageStore.topK`): messages recorded at a coverage of at
 * most `maxCovered` chunks, or without one (full runs, older items). Empty without a bound.
 */
function coverageBound(maxCovered: number | undefined): { filter: string; names: Record<string, string>; values: Record<string, number> } {
  if (maxCovered === undefined) return { filter: '', names: {}, values: {} };
  return {
    filter: ' AND (attribute_not_exists(#covered) OR #covered <= :maxCovered)',
    names: { '#covered': 'covered' },
    values: { ':maxCovered': maxCovered },
  };
}

export interface DynamoMessageStoreOptions {
  tableName: string;
  /** Run data expires this many days after it is written (DynamoDB TTL attribute `ttl`). */
  retentionDays?: number;
  now?: () => number;
  /**
   * This store is the only writer of the table's seek records (local mode: the process holds the state
   * directory's lock, or the table is in memory; never on AWS, where many Lambda containers write it).
   * It then keeps what it knows of each round's seek records and failures (`RoundSeekState`): read
   * with one paged Query per (run, round) at the first `seekState` or `recordSeek`, updated by its own
   * writes. A seek then costs one request (the conditional PutItem) instead of three (BatchGetItem,
   * GetItem, PutItem), and two records of one chunk cannot both be written by concurrent tasks (the
   * claim is taken in memory before the write). Issue 27, item 1. Default false.
   */
  soleWriter?: boolean;
}

/**
 * One round's seek records as a sole-writer store knows them: the chunks sought (a seek record or a
 * message, or a record being written) and each chunk's last failure.
 */
interface RoundSeekState {
  sought: Set<number>;
  failures: Map<number, SeekFailure>;
}

/**
 * Rounds whose seek state a sole-writer store keeps (the oldest is dropped first and read again when
 * asked): a run's current round and a few runs beside it in one `serve` process.
 */
const ROUND_STATES_KEPT = 16;

/** MessageStore over a DynamoDBDocumentClient (created once per container by the caller). */
export class DynamoMessageStore implements MessageStore {
  private readonly tableName: string;
  private readonly retentionSeconds: number;
  private readonly now: () => number;
  private readonly soleWriter: boolean;
  /** With `soleWriter`: the seek state of recent rounds, by `roundKey`, oldest first. */
  private readonly roundStates = new Map<string, Promise<RoundSeekState>>();

  constructor(
    private readonly client: DynamoDBDocumentClient,
    options: DynamoMessageStoreOptions,
  ) {
    this.tableName = options.tableName;
    this.retentionSeconds = Math.round((options.retentionDays ?? 30) * 86_400);
    this.now = options.now ?? Date.now;
    this.soleWriter = options.soleWriter ?? false;
  }

  /** The seek state of (run, round) for a sole-writer store: kept, or read with one Query per key prefix. */
  private roundState(runId: string, round: number): Promise<RoundSeekState> {
    const key = roundKey(runId, round);
    const kept = this.roundStates.get(key);
    if (kept !== undefined) return kept;
    const loading = this.loadRoundState(runId, round);
    // A failed read is not kept: the next call reads again.
    loading.catch(() => this.forgetRound(key, loading));
    this.roundStates.set(key, loading);
    if (this.roundStates.size > ROUND_STATES_KEPT) this.roundStates.delete(this.roundStates.keys().next().value as string);
    return loading;
  }

  private async loadRoundState(runId: string, round: number): Promise<RoundSeekState> {
    const [sought, failures] = await Promise.all([this.soughtChunks(runId, round), this.failureItems(runId, round)]);
    return { sought: new Set(sought), failures: new Map(failures.map((item) => [chunkOf(item), failureOf(chunkOf(item), item)])) };
  }

  /** Drop a round's kept state (only `state`, when given): after a write whose outcome is unknown. */
  private forgetRound(key: string, state?: Promise<RoundSeekState>): void {
    if (state === undefined || this.roundStates.get(key) === state) this.roundStates.delete(key);
  }

  private ttl(): number {
    return Math.floor(this.now() / 1000) + this.retentionSeconds;
  }

  /**
   * One conditional PutItem per sought chunk: a message item (`MSG#…`, in the GSI) when the agent
   * found evidence, else a seek record (`SEEK#…`); either carries the task's usage and warnings.
   * The condition is that neither key of (run, round, chunk) exists yet — the other key's absence is
   * checked first (a duplicated task is rare; a read is cheaper than a second write per chunk); a
   * sole-writer store (`DynamoMessageStoreOptions.soleWriter`) checks its kept round state instead and
   * claims the chunk in memory before the write, so only the PutItem is sent.
   * @throws InvalidInputError when the message is of another round or chunk; the SDK's error of a failed write.
   */
  async recordSeek(runId: string, record: SeekRecord): Promise<'recorded' | 'already-recorded'> {
    const { round, chunkIndex, message } = record;
    if (message && (message.round !== round || message.chunkIndex !== chunkIndex)) {
      throw new InvalidInputError(`Message ${message.id} does not belong to round ${round}, chunk ${chunkIndex}`);
    }
    if (!this.soleWriter) {
      const other = message ? seekSk(round, chunkIndex) : messageSk(round, chunkIndex);
      const exists = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: { pk: runPk(runId), sk: other }, ProjectionExpression: 'sk', ConsistentRead: true }),
      );
      if (exists.Item) return 'already-recorded';
      return this.putSeekRecord(runId, record);
    }
    // Sole writer: the kept state says whether either key exists; the claim is taken before the write.
    const key = roundKey(runId, round);
    const kept = this.roundState(runId, round);
    const state = await kept;
    if (state.sought.has(chunkIndex)) return 'already-recorded';
    state.sought.add(chunkIndex);
    try {
      return await this.putSeekRecord(runId, record);
    } catch (error) {
      // Not written, or not known to be: read the round again when next asked.
      state.sought.delete(chunkIndex);
      this.forgetRound(key, kept);
      throw error;
    }
  }

  /** The conditional PutItem of `recordSeek`: 'already-recorded' when its key exists. */
  private async putSeekRecord(runId: string, record: SeekRecord): Promise<'recorded' | 'already-recorded'> {
    const { round, chunkIndex, message, usage } = record;
    const warnings = record.warnings.slice(0, MAX_STORED_WARNINGS);
    const item: Record<string, unknown> = {
      pk: runPk(runId),
      sk: message ? messageSk(round, chunkIndex) : seekSk(round, chunkIndex),
      ...(message && {
        gsi1pk: poolPk(runId),
        gsi1sk: relevanceSortKey(message.score, message.chunkIndex, message.round),
        // Projected into the GSI (projection ALL): topK's round bound filters on it.
        round: message.round,
        message: JSON.stringify(message),
        // Projected into the GSI too: the coverage bound of topK and poolSize (grow runs).
        ...(record.covered !== undefined && { covered: record.covered }),
      }),
      ...(message ? {} : { outcome: 'none' }),
      ...storedUsage(usage),
      ...(record.warnings.length > 0 && { warnings, warningCount: record.warnings.length }),
      ttl: this.ttl(),
    };
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
      return 'recorded';
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException || (error as Error).name === 'ConditionalCheckFailedException') return 'already-recorded';
      throw error;
    }
  }

  async soughtChunks(runId: string, round: number): Promise<number[]> {
    return this.chunksRecorded(runId, [`SEEK#${pad(round, 2)}#`, `MSG#${pad(round, 2)}#`]);
  }

  async messageChunks(runId: string, round: number): Promise<number[]> {
    return this.chunksRecorded(runId, [`MSG#${pad(round, 2)}#`]);
  }

  /** The chunk indexes of the run's items under these sort-key prefixes (`<kind>#<round>#<chunk>`), ascending. */
  private async chunksRecorded(runId: string, prefixes: string[]): Promise<number[]> {
    const chunks = new Set<number>();
    for (const prefix of prefixes) {
      const items = await this.queryAll({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': prefix },
        ProjectionExpression: 'sk',
        ConsistentRead: true,
      });
      for (const item of items) chunks.add(Number((item.sk as string).split('#')[2]));
    }
    return [...chunks].sort((a, b) => a - b);
  }

  async topK(runId: string, k: number, maxRound: number, maxCovered?: number): Promise<Message[]> {
    if (k <= 0) return [];
    const bound = coverageBound(maxCovered);
    // The round bound is a FilterExpression: DynamoDB applies Limit before the filter, so queryAll
    // pages on until it has k messages or the index partition ends. Messages of a later round
    // exist only while a resumed run replays an earlier round, so the filter rarely drops any.
    const items = await this.queryAll(
      {
        TableName: this.tableName,
        IndexName: RELEVANCE_INDEX_NAME,
        KeyConditionExpression: 'gsi1pk = :p',
        // Items written before the attribute existed have no round: kept (never dropped unseen).
        FilterExpression: `(attribute_not_exists(#round) OR #round <= :maxRound)${bound.filter}`,
        ExpressionAttributeNames: { '#round': 'round', ...bound.names },
        ExpressionAttributeValues: { ':p': poolPk(runId), ':maxRound': maxRound, ...bound.values },
        ScanIndexForward: false,
        Limit: k,
      },
      k,
    );
    return items.slice(0, k).map((item) => JSON.parse(item.message as string) as Message);
  }

  async poolSize(runId: string, maxRound: number, maxCovered?: number): Promise<number> {
    if (maxRound < 1) return 0;
    const bound = coverageBound(maxCovered);
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          // Message sort keys are MSG#<round:02>#<chunk:07>: rounds 1..maxRound are one key range.
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
          ExpressionAttributeValues: { ':pk': runPk(runId), ':first': `MSG#${pad(1, 2)}#`, ':last': `MSG#${pad(maxRound, 2)}#~`, ...bound.values },
          // Count counts the items the filter keeps (paging on LastEvaluatedKey as before).
          ...(bound.filter !== '' && { FilterExpression: bound.filter.replace(/^ AND /, ''), ExpressionAttributeNames: bound.names }),
          Select: 'COUNT',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      count += out.Count ?? 0;
      start = out.LastEvaluatedKey;
    } while (start);
    return count;
  }

  async getMessages(runId: string, ids: string[]): Promise<Message[]> {
    const keys = [...new Set(ids)]
      .map((id) => {
        const match = /^r(\d+)-c(\d+)$/.exec(id);
        return match ? { pk: runPk(runId), sk: messageSk(Number(match[1]), Number(match[2])) } : undefined;
      })
      .filter((key): key is { pk: string; sk: string } => key !== undefined);
    const found = (await this.batchGet(keys)).map((item) => JSON.parse(item.message as string) as Message);
    const order = new Map(ids.map((id, i) => [id, i]));
    return found.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }

  /**
   * One BatchGetItem round trip (per 100 keys; consistent reads) for the three items of a chunk's
   * seek state: its seek record, its message (either makes it sought) and its failure record.
   */
  async seekState(runId: string, round: number, chunkIndex: number): Promise<{ sought: boolean; lastFailure?: SeekFailure }> {
    if (this.soleWriter) {
      const state = await this.roundState(runId, round);
      const failure = state.failures.get(chunkIndex);
      return { sought: state.sought.has(chunkIndex), ...(failure !== undefined && { lastFailure: failure }) };
    }
    const keys = [seekSk(round, chunkIndex), messageSk(round, chunkIndex), failureSk(round, chunkIndex)].map((sk) => ({ pk: runPk(runId), sk }));
    const items = await this.batchGet(keys);
    const failureKey = failureSk(round, chunkIndex);
    const failure = items.find((item) => item.sk === failureKey);
    return {
      sought: items.some((item) => item.sk !== failureKey),
      ...(failure !== undefined && { lastFailure: failureOf(chunkIndex, failure) }),
    };
  }

  /** BatchGetItem of `keys` (consistent reads), 100 keys a request, UnprocessedKeys retried a bounded number of times. */
  private async batchGet(keys: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
    const found: Array<Record<string, unknown>> = [];
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
      let pending: Array<Record<string, unknown>> = keys.slice(i, i + BATCH_GET_MAX);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt >= BATCH_GET_ROUNDS) throw new StorageError(`BatchGetItem left ${pending.length} keys unprocessed after ${BATCH_GET_ROUNDS} attempts`);
        const out = await this.client.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } } }));
        found.push(...((out.Responses?.[this.tableName] ?? []) as Array<Record<string, unknown>>));
        pending = (out.UnprocessedKeys?.[this.tableName]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
        if (pending.length > 0) await new Promise((r) => setTimeout(r, Math.random() * 50 * 2 ** attempt));
      }
    }
    return found;
  }

  async countTransientError(runId: string, role: AgentRole, errorName: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: runPk(runId), sk: COUNTERS_SK },
        UpdateExpression: 'ADD #role :one, #error :one SET #ttl = :ttl',
        ExpressionAttributeNames: { '#role': `${role}TransientErrors`, '#error': `${TRANSIENT_BY_ERROR_PREFIX}${errorName}`, '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':one': 1, ':ttl': this.ttl() },
      }),
    );
  }

  async recordSeekFailure(runId: string, round: number, chunkIndex: number, failure: { error: string; message: string; at?: number }): Promise<void> {
    const message =
      failure.message.length <= MAX_FAILURE_MESSAGE_CHARS
        ? failure.message
        : `${Array.from(failure.message)
            .slice(0, MAX_FAILURE_MESSAGE_CHARS - 1)
            .join('')}…`;
    const item = { pk: runPk(runId), sk: failureSk(round, chunkIndex), error: failure.error, message, ...(failure.at !== undefined && { at: failure.at }) };
    const key = roundKey(runId, round);
    const kept = this.soleWriter ? this.roundStates.get(key) : undefined;
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...item, ttl: this.ttl() } }));
    } catch (error) {
      if (kept !== undefined) this.forgetRound(key, kept);
      throw error;
    }
    // A kept round learns of the failure (a round not kept reads it when next asked).
    if (kept !== undefined) (await kept).failures.set(chunkIndex, failureOf(chunkIndex, item));
  }

  async lastSeekFailure(runId: string, round: number, chunkIndex: number): Promise<SeekFailure | undefined> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: runPk(runId), sk: failureSk(round, chunkIndex) }, ConsistentRead: true }),
    );
    return out.Item === undefined ? undefined : failureOf(chunkIndex, out.Item);
  }

  async addThrottleWait(runId: string, ms: number): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: runPk(runId), sk: COUNTERS_SK },
        UpdateExpression: 'ADD #wait :ms SET #ttl = :ttl',
        ExpressionAttributeNames: { '#wait': 'seekerThrottleWaitMs', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':ms': Math.max(0, Math.round(ms)), ':ttl': this.ttl() },
      }),
    );
  }

  async seekFailures(runId: string, round: number): Promise<SeekFailure[]> {
    const items = await this.failureItems(runId, round);
    return items.map((item) => ({ chunk: chunkOf(item), error: String(item.error), message: String(item.message) })).sort((a, b) => a.chunk - b.chunk);
  }

  /** The failure record items of a round (one paged Query, consistent reads). */
  private failureItems(runId: string, round: number): Promise<Array<Record<string, unknown>>> {
    return this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': `FAIL#${pad(round, 2)}#` },
      ConsistentRead: true,
    });
  }

  /**
   * The COUNTERS item (transient errors, throttle waits; the reasoning agent's usage of runs recorded
   * before KAR steps carried it) plus the usage and warnings of every seek record and KAR step,
   * summed from one paged Query over the `MSG#`..`STEP#` keys of the run (projected to the counted
   * attributes): O(chunks × rounds) small reads at Finalize, instead of one contended UpdateItem per
   * seeking agent.
   */
  async getCounters(runId: string): Promise<RunCounters> {
    const [out, records] = await Promise.all([
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk: runPk(runId), sk: COUNTERS_SK }, ConsistentRead: true })),
      this.queryAll({
        TableName: this.tableName,
        // Sort keys of the run: COUNTERS < FAIL# < MSG# < SEEK# < STEP#, so this range is the seek
        // records and the KAR steps.
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
        ExpressionAttributeValues: { ':pk': runPk(runId), ':first': 'MSG#', ':last': 'STEP#~' },
        // Attribute names through placeholders: none may collide with a DynamoDB reserved word.
        ProjectionExpression: ['sk', 'warnings', 'warningCount', ...USAGE_FIELDS].map((_, i) => `#a${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(['sk', 'warnings', 'warningCount', ...USAGE_FIELDS].map((name, i) => [`#a${i}`, name])),
        ConsistentRead: true,
      }),
    ]);
    const item = out.Item ?? {};
    // The records' usage and warnings, summed by the rules every store follows (shared/run-counters.ts).
    const counted = (record: Record<string, unknown>) => ({
      usage: usageOf(record),
      warnings: (record.warnings as string[] | undefined) ?? [],
      warningCount: Number(record.warningCount ?? 0),
    });
    const seeks = records
      .filter((record) => !(record.sk as string).startsWith('STEP#'))
      .map((record) => ({ ...counted(record), round: Number((record.sk as string).split('#')[1]), chunkIndex: chunkOf(record) }));
    const steps = records
      .filter((record) => (record.sk as string).startsWith('STEP#'))
      .map((record) => ({ ...counted(record), seq: Number((record.sk as string).split('#')[1]) }));
    const byError: Record<string, number> = {};
    for (const [key, value] of Object.entries(item)) {
      if (key.startsWith(TRANSIENT_BY_ERROR_PREFIX)) byError[key.slice(TRANSIENT_BY_ERROR_PREFIX.length)] = Number(value);
    }
    return sumRunCounters(seeks, steps, {
      usage: { seeker: usageOf(item, 'seeker'), reasoner: usageOf(item, 'reasoner') },
      warnings: (item.warnings as string[] | undefined) ?? [],
      warningCount: Number(item.warningCount ?? 0),
      transientErrors: {
        byRole: { seeker: Number(item.seekerTransientErrors ?? 0), reasoner: Number(item.reasonerTransientErrors ?? 0) },
        byError,
      },
      throttleWaitMs: Number(item.seekerThrottleWaitMs ?? 0),
    });
  }

  async putStep(runId: string, step: StoredStep, made?: { usage: RoleUsage; warnings: string[] }): Promise<void> {
    const warnings = made?.warnings ?? [];
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: {
          pk: runPk(runId),
          sk: stepSk(step.seq),
          step: JSON.stringify(step),
          // The reasoning agent's usage and warnings of this step, summed by getCounters (as a seek record's).
          ...(made !== undefined && storedUsage(made.usage)),
          ...(warnings.length > 0 && { warnings: warnings.slice(0, MAX_STORED_WARNINGS), warningCount: warnings.length }),
          ttl: this.ttl(),
        },
      }),
    );
  }

  async getSteps(runId: string): Promise<StoredStep[]> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': 'STEP#' },
      ConsistentRead: true,
    });
    return items.map((item) => JSON.parse(item.step as string) as StoredStep).sort((a, b) => a.seq - b.seq);
  }

  /**
   * One page of the pool in pool order: a descending Query on the GSI `byRelevance`, continued
   * below the cursor (`gsi1sk < after`; the cursor is the last returned message's `gsi1sk`, unique
   * per run), with `begins_with(sk, "MSG#<round>#")` as a filter for one round. Reads limit + 1
   * messages to know whether a next page exists. GSI reads are eventually consistent.
   * @throws InvalidInputError when `after` is not a cursor this method returned.
   */
  async listMessages(runId: string, page: { round?: number; limit: number; after?: string }): Promise<MessagePage> {
    if (page.after !== undefined && !/^\d{3}#\d{7}#\d{2}$/.test(page.after)) {
      throw new InvalidInputError(`Invalid message cursor ${JSON.stringify(page.after)}`);
    }
    const wanted = page.limit + 1;
    const items = await this.queryAll(
      {
        TableName: this.tableName,
        IndexName: RELEVANCE_INDEX_NAME,
        KeyConditionExpression: page.after === undefined ? 'gsi1pk = :p' : 'gsi1pk = :p AND gsi1sk < :after',
        ExpressionAttributeValues: {
          ':p': poolPk(runId),
          ...(page.after !== undefined && { ':after': page.after }),
          ...(page.round !== undefined && { ':r': `MSG#${pad(page.round, 2)}#` }),
        },
        ...(page.round !== undefined && { FilterExpression: 'begins_with(sk, :r)' }),
        ScanIndexForward: false,
        // A filtered page may hold few matches: read more per request then.
        Limit: page.round === undefined ? wanted : Math.max(wanted, 200),
      },
      wanted,
    );
    const taken = items.slice(0, page.limit);
    return {
      messages: taken.map((item) => JSON.parse(item.message as string) as Message),
      ...(items.length > page.limit && { next: taken[taken.length - 1].gsi1sk as string }),
    };
  }

  /**
   * Delete every item of a run (messages, seek records and failures, counters, KAR steps): the local
   * `extagents runs rm`; in AWS the items expire with their TTL. BatchWriteItem of 25 deletes per
   * request, its UnprocessedItems retried at most BATCH_GET_ROUNDS times (then a StorageError).
   * @returns the number of items deleted.
   */
  async deleteRun(runId: string): Promise<number> {
    try {
      return await this.deleteRunItems(runId);
    } finally {
      // Whatever was kept of the run (or read while its items were deleted) is read again if asked.
      for (const key of this.roundStates.keys()) if (key.startsWith(roundKeyPrefix(runId))) this.roundStates.delete(key);
    }
  }

  private async deleteRunItems(runId: string): Promise<number> {
    const keys = (
      await this.queryAll({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': runPk(runId) },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
      })
    ).map((item) => ({ pk: item.pk, sk: item.sk }));
    for (let i = 0; i < keys.length; i += BATCH_WRITE_SIZE) {
      let pending = keys.slice(i, i + BATCH_WRITE_SIZE).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 1; pending.length > 0; attempt++) {
        if (attempt > BATCH_GET_ROUNDS)
          throw new StorageError(`BatchWriteItem left ${pending.length} deletes of run ${runId} unprocessed after ${BATCH_GET_ROUNDS} attempts`);
        const out = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }));
        pending = (out.UnprocessedItems?.[this.tableName] as typeof pending | undefined) ?? [];
      }
    }
    return keys.length;
  }

  /** Query every page (or until `max` items). */
  private async queryAll(input: QueryCommandInput, max = Infinity): Promise<Array<Record<string, unknown>>> {
    const items: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.client.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      items.push(...((out.Items ?? []) as Array<Record<string, unknown>>));
      start = out.LastEvaluatedKey;
    } while (start && items.length < max);
    return items;
  }
}

/** The keys of a run's kept round states begin so (run ids hold no NUL). */
const roundKeyPrefix = (runId: string): string => `${runId}\u0000`;

/** The key of a round's kept seek state. */
const roundKey = (runId: string, round: number): string => `${roundKeyPrefix(runId)}${round}`;

/** The chunk index of a `<kind>#<round>#<chunk>` item. */
const chunkOf = (item: Record<string, unknown>): number => Number((item.sk as string).split('#')[2]);

/** A failure record item as the port's `SeekFailure`. */
function failureOf(chunkIndex: number, item: Record<string, unknown>): SeekFailure {
  return { chunk: chunkIndex, error: String(item.error), message: String(item.message), ...(typeof item.at === 'number' && { at: item.at }) };
}
