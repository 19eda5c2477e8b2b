/**
 * The runs kept in a state directory (`extagents runs ls | show | rm`): each `runs/<runId>/` of the
 * local bucket (its record, manifest, Map results, result; its chunks are read in place from the
 * chunk cache), the copy of the corpus an `ask` of an earlier version made under `corpora/<runId>/`,
 * and, when the state directory keeps DynamoDB data (runs with `--run-id`, `serve`, `job`), the run's
 * table items. Job plans and surveys (`runs/_jobs/`, `runs/_surveys/`) are not runs.
 *
 * The content-addressed corpora that `ask` puts its files in (`corpora/local-<hash>/`, shared by
 * every run over the same files, local/engine/run.ts) are deleted with the last run that reads them.
 * Corpora under other ids (`extagents ingest`, the API's corpora, a job's corpus) and the chunk cache
 * are never deleted here: other runs may read them.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { corpusPrefix } from '../../shared/corpus';
import { InvalidInputError, NotFoundError } from '../../shared/errors';
import { issueMessages } from '../../shared/validation';
import { RunIdSchema } from '../../shared/pipeline/state';
import { runPrefix, resultKey, runRecordKey, surveyRecordKey } from '../../shared/pipeline/layout';

/** Corpus ids of the content-addressed corpora of local runs: `local-<content hash>`. */
export const LOCAL_CORPUS_ID_PREFIX = 'local-';
/** `runs/<runId>/corpus.json`: `{ prefix }`, the corpus a local run reads (written before it starts). */
export const runCorpusKey = (runId: string): string => `${runPrefix(runId)}corpus.json`;
import type { RunRecord } from '../../shared/pipeline/run-record';
import type { RunResult } from '../../shared/types';
import type { ExecutionStatus } from '../../shared/executions';
import { FsBlobStore } from './fs-blob-store';
import { executionRecordKey, LocalExecutions } from './executions';
import { runLiveness, type RunLiveness } from './run-heartbeat';

/** One run of a state directory. */
export interface StoredRun {
  runId: string;
  /** The question (from the run record), or undefined when the run has no record (Prepare never ended). */
  question?: string;
  /** ISO-8601 time of Prepare (else of the execution's start, for a run stopped before Prepare ended). */
  createdAt?: string;
  /**
   * The run's status in the API's words (`GET /v1/runs/{runId}`, `GET /v1/runs`, the page): its
   * execution record's (local/engine/executions.ts: an `ask`, a `serve` or a `job` run; `RUNNING`,
   * `SUCCEEDED`, `FAILED`, `ABORTED`: a RUNNING one whose process is gone, or whose heartbeat went
   * stale, is `ABORTED`); for a run without one (an `ask` of an earlier version) `SUCCEEDED` once
   * Finalize wrote the result, `RUNNING` while its heartbeat is live, else `ABORTED`.
   */
  status: ExecutionStatus;
  /**
   * An `ask` run without a result that has a heartbeat file: `running` (its process lives and beats),
   * `interrupted` (killed: it left the file), with its process id and latest progress.
   */
  live?: RunLiveness;
  /** `answered` / `refused` once Finalize wrote the result. */
  outcome?: 'answered' | 'refused';
  /** Why a run that stopped without a result stopped, from its execution record (e.g. `RunCancelled`: cancelled through the API; `ProcessStopped`), with its cause. */
  stopped?: { error: string; cause?: string };
  chunks?: number;
  /** Bytes of the run's files and of its own corpus copy in the bucket. */
  bytes: number;
}

/** The bucket of a state directory. */
export const bucketOf = (stateDir: string): FsBlobStore => new FsBlobStore(path.join(path.resolve(stateDir), 'bucket'));

