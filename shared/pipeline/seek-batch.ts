/**
 * Batch seeking (run option `seekMode: 'batch'`; docs/ARCHITECTURE.md, "Batch seeking"): a round's
 * seeking agents as one batch job (or one per part of at most the model's record limit) instead of one
 * on-demand call each, for work nobody waits for (scheduled surveys, job files). Batch inference is
 * priced at about half the on-demand rate (docs/COST.md) and answers within hours, not seconds.
 *
 * SubmitSeekBatch: every chunk of the round not yet sought is asked as its seeking agent would ask
 * it on demand (shared/llm/agents.ts builds the request; its first chat call is captured, not sent),
 * the requests go to the batch service as records, one job per part. CheckSeekBatch: while a job
 * runs, the workflow waits (a Wait state, the service's poll period); when every job has ended, each
 * record's reply is read by the same seeking agent as an on-demand reply (its first call answered
 * from the record: same parser, same validation), and the message recorded by the same write as an
 * on-demand Seek (`recordSeekResult`). The rest of a seek stays on demand: a retry of an unusable
 * reply and a score re-ask are live calls; so are KAR and synchronization.
 *
 * What is not batched is sought on demand by the round's seeking Map, which skips every chunk
 * already sought: a round below the model's minimum record count, a model without batch inference
 * (or that makes no model call: the extractive reader), a record the service failed (its cause is
 * recorded as the chunk's failure first), a job that failed, stopped or expired. The run's
 * `RunResult.batch` says what ran how.
 *
 * Resume: the round's batch record (`runs/<runId>/batch/r<round>/batch.json`) holds the jobs once
 * submitted, and the submission itself is idempotent per job name (run, round, part), so a run killed
 * anywhere resumes without submitting a record twice; collecting skips chunks already recorded.
 */
import { createHash } from 'node:crypto';
import { ModelError } from '../errors';
import type { AgentModel, BatchInference, BatchJobRef, BatchRecord, BlobStore, ChatModel, ChatRequest, ChatResponse, MessageStore } from '../ports';
import { runPrefix } from './layout';
import { prepareSeek, recordSeekResult, seekShrinkingOnOverflow, countIfTransient } from './seek';
import type { SeekBatchEvent, SeekBatchOutcome, SeekEvent } from './state';

/** What the batch seeking tasks need (the Seek function's dependencies plus the batch service). */
export interface SeekBatchDeps {
  blobs: BlobStore;
  store: MessageStore;
  /**
   * The batch service and the agents with the seeker's chat model wrapped (`ProviderDeps.wrapSeeker`;
   * called once per task). Absent (a host without batch inference): every round is sought on demand,
   * and the run says why.
   */
  batch?: BatchSeeking;
}

/**
 * A host's batch seeking: the batch service, and the agents with the seeker's chat model wrapped
 * (`ProviderDeps.wrapSeeker`), built from the loaded model (async: models/index.ts `loadModels`).
 */
export interface BatchSeeking {
  inference: BatchInference;
  agents(wrapSeeker: (chat: ChatModel) => ChatModel): Promise<AgentModel>;
}

/** Chunks one CheckSeekBatch task collects before it returns `collecting` (bounded task time). */
export const COLLECT_PAGE_CHUNKS = 200;

/** One submitted job of a round. */
interface RoundJob extends BatchJobRef {
  part: number;
  records: number;
  /** The service's status once the job ended (set by CheckSeekBatch). */
  ended?: string;
  message?: string;
}

/** `runs/<runId>/batch/r<round>/batch.json`: how the round was sought. */
export interface BatchRoundRecord {
  round: number;
  mode: 'batch' | 'on-demand';
  /** Why the round was sought on demand (mode `on-demand`). */
  reason?: string;
  modelId?: string;
  /** Chunks asked as records. */
  records: number;
  jobs: RoundJob[];
  /** Set when every job ended and every record was read: chunks recorded from the records, and the rest. */
  collected?: { recorded: number; failedRecords: number; missingRecords: number };
}

/** The round's batch record key. */
export const batchRoundKey = (runId: string, round: number): string => `${runPrefix(runId)}batch/r${round}/batch.json`;

/** A record id for a chunk: `C` and its index in 10 digits (11 alphanumerics, as Bedrock's record ids). */
export const batchRecordId = (chunk: number): string => `C${String(chunk).padStart(10, '0')}`;

/** Thrown by the capturing seeker: the request the agent would have sent (never reaches the workflow). */
class CapturedCall extends Error {
  constructor(
    readonly request: ChatRequest,
    readonly modelId: string,
  ) {
    super('captured for a batch record');
  }
}

/** The seeker tap: captures the first call, or answers it from a batch record, or passes calls through. */
class SeekerTap {
  mode: { kind: 'capture' } | { kind: 'replay'; request: ChatRequest; response: ChatResponse; used: boolean } | { kind: 'live' } = { kind: 'live' };
  /** The first call of a replay whose request was not the record's (a changed prompt): sought live, with a warning. */
  mismatched = false;

