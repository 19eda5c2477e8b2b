/**
 * The API's route logic over ports (no HTTP, no AWS SDK): the same code answers API Gateway
 * (lambdas/api.ts) and the local server (local/services/serve.ts). Inputs arrive validated by the router
 * (shared/api/router.ts); errors are the typed errors of shared/errors.ts, mapped to problem+json
 * by shared/api/problem.ts.
 */
import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { parseRunOptions, type RunOptions, type RunOptionsInput } from '../config';
import { COST_LIMIT_MODE, enforceCostLimit, estimateRun, priceEstimate, type ModelPricing } from '../cost';
import { enforceQuota, planRunConcurrency } from '../quota';
import { getCorpusIngestion } from '../pipeline/ingest';
import { corpusPrefix, resolveCorpusRef, type CorpusSelection } from '../corpus';
import { InvalidInputError, NotFoundError, RunNotCancellableError } from '../errors';
import { IdempotencyConflictError, MissingCorpusError, RequestValidationError, UnfitRunOptionsError, type RequestIssue } from './errors';
import { reseekItemsKey, resultKey, runRecordKey } from '../pipeline/layout';
import type { RunRecord } from '../pipeline/run-record';
import type { PrepareEvent } from '../pipeline/state';
import type { BlobStore, MessageStore } from '../ports';
import type { ModelQuota, RunResult } from '../types';
import { readIngestedCounts } from './corpus-index';
import { stoppedPhase } from '../progress';
import { idempotencyKeyHash, idempotentRunId, requestHash, sha256Hex } from './idempotency';
import { corpusRecordKey } from './layout';
import type { ExecutionControl, ExecutionDescription, ExecutionStatus, RunLauncher, StopReason } from '../executions';
import type { IdempotencyRecord, IdempotencyStore, Presigner } from './ports';
import {
  MAX_EXECUTION_INPUT_BYTES,
  type CorpusResponse,
  type CreateCorpusRequest,
  type CreateCorpusResponse,
  type CreateRunRequest,
  type CreateRunResponse,
  type MessagePageResponse,
  type MessagesQuery,
  type RunPageResponse,
  type RunProgress,
  type RunsQuery,
  type RunStatus,
  type RunSummary,
} from './schemas';

/** What the API core needs. */
export interface ApiDeps {
  /** The project bucket. */
  blobs: BlobStore;
  /** The run table (only these reads). */
  store: Pick<MessageStore, 'soughtChunks' | 'getSteps' | 'listMessages'>;
  /** Starts, describes, lists and stops the workflow's executions. */
  launcher: RunLauncher & ExecutionControl;
  presigner: Presigner;
  idempotency: IdempotencyStore;
  /** Clock (tests pass a fixed one). */
  now?: () => Date;
  /** `bytes` random bytes as lower-case hex (tests pass a deterministic one). */
  randomHex?: (bytes: number) => string;
  /**
   * How the deployment's model is priced (models/ `modelPricing`): with it, a run whose
   * `options.maxCostUsd` its ingested corpus already exceeds is refused with 422 before it starts
   * (else Prepare refuses it).
   */
  pricing?: ModelPricing;
  /**
   * The model's own run option defaults, for the options a request leaves unset, before the schema's
   * (a small-context `llama:` model: chunks, reasoner and synchronization budgets fitted to its
   * context, as `ask` gets them). Absent: the schema's defaults.
   */
  runOptionDefaults?: RunOptionsInput;
  /**
   * The run options the model cannot run (a chunk size its context cannot hold), each with the
   * problem in words; a run with any is refused with 422 before it starts. Absent: none.
   * @param options the run's options, defaults filled.
   */
  runOptionProblems?: (options: RunOptions) => Array<{ option: string; detail: string }>;
  /**
   * The latest seeking counts of a running run that another process runs with its own run table (a
   * CLI `ask` beside `serve`: its heartbeat, local/engine/run-heartbeat.ts), which `store` does not
   * see; undefined for a run of this server's own table. Absent: none (AWS: one table).
   * @returns the round being sought, chunks sought in it, and the chunks it seeks.
   */
  foreignProgress?: (runId: string) => Promise<{ round: number; sought: number; total: number } | undefined>;
  /**
   * The deployment's default quota of the seeking model (as Prepare's, which a run's options
   * override): with a quota stated here or in the run's options, a run its ingested corpus makes
   * impossible under that quota is refused with 422 before it starts (else Prepare refuses it).
   * Absent: only the run's own options state one.
   */
  quota?: ModelQuota;
}

