/**
 * The library API of the `extagents` package: `import { ask, survey, startLocalStack } from
 * 'extagents'`. The same local engine as the CLI (which calls these functions): the synthesized Step
 * Functions workflow run in-process, DynamoDB on dynalite (127.0.0.1), the bucket as a directory.
 *
 * State: each call keeps its objects (the bucket, and DynamoDB data for a resumable run) in
 * `stateDir`; without one, in a new temporary directory removed when the call returns, so a
 * library call leaves nothing behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RunOptionsInput } from '../shared/config';
import { InvalidInputError, RunAbortedError } from '../shared/errors';
import type { ModelSpecInput } from '../shared/model-spec';
import type { SurveyOptionsInput } from '../shared/survey/options';
import type { RunResult, SkippedDocument } from '../shared/types';
import { resolveCorpus, type CorpusFile } from './engine/corpus';
import { runLocal } from './engine/run';
import { parseRunRequest, type ParsedRunRequest } from '../shared/run-request';
import type { RunProgressEvent } from '../shared/progress';
import { startLocalStack as startEngineStack } from './engine/stack';
import type { LocalStack, LocalStackOptions } from './engine/stack-api';
import { runLocalSurvey, type LocalSurveyOutput, type LocalSurveyProgress } from './engine/survey';
import { reasonText } from '../models/call-signal';

// The public face of the local stack (local/engine/stack-api.ts), not the engine's own type, so that the
// package's declarations reach no AWS SDK, aws-local-stepfunctions or Lambda handler types.
export type { ExecutionCallbacks, LocalStack, LocalStackOptions, MapRunStartedEvent } from './engine/stack-api';
// Every class of ERROR_CLASSES (shared/errors.ts), and the survey's NoEvidenceError: test/integration/library.test.ts
// checks that this list names them all, and that the package's ES module entry (dist/lib/index.mjs) does.
export {
  ExtAgentsError,
  ConfigurationError,
  MissingPackageError,
  InvalidInputError,
  InvalidRunOptionsError,
  CostLimitExceededError,
  QuotaExceededError,
  EmptyCorpusError,
  ModelError,
  ModelConfigurationError,
  ModelThrottledError,
  ModelUnavailableError,
  ModelTimeoutError,
  ContextOverflowError,
  SeekingFailedError,
  StorageError,
  NotFoundError,
  RunAbortedError,
} from '../shared/errors';
export { NoEvidenceError } from '../shared/survey/errors';
export { NO_ANSWER } from '../shared/types';
export type { Citation, KarStep, RunResult, SkippedDocument, Usage } from '../shared/types';
export type { RunOptionsInput } from '../shared/config';
export { parseRunRequest, type ParsedRunRequest } from '../shared/run-request';
export type { ModelSpec, ModelSpecInput } from '../shared/model-spec';
export type { SurveyOptionsInput } from '../shared/survey/options';
export type { LocalProgress } from './engine/run';
export type {
  RunProgressEvent,
  RunStatusEvent,
  RunSeekEvent,
  RunSyncEvent,
  RunKarEvent,
  RunEndEvent,
  RunInfoEvent,
  RunPhase,
} from '../shared/progress';
export { RUN_PHASES } from '../shared/progress';
export { resolveCorpus, type CorpusFile, type ResolveCorpusOptions } from './engine/corpus';
export type { LocalSurveyOutput, LocalSurveyProgress } from './engine/survey';

/**
 * Start the local stack (the synthesized workflow run in-process, DynamoDB on dynalite, the bucket
 * as a directory under `stateDir`); `stop()` it when done.
 * @throws ConfigurationError for an invalid model spec; MissingPackageError for a `llama:` model
 *   without node-llama-cpp installed.
 */
export function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  return startEngineStack(options);
}

/**
 * What {@link ask} takes: the settings of {@link AskSettings}, and the question, options and run id
 * either as the caller has them (`ask` parses them, once) or already parsed by {@link parseRunRequest}
 * (`parsed`: not parsed again; the CLI passes its request so).
 */
