/**
 * MessageStore on Amazon DynamoDB (single table; docs/ARCHITECTURE.md, "Storage").
 * The global top-k is one Query on the GSI `byRelevance` (ScanIndexForward false, Limit k), whose
 * sort key encodes the relevance score then corpus order. Failed conditional writes become
 * MessageAlreadyRecordedError at this boundary.
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
import { InvalidInputError, MessageAlreadyRecordedError, StorageError } from '../../shared/errors';
import { RELEVANCE_INDEX_NAME, relevanceSortKey } from '../../shared/pool';
import {
  MAX_FAILURE_MESSAGE_CHARS,
  MAX_STORED_WARNINGS,
  type MessagePage,
  type MessageStore,
  type RunCounters,
  type SeekFailure,
  type StoredStep,
} from '../../shared/ports';
import type { AgentRole, Message, RoleUsage } from '../../shared/types';

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
/** Counter attribute prefix of a speculative round's seeking usage: `spec02Calls`, `spec02InputTokens`, … */
const speculativePrefix = (round: number): string => `spec${pad(round, 2)}`;
/** A speculative round's calls counter, capturing the round. */
const SPECULATIVE_CALLS = /^spec(\d{2})Calls$/;
/** BatchWriteItem takes at most 25 requests. */
const BATCH_WRITE_SIZE = 25;
/** BatchGetItem takes at most 100 keys per request. */
const BATCH_GET_MAX = 100;
/** Bounded retries of BatchGetItem's UnprocessedKeys and BatchWriteItem's UnprocessedItems (then an error, never a loop). */
const BATCH_GET_ROUNDS = 8;

export interface DynamoMessageStoreOptions {
  tableName: string;
  /** Run data expires this many days after it is written (DynamoDB TTL attribute `ttl`). */
  retentionDays?: number;
  now?: () => number;
}

/** MessageStore over a DynamoDBDocumentClient (created once per container by the caller). */
export class DynamoMessageStore implements MessageStore {
  private readonly tableName: string;
  private readonly retentionSeconds: number;
  private readonly now: () => number;

  constructor(private readonly client: DynamoDBDocumentClient, options: DynamoMessageStoreOptions) {
    this.tableName = options.tableName;
    this.retentionSeconds = Math.round((options.retentionDays ?? 30) * 86_400);
    this.now = options.now ?? Date.now;
  }

  private ttl(): number {
    return Math.floor(this.now() / 1000) + this.retentionSeconds;
  }