  readonly wrap = (chat: ChatModel): ChatModel => ({
    modelId: chat.modelId,
    complete: async (request: ChatRequest): Promise<ChatResponse> => {
      const mode = this.mode;
      if (mode.kind === 'capture') throw new CapturedCall(request, chat.modelId);
      if (mode.kind === 'replay' && !mode.used) {
        mode.used = true;
        if (sameRequest(request, mode.request)) return mode.response;
        this.mismatched = true;
      }
      return chat.complete(request);
    },
  });
}

const sameRequest = (a: ChatRequest, b: ChatRequest): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * SubmitSeekBatch: the round's unsought chunks as batch records, one job per part (idempotent).
 * @returns `waiting` with the service's poll period, or `done` with every unsought chunk remaining
 *   for the seeking Map when the round is sought on demand (the batch record says why).
 * @throws NotFoundError when the run's records are missing; the batch service's typed errors
 *   (ModelThrottledError for a job quota, retried by the workflow).
 */
export async function submitSeekBatch(event: SeekBatchEvent, deps: SeekBatchDeps): Promise<SeekBatchOutcome> {
  const { blobs } = deps;
  const key = batchRoundKey(event.runId, event.round);
  if (await blobs.exists(key)) return checkSeekBatch(event, deps);
  const unsought = await unsoughtChunks(event, deps);
  const onDemand = async (reason: string): Promise<SeekBatchOutcome> => {
    const record: BatchRoundRecord = { round: event.round, mode: 'on-demand', reason, records: 0, jobs: [] };
    await blobs.put(key, JSON.stringify(record), 'application/json');
    return { status: 'done', waitSeconds: 0, remaining: unsought.length };
  };
  if (unsought.length === 0) return onDemand('every chunk of the round was already sought');
  if (deps.batch === undefined) return onDemand('this host has no batch inference configured');
  const batch = deps.batch.inference;

  const tap = new SeekerTap();
  tap.mode = { kind: 'capture' };
  const agents = await deps.batch.agents(tap.wrap);
  const records: BatchRecord[] = [];
  let modelId: string | undefined;
  for (const chunk of unsought) {
    const prepared = await prepareSeek(seekEventOf(event, chunk), blobs);
    try {
      await agents.seek(prepared.request);
    } catch (error) {
      if (!(error instanceof CapturedCall)) throw error;
      records.push({ recordId: batchRecordId(chunk), request: error.request });
      modelId = error.modelId;
      continue;
    }
    // The agent answered without a model call: a reader that is not a language model.
    return onDemand('the seeking model makes no model call to batch (not a language model)');
  }
  if (modelId === undefined) return onDemand('no seeking request to batch');
  const limits = batch.limits(modelId);
  if ('unavailable' in limits) return onDemand(`${modelId}: ${limits.unavailable}`);
  if (records.length < limits.minRecords) {
    return onDemand(`${records.length} chunk(s) to seek, below the ${limits.minRecords} records a batch job of ${modelId} needs at least`);
  }
  // Parts of at most maxRecords, of even size (so no part falls below the minimum).
  const parts = Math.ceil(records.length / limits.maxRecords);
  const size = Math.ceil(records.length / parts);
  const jobs: RoundJob[] = [];
  for (let part = 0; part < parts; part++) {
    const slice = records.slice(part * size, (part + 1) * size);
    const prefix = `${runPrefix(event.runId)}batch/r${event.round}/p${part}/`;
    await blobs.put(`${prefix}records.json`, JSON.stringify(slice), 'application/json');
    const jobId = await batch.submit({ name: jobName(event.runId, event.round, part), modelId, prefix, records: slice });
    jobs.push({ jobId, prefix, modelId, part, records: slice.length });
  }
  const record: BatchRoundRecord = { round: event.round, mode: 'batch', modelId, records: records.length, jobs };
  await blobs.put(key, JSON.stringify(record), 'application/json');
  return { status: 'waiting', waitSeconds: batch.pollSeconds, remaining: unsought.length };
}

/**
 * CheckSeekBatch: the jobs' state; once all ended, their records read into messages, a page of
 * {@link COLLECT_PAGE_CHUNKS} chunks per task.
 * @returns `waiting`, `collecting` or `done` (see `SeekBatchOutcomeSchema`).
 * @throws NotFoundError when SubmitSeekBatch left no batch record; the service's typed errors.
 */