/** Who calls and where the API is, for idempotency scoping and links. */
export interface CallContext {
  /** The authenticated caller (an IAM ARN in AWS; `local` for the local server). */
  principal: string;
  /** Base URL of the API without a trailing slash, e.g. `https://abc.execute-api.us-east-1.amazonaws.com/prod`. */
  baseUrl: string;
}

/** The corpus as the Prepare event takes it. */

/** What `POST /v1/corpora` stores at `api/corpora/<id>.json`. */
export interface CorpusRecord {
  corpusId: string;
  createdAt: string;
  files: Array<{ path: string; size?: number; contentType?: string }>;
}

/** What a cancelled execution reports: its error name and cause (StopExecution's `error` and `cause`). */
export const CANCEL_REASON: StopReason = { error: 'RunCancelled', cause: 'Cancelled through the API (POST /v1/runs/{runId}/cancel)' };

/** The scope of run-list cursors (run cursors are scoped by their run id, which never has a newline). */
const RUN_LIST_SCOPE = 'list\nruns';

/** Parallel storage calls of one request. */
const IO_CONCURRENCY = 16;
/** Most validation issues listed in one problem. */
const MAX_LISTED_ISSUES = 20;

/**
 * The progress of a finished run whose seeking and KAR steps this store does not hold (a CLI `ask`
 * without `--run-id` kept them in memory), from its result: every round it ran sought (a grow run's
 * coverage, a promising run's chosen chunks), its KAR steps from the trace. Progress the store holds is
 * kept as it is.
 */
function finishedProgress(progress: RunProgress, result: RunResult): RunProgress {
  const known = progress.rounds.some((r) => r.sought > 0) || progress.karSteps.length > 0;
  if (known || result.chunks === 0) return progress;
  const perRound = (round: number): number => result.reseek?.chunksPerRound[round - 1] ?? result.coverage?.covered ?? result.chunks;
  return {
    ...progress,
    chunks: progress.chunks ?? result.chunks,
    rounds: Array.from({ length: result.rounds }, (_, i) => ({ round: i + 1, sought: perRound(i + 1), total: perRound(i + 1) })),
    karSteps: result.trace.map((step, i) => ({ ...step, seq: i + 1 })),
  };
}

/** The route logic of the API (see docs/API.md and docs/openapi.yaml). */
export class ApiCore {
  private readonly now: () => Date;
  private readonly randomHex: (bytes: number) => string;

  constructor(private readonly deps: ApiDeps) {
    this.now = deps.now ?? (() => new Date());
    this.randomHex = deps.randomHex ?? ((bytes) => randomBytes(bytes).toString('hex'));
  }

