/**
 * Batch jobs (docs/UPLOADS.md): a job file uploaded to `jobs/<name>.json` names a corpus and a list
 * of questions; every question runs as one execution of the question-answering workflow, and the
 * results are written to `results/<name>.jsonl` (one line per question, in input order) and
 * `results/<name>.summary.json`.
 *
 * Exactly-once starts: each question's execution name (also its run id) is derived from the job
 * object's key, its version (S3 version id, else ETag) and the question index. Step Functions refuses
 * a second execution of a name (`ExecutionAlreadyExists`), so a duplicate delivery of the same upload
 * event starts nothing twice, while a re-upload (a new version id in a versioned bucket such as the
 * project bucket, else a new ETag) is a new job.
 *
 * Domain code: no AWS SDK. Ports: BlobStore, and `ExecutionLookup` (shared/executions.ts: how a
 * question's execution ended, when it left no result). AWS: the jobs state machine (infra/ingest.ts)
 * with lambdas/jobs.ts; local: `runJob` (local/engine/uploads.ts).
 */
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { z } from 'zod';
import { CorpusIdSchema, CorpusRefSchema, resolveCorpusRef, type CorpusRef, type CorpusSelection } from '../corpus';
import { RunOptionsSchema, type RunOptionsInput } from '../config';
import { InvalidInputError, errorFromFailure } from '../errors';
import type { ExecutionDescription, ExecutionLookup } from '../executions';
import type { BlobStore } from '../ports';
import type { RunResult, Usage } from '../types';
import { IO_CONCURRENCY } from './ingest';
import { resultKey } from './layout';
import { PrepareEventSchema, QuestionSchema, type PrepareEvent } from './state';
import { issueDetail, issuesText } from '../validation';

/** Most questions one job file may hold (bounds the job's planning and results objects). */
export const MAX_JOB_QUESTIONS = 1000;

/** Prefix of job files. */
export const JOBS_PREFIX = 'jobs/';
/** Prefix of job results. */
export const RESULTS_PREFIX = 'results/';

/**
 * Job names: the file name of `jobs/<name>.json`; 1-40 characters of A-Z a-z 0-9 . _ -, starting
 * with a letter or digit (they become part of key and execution names, which allow 80 characters).
 */
export const JobNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/, 'job name must be 1-40 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)');

/** `results/<name>.jsonl`. */
export const jobResultsKey = (name: string): string => `${RESULTS_PREFIX}${name}.jsonl`;
/** `results/<name>.summary.json`. */
export const jobSummaryKey = (name: string): string => `${RESULTS_PREFIX}${name}.summary.json`;
/** Folder of one job's planning objects (under `runs/`, so they expire with run data). */
export const jobStatePrefix = (jobId: string): string => `runs/_jobs/${jobId}/`;
/** The job's plan (`JobPlan`). */
export const jobPlanKey = (jobId: string): string => `${jobStatePrefix(jobId)}job.json`;
/** The jobs state machine's ItemReader object: a JSON array of `JobItem`. */
export const jobItemsKey = (jobId: string): string => `${jobStatePrefix(jobId)}items.json`;

/** Report the issues of a nested parse as issues of the value being parsed (paths stay relative to it). */
function forwardIssues(ctx: { issues: z.core.$ZodRawIssue[] }, error: z.ZodError, input: unknown): void {
  for (const issue of error.issues) ctx.issues.push({ ...issue, input } as z.core.$ZodRawIssue);
}

/**
 * A job's `corpus`, validated by the corpus reference's rules (shared/corpus.ts, one implementation):
 * a corpus id string (`"my-corpus"`, the same as `{"id": "my-corpus"}`), or the API's corpus object
 * `{"id"}`, `{"prefix"}` or `{"keys"}` (exactly one; keys of the project bucket only: no URI, no
 * `runs/`, `api/` or `cache/`, no absolute key or `..` segment; at most 1,000 keys). Normalized to
 * the object form.
 */
const JobCorpusSchema = z.unknown().transform((value, ctx): CorpusRef => {
  if (typeof value === 'string') {
    const id = CorpusIdSchema.safeParse(value);
    if (id.success) return { id: id.data };
    forwardIssues(ctx, id.error, value);
    return z.NEVER;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ctx.addIssue({
      code: 'custom',
      input: value,
      message: `${value === undefined ? 'required: ' : 'expected '}a corpus id such as "my-corpus", or an object with exactly one of id, prefix or keys`,
    });
    return z.NEVER;
  }
  const ref = CorpusRefSchema.safeParse(value);
  if (ref.success) return ref.data;
  forwardIssues(ctx, ref.error, value);
  return z.NEVER;
});