async function readJson<T>(blobs: FsBlobStore, key: string): Promise<T | undefined> {
  try {
    return JSON.parse(await blobs.getText(key)) as T;
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/**
 * The run ids of a state directory (sorted), job plans and surveys excluded (a survey's state is under
 * `runs/<surveyId>/survey/`): those with files under `runs/<runId>/`, and those with only an execution record (`runs/_executions/<runId>.json`: a run
 * of `serve` or `job` stopped before Prepare wrote anything).
 */
export async function runIds(stateDir: string): Promise<string[]> {
  const ids = new Set<string>();
  // A survey keeps its state under runs/<surveyId>/ too (its record at runs/<surveyId>/survey/survey.json): not a run.
  const surveys = new Set<string>();
  for (const { key } of await bucketOf(stateDir).list('runs/')) {
    const [id, ...below] = key.slice('runs/'.length).split('/');
    // A run is a folder with a valid run id: a stray file or folder (`.DS_Store`, `we ird`) is not one, and does not stop the listing.
    if (id !== '' && !id.startsWith('_') && below.length > 0 && RunIdSchema.safeParse(id).success) ids.add(id);
    if (key === surveyRecordKey(id)) surveys.add(id);
    const recorded = /^runs\/_executions\/(.+)\.json$/.exec(key)?.[1];
    if (recorded !== undefined && RunIdSchema.safeParse(recorded).success) ids.add(recorded);
  }
  return [...ids].filter((id) => !surveys.has(id)).sort();
}

/**
 * What is kept of one run.
 * @throws InvalidInputError for an invalid run id; NotFoundError when the state directory has no such run.
 */
export async function describeRun(stateDir: string, runId: string): Promise<StoredRun> {
  // A run id is also a path below the bucket: only a valid one (no "/", no "..") is looked up.
  const valid = RunIdSchema.safeParse(runId);
  if (!valid.success) throw new InvalidInputError(`Run id ${JSON.stringify(runId)}: ${issueMessages(valid.error)}`);
  const blobs = bucketOf(stateDir);
  const files = [...(await blobs.list(runPrefix(runId))), ...(await blobs.list(corpusPrefix(runId)))];
  const execution = await new LocalExecutions({ blobs }).describe(runId);
  if (files.length === 0 && execution === undefined)
    throw new NotFoundError(`No run ${JSON.stringify(runId)} in ${path.resolve(stateDir)} (see 'extagents runs ls')`);
  const record = await readJson<RunRecord>(blobs, runRecordKey(runId));
  const result = await readJson<RunResult>(blobs, resultKey(runId));
  const live = result === undefined ? await runLiveness(blobs, runId) : undefined;
  const createdAt = record?.createdAt ?? execution?.startedAt ?? live?.heartbeat.startedAt;
  // A heartbeat gone stale says more than a pid that answers (the system may have given it to another process).
  const recorded = execution?.status === 'RUNNING' && live?.state === 'interrupted' ? 'ABORTED' : execution?.status;
  return {
    runId,
    ...(record && { question: record.question, chunks: record.chunks }),
    ...(createdAt !== undefined && { createdAt }),
    status: recorded ?? (result !== undefined ? 'SUCCEEDED' : live?.state === 'running' ? 'RUNNING' : 'ABORTED'),
    ...(live && { live }),
    ...(result !== undefined && { outcome: result.answerable ? 'answered' : 'refused' }),
    ...(result === undefined &&
      execution?.error !== undefined && { stopped: { error: execution.error, ...(execution.cause !== undefined && { cause: execution.cause }) } }),
    bytes: files.reduce((sum, f) => sum + f.size, 0),
  };
}

/** Every run of a state directory, newest first as the API and the page list them (runs without a record last). */
export async function listRuns(stateDir: string): Promise<StoredRun[]> {
  const runs = await Promise.all((await runIds(stateDir)).map((id) => describeRun(stateDir, id)));
  return runs.sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '') || a.runId.localeCompare(b.runId));
}

/** A run's result, or undefined while it has none. @throws NotFoundError when there is no such run. */
export async function runResult(stateDir: string, runId: string): Promise<RunResult | undefined> {
  await describeRun(stateDir, runId);
  return readJson<RunResult>(bucketOf(stateDir), resultKey(runId));
}

/**
 * Delete a run's files and its own corpus copy from the bucket, its table items through
 * `deleteItems` when the state directory keeps DynamoDB data, and the content-addressed corpora
 * (`corpora/local-…/`) that no run left reads.
 * @returns the bytes freed in the bucket and the table items deleted.
 * @throws NotFoundError when there is no such run.
 */
export async function removeRun(stateDir: string, runId: string, deleteItems?: (runId: string) => Promise<number>): Promise<{ bytes: number; items: number }> {
  const { bytes } = await describeRun(stateDir, runId);
  const items = deleteItems ? await deleteItems(runId) : 0;
  const root = bucketOf(stateDir).root;
  for (const prefix of [runPrefix(runId), corpusPrefix(runId) /* the corpus copy an `ask` of an earlier version made for its run, deleted with it */])
    await rm(path.join(root, ...prefix.split('/').filter(Boolean)), { recursive: true, force: true });
  await rm(path.join(root, ...executionRecordKey(runId).split('/')), { force: true });
  return { bytes: bytes + (await removeUnreadLocalCorpora(stateDir)), items };
}

/**
 * Delete every `corpora/local-<hash>/` that no run of the state directory reads (by its
 * `runs/<runId>/corpus.json`, or its run record's corpus prefix).
 * @returns the bytes freed.
 */
async function removeUnreadLocalCorpora(stateDir: string): Promise<number> {
  const blobs = bucketOf(stateDir);
  const local = new Map<string, number>();
  for (const { key, size } of await blobs.list(corpusPrefix(LOCAL_CORPUS_ID_PREFIX).slice(0, -1))) {
    const prefix = key.split('/').slice(0, 2).join('/') + '/';
    local.set(prefix, (local.get(prefix) ?? 0) + size);
  }
  if (local.size === 0) return 0;
  for (const id of await runIds(stateDir)) {
    const marker = await readJson<{ prefix?: string }>(blobs, runCorpusKey(id));
    const record = await readJson<RunRecord>(blobs, runRecordKey(id));
    for (const prefix of [marker?.prefix, record?.corpusPrefix]) if (prefix !== undefined) local.delete(prefix);
  }
  let bytes = 0;
  for (const [prefix, size] of local) {
    await rm(path.join(blobs.root, ...prefix.split('/').filter(Boolean)), { recursive: true, force: true });
    bytes += size;
  }
  return bytes;
}

/** Whether the state directory keeps DynamoDB data (then `rm` deletes the run's items too). */
export const keepsTableData = (stateDir: string): boolean => existsSync(path.join(path.resolve(stateDir), 'dynamodb'));