  /**
   * `POST /v1/runs`: start a run of the workflow.
   * - Without an idempotency key: a new run id `run-<UTC yyyymmddThhmmss>-<12 hex>`.
   * - With one: the run id derives from it (shared/api/idempotency.ts); a repeat of the same
   *   request starts nothing new and answers the same run id (`replayed: true`).
   * - Options the request leaves unset take the model's defaults (`ApiDeps.runOptionDefaults`),
   *   then the schema's.
   * @throws RequestValidationError when the corpus has no object (id, prefix), a key is missing,
   *   or the execution input would exceed 256 KiB; UnfitRunOptionsError (422) when the model cannot
   *   run the options (`ApiDeps.runOptionProblems`); CostLimitExceededError / QuotaExceededError (422)
   *   when an ingested corpus already shows that Prepare would refuse the run; IdempotencyConflictError
   *   when the key was first used with a different request.
   */
  async createRun(body: CreateRunRequest, idempotencyKey: string | undefined, ctx: CallContext): Promise<{ response: CreateRunResponse; replayed: boolean }> {
    const corpus = resolveCorpus(body.corpus);
    const options = parseRunOptions({ ...this.deps.runOptionDefaults, ...body.options });
    const unfit = this.deps.runOptionProblems?.(options) ?? [];
    if (unfit.length > 0) {
      throw new UnfitRunOptionsError(
        `The server's model cannot run these options: ${unfit.map((u) => `options.${u.option}: ${u.detail}`).join('; ')}`,
        unfit.map((u) => ({ location: 'body', name: `/options/${u.option}`, detail: u.detail })),
      );
    }
    const normalized = { question: body.question, corpus, options };
    let runId: string;
    let replayed = false;
    let record: Omit<IdempotencyRecord, 'createdAt'> | undefined;
    if (idempotencyKey === undefined) {
      runId = this.newRunId();
    } else {
      const keyHash = idempotencyKeyHash(ctx.principal, idempotencyKey);
      runId = idempotentRunId(keyHash);
      record = { keyHash, requestHash: requestHash(normalized), runId };
    }
    const input: PrepareEvent = { runId, ...normalized };
    const inputBytes = Buffer.byteLength(JSON.stringify(input), 'utf8');
    if (inputBytes > MAX_EXECUTION_INPUT_BYTES) {
      throw new RequestValidationError(
        `The run's input is ${inputBytes} bytes; Step Functions accepts at most ${MAX_EXECUTION_INPUT_BYTES}. List fewer keys, or give a prefix or a corpus id.`,
        [{ location: 'body', name: '/corpus', detail: 'too large: use a prefix or a corpus id' }],
      );
    }

    if (record) {
      const existing = await this.deps.idempotency.get(record.keyHash);
      if (existing) {
        assertSameRequest(existing, record.requestHash);
        replayed = true;
      } else {
        await this.checkCorpusExists(body.corpus, corpus);
        await this.checkBeforeStart(body, options);
        const raced = await this.deps.idempotency.claim({ ...record, createdAt: this.now().toISOString() });
        if (raced) {
          assertSameRequest(raced, record.requestHash);
          replayed = true;
        }
      }
    } else {
      await this.checkCorpusExists(body.corpus, corpus);
      await this.checkBeforeStart(body, options);
    }

    const { started } = await this.deps.launcher.start(runId, input);
    let status: ExecutionStatus = 'RUNNING';
    if (!started) {
      replayed = true;
      status = (await this.deps.launcher.describe(runId))?.status ?? 'RUNNING';
    }
    return { response: { runId, status, links: runLinks(ctx, runId) }, replayed };
  }

  /**
   * `GET /v1/runs/{runId}`: status, progress, and the result once finished.
   * @throws NotFoundError when there is neither an execution nor a result of that run id.
   */
  async getRun(runId: string, ctx: CallContext): Promise<RunStatus> {
    const { description, record, result } = await this.findRun(runId);
    const status: ExecutionStatus = description?.status ?? 'SUCCEEDED';
    const progress = await this.progressOf(runId, status, record);
    const failed = status !== 'RUNNING' && status !== 'SUCCEEDED';
    let finalResult = result;
    if (status === 'SUCCEEDED' && finalResult === undefined) finalResult = await this.readJson<RunResult>(resultKey(runId));
    return {
      runId,
      status,
      ...(description?.startedAt !== undefined && { startedAt: description.startedAt }),
      ...(description?.stoppedAt !== undefined && { stoppedAt: description.stoppedAt }),
      ...(record && { question: record.question }),
      progress: finalResult !== undefined ? finishedProgress(progress, finalResult) : progress,
      ...(finalResult && { result: finalResult }),
      ...(failed && { error: { name: description?.error ?? status, message: description?.cause ?? `The run ended with status ${status}` } }),
      links: runLinks(ctx, runId),
    };
  }

