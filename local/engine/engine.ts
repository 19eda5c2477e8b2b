/**
 * The local engine: runs a resolved ASL definition (local/engine/definition.ts) in-process with
 * `aws-local-stepfunctions`, every Lambda Task mapped to an in-process handler, every Distributed
 * Map emulated by local/engine/distributed-map.ts.
 *
 * Faithful to the service where the project depends on it:
 * - Lambda Tasks: both forms CDK renders: the function ARN as Resource (`payloadResponseOnly`: the
 *   handler gets the effective input, its result is the task result) and
 *   `arn:aws:states:::lambda:invoke` (the handler gets `Parameters.Payload`; the task result is
 *   `{ExecutedVersion, Payload, StatusCode}`). Payload and result pass through JSON, as over the wire.
 * - A handler's thrown error fails the Task with error name = the error's `name` (what the Lambda
 *   Node.js runtime reports as `errorType`) and cause = `{"errorType","errorMessage","trace"}` as a
 *   JSON string, so `Retry`/`Catch` match our typed errors (shared/errors.ts) by class name.
 * - A result over 256 KiB fails the Task with the terminal `States.DataLimitExceeded`.
 * - Every Task state (also inside Map item processors, Parallel branches, Distributed Maps) must
 *   have a handler: a Task without one is a ConfigurationError before the run starts (the library
 *   would otherwise silently call the real AWS Lambda).
 * - Parallel states run through local/engine/parallel.ts: a failed branch stops the other branches
 *   and the Distributed Map Runs in them (no further item starts), as the service does.
 * - Tasks without `TimeoutSeconds` get `taskTimeoutMs` (the library's default is 60 s; the service
 *   has none, and a Lambda stops at 15 minutes).
 * - The run returns only when no handler call is in flight: a timed-out or abandoned call (Task
 *   timeout, a failed Map Run's items) is awaited before the result or error is returned, so the
 *   caller may stop servers safely.
 *
 * Sources: "Invoke an AWS Lambda function with Step Functions"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/connect-lambda.html), "Handling errors in
 * Step Functions workflows" (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html),
 * "Step Functions service quotas" (256 KiB payload), aws-local-stepfunctions README (overrides).
 */
import './polyfills';
import {
  ExecutionAbortedError,
  ExecutionError,
  ExecutionTimeoutError,
  StateMachine,
  type RunOptions,
  type StateMachineDefinition,
} from 'aws-local-stepfunctions';
import { ConfigurationError, ExtAgentsError } from '../../shared/errors';
import type { BlobStore } from '../../shared/ports';
import {
  LOCAL_DISTRIBUTED_MAP_RESOURCE,
  LOCAL_PARALLEL_RESOURCE,
  StatesError,
  allStates,
  localizeDistributedMaps,
  type AslDefinition,
  type AslState,
  type DistributedMapState,
  type JsonValue,
  type ParallelState,
} from './definition';
import { withCallSignal } from '../../models/call-signal';
import { runParallel } from './parallel';
import { itemProcessorDefinition, runDistributedMap, unsupportedDistributedMapFeatures, type MapRunStartedEvent } from './distributed-map';

/** Task overrides of aws-local-stepfunctions, by state name (its types, derived: they are not exported). */
type TaskHandlers = NonNullable<NonNullable<RunOptions['overrides']>['taskResourceLocalHandlers']>;
/** The library's JSON value type. */
type LibraryJson = Parameters<TaskHandlers[string]>[0];

/** An in-process Lambda handler: receives the event (payload), returns the result. */
export type LocalLambdaHandler = (payload: unknown) => Promise<unknown>;

/** Default timeout of a Task without `TimeoutSeconds`: 900,000 ms (15 minutes, the Lambda maximum). */
export const DEFAULT_TASK_TIMEOUT_MS = 900_000;

/** Step Functions' maximum payload of a state's input or output: 256 KiB (262,144 bytes). */
export const MAX_PAYLOAD_BYTES = 262_144;

/** Largest `setTimeout` delay Node accepts (a larger one fires at once): 2^31-1 ms, in whole seconds. */
const MAX_TIMER_SECONDS = Math.floor(2_147_483_647 / 1000);

