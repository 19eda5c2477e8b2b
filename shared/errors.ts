/**
 * Typed errors. Each subclass sets `name` to its class name; Step Functions `Retry`/`Catch` match on
 * that name (a Lambda error's `errorType` is the thrown error's `name`), so these names are part of
 * the workflow contract: see `RETRYABLE_ERRORS` and infra/extagents-workflow.ts.
 */
import type { SeekingPlan } from './types';

export class ExtAgentsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A broken deployment or environment: settings, Lambda environment, a definition the engine cannot run (never retried). */
export class ConfigurationError extends ExtAgentsError {}

/**
 * A feature needs an optional npm package that is not installed (the package's optional peer
 * dependencies: node-llama-cpp for `llama:` models, vega, vega-lite and @resvg/resvg-js for the eval
 * report's charts). The message names the feature and the command that installs the package;
 * `install` holds that command (shared/optional-packages.ts builds it). A kind of ConfigurationError.
 */
export class MissingPackageError extends ConfigurationError {
  /** The command that installs what is missing, e.g. `npm install --save-exact node-llama-cpp@3.21.1`. */
  readonly install: string | undefined;
  constructor(message: string, options?: { cause?: unknown; install?: string }) {
    super(message, options);
    this.install = options?.install;
  }
}

/** Invalid input: a question, a corpus reference, an event shape (never retried). */
export class InvalidInputError extends ExtAgentsError {}

/**
 * Invalid run options (shared/config.ts `parseRunOptions`): the caller's mistake, not the
 * deployment's. A kind of InvalidInputError (the API answers 400), with its own name for Step
 * Functions' Catch (the workflow's Prepare catches it with the other input errors).
 */
export class InvalidRunOptionsError extends InvalidInputError {}

/**
 * The run's cost estimate (shared/cost.ts) is over its `maxCostUsd`, or it has no price to compare:
 * refused in Prepare (or by the API, 422) before any model call. A kind of InvalidInputError.
 */
export class CostLimitExceededError extends InvalidInputError {
  /** The estimate that was refused (calls and tokens at most per role, USD when priced), and the limit. */
  readonly estimate?: CostLimitEstimate;

  constructor(message: string, options?: { cause?: unknown; estimate?: CostLimitEstimate }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    if (options?.estimate) this.estimate = options.estimate;
  }
}

/** What a {@link CostLimitExceededError} refused (shared/cost.ts). */
export interface CostLimitEstimate {
  seeker: { calls: number; inputTokens: number; outputTokens: number };
  reasoner: { calls: number; inputTokens: number; outputTokens: number };
  /** USD at most; absent when a role has no price. */
  totalUsd?: number;
  maxCostUsd: number;
}

/**
 * The model's stated throughput quota cannot carry the run's seeks (shared/quota.ts `checkQuota`):
 * one seek's tokens exceed the token quota of a minute, or one seek at a time would wait longer for
 * the quota than the retries of a throttled call wait. Refused in Prepare before any model call, the
 * message with the numbers. A kind of InvalidInputError.
 */
export class QuotaExceededError extends InvalidInputError {
  /** The refused plan (shared/quota.ts: MaxConcurrency, the quota, tokens and seconds per seek, the reasoning), when known. */
  readonly plan?: SeekingPlan;

  constructor(message: string, options?: { cause?: unknown; plan?: SeekingPlan }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    if (options?.plan) this.plan = options.plan;
  }
}

/** The corpus has no usable text after skipping unusable documents (raised before any model call). */
export class EmptyCorpusError extends ExtAgentsError {}

/** The model service throttled the call (Bedrock ThrottlingException, HTTP 429). Retryable. */
export class ModelThrottledError extends ExtAgentsError {}

/** The model service is temporarily unavailable (5xx, ServiceUnavailableException). Retryable. */
export class ModelUnavailableError extends ExtAgentsError {}

/** The model call timed out (ModelTimeoutException, socket timeout). Retryable. */
export class ModelTimeoutError extends ExtAgentsError {}

/**
 * The input is too long for the model's context (Bedrock ValidationException about input length).
 * Never retried as is: the caller shrinks what it sends once, then fails.
 */
export class ContextOverflowError extends ExtAgentsError {
  /**
   * What overflowed, in the model's own tokens, when the provider counted it (an in-process model
   * does): the prompt, the context and the reply's budget. Seek uses it to advise a chunk size that fits.
   */
  readonly tokens?: { prompt: number; context: number; reply: number };