  /**
   * `GET /v1/runs`: one page of the workflow's executions, newest first.
   * @throws RequestValidationError for a cursor this API did not issue for the run list.
   */
  async listRuns(query: RunsQuery, ctx: CallContext): Promise<RunPageResponse> {
    const after = query.cursor === undefined ? undefined : decodeScopedCursor(RUN_LIST_SCOPE, query.cursor, 'the run list');
    let page;
    try {
      page = await this.deps.launcher.list({ limit: query.limit, after });
    } catch (error) {
      if (error instanceof InvalidInputError) throw invalidCursor('the run list', error);
      throw error;
    }
    const nextCursor = page.next === undefined ? null : encodeScopedCursor(RUN_LIST_SCOPE, page.next);
    const params = (cursor?: string): string => {
      const search = new URLSearchParams({ limit: String(query.limit) });
      if (cursor !== undefined) search.set('cursor', cursor);
      return `${ctx.baseUrl}/v1/runs?${search.toString()}`;
    };
    return {
      runs: page.executions.map((d) => runSummary(d, ctx)),
      nextCursor,
      links: { self: params(query.cursor), ...(nextCursor !== null && { next: params(nextCursor) }) },
    };
  }

  /**
   * `POST /v1/runs/{runId}/cancel`: stop a RUNNING run; it ends ABORTED (error `RunCancelled`) and
   * keeps its state. Idempotent: an ABORTED run is answered as it is.
   * @throws NotFoundError for an unknown run; RunNotCancellableError (409) for a run that ended
   *   otherwise (or that the adapter cannot stop: locally, one another process runs).
   */
  async cancelRun(runId: string, ctx: CallContext): Promise<RunSummary> {
    const before = await this.deps.launcher.describe(runId);
    if (!before) {
      // A run finished outside this API (a result only) has no execution to stop.
      if ((await this.readJson<RunResult>(resultKey(runId))) !== undefined) throw notCancellable(runId, 'SUCCEEDED');
      throw new NotFoundError(`No run with id ${JSON.stringify(runId)}`);
    }
    if (before.status === 'ABORTED') return runSummary(before, ctx);
    if (before.status !== 'RUNNING') throw notCancellable(runId, before.status);
    const after = (await this.deps.launcher.abort(runId, CANCEL_REASON)) ?? before;
    // It may have ended on its own between the two calls.
    if (after.status !== 'ABORTED' && after.status !== 'RUNNING') throw notCancellable(runId, after.status);
    return runSummary(after, ctx);
  }

  /**
   * `GET /v1/runs/{runId}/messages`: one page of the run's scored messages in pool order.
   * @throws NotFoundError for an unknown run; RequestValidationError for a cursor this API did not issue.
   */
  async listMessages(runId: string, query: MessagesQuery, ctx: CallContext): Promise<MessagePageResponse> {
    await this.findRun(runId);
    const after = query.cursor === undefined ? undefined : decodeCursor(runId, query.cursor);
    let page;
    try {
      page = await this.deps.store.listMessages(runId, { round: query.round, limit: query.limit, after });
    } catch (error) {
      if (error instanceof InvalidInputError) throw invalidCursor('this run', error);
      throw error;
    }
    const nextCursor = page.next === undefined ? null : encodeCursor(runId, page.next);
    const base = `${ctx.baseUrl}/v1/runs/${encodeURIComponent(runId)}/messages`;
    const params = (cursor?: string): string => {
      const search = new URLSearchParams();
      if (query.round !== undefined) search.set('round', String(query.round));
      search.set('limit', String(query.limit));
      if (cursor !== undefined) search.set('cursor', cursor);
      return `${base}?${search.toString()}`;
    };
    return {
      runId,
      round: query.round ?? null,
      messages: page.messages,
      nextCursor,
      links: { self: params(query.cursor), ...(nextCursor !== null && { next: params(nextCursor) }) },
    };
  }