/**
 * Run options of a job or of one question, validated by the run options' schema (shared/config.ts)
 * but kept as given (no defaults filled), so a question's options override only what they name.
 */
const JobRunOptionsSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const result = RunOptionsSchema.safeParse(value);
  if (!result.success) forwardIssues(ctx, result.error, value);
});

/** The job file: a corpus, the questions, and run options shared by all questions. */
export const JobFileSchema = z
  .object({
    /** A corpus id (`corpora/<id>/`), or the API's corpus object (`{id}`, `{prefix}` or `{keys}`). */
    corpus: JobCorpusSchema,
    questions: z
      .array(
        z
          .object({
            question: QuestionSchema,
            /** Run options of this question, over the job's options. */
            options: JobRunOptionsSchema.optional(),
          })
          .strict(),
      )
      .min(1, 'a job needs at least one question')
      .max(MAX_JOB_QUESTIONS, `a job holds at most ${MAX_JOB_QUESTIONS} questions`),
    /** Run options of every question (shared/config.ts). */
    options: JobRunOptionsSchema.optional(),
  })
  .strict();

export type JobFile = z.infer<typeof JobFileSchema>;

/** The uploaded job object: key and version, from the S3 event (or computed locally). */
export interface JobObjectRef {
  /** `jobs/<name>.json`. */
  key: string;
  /** The object's ETag (quotes removed), when known. */
  etag?: string;
  /** The object's version id (versioned buckets), preferred over the ETag when present. */
  versionId?: string;
}

/** One question of a planned job: its execution name and the workflow input. */
export interface JobItem {
  index: number;
  /** Step Functions execution name and run id: `<name>-<jobHash>-q<index>`. */
  executionName: string;
  /** The workflow's execution input (Prepare's event). */
  input: PrepareEvent;
}

/** `runs/_jobs/<jobId>/job.json`: what planning decided. */
export interface JobPlan {
  /** `<name>-<jobHash>`. */
  jobId: string;
  name: string;
  source: JobObjectRef;
  /** The workflow's corpus reference. */
  corpus: CorpusSelection;
  questions: number;
  itemsKey: string;
  resultsKey: string;
  summaryKey: string;
  /** ISO-8601 time of planning. */
  plannedAt: string;
}

/** The state of the jobs state machine after planning (small: no question text). */
export interface JobState {
  jobId: string;
  name: string;
  itemsKey: string;
  questions: number;
}

/** One line of `results/<name>.jsonl`. */
export type JobResultLine =
  | { index: number; question: string; runId: string; status: 'succeeded'; result: RunResult }
  | { index: number; question: string; runId: string; status: 'failed'; error: { name: string; message: string } };

/** `results/<name>.summary.json`. */
export interface JobSummary {
  job: string;
  source: JobObjectRef;
  status: 'completed' | 'rejected';
  questions: number;
  succeeded: number;
  failed: number;
  /** Succeeded runs that answered (the rest refused with "NO ANSWER"). */
  answerable: number;
  /** Model usage summed over the succeeded runs. */
  usage: Usage;
  failures: Array<{ index: number; question: string; runId: string; error: { name: string; message: string } }>;
  /** Why the job file was rejected (status `rejected`; nothing ran). */
  error?: { name: string; message: string };
  resultsKey?: string;
  /** ISO-8601 time the summary was written. */
  completedAt: string;
}

/**
 * The job name of a key `jobs/<name>.json`.
 * @throws InvalidInputError for any other key or an invalid name.
 */
export function jobNameOfKey(key: string): string {
  const match = /^jobs\/(.+)\.json$/.exec(key);
  const parsed = JobNameSchema.safeParse(match?.[1]);
  if (!match || !parsed.success) {
    throw new InvalidInputError(
      `Job files must be uploaded as jobs/<name>.json with a name of 1-40 characters of A-Z a-z 0-9 . _ - (got ${JSON.stringify(key)})`,
    );
  }
  return parsed.data;
}

/** `<name>-<16 hex of SHA-256(key, version id or ETag)>`: one id per uploaded version of a job file. */
export function jobIdOf(ref: JobObjectRef): string {
  const version = ref.versionId ? `version:${ref.versionId}` : `etag:${ref.etag ?? ''}`;
  const hash = createHash('sha256').update(`${ref.key}\n${version}`).digest('hex').slice(0, 16);
  return `${jobNameOfKey(ref.key)}-${hash}`;
}