/** Options of {@link prepareLocalExecution}. */
export interface LocalEngineOptions {
  /**
   * The resolved definition (`resolveStateMachineDefinition(...).definition`), Distributed Maps still
   * in it: the engine localizes them.
   */
  definition: AslDefinition;
  /** In-process handlers by function ARN (`resolveStateMachineDefinition(...).lambdaArns` values). */
  handlers: Readonly<Record<string, LocalLambdaHandler>>;
  /** The local bucket (Distributed Map ItemReader and ResultWriter). */
  blobStore: BlobStore;
  /** Called when an item of a Distributed Map ends (`ok`: its child execution succeeded). */
  onItemDone?: (index: number, ok: boolean, stateName: string) => void;
  /** Called when a Distributed Map starts its Map Run (item count, for a progress bar). */
  onMapRunStarted?: (event: MapRunStartedEvent) => void;
  /** Timeout of a Task without `TimeoutSeconds`, ms (rounded up to whole seconds). Default {@link DEFAULT_TASK_TIMEOUT_MS}. */
  taskTimeoutMs?: number;
  /**
   * Replace every retrier's backoff by this pause, ms (e.g. 0 in tests). Default: the definition's
   * IntervalSeconds / BackoffRate / MaxDelaySeconds / JitterStrategy.
   */
  retryIntervalMs?: number;
  /**
   * Multiply every retrier's IntervalSeconds and MaxDelaySeconds by this factor, keeping its
   * BackoffRate, MaxAttempts and JitterStrategy: the workflow's real retry policy on a faster clock
   * (the capacity check, test/support/capacity-check.ts). Ignored when `retryIntervalMs` is set.
   */
  retryTimeScale?: number;
  /** Replace every Wait state's duration by this pause, ms. Default: the definition's. */
  waitTimeMs?: number;
  /** ARN reported in Map Run ARNs and result files. Default `arn:aws:states:local:000000000000:stateMachine:local`. */
  stateMachineArn?: string;
  /** Results per Map Run result file. Default 1000. */
  resultsPerFile?: number;
  /**
   * Skip aws-local-stepfunctions' own validation (asl-validator: 0.1-0.9 s a definition) for a
   * definition a test already validated: the local stack's generated definitions
   * (test/infra/stack-template.test.ts runs {@link libraryRejections} on them). The engine's own
   * checks (routes, JSONata, Distributed Map features) still run. Default false.
   */
  libraryValidated?: boolean;
}

/** Options of {@link runLocalExecution}: the engine options plus the execution input. */
export interface LocalExecutionOptions extends LocalEngineOptions {
  /** The execution input (JSON). */
  input: unknown;
  /** Aborting stops the execution; the run still waits for handler calls in flight. */
  signal?: AbortSignal;
}

/**
 * The failure of a local execution, as DescribeExecution reports a failed one: `error` is the error
 * name (`States.ExceedToleratedFailureThreshold`, `EmptyCorpusError`, the `Error` of a Fail state…),
 * `causeText` its cause. `cause` is the library's error object (for a handler error, its `cause` is
 * the handler's original error).
 */
export class ExecutionFailedError extends ExtAgentsError {
  constructor(
    readonly error: string,
    readonly causeText: string,
    options?: { cause?: unknown },
  ) {
    super(`Execution failed with ${error}: ${causeText}`, options);
  }

  /** The innermost error of the cause chain (a handler's original error, when one failed the run). */
  get rootCause(): unknown {
    let current: unknown = this.cause;
    while (current instanceof Error && current.cause !== undefined) current = current.cause;
    return current;
  }
}

/**
 * A handler's error as the Lambda service reports it to Step Functions: `name` = the thrown error's
 * name (errorType), `message` = `{"errorType","errorMessage","trace"}` JSON (the Task's Cause).
 */
export class LambdaFunctionError extends ExtAgentsError {
  constructor(errorType: string, cause: string, options: { cause: unknown }) {
    super(cause, options);
    this.name = errorType;
  }
}

/** How a Task state is served locally. */
export type LocalTaskRoute =
  | { kind: 'lambda'; stateName: string; functionArn: string; envelope: boolean }
  | { kind: 'distributed-map'; stateName: string; map: DistributedMapState }
  | { kind: 'parallel'; stateName: string; parallel: ParallelState };