  /**
   * `POST /v1/corpora`: a new corpus id and one upload URL per file (`corpora/<id>/<path>`).
   * The announced files are kept at `api/corpora/<id>.json` (what is still pending).
   * @throws RequestValidationError (400, `/files/<i>/size`) when an announced size exceeds the
   *   presigner's `maxContentLength` (when a presigner has a limit below MAX_FILE_BYTES).
   */
  async createCorpus(body: CreateCorpusRequest, ctx: CallContext): Promise<CreateCorpusResponse> {
    const max = this.deps.presigner.maxContentLength;
    if (max !== undefined) {
      const tooLarge: RequestIssue[] = [];
      body.files.forEach((file, i) => {
        if (file.size !== undefined && file.size > max && tooLarge.length < MAX_LISTED_ISSUES) {
          tooLarge.push({
            location: 'body',
            name: `/files/${i}/size`,
            detail: `${file.path} is ${file.size} bytes; this server accepts uploads of at most ${max} bytes (${formatBytes(max)})`,
          });
        }
      });
      if (tooLarge.length > 0) {
        const listed = tooLarge
          .slice(0, 5)
          .map((i) => `${i.name}: ${i.detail}`)
          .join('; ');
        throw new RequestValidationError(`Invalid request: ${listed}${tooLarge.length > 5 ? `; and ${tooLarge.length - 5} more` : ''}`, tooLarge);
      }
    }
    const now = this.now();
    const corpusId = `c-${now.toISOString().slice(0, 10).replace(/-/g, '')}-${this.randomHex(8)}`;
    const prefix = corpusPrefix(corpusId);
    const limit = pLimit(IO_CONCURRENCY);
    const uploads = await Promise.all(
      body.files.map((file) =>
        limit(async () => {
          const key = prefix + file.path;
          const upload = await this.deps.presigner.presignPut(key, {
            expiresInSeconds: body.expiresInSeconds,
            ...(file.size !== undefined && { contentLength: file.size }),
            ...(file.contentType !== undefined && { contentType: file.contentType }),
          });
          return { path: file.path, key, ...upload };
        }),
      ),
    );
    const record: CorpusRecord = {
      corpusId,
      createdAt: now.toISOString(),
      files: body.files.map((f) => ({
        path: f.path,
        ...(f.size !== undefined && { size: f.size }),
        ...(f.contentType !== undefined && { contentType: f.contentType }),
      })),
    };
    await this.deps.blobs.put(corpusRecordKey(corpusId), JSON.stringify(record), 'application/json');
    return { corpusId, prefix, uploads, links: { self: corpusLink(ctx, corpusId) } };
  }

  /**
   * `GET /v1/corpora/{corpusId}`: the corpus's files with sizes, and token counts where ingestion
   * has recorded them (shared/api/corpus-index.ts).
   * @throws NotFoundError when the corpus has neither files nor a creation record.
   */
  async getCorpus(corpusId: string, ctx: CallContext): Promise<CorpusResponse> {
    const prefix = corpusPrefix(corpusId);
    const [objects, record] = await Promise.all([this.deps.blobs.list(prefix), this.readJson<CorpusRecord>(corpusRecordKey(corpusId))]);
    if (objects.length === 0 && record === undefined) throw new NotFoundError(`No corpus with id ${JSON.stringify(corpusId)} (nothing under ${prefix})`);
    const ingested = await readIngestedCounts(this.deps.blobs, corpusId, prefix, objects);
    const files = objects.map((o) => {
      const counts = ingested.get(o.key);
      return {
        path: o.key.slice(prefix.length),
        key: o.key,
        size: o.size,
        ingested: counts !== undefined,
        tokens: counts?.tokens ?? null,
        chars: counts?.chars ?? null,
        ...(counts?.skipped !== undefined && { skipped: counts.skipped }),
      };
    });
    const uploaded = new Set(files.map((f) => f.path));
    const allCounted = files.length > 0 && files.every((f) => f.tokens !== null);
    return {
      corpusId,
      prefix,
      ...(record && { createdAt: record.createdAt }),
      files,
      pending: (record?.files ?? []).map((f) => f.path).filter((p) => !uploaded.has(p)),
      totals: {
        files: files.length,
        bytes: files.reduce((sum, f) => sum + f.size, 0),
        tokens: allCounted ? files.reduce((sum, f) => sum + (f.tokens ?? 0), 0) : null,
      },
      links: { self: corpusLink(ctx, corpusId) },
    };
  }

