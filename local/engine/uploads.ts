/**
 * Upload triggers in local mode (docs/UPLOADS.md): what the EventBridge rules do in AWS, run
 * in-process over the local stack's bucket directory.
 *
 * - {@link ingestLocalCorpus}: put files under `corpora/<corpusId>/` and ingest them once (the same
 *   `ingestCorpus` the ingest Lambda runs).
 * - {@link runJob}: run a job file `jobs/<name>.json` of the local bucket: plan it, run every question
 *   on the local question-answering state machine with bounded concurrency, write
 *   `results/<name>.jsonl` and the summary (the same `planJob` / `writeJobResults` the jobs state
 *   machine's Lambdas run). The jobs state machine itself is not executed locally (the local engine
 *   emulates Lambda tasks and Distributed Maps, not `startExecution.sync`); its per-question
 *   semantics are reproduced here: each question is an execution named by the job version and its
 *   index, a name already used starts nothing (Step Functions' ExecutionAlreadyExists), one failing
 *   question does not fail the job.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import pLimit from 'p-limit';
import { ConfigurationError, InvalidInputError } from '../../shared/errors';
import { issueMessages } from '../../shared/validation';
import { corpusPrefix, parseCorpusId } from '../../shared/corpus';
import { ingestCorpus, type IngestOutcome } from '../../shared/pipeline/ingest';
import { JOBS_PREFIX, JobNameSchema, loadJob, planJob, writeJobResults, type JobState, type JobSummary } from '../../shared/pipeline/jobs';
import type { BlobStore } from '../../shared/ports';
import type { RunOptionsInput } from '../../shared/config';
import { putCorpusFile, type CorpusFile } from './corpus';
import { LocalExecutions } from './executions';
import type { LocalStack } from './stack';

/**
 * Put corpus files under `corpora/<corpusId>/<file id>` of a bucket and ingest the corpus.
 * @param options.chunkTokens L of the cached chunks (runs with this chunkTokens reuse them). @default 8000
 * @throws InvalidInputError for an invalid corpus id; ConfigurationError for an invalid chunkTokens.
 */
export async function ingestLocalCorpus(
  blobs: BlobStore,
  corpusId: string,
  files: readonly CorpusFile[],
  options: { chunkTokens?: number; now?: () => Date } = {},
): Promise<IngestOutcome> {
  const id = parseCorpusId(corpusId);
  const limit = pLimit(16);
  await Promise.all(files.map((f) => limit(() => putCorpusFile(blobs, corpusPrefix(id) + f.id, f))));
  return ingestCorpus(id, { blobs, now: options.now }, { chunkTokens: options.chunkTokens });
}

/**
 * Copy a job file from disk to `jobs/<name>.json` of a bucket.
 * @param name the job name; @default the file name without `.json`
 * @returns the key written.
 * @throws InvalidInputError for an invalid job name.
 */
export async function submitJobFile(blobs: BlobStore, file: string, name?: string): Promise<string> {
  const jobName = name ?? file.replace(/^.*[\\/]/, '').replace(/\.json$/, '');
  const parsed = JobNameSchema.safeParse(jobName);
  if (!parsed.success) {
    const from = name === undefined ? ' (taken from the file name; give another with --name)' : '';
    throw new InvalidInputError(`Invalid job name ${JSON.stringify(jobName)}${from}: ${issueMessages(parsed.error)}`);
  }
  const key = `${JOBS_PREFIX}${parsed.data}.json`;
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a job file' : `cannot be read (${code ?? String(error)})`;
    throw new InvalidInputError(`job file ${file}: ${why}`, { cause: error });
  }
  await blobs.put(key, bytes, 'application/json');
  return key;
}

/** The ETag an upload event would give the object `key` (the MD5 of its bytes: an S3 single-part ETag). */
async function localEtag(blobs: BlobStore, key: string): Promise<string> {
  return createHash('md5')
    .update(await blobs.get(key))
    .digest('hex');
}

/**
 * Plan the job file `key` (`jobs/<name>.json`) as {@link runJob} will, without running anything:
 * validates the job file, so a rejected one fails here, before any stack starts (its `rejected`
 * summary is written, as in AWS). Planning is deterministic: runJob plans the same items again.
 * @throws InvalidInputError for an invalid job file; NotFoundError when the key does not exist.
 */
export async function planLocalJob(blobs: BlobStore, key: string, etag?: string): Promise<JobState> {
  return planJob({ key, etag: etag ?? (await localEtag(blobs, key)) }, { blobs });
}

/** Options of {@link runJob}. */
export interface RunJobOptions {
  /** Questions running at once (the jobs state machine's MaxConcurrency). @default 4 */
  concurrency?: number;
  /** The job object's ETag as the upload event would give it. @default the MD5 of its bytes (an S3 single-part ETag) */
  etag?: string;
  /** Called once the job is planned, with its number of questions. */
  onPlanned?: (questions: number) => void;
  /** Called when a question ends (`started` false: its execution existed already). */
  onQuestionDone?: (index: number, outcome: { started: boolean; status: string }) => void;
}

/** What {@link runJob} did. */
export interface RunJobOutcome {
  jobId: string;
  /** Questions whose execution this call started. */
  started: number;
  /** Questions whose execution existed already (a duplicate delivery): nothing started. */
  alreadyStarted: number;
  summary: JobSummary;
}

/**
 * Run the job file `key` (`jobs/<name>.json`) of the local stack's bucket: plan, run every question
 * (at most `concurrency` at once), write the results and the summary. Calling it again for the same
 * job version (same key and ETag) starts nothing and rewrites the same results.
 *
 * @throws InvalidInputError for an invalid job file (a `rejected` summary is written first);
 *   NotFoundError when the key does not exist.
 */
export async function runJob(stack: LocalStack, key: string, options: RunJobOptions = {}): Promise<RunJobOutcome> {
  const { blobs } = stack;
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new InvalidInputError(`concurrency must be a positive integer, got ${concurrency}`);
  const state = await planLocalJob(blobs, key, options.etag);
  const { items } = await loadJob(blobs, state.jobId);
  options.onPlanned?.(items.length);
  const executions = new LocalExecutions({ blobs });

  let started = 0;
  let alreadyStarted = 0;
  const limit = pLimit(concurrency);
  await Promise.all(
    items.map((item) =>
      limit(async () => {
        const outcome = await executions.run(item.executionName, async () => {
          // The job's options, checked against the stack's model as an API request's are (models/context.ts).
          const unfit = stack.runOptionProblems({ ...stack.runOptionDefaults, ...(item.input.options as RunOptionsInput | undefined) });
          if (unfit.length > 0) throw new ConfigurationError(unfit.map((u) => `options.${u.option}: ${u.detail}`).join('; '));
          return stack.execute(item.input);
        });
        if (outcome.started) started += 1;
        else alreadyStarted += 1;
        options.onQuestionDone?.(item.index, outcome);
      }),
    ),
  );
  const summary = await writeJobResults(state.jobId, { blobs, executions });
  return { jobId: state.jobId, started, alreadyStarted, summary };
}