export async function checkSeekBatch(event: SeekBatchEvent, deps: SeekBatchDeps): Promise<SeekBatchOutcome> {
  const { blobs, store } = deps;
  const key = batchRoundKey(event.runId, event.round);
  const record = JSON.parse(await blobs.getText(key)) as BatchRoundRecord;
  if (record.mode === 'on-demand' || record.collected !== undefined || deps.batch === undefined) {
    return { status: 'done', waitSeconds: 0, remaining: (await unsoughtChunks(event, deps)).length };
  }
  const batch = deps.batch.inference;
  let changed = false;
  for (const job of record.jobs) {
    if (job.ended !== undefined) continue;
    const status = await batch.status(job);
    if (status.state === 'in-progress') {
      if (changed) await blobs.put(key, JSON.stringify(record), 'application/json');
      return { status: 'waiting', waitSeconds: batch.pollSeconds, remaining: 0 };
    }
    job.ended = status.serviceStatus;
    if (status.message !== undefined) job.message = status.message;
    changed = true;
  }
  if (changed) await blobs.put(key, JSON.stringify(record), 'application/json');

  // Every job ended: read the records of the chunks not yet recorded, a page at a time.
  const sought = new Set(await store.soughtChunks(event.runId, event.round));
  const tap = new SeekerTap();
  const agents = await deps.batch.agents(tap.wrap);
  let page = 0;
  let failedRecords = 0;
  let missingRecords = 0;
  for (const job of record.jobs) {
    const requests = await jobRequests(job, blobs);
    const results = await batch.results(job, requests);
    for (const [recordId, request] of requests) {
      const chunk = Number(recordId.slice(1));
      if (sought.has(chunk)) continue;
      const result = results.get(recordId);
      const seekEvent = seekEventOf(event, chunk);
      if (result === undefined) {
        missingRecords += 1;
        continue; // the job ended without it (failed, stopped, expired): sought on demand
      }
      if ('error' in result) {
        failedRecords += 1;
        if (!(await store.lastSeekFailure(event.runId, event.round, chunk))) {
          await store.recordSeekFailure(event.runId, event.round, chunk, {
            error: 'BatchRecordError',
            message: `the batch job failed this chunk's record (${result.error.code}: ${result.error.message}); sought on demand`,
          });
        }
        continue;
      }
      if (page >= COLLECT_PAGE_CHUNKS) return { status: 'collecting', waitSeconds: 0, remaining: 0 };
      page += 1;
      await collectOne(seekEvent, result.response, request, agents, tap, deps);
    }
  }
  record.collected = { recorded: record.records - failedRecords - missingRecords, failedRecords, missingRecords };
  await blobs.put(key, JSON.stringify(record), 'application/json');
  return { status: 'done', waitSeconds: 0, remaining: (await unsoughtChunks(event, deps)).length };
}

/**
 * One chunk's record read as its seeking agent's reply: the agent runs again with its first call
 * answered from the record. A failure of its live follow-up calls is the chunk's failure (sought on
 * demand by the Map), never the task's.
 */
async function collectOne(
  event: SeekEvent,
  response: ChatResponse,
  request: ChatRequest,
  agents: AgentModel,
  tap: SeekerTap,
  deps: SeekBatchDeps,
): Promise<void> {
  const prepared = await prepareSeek(event, deps.blobs);
  tap.mode = { kind: 'replay', request, response, used: false };
  tap.mismatched = false;
  try {
    const { result, warnings } = await seekShrinkingOnOverflow(agents, prepared.request, prepared.chunkTokens);
    if (tap.mismatched) warnings.push("the batch record's request was not the seeking agent's (a changed prompt); sought on demand");
    await recordSeekResult(event, prepared, result, warnings, deps.store);
  } catch (error) {
    await countIfTransient(deps.store, event.runId, 'seeker', error);
    const failure = error instanceof Error ? { error: error.name, message: error.message } : { error: ModelError.name, message: String(error) };
    await deps.store.recordSeekFailure(event.runId, event.round, event.chunk, failure);
  } finally {
    tap.mode = { kind: 'live' };
  }
}

/** The job's records as SubmitSeekBatch kept them (`<prefix>records.json`): the requests its replies are read against. */
async function jobRequests(job: RoundJob, blobs: BlobStore): Promise<Map<string, ChatRequest>> {
  const records = JSON.parse(await blobs.getText(`${job.prefix}records.json`)) as BatchRecord[];
  return new Map(records.map((r) => [r.recordId, r.request]));
}

/** The Seek event of one chunk of the round. */
function seekEventOf(event: SeekBatchEvent, chunk: number): SeekEvent {
  return {
    runId: event.runId,
    round: event.round,
    chunk,
    ...(event.task !== undefined && { task: event.task }),
    ...(event.covered !== undefined && { covered: event.covered }),
  };
}

/** The round's chunks (the seeking Map's items) not yet sought, ascending. */
async function unsoughtChunks(event: SeekBatchEvent, deps: Pick<SeekBatchDeps, 'blobs' | 'store'>): Promise<number[]> {
  const items = JSON.parse(await deps.blobs.getText(event.manifestKey)) as Array<{ chunk: number }>;
  const sought = new Set(await deps.store.soughtChunks(event.runId, event.round));
  return [...new Set(items.map((item) => item.chunk))].filter((chunk) => !sought.has(chunk)).sort((a, b) => a - b);
}

/** A job name (run, round, part) within Bedrock's 63 characters: the run id hashed, so any run id fits. */
function jobName(runId: string, round: number, part: number): string {
  return `extagents-${createHash('sha256').update(runId).digest('hex').slice(0, 24)}-r${round}-p${part}`;
}