  // -------------------------------------------------------------------------------------------

  /** A fresh run id: `run-<UTC yyyymmddThhmmss>-<12 hex>`. */
  private newRunId(): string {
    return `run-${this.now().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${this.randomHex(6)}`;
  }

  /** The execution, run record and result of a run; NotFoundError when none of them exists. */
  private async findRun(runId: string): Promise<{ description?: ExecutionDescription; record?: RunRecord; result?: RunResult }> {
    const [description, record] = await Promise.all([this.deps.launcher.describe(runId), this.readJson<RunRecord>(runRecordKey(runId))]);
    if (description) return { description, record };
    // A run finished outside this API (e.g. `extagents ask` on the same bucket) has a result only.
    const result = await this.readJson<RunResult>(resultKey(runId));
    if (!result) throw new NotFoundError(`No run with id ${JSON.stringify(runId)}`);
    return { record, result };
  }

  /** Each round's chunks sought and to seek, from the run table (the rounds up to the first not yet begun). */
  private async roundsOf(runId: string, record: RunRecord): Promise<RunProgress['rounds']> {
    const rounds: RunProgress['rounds'] = [];
    for (let round = 1; round <= record.options.rounds; round++) {
      const sought = (await this.deps.store.soughtChunks(runId, round)).length;
      if (round > 1 && sought === 0) break;
      // A promising run's round >= 2 seeks the chunks its rule chose (shared/reseek.ts), once Synchronize wrote them.
      const chosen = round > 1 && record.options.reseek === 'promising' ? await this.readJson<unknown[]>(reseekItemsKey(runId, round)) : undefined;
      rounds.push({ round, sought, total: chosen?.length ?? record.chunks });
    }
    return rounds;
  }

  private async progressOf(runId: string, status: ExecutionStatus, record: RunRecord | undefined): Promise<RunProgress> {
    const finished = status !== 'RUNNING';
    // A run that stopped says how: finished (SUCCEEDED), aborted (cancelled, or its process stopped), failed.
    const stopped = status === 'RUNNING' ? 'finished' : stoppedPhase(status);
    if (!record) return { phase: finished ? stopped : 'preparing', chunks: null, tokens: null, rounds: [], karSteps: [] };
    // A run another process runs with its own table (a CLI `ask` beside `serve`), which this store does
    // not hold: its heartbeat's counts, the rounds before it done. Else the table's.
    const foreign = status === 'RUNNING' ? await this.deps.foreignProgress?.(runId) : undefined;
    const rounds: RunProgress['rounds'] = foreign
      ? [
          ...Array.from({ length: foreign.round - 1 }, (_, i) => ({ round: i + 1, sought: record.chunks, total: record.chunks })),
          { round: foreign.round, sought: foreign.sought, total: foreign.total },
        ]
      : await this.roundsOf(runId, record);
    const steps = await this.deps.store.getSteps(runId);
    const karSteps = steps.map((s) => ({
      seq: s.seq,
      round: s.round,
      k: s.k,
      messagesUsed: s.messagesUsed,
      evidenceTokens: s.evidenceTokens,
      outcome: s.outcome,
      ...(s.forced !== undefined && { forced: s.forced }),
      ...(s.followUp !== undefined && { followUp: s.followUp }),
    }));
    const current = rounds.at(-1)?.round ?? 1;
    const phase = finished ? stopped : karSteps.some((s) => s.round === current) ? 'reasoning' : 'seeking';
    return { phase, chunks: record.chunks, tokens: record.tokens, rounds, karSteps };
  }

