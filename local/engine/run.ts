/**
 * Local mode, one question: start the local stack (local/engine/stack.ts), put the corpus files into the
 * local bucket, run the synthesized state machine, read the result, stop the stack.
 *
 * Resume: the run's objects (`<stateDir>/bucket`) and, for a run started with an explicit run id,
 * its DynamoDB data (`<stateDir>/dynamodb`, dynalite on LevelDB) are kept under the state
 * directory, so a run that was killed or aborted can be started again with the same run id. The new
 * execution replays the run from Prepare and reaches the same state at every step: Prepare rewrites
 * the same chunks (chunking is deterministic); every chunk already sought in a round is skipped by
 * its Seek task (`seekState`) without a model call, and messages are written at most once per (run,
 * round, chunk); each KAR step and synchronization reads only the pool of rounds up to its own
 * (`MessageStore.topK`'s round bound), and a KAR step already recorded with the same number, round
 * and k is reused without a model call. So the resumed run ends with the answer, citations, trace
 * and pool of an uninterrupted one (test/integration/crash-sweep.test.ts kills it at 20+ points).
 * A run id that already holds a run is only reused for the same question, options and corpus bytes.
 *
 * The corpus in the bucket: the files are put once under a content-addressed corpus id,
 * `corpora/local-<content hash>/` (the hash of shared/pipeline/ingest.ts: ids and bytes), unless a
 * corpus with exactly these files is already there (an earlier run, or `extagents ingest` / the API
 * under its own id): then the run reads that one and copies nothing. Prepare then finds the chunk
 * cache entry of that content and reads the chunks in place, so a warm run writes only its own run
 * data. `runs/<runId>/corpus.json` names the corpus a run reads, so that `runs rm` deletes a
 * `local-` corpus only when no run is left that reads it (local/engine/runs.ts).
 */