/** The execution name (and run id) of question `index` of a job: `<jobId>-q<index>` (at most 66 characters). */
export const questionExecutionName = (jobId: string, index: number): string => `${jobId}-q${index}`;

/**
 * Parse and validate a job file's text. A leading UTF-8 byte order mark (U+FEFF, which editors on
 * Windows write) is not part of the JSON and is ignored, as for corpus files (RFC 8259 section 8.1
 * lets a parser ignore it).
 * @throws InvalidInputError naming every invalid field (JSON syntax, shape, corpus, run options),
 *   e.g. `Invalid job file: corpus.prefix: prefix must not point into runs/ (the service's own data)`.
 */
export function parseJobFile(text: string): JobFile {
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new InvalidInputError(`The job file is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const result = JobFileSchema.safeParse(json);
  if (!result.success) throw new InvalidInputError(`Invalid job file: ${jobIssues(result.error).join('; ')}`);
  return result.data;
}

/**
 * One line per problem, `<path>: <detail>` with the path in dots (`questions.1.options.rounds`);
 * unknown fields as the API words them: `unknown field "priority"`.
 */
function jobIssues(error: z.ZodError): string[] {
  const out: string[] = [];
  for (const issue of error.issues) {
    const at = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push(`${at ? `${at}: ` : ''}unknown field ${JSON.stringify(key)}`);
      continue;
    }
    const detail = issueDetail(issue);
    out.push(`${at || '(job)'}: ${detail}`);
  }
  return out;
}

/** The run options of question `index`: the host's defaults, under the job's options, under the question's. */
function mergedOptions(job: JobFile, index: number, defaults: RunOptionsInput = {}): RunOptionsInput {
  return { ...defaults, ...job.options, ...job.questions[index]?.options } as RunOptionsInput;
}

/** The workflow's corpus reference of a job's `corpus` (as the API resolves it). */
function corpusOf(job: JobFile): CorpusSelection {
  return resolveCorpusRef(job.corpus);
}

/** Dependencies of the job use cases. */
export interface JobDeps {
  blobs: BlobStore;
  /** Clock (tests pass a fixed one). */
  now?: () => Date;
  /**
   * Run options of every question under the job's own (the AWS jobs trigger's `seekMode: 'batch'`
   * with a bedrock: model: job files are work nobody waits for; JOB_SEEK_MODE). @default none
   */
  defaultOptions?: RunOptionsInput;
}

/**
 * Plan a job: read and validate the job file, write the plan and the items (one per question, in
 * input order, each with its execution name and workflow input). Deterministic for one job object
 * version: a duplicate delivery writes the same items, so the same names and inputs.
 *
 * A rejected job file (invalid JSON, shape, corpus or options) gets a `rejected` summary at
 * `results/<name>.summary.json` with the error, so the uploader sees why, and nothing runs.
 *
 * @returns the small state the jobs state machine carries.
 * @throws InvalidInputError for an invalid key or job file; NotFoundError when the object is gone.
 */
export async function planJob(ref: JobObjectRef, deps: JobDeps): Promise<JobState> {
  const { blobs } = deps;
  const now = (deps.now ?? (() => new Date()))().toISOString();
  const name = jobNameOfKey(ref.key);
  const jobId = jobIdOf(ref);
  let job: JobFile;
  try {
    job = parseJobFile(await blobs.getText(ref.key));
  } catch (error) {
    if (error instanceof InvalidInputError) {
      const summary: JobSummary = {
        ...emptySummary(name, ref, 0, now),
        status: 'rejected',
        error: { name: error.name, message: error.message },
      };
      await blobs.put(jobSummaryKey(name), JSON.stringify(summary, null, 2), 'application/json');
    }
    throw error;
  }
  const corpus = corpusOf(job);
  const items: JobItem[] = job.questions.map((q, index) => {
    const executionName = questionExecutionName(jobId, index);
    const options = mergedOptions(job, index, deps.defaultOptions);
    const input: PrepareEvent = {
      runId: executionName,
      question: q.question,
      corpus,
      ...(Object.keys(options).length > 0 && { options }),
    };
    // The workflow validates its input again; checking here rejects a bad job before anything runs.
    const checked = PrepareEventSchema.safeParse(input);
    if (!checked.success) {
      throw new InvalidInputError(`Invalid job file: questions.${index}: ${issuesText(checked.error)}`);
    }
    return { index, executionName, input };
  });
  const plan: JobPlan = {
    jobId,
    name,
    source: ref,
    corpus,
    questions: items.length,
    itemsKey: jobItemsKey(jobId),
    resultsKey: jobResultsKey(name),
    summaryKey: jobSummaryKey(name),
    plannedAt: now,
  };
  await blobs.put(plan.itemsKey, JSON.stringify(items), 'application/json');
  await blobs.put(jobPlanKey(jobId), JSON.stringify(plan), 'application/json');
  return { jobId, name, itemsKey: plan.itemsKey, questions: items.length };
}

/** Read a job's plan and items. @throws NotFoundError when the job was never planned. */
export async function loadJob(blobs: BlobStore, jobId: string): Promise<{ plan: JobPlan; items: JobItem[] }> {
  const plan = JSON.parse(await blobs.getText(jobPlanKey(jobId))) as JobPlan;
  const items = JSON.parse(await blobs.getText(plan.itemsKey)) as JobItem[];
  return { plan, items };
}

/**
 * Write a job's results once every question's execution has ended: `results/<name>.jsonl`, one line
 * per question in input order (the `RunResult` of `runs/<runId>/result.json`, or the error of the
 * execution that left no result), then `results/<name>.summary.json` (counts, answerable, usage
 * totals, failures).
 *
 * @param deps.executions how a question without a result ended (its error and cause).
 * @returns the summary written.
 * @throws NotFoundError when the job was never planned.
 */
export async function writeJobResults(jobId: string, deps: JobDeps & { executions: ExecutionLookup }): Promise<JobSummary> {
  const { blobs } = deps;
  const { plan, items } = await loadJob(blobs, jobId);
  const limit = pLimit(IO_CONCURRENCY);
  const lines = await Promise.all(items.map((item) => limit(() => resultLineOf(item, deps))));

  const summary = emptySummary(plan.name, plan.source, items.length, (deps.now ?? (() => new Date()))().toISOString());
  for (const line of lines) {
    if (line.status === 'succeeded') {
      summary.succeeded += 1;
      if (line.result.answerable) summary.answerable += 1;
      for (const role of ['seeker', 'reasoner'] as const) {
        summary.usage[role].calls += line.result.usage[role].calls;
        summary.usage[role].inputTokens += line.result.usage[role].inputTokens;
        summary.usage[role].outputTokens += line.result.usage[role].outputTokens;
      }
    } else {
      summary.failed += 1;
      summary.failures.push({ index: line.index, question: line.question, runId: line.runId, error: line.error });
    }
  }
  summary.resultsKey = plan.resultsKey;
  await blobs.put(plan.resultsKey, lines.map((line) => JSON.stringify(line)).join('\n') + '\n', 'application/x-ndjson');
  await blobs.put(plan.summaryKey, JSON.stringify(summary, null, 2), 'application/json');
  return summary;
}

async function resultLineOf(item: JobItem, deps: JobDeps & { executions: ExecutionLookup }): Promise<JobResultLine> {
  const runId = item.executionName;
  const base = { index: item.index, question: item.input.question, runId };
  const key = resultKey(runId);
  if (await deps.blobs.exists(key)) {
    return { ...base, status: 'succeeded', result: JSON.parse(await deps.blobs.getText(key)) as RunResult };
  }
  const execution = await deps.executions.describe(item.executionName);
  return { ...base, status: 'failed', error: failureOf(execution) };
}

/** A readable error of an execution without a result (undefined: never started): our typed error when it names one. */
function failureOf(execution: ExecutionDescription | undefined): { name: string; message: string } {
  if (execution === undefined) return { name: 'ExecutionNotStarted', message: 'The question was never started' };
  if (execution.status === 'FAILED' || execution.status === 'TIMED_OUT' || execution.status === 'ABORTED') {
    const name = execution.error ?? `Execution${execution.status.charAt(0)}${execution.status.slice(1).toLowerCase()}`;
    const typed = errorFromFailure(name, execution.cause ?? '');
    return { name, message: typed?.message ?? execution.cause ?? `The execution ended ${execution.status}` };
  }
  return { name: 'NoResult', message: `The execution is ${execution.status} and has written no result` };
}

function emptySummary(name: string, source: JobObjectRef, questions: number, now: string): JobSummary {
  const zero = () => ({ calls: 0, inputTokens: 0, outputTokens: 0 });
  return {
    job: name,
    source,
    status: 'completed',
    questions,
    succeeded: 0,
    failed: 0,
    answerable: 0,
    usage: { seeker: zero(), reasoner: zero() },
    failures: [],
    completedAt: now,
  };
}
