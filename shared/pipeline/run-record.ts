/**
 * The run record (`runs/<runId>/run.json`): what Prepare decided, read by every later task.
 * Read through a small per-container cache: a Seek Lambda container serves many chunks of one run.
 */
import type { RunOptions } from '../config';
import type { BlobStore } from '../ports';
import type { SeekingPlan } from '../quota';
import type { AgentRole, DocumentSummary, RunEstimate, SkippedDocument } from '../types';
import { followUpKey, runRecordKey, seekQueryKey, syncKey } from './layout';
import { NotFoundError } from '../errors';
import type { Message } from '../types';

export interface RunRecord {
  runId: string;
  question: string;
  options: RunOptions;
  /** Documents that were chunked, with their length in characters and, for PDF, HTML, Markdown and DOCX, their locations. */
  documents: DocumentSummary[];
  skipped: SkippedDocument[];
  chunks: number;
  /** Total tokens of all chunks. */
  tokens: number;
  tokenizer: string;
  /** ISO-8601 time of Prepare. */
  createdAt: string;
  /**
   * The chunk cache entry of this corpus and `chunkTokens` (shared/pipeline/ingest.ts): `hit` when
   * Prepare found it made (nothing chunked). Absent in records written before the cache.
   */
  chunkCache?: { key: string; hit: boolean };
  /**
   * The chunk cache key whose chunk objects this run reads in place (`cache/chunks/<key>/chunks/…`,
   * through `runChunkKey`); absent in records written before chunks were read in place, whose chunks
   * are in the run's own folder.
   */
  chunksFrom?: string;
  /** The corpus prefix the run read (absent when it was given keys). */
  corpusPrefix?: string;
  /** What the run costs at most (shared/cost.ts), computed by Prepare before any model call. Absent in older records. */
  estimate?: RunEstimate;
  /**
   * The seeking Map's MaxConcurrency (the state's `config.concurrency`) and how it was derived from
   * the quota (shared/quota.ts), with the pre-flight warnings. Absent in older records.
   */
  concurrency?: SeekingPlan;
  /**
   * The model of each role that the run was prepared for, as the price table names it (`extractive`,
   * `bedrock:<id>`, `openai:<model>`, `llama:<file>`; `ModelPricing.models`). Absent in older records
   * and where Prepare was not told its model.
   */
  models?: Record<AgentRole, string>;
}

/**
 * What the seeking agents of one round of a survey run read besides their chunk
 * (`runs/<runId>/queries/round-<r>.json`, see `seekQueryKey`).
 */
export interface SeekQuery {
  /** The query: the survey topic (round 1) or a section's heading and scope. */
  query: string;
  /** L of the run's chunks (tokens): named in the advice of a context overflow. */
  chunkTokens: number;
}

const MAX_CACHED = 16;
const records = new Map<string, RunRecord>();
const syncSnapshots = new Map<string, Message[]>();

function remember<T>(cache: Map<string, T>, key: string, value: T): T {
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return value;
}

/**
 * Load a run record (cached per container; a record never changes after Prepare).
 * @throws NotFoundError (from the BlobStore) when the run was never prepared.
 */
export async function loadRunRecord(blobs: BlobStore, runId: string): Promise<RunRecord> {
  const cached = records.get(runId);
  if (cached) return cached;
  const record = JSON.parse(await blobs.getText(runRecordKey(runId))) as RunRecord;
  return remember(records, runId, record);
}

/**
 * Load the synchronized messages of a round >= 2 (cached per container; written once by
 * Synchronize before the round starts). Round 1 has none.
 */
export async function loadSynchronized(blobs: BlobStore, runId: string, round: number): Promise<Message[]> {
  if (round <= 1) return [];
  const key = syncKey(runId, round);
  const cached = syncSnapshots.get(key);
  if (cached) return cached;
  const messages = JSON.parse(await blobs.getText(key)) as Message[];
  return remember(syncSnapshots, key, messages);
}

const followUps = new Map<string, { followUp?: string }>();

/**
 * Load the follow-up question of a round >= 2 (cached per container; written once by Synchronize
 * with the synchronized messages). Round 1, a round synchronized plainly and a run synchronized by
 * an earlier version (no such object) have none.
 */
export async function loadFollowUp(blobs: BlobStore, runId: string, round: number): Promise<string | undefined> {
  if (round <= 1) return undefined;
  const key = followUpKey(runId, round);
  const cached = followUps.get(key);
  if (cached) return cached.followUp;
  let value: { followUp?: string };
  try {
    value = JSON.parse(await blobs.getText(key)) as { followUp?: string };
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    value = {};
  }
  return remember(followUps, key, value).followUp;
}

const seekQueries = new Map<string, SeekQuery>();

/**
 * Load the query of one round of a survey run (cached per container; written once before the
 * round's seeking agents start).
 * @throws NotFoundError (from the BlobStore) when the round has no query record.
 */
export async function loadSeekQuery(blobs: BlobStore, runId: string, round: number): Promise<SeekQuery> {
  const key = seekQueryKey(runId, round);
  const cached = seekQueries.get(key);
  if (cached) return cached;
  return remember(seekQueries, key, JSON.parse(await blobs.getText(key)) as SeekQuery);
}

/** Forget cached records (tests; a re-prepared run id). */
export function clearRunCaches(): void {
  records.clear();
  syncSnapshots.clear();
  followUps.clear();
  seekQueries.clear();
}