/** A checked, localized definition ready to run any number of times. */
export interface PreparedExecution {
  /** The localized definition (Distributed Maps replaced by local Tasks; Task timeouts set). */
  readonly definition: AslDefinition;
  /** The removed Distributed Map states by name (item processors localized, timeouts set). */
  readonly distributedMaps: Readonly<Record<string, DistributedMapState>>;
  /** The removed Parallel states by name (branches localized, timeouts set; local/engine/parallel.ts). */
  readonly parallels: Readonly<Record<string, ParallelState>>;
  /** How each Task state (any depth) is served, by state name. */
  readonly routes: Readonly<Record<string, LocalTaskRoute>>;
  /**
   * Run one execution.
   * @returns the execution output.
   * @throws ExecutionFailedError when the execution fails, times out or is aborted.
   */
  run(input: unknown, signal?: AbortSignal): Promise<unknown>;
}

const LAMBDA_INVOKE = /^arn:[^:]+:states:::lambda:invoke$/;
const LAMBDA_FUNCTION_ARN = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:[^:]+(:[^:]+)?$/;

/**
 * Check and localize a definition: every Task has a local route, no JSONata, no unsupported
 * Distributed Map feature, the library accepts every (child) definition.
 *
 * @throws ConfigurationError listing every problem (a Task without a handler names the state, the
 *   function ARN and the registered ARNs).
 */
export function prepareLocalExecution(options: LocalEngineOptions): PreparedExecution {
  const { definition, distributedMaps, parallels } = localizeDistributedMaps(options.definition);
  const timeoutSeconds = clampSeconds(Math.ceil((options.taskTimeoutMs ?? DEFAULT_TASK_TIMEOUT_MS) / 1000));
  const problems: string[] = [];
  const routes: Record<string, LocalTaskRoute> = {};

  const machines: Array<[string, AslDefinition]> = [['the state machine', definition]];
  for (const [name, map] of Object.entries(distributedMaps)) machines.push([`Distributed Map '${name}'`, map.ItemProcessor]);
  for (const [name, parallel] of Object.entries(parallels))
    parallel.Branches.forEach((branch, i) => machines.push([`branch ${i + 1} of Parallel '${name}'`, branch]));

  if (options.definition.QueryLanguage === 'JSONata') problems.push('The definition uses JSONata; the local engine runs JSONPath only');
  for (const [name, map] of Object.entries(distributedMaps)) problems.push(...unsupportedDistributedMapFeatures(name, map));
  for (const [, machine] of machines) {
    for (const [name, state] of allStates(machine)) {
      if (state.QueryLanguage === 'JSONata') problems.push(`State '${name}' uses JSONata; the local engine runs JSONPath only`);
      if (state.Type !== 'Task') continue;
      const route = routeOf(name, state, distributedMaps, parallels, options.handlers, problems);
      if (route) routes[name] = route;
      // The stand-ins of a Distributed Map or Parallel have no timeout in the service; others get the local default.
      if (route?.kind === 'distributed-map' || route?.kind === 'parallel') state.TimeoutSeconds = MAX_TIMER_SECONDS;
      else if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = timeoutSeconds;
      else if (state.TimeoutSeconds !== undefined) state.TimeoutSeconds = clampSeconds(state.TimeoutSeconds);
    }
  }
  if (options.retryTimeScale !== undefined && !(options.retryTimeScale > 0 && Number.isFinite(options.retryTimeScale)))
    problems.push(`retryTimeScale must be a positive number, got ${options.retryTimeScale}`);
  if (options.libraryValidated !== true) problems.push(...libraryRejectionsOfLocalized(definition, distributedMaps, parallels));
  if (problems.length > 0) throw new ConfigurationError(`The definition cannot run locally:\n- ${problems.join('\n- ')}`);
  // After the library's validation, which takes only whole seconds.
  const scale = options.retryTimeScale;
  if (scale !== undefined && options.retryIntervalMs === undefined) {
    for (const [, machine] of machines) {
      for (const [, state] of allStates(machine)) {
        for (const retrier of state.Retry ?? []) {
          retrier.IntervalSeconds = (retrier.IntervalSeconds ?? 1) * scale;
          if (retrier.MaxDelaySeconds !== undefined) retrier.MaxDelaySeconds *= scale;
        }
      }
    }
  }

  const prepared: PreparedExecution = {
    definition,
    distributedMaps,
    parallels,
    routes,
    run: (input, signal) => execute(prepared, options, input, signal),
  };
  return prepared;
}