export type AskRequest = AskSettings &
  (
    | {
        question: string;
        /** Run options (docs/CONFIGURATION.md, "Configuration reference"); every field optional, defaults from the schema. */
        options?: RunOptionsInput;
        /** A run id: kept under `stateDir` (which it then needs), and the same id resumes the run. */
        runId?: string;
        parsed?: undefined;
      }
    | { parsed: ParsedRunRequest; question?: undefined; options?: undefined; runId?: undefined }
  );

/** The settings of {@link ask} besides the question, options and run id. */
export interface AskSettings {
  /**
   * The corpus: files, directories (every file below), glob patterns, `sotu`, or with `stateDir` the
   * id of a corpus ingested there, as for `extagents ask --corpus`; or files already resolved
   * (`resolveCorpus`), as the CLI passes them.
   */
  corpus: string | readonly string[] | readonly CorpusFile[];
  /** `extractive` (default, offline), `bedrock:<seeker>[,<reasoner>]`, `openai:<model>[,<reasoner>]` or `llama:<model.gguf>[,<reasoner.gguf>]`, or a parsed spec. */
  model?: ModelSpecInput;
  /** Where the run keeps its objects; default: a temporary directory removed afterwards. */
  stateDir?: string;
  /** Directory the corpus arguments are relative to. @default process.cwd() */
  cwd?: string;
  /**
   * Gets the run's progress, in order (`RunProgressEvent`, the vocabulary of the CLI's progress and
   * of `serve`'s server-sent events; docs/CLI.md, "Progress"): `info` lines, `status` at each phase
   * (preparing, seeking round r, synchronizing, a KAR step with its k, the best-effort answer,
   * finalizing, finished), `seek` as each chunk ends (done, failed, total, messages, etaMs), `sync`,
   * `kar` after each KAR step (k, messages read, outcome), `end` last.
   */
  onProgress?: (progress: RunProgressEvent) => void;
  /**
   * Aborting stops the run: no new seeking agent starts and the model calls in flight are stopped
   * (models/call-signal.ts); `ask` then rejects with `RunAbortedError`, whose `reason` is the
   * signal's reason. A run with a `runId` resumes where it stopped when asked again. A signal
   * already aborted when `ask` is called rejects at once and writes nothing.
   */
  signal?: AbortSignal;
  /**
   * With files already resolved: what their arguments named but cannot be read as files (FIFOs,
   * sockets, symbolic link loops; `ResolveCorpusOptions.skipped`), listed in the result's `skipped`.
   * Corpus arguments given as paths here are resolved with this list made by `ask` itself.
   */
  unreadable?: readonly SkippedDocument[];
}

/**
 * Answer a question over a corpus with ExtAgents: seeking agents per chunk, global knowledge
 * synchronization, knowledge-accumulating reasoning (paper, section 2).
 * @returns the run's result: `answer` (or "NO ANSWER"), `answerable`, `citations` (document,
 *   offsets in UTF-16 code units, quote, location), `trace`, `usage`, `skipped`, `warnings`.
 * @throws InvalidInputError for a corpus argument that matches nothing, a bad question or run id;
 *   InvalidRunOptionsError for invalid options; ConfigurationError for a bad model spec or an
 *   unreachable model (MissingPackageError, a kind of it, for a `llama:` model without node-llama-cpp); the typed error that failed the run (EmptyCorpusError, ModelError, …);
 *   RunAbortedError (with the signal's `reason`) when `signal` aborted it.
 */
export async function ask(request: AskRequest): Promise<RunResult> {
  if (typeof request !== 'object' || request === null) throw new InvalidInputError('ask: give a request object { corpus, question, … }');
  // The one parse of the question, run id and options along this entry (shared/run-request.ts).
  const parsed = request.parsed ?? parseRunRequest(request, { question: 'ask', runId: 'ask' });
  if (parsed.runId !== undefined && request.stateDir === undefined) {
    throw new InvalidInputError('ask: a runId needs a stateDir (the run is kept there to be resumed)');
  }
  const { signal } = request;
  // Aborted before it started (also while the corpus was being resolved): reject at once and write
  // nothing (no corpus copy, no run record, no state).
  const refuseIfAborted = (): void => {
    if (signal?.aborted) throw new RunAbortedError(`ask: aborted before the run started${reasonText(signal.reason)}`, { reason: signal.reason });
  };
  refuseIfAborted();
  const unreadable: SkippedDocument[] = [...(request.unreadable ?? [])];
  const files = await corpusFiles(request.corpus, request.cwd, request.stateDir, unreadable);
  refuseIfAborted();
  try {
    return await withStateDir(request.stateDir, (stateDir) =>
      runLocal({
        files,
        unreadable,
        parsed,
        modelSpec: request.model,
        stateDir,
        onProgress: request.onProgress,
        signal,
      }),
    );
  } catch (error) {
    // Aborted by the caller: the exported RunAbortedError with the signal's reason, however the
    // execution reported the stop (ExecutionAborted, or a model call stopped mid-way).
    if (signal?.aborted === true && !(error instanceof RunAbortedError)) {
      throw new RunAbortedError(`ask: the run was aborted${reasonText(signal.reason)}`, { cause: error, reason: signal.reason });
    }
    throw error;
  }
}

