/**
 * Ports of the API core (shared/api/core.ts), beside the storage ports of shared/ports.ts. Adapters:
 * AWS (lambdas/adapters/sfn-run-launcher.ts, s3-presigner.ts, s3-idempotency-store.ts) and local
 * (local/run-launcher.ts, local/serve.ts, shared/api/idempotency.ts). Nothing here imports the AWS SDK.
 */
import type { PrepareEvent } from '../pipeline/state';

/**
 * Status of a workflow execution, as Step Functions' DescribeExecution reports it.
 * Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
 */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

/** Every {@link ExecutionStatus}, in the order the API documents them. */
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE'];

/** What the API needs to know about one execution. */
export interface ExecutionDescription {
  /** The execution name (= the run id). */
  name: string;
  status: ExecutionStatus;
  /** ISO-8601 start time. */
  startedAt: string;
  /** ISO-8601 stop time; absent while running. */
  stoppedAt?: string;
  /** Error name of a failed execution (e.g. `EmptyCorpusError`, `States.ExceedToleratedFailureThreshold`). */
  error?: string;
  /** Cause of a failed execution: the error's message (or the raw cause when it is not a Lambda error JSON). */
  cause?: string;
}

/** Longest failure cause an {@link ExecutionDescription} carries, characters. */
export const MAX_CAUSE_CHARS = 2000;

/**
 * The message of an execution's failure cause: a Lambda error's cause is the JSON
 * `{"errorType","errorMessage","trace"}` (the workflow's Fail states keep it); other causes are
 * plain text. Cut to {@link MAX_CAUSE_CHARS}.
 */
export function causeMessage(cause: string): string {
  let message = cause;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed.errorMessage === 'string') message = parsed.errorMessage;
  } catch {
    // plain text
  }
  return message.length > MAX_CAUSE_CHARS ? `${message.slice(0, MAX_CAUSE_CHARS - 1)}…` : message;
}

/**
 * Starts and describes workflow executions (Step Functions in AWS; in-process executions locally).
 */
export interface RunLauncher {
  /**
   * Start the workflow with `input` as an execution named `name`. Idempotent by name: when an
   * execution of that name already exists (running or finished) nothing new starts and
   * `started` is false.
   * @param name execution name, 1-80 characters of `A-Z a-z 0-9 . _ -` (the run id).
   * @param input the Prepare event (the execution input).
   */
  start(name: string, input: PrepareEvent): Promise<{ started: boolean }>;
  /** Describe the execution named `name`; undefined when there is none. */
  describe(name: string): Promise<ExecutionDescription | undefined>;
}

/** A presigned upload: everything a client needs to PUT one object without credentials. */
export interface PresignedUpload {
  method: 'PUT';
  url: string;
  /** Headers the client must send with exactly these values (e.g. `content-length` when signed). */
  headers: Record<string, string>;
  /** ISO-8601 time after which the URL no longer works. */
  expiresAt: string;
}

/** Creates upload URLs for objects of the project bucket (S3 presigned PUT in AWS; the local server's own PUT endpoint). */
export interface Presigner {
  /**
   * Largest upload the URLs accept, bytes, when the presigner has its own limit (the local server
   * announces MAX_LOCAL_UPLOAD_BYTES, equal to the API's MAX_FILE_BYTES unless constructed with a
   * smaller one; S3's has none). `POST /v1/corpora` refuses an announced `size` above it (400).
   */
  readonly maxContentLength?: number;
  /**
   * A URL to PUT the object `key`.
   * @param options.expiresInSeconds validity of the URL, seconds.
   * @param options.contentLength when given, the upload must have exactly this many bytes.
   * @param options.contentType when given, the upload must send this `content-type`.
   */
  presignPut(
    key: string,
    options: { expiresInSeconds: number; contentLength?: number; contentType?: string },
  ): Promise<PresignedUpload>;
}

/** What an `Idempotency-Key` was first used for. */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the caller and the key (see shared/api/idempotency.ts). */
  keyHash: string;
  /** SHA-256 (hex) of the canonical request (see shared/api/idempotency.ts). */
  requestHash: string;
  /** The run the key started. */
  runId: string;
  /** ISO-8601 time of the first use. */
  createdAt: string;
}

/** Remembers the first request of each idempotency key (atomic create-if-absent). */
export interface IdempotencyStore {
  /** The record of a key, or undefined. */
  get(keyHash: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Store `record` unless the key already has one.
   * @returns undefined when stored, otherwise the record already there (unchanged).
   */
  claim(record: IdempotencyRecord): Promise<IdempotencyRecord | undefined>;
}