/**
 * Run the definition once, locally.
 *
 * @param options the resolved definition, handlers by function ARN, the local bucket, the input,
 *   progress callbacks, Task timeout (ms) and retry/wait overrides (ms).
 * @returns the execution output (JSON).
 * @throws ConfigurationError before the run when a Task has no handler or the definition uses a
 *   feature the local engine does not emulate.
 * @throws ExecutionFailedError when the execution fails (`error` = the error name Step Functions
 *   would report, `causeText` = its cause), times out (`States.Timeout`) or is aborted
 *   (`ExecutionAborted`); returned only after every handler call in flight has settled.
 */
export async function runLocalExecution(options: LocalExecutionOptions): Promise<unknown> {
  return prepareLocalExecution(options).run(options.input, options.signal);
}

function routeOf(
  name: string,
  state: AslState,
  distributedMaps: Record<string, DistributedMapState>,
  parallels: Record<string, ParallelState>,
  handlers: Readonly<Record<string, LocalLambdaHandler>>,
  problems: string[],
): LocalTaskRoute | undefined {
  const resource = state.Resource ?? '';
  if (resource === LOCAL_PARALLEL_RESOURCE) {
    const parallel = parallels[name];
    if (parallel === undefined) {
      problems.push(`Task '${name}' uses ${LOCAL_PARALLEL_RESOURCE} but no Parallel state of that name was localized`);
      return undefined;
    }
    return { kind: 'parallel', stateName: name, parallel };
  }
  if (resource === LOCAL_DISTRIBUTED_MAP_RESOURCE) {
    const map = distributedMaps[name];
    if (map === undefined) {
      problems.push(`Task '${name}' uses ${LOCAL_DISTRIBUTED_MAP_RESOURCE} but no Distributed Map of that name was localized`);
      return undefined;
    }
    return { kind: 'distributed-map', stateName: name, map };
  }
  let functionArn: string | undefined;
  let envelope = false;
  if (LAMBDA_INVOKE.test(resource)) {
    envelope = true;
    const parameters = (state.Parameters ?? {}) as Record<string, unknown>;
    if (typeof parameters.FunctionName === 'string') functionArn = parameters.FunctionName;
    else {
      problems.push(`Task '${name}' (lambda:invoke) has no static Parameters.FunctionName; a dynamic function cannot be mapped to a local handler`);
      return undefined;
    }
  } else if (LAMBDA_FUNCTION_ARN.test(resource)) {
    functionArn = resource;
  } else {
    problems.push(`Task '${name}' uses resource ${resource || '(none)'}, which has no local emulation (Lambda functions and Distributed Maps only)`);
    return undefined;
  }
  const key = handlerKey(functionArn, handlers);
  if (key === undefined) {
    const known = Object.keys(handlers);
    problems.push(
      `Task '${name}' invokes ${functionArn} but no local handler is registered for it ` + `(registered: ${known.length ? known.join(', ') : 'none'})`,
    );
    return undefined;
  }
  return { kind: 'lambda', stateName: name, functionArn: key, envelope };
}

/** The handler key of a function ARN: exact, else without its qualifier (`:$LATEST`, version, alias). */
function handlerKey(functionArn: string, handlers: Readonly<Record<string, LocalLambdaHandler>>): string | undefined {
  if (Object.prototype.hasOwnProperty.call(handlers, functionArn)) return functionArn;
  const unqualified = functionArn.split(':').slice(0, 7).join(':');
  return Object.prototype.hasOwnProperty.call(handlers, unqualified) ? unqualified : undefined;
}

/**
 * What aws-local-stepfunctions' own validation (asl-validator) says of a resolved definition once
 * localized (its Distributed Maps replaced by local Tasks, each item processor checked too): one
 * line per rejected (child) definition, none when the library accepts them all.
 */
export function libraryRejections(resolved: AslDefinition): string[] {
  const { definition, distributedMaps, parallels } = localizeDistributedMaps(resolved);
  return libraryRejectionsOfLocalized(definition, distributedMaps, parallels);
}