  /** Fail with MissingCorpusError (404) naming the corpus field when it has no object (id, prefix) or a key is missing. */
  /**
   * Refuse (422) a run that Prepare would refuse before any model call, when that can be known
   * before Prepare: a corpus id ingested with the run's chunk size (the ingestion summary counts its
   * chunks and tokens). Refused are a run whose `maxCostUsd` its corpus already exceeds (with the
   * deployment's model known) and a run its quota cannot carry (a quota stated in its options or the
   * deployment's, `ApiDeps.quota`; shared/quota.ts `enforceQuota`, as Prepare). Any other corpus is
   * checked by Prepare itself, before any model call.
   * @throws CostLimitExceededError with the estimate; QuotaExceededError with the refused plan.
   */
  private async checkBeforeStart(body: CreateRunRequest, options: RunOptions): Promise<void> {
    const costLimit = options.maxCostUsd !== undefined && this.deps.pricing !== undefined;
    const quota = [options.quotaRequestsPerMinute, options.quotaTokensPerMinute, this.deps.quota?.requestsPerMinute, this.deps.quota?.tokensPerMinute].some(
      (v) => v !== undefined,
    );
    if ((!costLimit && !quota) || body.corpus.id === undefined) return;
    const ingestion = await getCorpusIngestion(this.deps.blobs, body.corpus.id);
    if (!ingestion || ingestion.chunkTokens !== options.chunkTokens || ingestion.totals.chunks === 0) return;
    // The chunks' tokens: the documents' tokens (a chunk holds whole pieces of documents; separators are not counted).
    const estimate = estimateRun(
      { chunks: ingestion.totals.chunks, chunkTokensTotal: ingestion.totals.tokens, question: body.question, options },
      this.deps.pricing,
    );
    if (costLimit && this.deps.pricing && options.maxCostUsd !== undefined)
      enforceCostLimit(priceEstimate(estimate, this.deps.pricing), options.maxCostUsd, COST_LIMIT_MODE);
    if (quota) enforceQuota(planRunConcurrency(estimate, options, this.deps.quota));
  }

  private async checkCorpusExists(ref: CreateRunRequest['corpus'], corpus: CorpusSelection): Promise<void> {
    const issues: RequestIssue[] = [];
    if (corpus.keys) {
      const limit = pLimit(IO_CONCURRENCY);
      const exists = await Promise.all(corpus.keys.map((key) => limit(() => this.deps.blobs.exists(key))));
      exists.forEach((ok, i) => {
        if (!ok && issues.length < MAX_LISTED_ISSUES)
          issues.push({ location: 'body', name: `/corpus/keys/${i}`, detail: `no object with key ${JSON.stringify(corpus.keys?.[i])}` });
      });
    } else if ((await this.deps.blobs.list(corpus.prefix ?? '')).length === 0) {
      issues.push(
        ref.id !== undefined
          ? {
              location: 'body',
              name: '/corpus/id',
              detail: `no corpus with id ${JSON.stringify(ref.id)} (nothing under ${corpus.prefix}); create one with POST /v1/corpora and upload its files`,
            }
          : { location: 'body', name: '/corpus/prefix', detail: `no object under prefix ${JSON.stringify(corpus.prefix)}` },
      );
    }
    if (issues.length > 0) throw new MissingCorpusError('The corpus has no object to read', issues);
  }

