/**
 * The local stack's public types (the library exports them: local/library.ts): its options, the
 * callbacks of an execution, and what a caller of `startLocalStack` uses. They import only light
 * types (the domain's ports and schemas), so the package's declarations never reach the AWS SDK,
 * aws-local-stepfunctions or the Lambda handlers, whose types a consumer does not have (issue 26,
 * item 1: they type-check with `skipLibCheck: false`). The engine's own stack (local/engine/stack.ts)
 * extends {@link LocalStack} with its handlers and definitions.
 */
import type { ParsedRunRequest } from '../../shared/run-request';
import type { RunOptionsInput } from '../../shared/config';
import type { ModelSpec, ModelSpecInput } from '../../shared/model-spec';
import type { AgentModel, BlobStore, ChatModel, MessageStore } from '../../shared/ports';
import type { LocalBatchOptions } from './local-batch';
import type { SurveyModel } from '../../shared/survey/ports';
import type { SurveyExecutionInput, SurveyOutput } from '../../shared/survey/workflow';
import type { JsonValue } from './definition';

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Directory of the local bucket (and of the DynamoDB data when `persistent`). */
  stateDir: string;
  /** The model spec (models/spec.ts), text or parsed: `extractive` (default), `bedrock:…`, `openai:…`, `llama:…`. */
  modelSpec?: ModelSpecInput;
  /** Use this model instead of the one the spec names (tests: scripted or fault-injecting models). */
  model?: AgentModel;
  /** Use these survey roles (outline, writer) instead of the ones the spec names (tests). */
  surveyModel?: SurveyModel;
  /** Keep DynamoDB data on disk under `<stateDir>/dynamodb` (resume); in memory by default. Takes the state directory's lock (local/engine/state-dir-lock.ts) until `stop()`. */
  persistent?: boolean;
  /** What holds the lock of a persistent stack, for the message another command gets (`serve`, `job`, …). @default 'ask' */
  lockCommand?: string;
  /** Replace every Retry backoff by this pause, ms (tests). */
  retryIntervalMs?: number;
  /** Multiply every Retry's intervals by this factor, keeping its doubling and jitter (local/engine/engine.ts; tests and benches). */
  retryTimeScale?: number;
  /**
   * Parallel sequences of an in-process model's context (`LoadOptions.sequences`; a `llama:` model
   * evaluates the seeking agents of its sequences in one batch); default 1. The CLI passes the run's concurrency, capped at `MAX_MODEL_SEQUENCES`.
   */
  modelSequences?: number;
  /**
   * The context size, tokens, of the stand-in `model` (tests): the stack then treats it as a
   * small-context model, as a `llama:` model of that context (run option defaults fitted to it,
   * chunk sizes checked against it). Ignored without `model`.
   */
  modelContextTokens?: number;
  /**
   * Batch seeking here (run option `seekMode: 'batch'`): the local batch runner's limits
   * (local/engine/local-batch.ts; at least 100 records a job by default, as Bedrock) and, with a
   * stand-in `model` (tests), the chat model the records run through and the agents over it with
   * their seeker wrapped. Without them a stand-in model's rounds are sought on demand.
   */
  batch?: LocalBatchOptions & { seekerChat?: ChatModel; agents?: (wrapSeeker: (chat: ChatModel) => ChatModel) => AgentModel };
}

/** Reported once per Map Run, before the first item starts (for a progress bar). */
export interface MapRunStartedEvent {
  /** Name of the Distributed Map state. */
  stateName: string;
  mapRunArn: string;
  /** Number of items the Map Run will process. */
  totalItems: number;
  /** Child executions at once. */
  maxConcurrency: number;
  /** The state's effective input (e.g. the workflow state, whose `round` a progress bar shows). */
  input: JsonValue;
}