/** What {@link survey} takes. */
export interface SurveyRequest {
  /** The papers: a JSONL/JSON file of records, text files or directories, as for `extagents survey --corpus`. */
  corpus: string | string[];
  topic: string;
  /** Markdown output path; the metadata goes next to it with the extension `.json`. */
  output: string;
  model?: ModelSpecInput;
  /** Survey options (docs/SURVEY.md): target words, sections, chunk size, rounds, concurrency. */
  options?: SurveyOptionsInput;
  /** Where the survey execution keeps its objects; default: a temporary directory removed afterwards. */
  stateDir?: string;
  cwd?: string;
  onProgress?: (progress: LocalSurveyProgress) => void;
  signal?: AbortSignal;
}

/**
 * Write a long survey of a topic with verified citations (docs/SURVEY.md), through the survey state
 * machine on the local stack.
 * @returns the paths written, the Markdown, the metadata (sections, citations kept and removed).
 * @throws the survey's typed errors (NoEvidenceError when nothing in the corpus is relevant, …).
 */
export async function survey(request: SurveyRequest): Promise<LocalSurveyOutput> {
  return withStateDir(request.stateDir, async (stateDir) => {
    const stack = await startEngineStack({ stateDir, modelSpec: request.model });
    try {
      return await runLocalSurvey(
        {
          corpus: Array.isArray(request.corpus) ? request.corpus : [request.corpus],
          topic: request.topic,
          output: request.output,
          ...(request.options !== undefined && { options: request.options as Record<string, unknown> }),
          ...(request.cwd !== undefined && { cwd: request.cwd }),
          ...(request.onProgress !== undefined && { onProgress: request.onProgress }),
          ...(request.signal !== undefined && { signal: request.signal }),
        },
        stack,
      );
    } finally {
      await stack.stop();
    }
  });
}

/** The corpus files of an {@link AskRequest}'s `corpus`. */
async function corpusFiles(corpus: unknown, cwd: string | undefined, stateDir: string | undefined, skipped: SkippedDocument[]): Promise<CorpusFile[]> {
  const expected = 'ask: corpus must be a path (file, directory, glob, "sotu" or a corpus id of stateDir), a list of paths, or the files of resolveCorpus';
  if (typeof corpus === 'string') return resolveCorpus([corpus], cwd, { stateDir, skipped });
  if (!Array.isArray(corpus)) throw new InvalidInputError(`${expected}; got ${corpus === null ? 'null' : typeof corpus}`);
  if (corpus.length === 0) throw new InvalidInputError('ask: corpus is empty (give at least one path)');
  if (corpus.every((c): c is string => typeof c === 'string')) return resolveCorpus([...corpus], cwd, { stateDir, skipped });
  const isFile = (c: unknown): c is CorpusFile =>
    typeof c === 'object' && c !== null && typeof (c as CorpusFile).id === 'string' && typeof (c as CorpusFile).path === 'string';
  if (!corpus.every(isFile)) throw new InvalidInputError(expected);
  return [...corpus];
}

/** Run `work` in `stateDir`, or in a new temporary directory removed afterwards. */
async function withStateDir<T>(stateDir: string | undefined, work: (dir: string) => Promise<T>): Promise<T> {
  if (stateDir !== undefined) return work(stateDir);
  const temporary = await mkdtemp(path.join(os.tmpdir(), 'extagents-'));
  try {
    return await work(temporary);
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}
