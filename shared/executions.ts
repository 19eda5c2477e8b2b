/**
 * The execution port: start a workflow execution by name and describe it, as Step Functions does
 * (StartExecution, DescribeExecution). One port for every caller that needs an execution's status:
 * the API (a run's status), the jobs state machine's results (how each question's execution ended)
 * and the bulk survey index. Adapters: lambdas/adapters/sfn-run-launcher.ts (AWS) and
 * local/engine/executions.ts (one registry per local bucket, shared by `serve`, `job` and `upload`).
 * Nothing here imports the AWS SDK.
 */
import { failureMessage } from './errors';
import { codePointCut } from './unicode';
import type { PrepareEvent } from './pipeline/state';

/**
 * Status of a workflow execution, as Step Functions' DescribeExecution reports it.
 * Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
 */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

/** Every {@link ExecutionStatus}, in the order the API documents them. */
export const EXECUTION_STATUSES: readonly ExecutionStatus[] = ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED', 'PENDING_REDRIVE'];

/** What is known about one execution. */
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
  /** Cause of a failed execution: the error's message ({@link causeMessage}: parsed once, by the adapter). */
  cause?: string;
}

/** Longest failure cause an {@link ExecutionDescription} carries, characters. */
export const MAX_CAUSE_CHARS = 2000;

/**
 * The message of an execution's failure cause (`failureMessage` of shared/errors.ts: a Lambda
 * error's JSON cause gives its `errorMessage`, a plain cause itself), cut to {@link MAX_CAUSE_CHARS} (never inside a surrogate pair).
 * Adapters apply it once, when they describe an execution.
 */
export function causeMessage(cause: string): string {
  const message = failureMessage(cause);
  if (message.length <= MAX_CAUSE_CHARS) return message;
  // Never half a surrogate pair before the ellipsis (it would show U+FFFD).
  const cut = codePointCut(message, MAX_CAUSE_CHARS - 1);
  return `${message.slice(0, cut)}…`;
}

/** Looks up an execution by name (Step Functions DescribeExecution; the local registry). */
export interface ExecutionLookup {
  /** Describe the execution named `name`; undefined when there is none. */
  describe(name: string): Promise<ExecutionDescription | undefined>;
}

/** Starts and describes workflow executions (Step Functions in AWS; in-process executions locally). */
export interface RunLauncher extends ExecutionLookup {
  /**
   * Start the workflow with `input` as an execution named `name`. Idempotent by name: when an
   * execution of that name already exists (running or finished) nothing new starts and
   * `started` is false.
   * @param name execution name, 1-80 characters of `A-Z a-z 0-9 . _ -` (the run id).
   * @param input the Prepare event (the execution input).
   */
  start(name: string, input: PrepareEvent): Promise<{ started: boolean }>;
}

/** One page of executions, newest first. */
export interface ExecutionPage {
  executions: ExecutionDescription[];
  /** The adapter's position after this page (Step Functions' `nextToken`); absent on the last page. */
  next?: string;
}

/** Why an execution is stopped: the error name and cause its description reports afterwards. */
export interface StopReason {
  error: string;
  cause: string;
}

/**
 * Lists and stops the workflow's executions (Step Functions ListExecutions and StopExecution; the
 * local registry and its in-process abort). The API's `GET /v1/runs` and `POST /v1/runs/{runId}/cancel`.
 */
export interface ExecutionControl {
  /**
   * Executions of the workflow, newest first (start time descending).
   * @param options.limit executions per page (1-100).
   * @param options.after `next` of the previous page.
   * @throws InvalidInputError for an `after` the adapter cannot use.
   */
  list(options: { limit: number; after?: string }): Promise<ExecutionPage>;
  /**
   * Stop the RUNNING execution `name` (it ends ABORTED with `reason`); the run's state (messages,
   * steps, chunk cache) is kept, so the run can be resumed as a killed one.
   * Does nothing to an execution that is not RUNNING.
   * @returns the execution's description afterwards; undefined when there is none.
   * @throws RunNotCancellableError (shared/errors.ts) when this process cannot stop it (locally: another process runs it).
   */
  abort(name: string, reason: StopReason): Promise<ExecutionDescription | undefined>;
}