  constructor(message: string, options: { cause?: unknown; tokens?: { prompt: number; context: number; reply: number } } = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    if (options.tokens !== undefined) this.tokens = options.tokens;
  }
}

/**
 * Is `error` a ContextOverflowError? By name, not `instanceof`: the name is the contract (an error
 * rebuilt from a Step Functions failure, or thrown by another copy of this module, has the same name).
 * Used by Seek and Reason, which shrink what they send once on it.
 */
export const isContextOverflow = (error: unknown): boolean => error instanceof Error && error.name === ContextOverflowError.name;

/**
 * The model id cannot be used as configured, e.g. Bedrock "on-demand throughput isn't supported"
 * (a foundation-model id where an inference profile is required), access denied, unknown model.
 * Never retried.
 */
export class ModelConfigurationError extends ExtAgentsError {}

/** Any other permanent model error (malformed request, unexpected response). Never retried. */
export class ModelError extends ExtAgentsError {}

/** A stored object or record that must exist does not (e.g. a chunk object, a run record). */
export class NotFoundError extends ExtAgentsError {}

/**
 * A run that cannot be cancelled (the API answers 409): it has already ended (SUCCEEDED, FAILED, TIMED_OUT),
 * or (locally) another process runs it. Thrown by ExecutionControl.abort (shared/executions.ts) and the API's cancel. `status` is the run's status.
 */
export class RunNotCancellableError extends ExtAgentsError {
  constructor(
    message: string,
    readonly status: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Error names that the workflow retries with bounded, jittered backoff. */
export const RETRYABLE_ERRORS = [ModelThrottledError.name, ModelUnavailableError.name, ModelTimeoutError.name] as const;

/** A storage operation could not complete after its bounded retries (e.g. unprocessed batch keys). */
export class StorageError extends ExtAgentsError {}

/**
 * Too many seeking agents of a round failed (the Distributed Map's tolerated failure threshold was
 * exceeded) with different errors; the message lists each error with its chunk count. When every
 * failed chunk failed with the same typed error, that error is raised instead (see
 * shared/pipeline/seek-failures.ts).
 */
export class SeekingFailedError extends ExtAgentsError {}

/**
 * A run (or one of its model calls) stopped because its caller aborted it: the library's
 * `ask({signal})`, Ctrl-C. `reason` is the abort signal's reason as given (also the `cause` when
 * nothing else caused it). Never retried.
 */
export class RunAbortedError extends ExtAgentsError {
  readonly reason: unknown;

  constructor(message: string, options: { cause?: unknown; reason?: unknown } = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : options.reason !== undefined ? { cause: options.reason } : undefined);
    this.reason = options.reason;
  }
}

/** Every typed error class by `name` (to rebuild an error from a Step Functions failure's Error/Cause). */
export const ERROR_CLASSES: Readonly<Record<string, new (message: string, options?: { cause?: unknown }) => ExtAgentsError>> = {
  ExtAgentsError,
  ConfigurationError,
  MissingPackageError,
  InvalidInputError,
  InvalidRunOptionsError,
  CostLimitExceededError,
  QuotaExceededError,
  EmptyCorpusError,
  ModelThrottledError,
  ModelUnavailableError,
  ModelTimeoutError,
  ContextOverflowError,
  ModelConfigurationError,
  ModelError,
  NotFoundError,
  StorageError,
  SeekingFailedError,
  RunAbortedError,
};

/**
 * The message of a failed execution's `Cause`: a Lambda error's Cause is the JSON
 * `{"errorType","errorMessage","trace"}` (the workflow's Fail states keep it), which gives its
 * `errorMessage`; any other cause is the message itself. The one parser of causes.
 */
export function failureMessage(cause: string): string {
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') return parsed.errorMessage;
  } catch {
    // A plain-text cause is the message itself.
  }
  return cause;
}

/**
 * Rebuild a typed error from a failed execution's `Error` and `Cause` (a Lambda error's JSON cause,
 * or its message already parsed: {@link failureMessage}). Returns undefined when `error` names no
 * class of ours.
 */
export function errorFromFailure(error: string, cause: string): ExtAgentsError | undefined {
  const ErrorClass = ERROR_CLASSES[error];
  if (!ErrorClass) return undefined;
  return new ErrorClass(failureMessage(cause));
}