  private async readJson<T>(key: string): Promise<T | undefined> {
    try {
      return JSON.parse(await this.deps.blobs.getText(key)) as T;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }
}

/** The Prepare event's corpus for a request's corpus reference (an id is the prefix `corpora/<id>/`). */
export function resolveCorpus(ref: CreateRunRequest['corpus']): CorpusSelection {
  return resolveCorpusRef(ref);
}

/** The tag binding a cursor to its scope (a run id, or the run list): 12 hex digits of SHA-256. */
const cursorTag = (scope: string): string => sha256Hex(`cursor\n${scope}`).slice(0, 12);

/** An opaque page cursor: base64url of `<scope tag>.<the store's position>`, valid for that scope only. */
function encodeScopedCursor(scope: string, position: string): string {
  return Buffer.from(`${cursorTag(scope)}.${position}`, 'utf8').toString('base64url');
}

/**
 * The position of a cursor of `scope`.
 * @param what the scope in words, for the message (`this run`, `the run list`).
 * @throws RequestValidationError (400, parameter `cursor`) for a cursor of another scope or one this API did not issue.
 */
function decodeScopedCursor(scope: string, cursor: string, what: string, other?: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const dot = text.indexOf('.');
  const tag = dot < 0 ? '' : text.slice(0, dot);
  const problem =
    !/^[0-9a-f]{12}$/.test(tag) || dot === text.length - 1
      ? `not a cursor of this API: pass nextCursor of a previous page of ${what}`
      : tag !== cursorTag(scope)
        ? (other ?? `not a cursor of ${what}: pass nextCursor of a previous page of ${what}`)
        : undefined;
  if (problem !== undefined) throw new RequestValidationError(`Invalid request: cursor: ${problem}`, [{ location: 'query', name: 'cursor', detail: problem }]);
  return text.slice(dot + 1);
}

/** A 400 for a cursor whose position the store refused. */
function invalidCursor(what: string, cause: unknown): RequestValidationError {
  const detail = `not a cursor of this API: pass nextCursor of a previous page of ${what}`;
  return new RequestValidationError(`Invalid request: cursor: ${detail}`, [{ location: 'query', name: 'cursor', detail }], { cause });
}

/** An opaque page cursor of run `runId`'s messages. */
export function encodeCursor(runId: string, position: string): string {
  return encodeScopedCursor(runId, position);
}

/**
 * The store's position of a cursor of run `runId`.
 * @throws RequestValidationError (400, parameter `cursor`) for a cursor of another run or one this API did not issue.
 */
export function decodeCursor(runId: string, cursor: string): string {
  return decodeScopedCursor(runId, cursor, 'this run', `a cursor of another run: pass nextCursor of a previous page of run ${runId}`);
}

function notCancellable(runId: string, status: ExecutionStatus): RunNotCancellableError {
  return new RunNotCancellableError(`Run ${runId} has already ended (${status}); only a RUNNING run can be cancelled`, status);
}

/** A run's summary (GET /v1/runs, the cancel's answer) from its execution. */
function runSummary(d: ExecutionDescription, ctx: CallContext): RunSummary {
  return {
    runId: d.name,
    status: d.status,
    startedAt: d.startedAt,
    ...(d.stoppedAt !== undefined && { stoppedAt: d.stoppedAt }),
    links: runLinks(ctx, d.name),
  };
}

function assertSameRequest(existing: IdempotencyRecord, hash: string): void {
  if (existing.requestHash !== hash) {
    throw new IdempotencyConflictError(
      `This Idempotency-Key was first used at ${existing.createdAt} with a different request (run ${existing.runId}); use a new key for a new run.`,
    );
  }
}

/** Bytes in binary units for messages: `512 MiB`, `5 GiB`, else bytes. */
function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

const runLinks = (ctx: CallContext, runId: string): { self: string; messages: string } => ({
  self: `${ctx.baseUrl}/v1/runs/${encodeURIComponent(runId)}`,
  messages: `${ctx.baseUrl}/v1/runs/${encodeURIComponent(runId)}/messages`,
});

const corpusLink = (ctx: CallContext, corpusId: string): string => `${ctx.baseUrl}/v1/corpora/${encodeURIComponent(corpusId)}`;