  async putMessage(runId: string, message: Message): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: runPk(runId),
            sk: messageSk(message.round, message.chunkIndex),
            gsi1pk: poolPk(runId),
            gsi1sk: relevanceSortKey(message.score, message.chunkIndex, message.round),
            // Projected into the GSI (projection ALL): topK's round bound filters on it.
            round: message.round,
            ttl: this.ttl(),
            message: JSON.stringify(message),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException || (error as Error).name === 'ConditionalCheckFailedException') {
        throw new MessageAlreadyRecordedError(`Message ${message.id} of run ${runId} is already recorded`, { cause: error });
      }
      throw error;
    }
  }

  async markSought(runId: string, round: number, chunkIndex: number, outcome: 'message' | 'none'): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: runPk(runId), sk: seekSk(round, chunkIndex), outcome, ttl: this.ttl() },
      }),
    );
  }

  async wasSought(runId: string, round: number, chunkIndex: number): Promise<boolean> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: runPk(runId), sk: seekSk(round, chunkIndex) }, ConsistentRead: true }),
    );
    return out.Item !== undefined;
  }

  async soughtChunks(runId: string, round: number): Promise<number[]> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': `SEEK#${pad(round, 2)}#` },
      ProjectionExpression: 'sk',
      ConsistentRead: true,
    });
    return items.map((item) => Number((item.sk as string).split('#')[2])).sort((a, b) => a - b);
  }

  async topK(runId: string, k: number, maxRound: number): Promise<Message[]> {
    if (k <= 0) return [];
    // The round bound is a FilterExpression: DynamoDB applies Limit before the filter, so queryAll
    // pages on until it has k messages or the index partition ends. Messages of a later round
    // exist only while a resumed run replays an earlier round, so the filter rarely drops any.
    const items = await this.queryAll(
      {
        TableName: this.tableName,
        IndexName: RELEVANCE_INDEX_NAME,
        KeyConditionExpression: 'gsi1pk = :p',
        // Items written before the attribute existed have no round: kept (never dropped unseen).
        FilterExpression: 'attribute_not_exists(#round) OR #round <= :maxRound',
        ExpressionAttributeNames: { '#round': 'round' },
        ExpressionAttributeValues: { ':p': poolPk(runId), ':maxRound': maxRound },
        ScanIndexForward: false,
        Limit: k,
      },
      k,
    );
    return items.slice(0, k).map((item) => JSON.parse(item.message as string) as Message);
  }

  async poolSize(runId: string, maxRound: number): Promise<number> {
    if (maxRound < 1) return 0;
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          // Message sort keys are MSG#<round:02>#<chunk:07>: rounds 1..maxRound are one key range.
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
          ExpressionAttributeValues: { ':pk': runPk(runId), ':first': `MSG#${pad(1, 2)}#`, ':last': `MSG#${pad(maxRound, 2)}#~` },
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
    const keys = [...new Set(ids)].map((id) => {
      const match = /^r(\d+)-c(\d+)$/.exec(id);
      return match ? { pk: runPk(runId), sk: messageSk(Number(match[1]), Number(match[2])) } : undefined;
    }).filter((key): key is { pk: string; sk: string } => key !== undefined);
    const found: Message[] = [];
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
      let pending: Array<Record<string, unknown>> = keys.slice(i, i + BATCH_GET_MAX);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt >= BATCH_GET_ROUNDS) throw new StorageError(`BatchGetItem left ${pending.length} keys unprocessed after ${BATCH_GET_ROUNDS} attempts`);
        const out = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[this.tableName] ?? []) found.push(JSON.parse(item.message as string) as Message);
        pending = (out.UnprocessedKeys?.[this.tableName]?.Keys as Array<Record<string, unknown>> | undefined) ?? [];
        if (pending.length > 0) await new Promise((r) => setTimeout(r, Math.random() * 50 * 2 ** attempt));
      }
    }
    const order = new Map(ids.map((id, i) => [id, i]));
    return found.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }

  async addUsage(runId: string, role: AgentRole, usage: RoleUsage, warnings: string[] = [], options: { speculativeRound?: number } = {}): Promise<void> {
    const names: Record<string, string> = { '#ttl': 'ttl' };
    const values: Record<string, unknown> = { ':w': warnings.length, ':ttl': this.ttl() };
    const adds: string[] = [];
    // One attribute per counter: `<prefix>Calls`, `<prefix>InputTokens`, … (prefix = the role, or
    // `spec<round:02>` for the speculative counters of a round), all in one atomic UpdateItem.
    const addRole = (prefix: string, tag: string): void => {
      const fields: Array<[string, number | undefined]> = [
        ['Calls', usage.calls],
        ['InputTokens', usage.inputTokens],
        ['OutputTokens', usage.outputTokens],
        ['ModelMs', usage.modelMs ? Math.round(usage.modelMs) : undefined],
        ['CacheReadInputTokens', usage.cacheReadInputTokens || undefined],
        ['CacheWriteInputTokens', usage.cacheWriteInputTokens || undefined],
      ];
      fields.forEach(([field, value], i) => {
        if (value === undefined) return;
        names[`#${tag}${i}`] = `${prefix}${field}`;
        values[`:${tag}${i}`] = value;
        adds.push(`#${tag}${i} :${tag}${i}`);
      });
    };
    addRole(role, 'r');
    if (options.speculativeRound !== undefined) addRole(speculativePrefix(options.speculativeRound), 's');
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: runPk(runId), sk: COUNTERS_SK },
        UpdateExpression: `ADD ${adds.join(', ')}, warningCount :w SET #ttl = :ttl`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    if (warnings.length === 0) return;
    // Keep the first MAX_STORED_WARNINGS texts; the count above stays exact.
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: runPk(runId), sk: COUNTERS_SK },
          UpdateExpression: 'SET warnings = list_append(if_not_exists(warnings, :empty), :w)',
          ConditionExpression: 'attribute_not_exists(warnings) OR size(warnings) < :max',
          ExpressionAttributeValues: { ':empty': [], ':w': warnings, ':max': MAX_STORED_WARNINGS },
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
    }
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

  async recordSeekFailure(runId: string, round: number, chunkIndex: number, failure: { error: string; message: string }): Promise<void> {
    const message =
      failure.message.length <= MAX_FAILURE_MESSAGE_CHARS ? failure.message : `${Array.from(failure.message).slice(0, MAX_FAILURE_MESSAGE_CHARS - 1).join('')}…`;
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: runPk(runId), sk: failureSk(round, chunkIndex), error: failure.error, message, ttl: this.ttl() },
      }),
    );
  }

  async seekFailures(runId: string, round: number): Promise<SeekFailure[]> {
    const items = await this.queryAll({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': runPk(runId), ':prefix': `FAIL#${pad(round, 2)}#` },
      ConsistentRead: true,
    });
    return items
      .map((item) => ({ chunk: Number((item.sk as string).split('#')[2]), error: String(item.error), message: String(item.message) }))
      .sort((a, b) => a.chunk - b.chunk);
  }

  async getCounters(runId: string): Promise<RunCounters> {
    const out = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: runPk(runId), sk: COUNTERS_SK }, ConsistentRead: true }),
    );
    const item = out.Item ?? {};
    const role = (r: string): RoleUsage => ({
      calls: Number(item[`${r}Calls`] ?? 0),
      inputTokens: Number(item[`${r}InputTokens`] ?? 0),
      outputTokens: Number(item[`${r}OutputTokens`] ?? 0),
      ...(item[`${r}ModelMs`] === undefined ? {} : { modelMs: Number(item[`${r}ModelMs`]) }),
      ...(item[`${r}CacheReadInputTokens`] === undefined ? {} : { cacheReadInputTokens: Number(item[`${r}CacheReadInputTokens`]) }),
      ...(item[`${r}CacheWriteInputTokens`] === undefined ? {} : { cacheWriteInputTokens: Number(item[`${r}CacheWriteInputTokens`]) }),
    });
    const warnings = ((item.warnings as string[] | undefined) ?? []).slice(0, MAX_STORED_WARNINGS);
    const byError: Record<string, number> = {};
    for (const [key, value] of Object.entries(item)) {
      if (key.startsWith(TRANSIENT_BY_ERROR_PREFIX)) byError[key.slice(TRANSIENT_BY_ERROR_PREFIX.length)] = Number(value);
    }
    const speculativeByRound: Record<number, RoleUsage> = {};
    for (const key of Object.keys(item)) {
      const match = SPECULATIVE_CALLS.exec(key);
      if (match) speculativeByRound[Number(match[1])] = role(speculativePrefix(Number(match[1])));
    }
    return {
      usage: { seeker: role('seeker'), reasoner: role('reasoner') },
      speculativeByRound,
      warnings,
      warningCount: Number(item.warningCount ?? 0),
      transientErrors: {
        byRole: { seeker: Number(item.seekerTransientErrors ?? 0), reasoner: Number(item.reasonerTransientErrors ?? 0) },
        byError,
      },
    };
  }

  async putStep(runId: string, step: StoredStep): Promise<void> {
    await this.client.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { pk: runPk(runId), sk: stepSk(step.seq), step: JSON.stringify(step), ttl: this.ttl() },
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
        if (attempt > BATCH_GET_ROUNDS) throw new StorageError(`BatchWriteItem left ${pending.length} deletes of run ${runId} unprocessed after ${BATCH_GET_ROUNDS} attempts`);
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