import { randomBytes } from 'node:crypto';
import pLimit from 'p-limit';
import { EmptyCorpusError, InvalidInputError } from '../../shared/errors';
import { parseRunOptions, type RunOptions, type RunOptionsInput } from '../../shared/config';
import type { AgentModel, BlobStore } from '../../shared/ports';
import { runRecordKey } from '../../shared/pipeline/layout';
import { ExecutionFailedError } from './engine';
import { LocalExecutions } from './executions';
import { CorpusHasher, chunkCacheKey, hashCorpusObjects, IO_CONCURRENCY, type CorpusIngestion } from '../../shared/pipeline/ingest';
import { bucketOf, LOCAL_CORPUS_ID_PREFIX, removeRun, runCorpusKey } from './runs';
import { RunProgressTracker } from './run-progress';
import { startHeartbeat } from './run-heartbeat';
import type { RunProgressEvent, RunSeekEvent, RunStatusEvent } from '../../shared/progress';
import { clearRefusal, recordRefusal } from './run-refusal';
import type { RunRecord } from '../../shared/pipeline/run-record';
import type { FinalizeOutput } from '../../shared/pipeline/state';
import { parseRunRequest, type ParsedRunRequest } from '../../shared/run-request';
import { corpusPrefix } from '../../shared/corpus';
import { formatModelSpec, toModelSpec, DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';
import type { ModelSpecInput } from '../../shared/model-spec';
import type { RunResult, SkippedDocument } from '../../shared/types';
import { fingerprintOf, putCorpusFile, readCorpusFile, type CorpusFile, type CorpusFileFingerprint } from './corpus';
import { MAX_MODEL_SEQUENCES, startLocalStack, type LocalStack } from './stack';

/**
 * Progress of a local run: the events of shared/progress.ts (one vocabulary for the CLI, the
 * library's `onProgress` and `serve`'s server-sent events).
 * @deprecated the name of earlier versions; use `RunProgressEvent`.
 */
export type LocalProgress = RunProgressEvent;

/**
 * What `runLocal` takes: the settings below, and the run's question, options and run id either as
 * the caller has them (`runLocal` parses them: it is then the entry) or already parsed by the entry
 * that took them (`parsed`: the CLI, the library's `ask`), which are not parsed again.
 */
export type LocalRunRequest = LocalRunSettings &
  (
    | {
        question: string;
        options?: RunOptionsInput /** Default: `run-<UTC time>-<random>`. Reusing the id of an unfinished run resumes it (see the file comment). */;
        runId?: string;
        parsed?: undefined;
      }
    | {
        /** The question, run id and options, parsed once (shared/run-request.ts), maybe fitted (models/context.ts). */ parsed: ParsedRunRequest;
        question?: undefined;
        options?: undefined;
        runId?: undefined;
      }
  );

/** The settings of a local run besides its question, options and run id. */
export interface LocalRunSettings {
  files: CorpusFile[];
  /**
   * What the corpus arguments named but no run can read as a file (a FIFO, a socket, a symbolic link
   * loop: local/engine/corpus.ts `ResolveCorpusOptions.skipped`): listed first in the result's
   * `skipped`, with their reasons, and in the EmptyCorpusError when nothing else is left.
   */
  unreadable?: SkippedDocument[];
  /** The model spec, text or parsed (models/spec.ts): `extractive` (default), `bedrock:…`, `openai:…`, `llama:…`. */
  modelSpec?: ModelSpecInput;
  /** Directory of the local state: the bucket (`bucket/`) and the DynamoDB data (`dynamodb/`). */
  stateDir: string;
  /**
   * Gets the run's progress events in order (shared/progress.ts): `info` lines, `status` at each
   * phase, `seek` per chunk ended, `sync`, `kar` per step, `end` last. A callback that throws loses
   * that event, not the run.
   */
  onProgress?: (progress: RunProgressEvent) => void;
  /** Replace every Retry backoff by this pause, ms (tests). */
  retryIntervalMs?: number;
  /** Multiply every Retry's intervals by this factor, keeping its doubling and jitter (the capacity check). */
  retryTimeScale?: number;
  /** Use this model instead of the one the spec names (tests: a scripted or fault-injecting model). */
  model?: AgentModel;
  /**
   * Keep the DynamoDB data on disk under `<stateDir>/dynamodb`, which resuming needs. Default: true
   * when `runId` is given (the caller may start the same run again), false for a generated run id
   * (in memory for this run only, so that other local processes — `extagents serve`, another
   * `ask` — may use the same state directory at the same time).
   */
  persistent?: boolean;
  /** Aborting stops the execution: no new seeking agent starts, those in flight finish and are recorded. */
  signal?: AbortSignal;
  /** The local batch runner's limits and, with a stand-in `model`, its chat model (LocalStackOptions.batch; tests). */
  batch?: import('./stack-api').LocalStackOptions['batch'];
}

/** A fresh run id: `run-<UTC yyyymmddThhmmss>-<6 hex>`. */
export function newRunId(now: Date = new Date()): string {
  return `run-${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
}

/**
 * Run one question locally and return its result.
 * @throws ConfigurationError / InvalidInputError for bad options, model spec or run id (before any
 *   work); ConfigurationError when a persistent run's state directory is in use by another process;
 *   InvalidInputError when the run id already holds a run with another question, other options or
 *   another corpus; the domain error that failed the execution (EmptyCorpusError, …) when
 *   it has one; ExecutionFailedError otherwise (e.g. States.ExceedToleratedFailureThreshold, or
 *   `ExecutionAborted` when `signal` aborted it).
 */
export async function runLocal(request: LocalRunRequest): Promise<RunResult> {
  // Only unreadable entries (a folder of FIFOs): nothing to run, said as an empty corpus is, naming each.
  if (request.files.length === 0 && (request.unreadable ?? []).length > 0) {
    throw new EmptyCorpusError(`The corpus has no file to read: ${(request.unreadable ?? []).map((u) => `${u.documentId}: ${u.reason}`).join('; ')}`);
  }
  let parsed = request.parsed ?? parseRunRequest(request);
  const runId = parsed.runId ?? newRunId();
  const report = request.onProgress ?? (() => undefined);

  const persistent = request.persistent ?? parsed.runId !== undefined;
  const stack = await startLocalStack({
    stateDir: request.stateDir,
    modelSpec: request.modelSpec,
    model: request.model,
    batch: request.batch,
    retryIntervalMs: request.retryIntervalMs,
    retryTimeScale: request.retryTimeScale,
    persistent,
    modelSequences: Math.min((parsed.fitted?.options ?? parsed.filled).concurrency, MAX_MODEL_SEQUENCES),
  });
  try {
    // The model's option defaults (a llama: model's context) and the check that its chunks fit (once:
    // a request the CLI already fitted to this model is not checked again).
    parsed = stack.fit(parsed);
    const options = (parsed.fitted as NonNullable<ParsedRunRequest['fitted']>).options;
    const { contentHash, fingerprints } = await hashFiles(request.files);
    const previous = await previousRun(stack, runId, request, parsed.question, options, contentHash);
    // The latest status and seeking counts, for the heartbeat that tells `runs show` this run is going.
    let latest: { status?: RunStatusEvent; seek?: RunSeekEvent } = {};
    const heartbeat = await startHeartbeat(bucketOf(request.stateDir), runId, () => latest, { resumable: persistent });
    try {
      // Recorded as an execution of the state directory's one registry (local/engine/executions.ts),
      // as `serve`'s and a job's runs are: `runs ls`, `serve`'s run list and its page show it alike.
      return await new LocalExecutions({ blobs: stack.blobs }).record(runId, () =>
        execute(stack, request, parsed, runId, previous, { contentHash, fingerprints }, report, (event) => {
          if (event.type === 'status') latest = { ...latest, status: event };
          else if (event.type === 'seek') latest = { ...latest, seek: event };
          // A new phase, or a seeking agent that ended: `runs show` sees it at once, also after a kill.
          if (event.type === 'status' || event.type === 'seek') heartbeat.beat();
        }),
      );
    } catch (error) {
      await heartbeat.stop();
      // Refused before it began (Prepare wrote no run record: an empty corpus, a cost limit, bad
      // input): a run with a generated id has nothing to resume, so its corpus copy goes too; one
      // with its own id keeps why, for `runs show` (local/engine/run-refusal.ts).
      if (!(await stack.blobs.exists(runRecordKey(runId)))) {
        if (parsed.runId === undefined) await removeRun(request.stateDir, runId).catch(() => undefined);
        else await recordRefusal(stack.blobs, runId, error);
      }
      throw error;
    } finally {
      await heartbeat.stop();
    }
  } finally {
    await stack.stop();
  }
}

/**
 * The run itself, once its run id is checked: the corpus placed, the execution, its result; the
 * progress events to `report`, and to `observe` first.
 */
async function execute(
  stack: LocalStack,
  request: LocalRunRequest,
  parsed: ParsedRunRequest,
  runId: string,
  previous: { chunks: number; sought: number[] } | undefined,
  hashed: HashedFiles,
  report: (event: RunProgressEvent) => void,
  observe: (event: RunProgressEvent) => void,
): Promise<RunResult> {
  const prefix = await placeCorpus(stack.blobs, request.files, hashed);
  await stack.blobs.put(runCorpusKey(runId), JSON.stringify({ prefix }), 'application/json');
  await clearRefusal(request.stateDir, runId);
  if (previous === undefined) {
    report({
      type: 'info',
      runId,
      message: `run ${runId}: ${request.files.length} corpus file(s), model ${formatModelSpec(toModelSpec(request.modelSpec ?? DEFAULT_LOCAL_MODEL_SPEC))}`,
    });
  } else {
    const later = previous.sought
      .slice(1)
      .map((n, i) => `, ${n} in round ${i + 2}`)
      .join('');
    report({
      type: 'info',
      runId,
      message:
        `resuming run ${runId}: ${previous.sought[0]} of ${previous.chunks} chunk(s) already sought in round 1${later} ` +
        `(their seeking agents are not called again; recorded KAR steps are reused), model ${formatModelSpec(toModelSpec(request.modelSpec ?? DEFAULT_LOCAL_MODEL_SPEC))}`,
    });
  }
  const tracker = new RunProgressTracker({
    runId,
    question: parsed.question,
    store: stack.store,
    blobs: stack.blobs,
    emit: (event) => {
      observe(event);
      report(event);
    },
  });
  let output: FinalizeOutput;
  try {
    output = (await stack.execute(
      { runId, question: parsed.question, corpus: { prefix }, options: parsed.options },
      { signal: request.signal, ...tracker.callbacks },
    )) as FinalizeOutput;
  } catch (error) {
    const failed = error instanceof Error ? error : new Error(String(error));
    const aborted = failed instanceof ExecutionFailedError && failed.error === 'ExecutionAborted';
    tracker.end({
      status: aborted ? 'ABORTED' : 'FAILED',
      error: { name: failed instanceof ExecutionFailedError ? failed.error : failed.name, message: failed.message },
    });
    await tracker.flush();
    throw error;
  }
  let result = JSON.parse(await stack.blobs.getText(output.resultKey)) as RunResult;
  const unreadable = request.unreadable ?? [];
  if (unreadable.length > 0 && !unreadable.every((u) => result.skipped.some((s) => s.documentId === u.documentId))) {
    // The stored result says it too (`runs show`, the page): written once, a replay finds it there.
    result = { ...result, skipped: [...unreadable, ...result.skipped] };
    await stack.blobs.put(output.resultKey, JSON.stringify(result), 'application/json');
  }
  tracker.end({ status: 'SUCCEEDED', answer: result.answer, answerable: result.answerable });
  await tracker.flush();
  return result;
}

/** The content hash of a run's corpus files and what was read of each file to make it. */
export interface HashedFiles {
  /** `CorpusHasher` over the files' ids and bytes (shared/pipeline/ingest.ts). */
  contentHash: string;
  /** Each file's size and digest as hashed, by document id: the copy must hold these bytes. */
  fingerprints: Map<string, CorpusFileFingerprint>;
}

/**
 * The content hash of the corpus files (`CorpusHasher`: ids and bytes in the given order, which is
 * the bucket's key order for the files' keys under one prefix), reading one file at a time, and the
 * fingerprint of each file read (so that {@link placeCorpus} stores exactly the bytes hashed).
 */
export async function hashFiles(files: CorpusFile[]): Promise<HashedFiles> {
  const hasher = new CorpusHasher();
  const fingerprints = new Map<string, CorpusFileFingerprint>();
  for (const file of [...files].sort((a, b) => compareKeys(a.id, b.id))) {
    const object = await readCorpusFile(file);
    hasher.add(object);
    fingerprints.set(file.id, object.tooLargeSize !== undefined ? { size: object.tooLargeSize } : fingerprintOf(object.bytes));
  }
  return { contentHash: hasher.digest(), fingerprints };
}

/** Key order of the bucket's `list` (UTF-8 byte order, as S3 and the directory bucket list them). */
const compareKeys = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * The corpus prefix the run reads: a corpus already in the bucket whose objects are exactly these
 * files (same ids, same content hash: an ingested corpus, or the content-addressed copy an earlier
 * run made), else `corpora/local-<hash>/`, with the files put there (only those missing: a corpus
 * id is the content hash of all its files, so a file present under it has the right bytes).
 * @throws InvalidInputError naming a file whose bytes changed since {@link hashFiles} read them
 *   (nothing is stored under the hash for it: its copy would not hold the hashed bytes).
 */
export async function placeCorpus(blobs: BlobStore, files: CorpusFile[], hashed: HashedFiles): Promise<string> {
  const { contentHash } = hashed;
  const ids = new Set(files.map((f) => f.id));
  const holdsExactly = async (prefix: string): Promise<{ exact: boolean; present: Set<string> }> => {
    const present = new Set((await blobs.list(prefix)).map((o) => o.key.slice(prefix.length)));
    return { exact: present.size === ids.size && [...ids].every((id) => present.has(id)), present };
  };
  // An ingested corpus of the same content (its summary names the hash of its last ingestion; the
  // objects are hashed again, since they may have changed since).
  for (const { key } of await blobs.list('cache/corpora/')) {
    if (!key.endsWith('/ingestion.json')) continue;
    const ingestion = JSON.parse(await blobs.getText(key)) as CorpusIngestion;
    if (ingestion.contentHash !== contentHash) continue;
    const { exact } = await holdsExactly(ingestion.prefix);
    if (exact && (await hashCorpusObjects(blobs, files.map((f) => ingestion.prefix + f.id).sort(compareKeys), ingestion.prefix)) === contentHash)
      return ingestion.prefix;
  }
  const prefix = corpusPrefix(`${LOCAL_CORPUS_ID_PREFIX}${contentHash}`);
  const { present } = await holdsExactly(prefix);
  const limit = pLimit(IO_CONCURRENCY);
  await Promise.all(files.filter((f) => !present.has(f.id)).map((f) => limit(() => putCorpusFile(blobs, prefix + f.id, f, hashed.fingerprints.get(f.id)))));
  return prefix;
}

/**
 * The run already recorded under `runId`, if any (its run record exists: Prepare finished once).
 * @returns undefined for a new run id; else its chunk count and how many chunks were already sought
 *   in each round, from round 1 to the last round with any (at least round 1's count).
 * @throws InvalidInputError when the recorded run has another question, other options or another
 *   corpus (ids or bytes: its chunk cache key, which is derived from them and `chunkTokens`), since
 *   resuming it would mix two runs; or when a new run id already has a corpus copy of the earlier
 *   layout (`corpora/<runId>/`) with files that are not among this run's.
 */
async function previousRun(
  stack: LocalStack,
  runId: string,
  request: LocalRunRequest,
  question: string,
  options: RunOptions,
  contentHash: string,
): Promise<{ chunks: number; sought: number[] } | undefined> {
  const legacyPrefix = corpusPrefix(runId);
  const stored = await stack.blobs.list(legacyPrefix);
  const storedIds = new Set(stored.map((o) => o.key.slice(legacyPrefix.length)));
  const refuse = (what: string): never => {
    throw new InvalidInputError(
      `Run id ${runId} already holds a run in ${request.stateDir} with ${what}; resuming needs the same question, ` +
        'options and corpus: choose another run id (--run-id) for a new run',
    );
  };
  if (!(await stack.blobs.exists(runRecordKey(runId)))) {
    const foreign = [...storedIds].filter((id) => !request.files.some((f) => f.id === id));
    if (foreign.length > 0) refuse(`other corpus files (${foreign.slice(0, 3).join(', ')})`);
    return undefined;
  }
  const record = JSON.parse(await stack.blobs.getText(runRecordKey(runId))) as RunRecord;
  if (record.question !== question) refuse(`another question (${JSON.stringify(record.question)})`);
  // Through the schema: a record written before an option existed holds its default.
  const recorded = parseRunOptions(record.options);
  if (canonical(recorded) !== canonical(options)) {
    // Name only the options that differ: the run's value, then this call's.
    const differing = Object.keys({ ...recorded, ...options })
      .sort()
      .filter((key) => canonical(recorded[key as keyof typeof recorded]) !== canonical(options[key as keyof typeof options]))
      .map((key) => `${key} ${canonical(recorded[key as keyof typeof recorded])} there, ${canonical(options[key as keyof typeof options])} now`);
    refuse(`other options (${differing.join('; ')})`);
  }
  const sameCorpus =
    record.chunkCache !== undefined
      ? record.chunkCache.key === chunkCacheKey(contentHash, options.chunkTokens)
      : request.files.length === storedIds.size &&
        request.files.every((f) => storedIds.has(f.id)) &&
        (await sameBytes(stack.blobs, legacyPrefix, request.files));
  if (!sameCorpus) refuse('another corpus (files added, removed or changed)');
  const sought: number[] = [];
  for (let round = 1; round <= record.options.rounds; round++) sought.push((await stack.store.soughtChunks(runId, round)).length);
  while (sought.length > 1 && sought[sought.length - 1] === 0) sought.pop();
  return { chunks: record.chunks, sought };
}

/** Do the stored corpus objects hold exactly the files' bytes? (Runs recorded before the chunk cache.) */
async function sameBytes(blobs: BlobStore, prefix: string, files: CorpusFile[]): Promise<boolean> {
  const sizes = new Map((await blobs.list(prefix)).map((o) => [o.key, o.size]));
  for (const file of files) {
    const local = await readCorpusFile(file);
    // A file too large to read counts by its size (its text is skipped whatever it holds).
    if (local.tooLargeSize !== undefined) {
      if (sizes.get(prefix + file.id) !== local.tooLargeSize) return false;
      continue;
    }
    const stored = await blobs.get(prefix + file.id);
    if (Buffer.compare(Buffer.from(stored), local.bytes) !== 0) return false;
  }
  return true;
}

/** JSON with keys sorted, for comparing validated options whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