function libraryRejectionsOfLocalized(
  definition: AslDefinition,
  distributedMaps: Record<string, DistributedMapState>,
  parallels: Record<string, ParallelState>,
): string[] {
  const toValidate: Array<[string, AslDefinition]> = [
    ['the state machine', definition],
    ...Object.entries(distributedMaps).map(
      ([name, map]) => [`the ItemProcessor of Distributed Map '${name}'`, itemProcessorDefinition(map)] as [string, AslDefinition],
    ),
    ...Object.entries(parallels).flatMap(([name, parallel]) =>
      parallel.Branches.map((branch, i) => [`branch ${i + 1} of Parallel '${name}'`, branch] as [string, AslDefinition]),
    ),
  ];
  const rejections: string[] = [];
  for (const [label, machine] of toValidate) {
    const rejection = libraryRejection(machine);
    if (rejection !== undefined) rejections.push(`aws-local-stepfunctions rejects ${label}: ${rejection}`);
  }
  return rejections;
}

/**
 * The library's own validation (asl-validator: schema, transitions, ARNs, paths), memoized by
 * definition text: it compiles its JSON schemas on every call (0.1-0.9 s each, measured).
 * Validation runs on a copy because asl-validator writes `QueryLanguage` into every state.
 * @returns the library's message, or undefined when the definition is accepted.
 */
function libraryRejection(machine: AslDefinition): string | undefined {
  const text = JSON.stringify(machine);
  if (validationCache.has(text)) return validationCache.get(text);
  let rejection: string | undefined;
  try {
    new StateMachine(JSON.parse(text) as StateMachineDefinition, { validationOptions: { checkArn: true, checkPaths: true } });
  } catch (error) {
    rejection = error instanceof Error ? error.message : String(error);
  }
  if (validationCache.size >= 32) validationCache.delete(validationCache.keys().next().value as string);
  validationCache.set(text, rejection);
  return rejection;
}

const validationCache = new Map<string, string | undefined>();

function clampSeconds(seconds: number): number {
  return Math.min(Math.max(1, seconds), MAX_TIMER_SECONDS);
}

async function execute(prepared: PreparedExecution, options: LocalEngineOptions, input: unknown, signal?: AbortSignal): Promise<unknown> {
  const inFlight = new Set<Promise<unknown>>();
  // Aborted when the execution ended (or failed, or was aborted): no Map item starts after it, and
  // the branches of a Parallel state still running stop.
  const stopExecution = new AbortController();
  const track = <T>(promise: Promise<T>): Promise<T> => {
    inFlight.add(promise);
    const forget = (): void => {
      inFlight.delete(promise);
    };
    promise.then(forget, forget);
    return promise;
  };

  const retryIntervalOverrides: Record<string, number> = {};
  const waitTimeOverrides: Record<string, number> = {};
  const everyState = [
    ...allStates(prepared.definition),
    ...Object.values(prepared.distributedMaps).flatMap((map) => allStates(map.ItemProcessor)),
    ...Object.values(prepared.parallels).flatMap((parallel) => parallel.Branches.flatMap((branch) => allStates(branch))),
  ];
  for (const [name, state] of everyState) {
    if (options.retryIntervalMs !== undefined && state.Retry !== undefined) retryIntervalOverrides[name] = options.retryIntervalMs;
    if (options.waitTimeMs !== undefined && state.Type === 'Wait') waitTimeOverrides[name] = options.waitTimeMs;
  }
  // The same overrides everywhere: the execution, every Map Run child, every Parallel branch. Only
  // the stop predicate differs: a Parallel's branches (and the Map Runs in them) also stop when one
  // of its branches failed (local/engine/parallel.ts).
  const runOptionsFor = (stop: AbortSignal): RunOptions => {
    const taskResourceLocalHandlers: TaskHandlers = {};
    const runOptions: RunOptions = { overrides: { taskResourceLocalHandlers, retryIntervalOverrides, waitTimeOverrides } };
    for (const route of Object.values(prepared.routes)) {
      if (route.kind === 'lambda') {
        const handler = options.handlers[route.functionArn];
        // Inside the run's call signal: aborting the execution stops the model calls in flight (models/call-signal.ts).
        taskResourceLocalHandlers[route.stateName] = (taskInput) =>
          track(withCallSignal(signal, () => invokeLambda(handler, route, taskInput))) as Promise<LibraryJson>;
      } else if (route.kind === 'parallel') {
        taskResourceLocalHandlers[route.stateName] = (taskInput) =>
          track(runParallel(taskInput, route.parallel.Branches, runOptionsFor, stop)) as Promise<LibraryJson>;
      } else {
        taskResourceLocalHandlers[route.stateName] = (taskInput) =>
          track(
            runDistributedMap(taskInput, {
              stateName: route.stateName,
              state: route.map,
              blobStore: options.blobStore,
              childRunOptions: runOptions,
              stateMachineArn: options.stateMachineArn,
              onMapRunStarted: options.onMapRunStarted,
              onItemDone: options.onItemDone,
              shouldStop: () => stop.aborted,
              resultsPerFile: options.resultsPerFile,
            }),
          ) as Promise<LibraryJson>;
      }
    }
    return runOptions;
  };
  const runOptions = runOptionsFor(stopExecution.signal);

  const machine = new StateMachine(prepared.definition as unknown as StateMachineDefinition, {
    validationOptions: { noValidate: true }, // validated in prepareLocalExecution
  });
  const execution = machine.run(JSON.parse(JSON.stringify(input ?? null)) as LibraryJson, runOptions);
  const onAbort = (): void => execution.abort();
  if (signal?.aborted) execution.abort();
  signal?.addEventListener('abort', onAbort, { once: true });

  let output: unknown;
  let failure: unknown;
  let failed = false;
  try {
    output = await execution.result;
  } catch (error) {
    failed = true;
    failure = error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // Drain: no new Map items start; every handler call still running (timed out, abandoned by a
    // failed Map Run or an abort) settles before the caller regains control.
    stopExecution.abort();
    while (inFlight.size > 0) await Promise.allSettled(inFlight);
  }
  if (failed) throw toExecutionFailed(failure);
  return output;
}