/** Callbacks of one local execution (progress of the Distributed Map). */
export interface ExecutionCallbacks {
  onMapRunStarted?: (event: MapRunStartedEvent) => void;
  onItemDone?: (index: number, ok: boolean, stateName: string) => void;
  /**
   * Called when a Lambda task's handler is called (the state entered its task): the function's name
   * (`prepare`, `seek`, `reason`, `synchronize`, `finalize` as in `ExtAgentsStack.functions`;
   * `SurveyPrepare`, `SurveySteps`, `SurveyAssemble`) and its event.
   */
  onTaskStarted?: (functionName: string, event: unknown) => void;
  /**
   * Called when a Lambda task's handler returns (not when it throws): the function's name (as for
   * `onTaskStarted`; `seek` once per chunk and round, beside `onItemDone`), its event and result.
   */
  onTaskDone?: (functionName: string, event: unknown, result: unknown) => void;
  /**
   * Called when a Lambda task's handler throws (the error as thrown, before the workflow's `Retry`
   * or `Catch` decides what follows): the function's name (as for `onTaskStarted`), its event and
   * the error. A retried task calls it once per failed attempt.
   */
  onTaskFailed?: (functionName: string, event: unknown, error: unknown) => void;
  /**
   * Called when a model call of a Lambda task starts waiting for a throttling server (an adapter's
   * own wait, models/call-signal.ts `sayThrottleWait`): the function's name, its event, the wait in
   * ms and why.
   */
  onTaskWaiting?: (functionName: string, event: unknown, waitMs: number, why: string) => void;
  signal?: AbortSignal;
}

/** A running local stack, as `startLocalStack` returns it. */
export interface LocalStack {
  readonly blobs: BlobStore;
  readonly store: MessageStore;
  /**
   * Run one execution of the state machine. Options the input leaves unset take `runOptionDefaults`;
   * they are not checked against the model's context here: the entry that took them did (`fit`,
   * `runOptionProblems`).
   * @returns the execution output.
   * @throws the domain error that failed the execution when it names one of ours (EmptyCorpusError,
   *   ModelConfigurationError, …), otherwise ExecutionFailedError (e.g. States.ExceedToleratedFailureThreshold).
   */
  execute(input: unknown, callbacks?: ExecutionCallbacks): Promise<unknown>;
  /**
   * Run one execution of the survey state machine (input `{surveyId, topic, corpus, options?, date?}`,
   * the corpus under `corpora/` of the local bucket).
   * @returns the execution output: SurveyAssemble's `{surveyId, markdownKey, metadataKey, words, citations}`.
   * @throws as {@link LocalStack.execute}: e.g. InvalidInputError / EmptyCorpusError (SurveyRejected),
   *   NoEvidenceError, ExecutionFailedError for a seeking Map Run over its tolerated failures.
   */
  executeSurvey(input: SurveyExecutionInput, callbacks?: ExecutionCallbacks): Promise<SurveyOutput>;
  /**
   * Run option defaults of the stack's model (`contextFittedRunOptionDefaults` for a `llama:` model's
   * context; empty otherwise). `execute` applies them to every question-answering run for the
   * options its input leaves unset; callers comparing options (resume) apply them the same way.
   */
  readonly runOptionDefaults: RunOptionsInput;
  /** The stack's model spec, parsed (it prices cost estimates: shared/cost.ts). */
  readonly modelSpec: ModelSpec;
  /** The state directory (absolute): the bucket is its `bucket/`; corpus ids are looked up there (local/engine/corpus.ts). */
  readonly stateDir: string;
  /** The model's context per sequence, tokens (a `llama:` model's, or `modelContextTokens`); undefined when unknown. */
  readonly contextTokens: number | undefined;
  /**
   * Fit a parsed run request (`parseRunRequest`) to the stack's model before any work
   * (models/context.ts `fitRunRequest`: the model's defaults for unset options; a `llama:` model's
   * context must hold a chunk's seeking prompt). A request already fitted to this context is
   * returned unchanged.
   * @throws ConfigurationError naming the chunk size, the context size and the largest that fits.
   */
  fit(request: ParsedRunRequest): ParsedRunRequest;
  /**
   * The same check for an API request (`POST /v1/runs`): each run option the stack's model cannot
   * take, with the problem in the API's words (`options.chunkTokens`, not a CLI flag).
   * @param options the run's options, defaults filled (`runOptionDefaults` first).
   * @returns one entry per unfit option (none: the model can run it).
   */
  runOptionProblems(options: RunOptionsInput): Array<{ option: 'chunkTokens'; detail: string }>;
  /** Delete a run's items from the local table (`extagents runs rm`). @returns how many were deleted. */
  deleteRunItems(runId: string): Promise<number>;
  /** Stop dynalite and release clients; waits for nothing else. Idempotent. */
  stop(): Promise<void>;
}