async function invokeLambda(handler: LocalLambdaHandler, route: Extract<LocalTaskRoute, { kind: 'lambda' }>, taskInput: unknown): Promise<JsonValue> {
  const payload = route.envelope ? ((taskInput as { Payload?: unknown } | null)?.Payload ?? null) : taskInput;
  let result: unknown;
  try {
    // A fresh JSON copy, as the function would receive it over the wire.
    result = await handler(JSON.parse(JSON.stringify(payload ?? null)));
  } catch (thrown) {
    throw toLambdaError(thrown);
  }
  const text = JSON.stringify(result ?? null);
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new StatesError(
      'States.DataLimitExceeded',
      `The result of Task '${route.stateName}' is ${bytes} bytes, more than the ${MAX_PAYLOAD_BYTES}-byte payload quota of Step Functions`,
    );
  }
  const value = JSON.parse(text) as JsonValue;
  return route.envelope ? { ExecutedVersion: '$LATEST', Payload: value, StatusCode: 200 } : value;
}

/** A thrown value as the Lambda service reports it (see {@link LambdaFunctionError}). */
function toLambdaError(thrown: unknown): LambdaFunctionError {
  const original = thrown instanceof Error ? thrown : new ExtAgentsError(String(thrown));
  const errorType = original.name || 'Error';
  const cause = JSON.stringify({ errorType, errorMessage: original.message, trace: (original.stack ?? '').split('\n') });
  return new LambdaFunctionError(errorType, cause, { cause: original });
}

function toExecutionFailed(error: unknown): ExecutionFailedError {
  if (error instanceof ExecutionError) {
    const inner = error.cause;
    if (inner instanceof Error) return new ExecutionFailedError(inner.name, inner.message, { cause: inner });
    return new ExecutionFailedError('Error', String(inner), { cause: inner });
  }
  if (error instanceof ExecutionTimeoutError) return new ExecutionFailedError('States.Timeout', 'The execution timed out (TimeoutSeconds)', { cause: error });
  if (error instanceof ExecutionAbortedError) return new ExecutionFailedError('ExecutionAborted', 'The execution was aborted', { cause: error });
  if (error instanceof Error) return new ExecutionFailedError(error.name, error.message, { cause: error });
  return new ExecutionFailedError('Error', String(error));
}
