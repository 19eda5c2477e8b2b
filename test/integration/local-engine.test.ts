/**
 * The local engine runs a CDK-synthesized state machine in-process: a toy stack with the same
 * constructs as the real workflow (LambdaInvoke with and without the Payload envelope, a
 * DistributedMap over an S3 JSON array with ItemSelector, MaxConcurrencyPath,
 * ToleratedFailurePercentagePath and a ResultWriter, Retry and Catch by error name, a Choice loop).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { BatchWriteItemCommand, DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { HANDLER_NAMES, type HandlerName } from '../../infra/extagents-function';
import { buildStack, createSynthesisApp, RELEVANCE_INDEX_NAME } from '../../infra/extagents-stack';
import { STATE_NAMES } from '../../infra/extagents-workflow';
import { ConfigurationError, EmptyCorpusError, ModelError, ModelThrottledError } from '../../shared/errors';
import { createTablesFromTemplate, localClientConfig, startDynalite } from '../../local/engine/dynalite';
import { LOCAL_DISTRIBUTED_MAP_RESOURCE, LOCAL_PARALLEL_RESOURCE, resolveStateMachineDefinition, type AslDefinition } from '../../local/engine/definition';
import type { ChildExecutionResult, MapRunManifest, MapRunStartedEvent, ResultWriterOutput } from '../../local/engine/distributed-map';
import { ExecutionFailedError, prepareLocalExecution, runLocalExecution, type LocalLambdaHandler } from '../../local/engine/engine';
import { FsBlobStore } from '../../local/engine/fs-blob-store';

// ---------------------------------------------------------------------------------------------
// The toy stack
// ---------------------------------------------------------------------------------------------

/** Synthesize the toy stack and return its template. */
function synthesizeToyStack(): object {
  const app = new App({ builtinCloudFormationValidation: false, treeMetadata: false, stackTraces: false });
  const stack = new Stack(app, 'Toy');
  stack.node.setContext('@aws-cdk/aws-stepfunctions:useDistributedMapResultWriterV2', true);
  const bucket = new s3.Bucket(stack, 'Bucket');
  const fn = (id: string): lambda.Function =>
    new lambda.Function(stack, id, {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => ({});'), // placeholder: runs locally
    });

  const prepare = new tasks.LambdaInvoke(stack, 'Prepare', { lambdaFunction: fn('PrepareFn'), payloadResponseOnly: true });
  const prepareFailed = new sfn.Fail(stack, 'PrepareFailed', { errorPath: '$.Error', causePath: '$.Cause' });
  prepare.addCatch(prepareFailed, { errors: [EmptyCorpusError.name] });

  const work = new tasks.LambdaInvoke(stack, 'Work', {
    lambdaFunction: fn('WorkFn'),
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
  });
  // 30 s: a test that waited for real backoff would time out; the tests set retryIntervalMs 0.
  work.addRetry({ errors: [ModelThrottledError.name], interval: Duration.seconds(30), maxAttempts: 2, backoffRate: 2 });

  const items = new sfn.DistributedMap(stack, 'Items', {
    itemReader: new sfn.S3JsonItemReader({ bucket, key: sfn.JsonPath.stringAt('$.manifestKey') }),
    itemSelector: {
      runId: sfn.JsonPath.stringAt('$.runId'),
      value: sfn.JsonPath.numberAt('$$.Map.Item.Value.n'),
      index: sfn.JsonPath.numberAt('$$.Map.Item.Index'),
    },
    maxConcurrencyPath: '$.concurrency',
    toleratedFailurePercentagePath: '$.pct',
    resultWriterV2: new sfn.ResultWriterV2({ bucket, prefix: sfn.JsonPath.format('runs/{}/map', sfn.JsonPath.stringAt('$.runId')) }),
    resultPath: sfn.JsonPath.DISCARD,
  });
  items.itemProcessor(work);
  const mapFailed = new sfn.Fail(stack, 'MapFailed', { errorPath: '$.Error', causePath: '$.Cause' });
  items.addCatch(mapFailed, { errors: ['States.ExceedToleratedFailureThreshold'] });

  // The Payload envelope form (arn:aws:states:::lambda:invoke), output selected by OutputPath.
  const count = new tasks.LambdaInvoke(stack, 'Count', { lambdaFunction: fn('CountFn'), outputPath: '$.Payload' });
  const again = new sfn.Choice(stack, 'Again?').when(sfn.Condition.numberLessThan('$.count', 3), count).otherwise(new sfn.Succeed(stack, 'Done'));

  prepare.next(items);
  items.next(count);
  count.next(again);
  new sfn.StateMachine(stack, 'Machine', { definitionBody: sfn.DefinitionBody.fromChainable(prepare) });
  return Template.fromStack(stack).toJSON();
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

interface ToyState {
  runId: string;
  manifestKey: string;
  concurrency: number;
  pct: number;
  count: number;
}

interface WorkEvent {
  runId: string;
  value: number;
  index: number;
}

let template: object;
let definition: AslDefinition;
let arns: Record<string, string>;
let root: string;
let blobStore: FsBlobStore;

beforeAll(() => {
  template = synthesizeToyStack();
  const resolved = resolveStateMachineDefinition(template);
  definition = resolved.definition;
  // Logical ids carry CDK's hash suffix (PrepareFnF8A763DF): key the ARNs by construct id.
  arns = Object.fromEntries(Object.entries(resolved.lambdaArns).map(([id, arn]) => [id.replace(/[0-9A-F]{8}$/, ''), arn]));
});

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'local-engine-'));
  blobStore = new FsBlobStore(root);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Handlers by function ARN: Prepare writes the manifest of `items` items, Count counts to 3. */
function handlers(
  work: (event: WorkEvent) => Promise<unknown>,
  overrides: Partial<Record<'PrepareFn' | 'CountFn', LocalLambdaHandler>> = {},
): Record<string, LocalLambdaHandler> {
  const prepare: LocalLambdaHandler = async (event) => {
    const { runId, items, concurrency, pct } = event as { runId: string; items: number; concurrency: number; pct: number };
    if (items === 0) throw new EmptyCorpusError('The corpus has no usable text');
    const manifestKey = `runs/${runId}/manifest.json`;
    await blobStore.put(manifestKey, JSON.stringify(Array.from({ length: items }, (_, i) => ({ n: i * 10 }))));
    const state: ToyState = { runId, manifestKey, concurrency, pct, count: 0 };
    return state;
  };
  const count: LocalLambdaHandler = async (event) => {
    const state = event as ToyState;
    return { ...state, count: state.count + 1 };
  };
  return {
    [arns.PrepareFn]: overrides.PrepareFn ?? prepare,
    [arns.WorkFn]: (event) => work(event as WorkEvent),
    [arns.CountFn]: overrides.CountFn ?? count,
  };
}

/** A few turns of the event loop: lets other items start without waiting for wall-clock time. */
async function yieldTurns(turns: number): Promise<void> {
  for (let i = 0; i < turns; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

async function readResults(
  output: ResultWriterOutput,
): Promise<{ manifest: MapRunManifest; succeeded: ChildExecutionResult[]; failed: ChildExecutionResult[] }> {
  const manifest = JSON.parse(await blobStore.getText(output.ResultWriterDetails.Key)) as MapRunManifest;
  const read = async (files: Array<{ Key: string }>): Promise<ChildExecutionResult[]> =>
    (await Promise.all(files.map(async (f) => JSON.parse(await blobStore.getText(f.Key)) as ChildExecutionResult[]))).flat();
  return { manifest, succeeded: await read(manifest.ResultFiles.SUCCEEDED), failed: await read(manifest.ResultFiles.FAILED) };
}

/** Captures the Map Run's output: ResultPath null discards it from the state, so read it from the manifest folder. */
async function onlyManifest(runId: string): Promise<ResultWriterOutput> {
  const manifests = (await blobStore.list(`runs/${runId}/map/`)).filter((o) => o.key.endsWith('/manifest.json'));
  expect(manifests).toHaveLength(1);
  return { MapRunArn: '', ResultWriterDetails: { Bucket: 'bucket', Key: manifests[0].key } };
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe('local engine on a synthesized toy stack', () => {
  it('replaces the Distributed Map by a local Task and maps every Lambda Task to a function', () => {
    // Act
    const prepared = prepareLocalExecution({ definition, handlers: handlers(async () => ({})), blobStore });

    // Assert
    expect(prepared.definition.States.Items).toMatchObject({ Type: 'Task', Resource: LOCAL_DISTRIBUTED_MAP_RESOURCE, Next: 'Count', ResultPath: null });
    expect(prepared.distributedMaps.Items.ItemProcessor.States.Work).toBeDefined();
    expect(prepared.routes).toMatchObject({
      Prepare: { kind: 'lambda', functionArn: arns.PrepareFn, envelope: false },
      Work: { kind: 'lambda', functionArn: arns.WorkFn, envelope: false },
      Count: { kind: 'lambda', functionArn: arns.CountFn, envelope: true },
      Items: { kind: 'distributed-map' },
    });
  });

  it('processes every item with its ItemSelector input, writes the results and runs the Choice loop', async () => {
    // Arrange
    const seen: WorkEvent[] = [];
    const done: Array<[number, boolean]> = [];
    const started: MapRunStartedEvent[] = [];
    const work = async (event: WorkEvent): Promise<unknown> => {
      seen.push(event);
      return { doubled: event.value * 2 };
    };

    // Act
    const output = await runLocalExecution({
      definition,
      handlers: handlers(work),
      blobStore,
      input: { runId: 'r1', items: 5, concurrency: 2, pct: 0 },
      onItemDone: (index, ok) => done.push([index, ok]),
      onMapRunStarted: (event) => started.push(event),
      retryIntervalMs: 0,
    });

    // Assert: the state after three passes of the Choice loop over the Payload-envelope Task
    expect(output).toEqual({ runId: 'r1', manifestKey: 'runs/r1/manifest.json', concurrency: 2, pct: 0, count: 3 });
    expect(seen.sort((a, b) => a.index - b.index)).toEqual([0, 1, 2, 3, 4].map((i) => ({ runId: 'r1', value: i * 10, index: i })));
    expect(done.map(([i]) => i).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(done.every(([, ok]) => ok)).toBe(true);
    expect(started).toEqual([expect.objectContaining({ stateName: 'Items', totalItems: 5, maxConcurrency: 2 })]);

    const { manifest, succeeded, failed } = await readResults(await onlyManifest('r1'));
    expect(manifest.ResultFiles.SUCCEEDED[0].Key).toMatch(/^runs\/r1\/map\/[0-9a-f-]{36}\/SUCCEEDED_0\.json$/);
    expect(manifest.MapRunArn).toContain(':mapRun:');
    expect(failed).toEqual([]);
    expect(succeeded.map((r) => JSON.parse(r.Output ?? 'null')).sort((a, b) => a.doubled - b.doubled)).toEqual(
      [0, 20, 40, 60, 80].map((doubled) => ({ doubled })),
    );
    expect(succeeded.every((r) => r.Status === 'SUCCEEDED')).toBe(true);
  });

  it('splits the Map Run results into files of resultsPerFile executions, listed in the manifest', async () => {
    // Act
    await runLocalExecution({
      definition,
      handlers: handlers(async (event) => ({ i: event.index })),
      blobStore,
      input: { runId: 'r11', items: 5, concurrency: 5, pct: 0 },
      resultsPerFile: 2,
    });

    // Assert
    const { manifest, succeeded } = await readResults(await onlyManifest('r11'));
    expect(manifest.ResultFiles.SUCCEEDED.map((f) => f.Key.split('/').pop())).toEqual(['SUCCEEDED_0.json', 'SUCCEEDED_1.json', 'SUCCEEDED_2.json']);
    expect(succeeded.map((r) => JSON.parse(r.Output ?? 'null').i).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const file of manifest.ResultFiles.SUCCEEDED) expect(file.Size).toBe(Buffer.byteLength(await blobStore.getText(file.Key)));
  });

  it('refuses a JSONata definition, which the library would silently run as JSONPath', () => {
    const jsonata: AslDefinition = { QueryLanguage: 'JSONata', StartAt: 'P', States: { P: { Type: 'Pass', Output: '{% 1 %}', End: true } } };
    expect(() => prepareLocalExecution({ definition: jsonata, handlers: {}, blobStore })).toThrow(/uses JSONata/);
  });

  it('never runs more items at once than MaxConcurrencyPath allows, and does reach it', async () => {
    // Arrange
    let inFlight = 0;
    let peak = 0;
    const work = async (): Promise<unknown> => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await yieldTurns(5);
      inFlight -= 1;
      return {};
    };

    // Act
    await runLocalExecution({ definition, handlers: handlers(work), blobStore, input: { runId: 'r2', items: 20, concurrency: 3, pct: 0 } });

    // Assert
    expect(peak).toBe(3);
  });

  it('tolerates a failing item under the tolerated failure percentage and records it as FAILED', async () => {
    // Arrange: 1 failure of 10 items = 10 %, which does not exceed 10 %
    const done: Array<[number, boolean]> = [];
    const work = async (event: WorkEvent): Promise<unknown> => {
      if (event.index === 3) throw new ModelError('the model returned garbage');
      return { ok: event.index };
    };

    // Act
    const output = await runLocalExecution({
      definition,
      handlers: handlers(work),
      blobStore,
      input: { runId: 'r3', items: 10, concurrency: 4, pct: 10 },
      onItemDone: (index, ok) => done.push([index, ok]),
    });

    // Assert
    expect(output).toMatchObject({ count: 3 });
    expect(done.filter(([, ok]) => !ok)).toEqual([[3, false]]);
    const { succeeded, failed } = await readResults(await onlyManifest('r3'));
    expect(succeeded).toHaveLength(9);
    expect(failed).toEqual([expect.objectContaining({ Status: 'FAILED', Error: 'ModelError', Input: JSON.stringify({ runId: 'r3', value: 30, index: 3 }) })]);
    expect(JSON.parse(failed[0].Cause ?? '{}')).toMatchObject({ errorType: 'ModelError', errorMessage: 'the model returned garbage' });
  });

  it('fails with States.ExceedToleratedFailureThreshold over the threshold, after draining the items in flight', async () => {
    // Arrange: items 0 and 1 fail at once (2 of 10 = 20 % > 10 %) while items 2 and 3 are still running
    let inFlight = 0;
    const finished: number[] = [];
    const startedItems: number[] = [];
    const work = async (event: WorkEvent): Promise<unknown> => {
      startedItems.push(event.index);
      if (event.index < 2) throw new ModelError(`item ${event.index} failed`);
      inFlight += 1;
      await yieldTurns(50);
      inFlight -= 1;
      finished.push(event.index);
      return {};
    };

    // Act
    const failure = await runLocalExecution({
      definition,
      handlers: handlers(work),
      blobStore,
      input: { runId: 'r4', items: 10, concurrency: 4, pct: 10 },
    }).catch((error: unknown) => error);
    const inFlightWhenSettled = inFlight;

    // Assert: caught by name into the MapFailed Fail state, which reports the Map Run's error
    expect(failure).toBeInstanceOf(ExecutionFailedError);
    const failed = failure as ExecutionFailedError;
    expect(failed.error).toBe('States.ExceedToleratedFailureThreshold');
    expect(failed.causeText).toMatch(/2 of 10 items failed/);
    expect(failed.causeText).toMatch(/item 0: ModelError/);
    expect(inFlightWhenSettled).toBe(0);
    expect(finished.sort()).toEqual([2, 3]);
    expect(startedItems.length).toBeLessThan(10); // no new item started once the threshold was exceeded
    const { failed: failedResults } = await readResults(await onlyManifest('r4'));
    expect(failedResults.map((r) => r.Error)).toEqual(['ModelError', 'ModelError']);
  });

  it('retries an item on the retrier of our error name and does not retry another error', async () => {
    // Arrange: item 0 is throttled once then succeeds; item 1 fails with ModelError (no retrier)
    const attempts = new Map<number, number>();
    const work = async (event: WorkEvent): Promise<unknown> => {
      attempts.set(event.index, (attempts.get(event.index) ?? 0) + 1);
      if (event.index === 0 && attempts.get(0) === 1) throw new ModelThrottledError('slow down');
      if (event.index === 1) throw new ModelError('permanent');
      return { attempt: attempts.get(event.index) };
    };

    // Act: the retrier's 30-second interval is replaced by 0 ms
    const output = await runLocalExecution({
      definition,
      handlers: handlers(work),
      blobStore,
      input: { runId: 'r5', items: 2, concurrency: 2, pct: 50 },
      retryIntervalMs: 0,
    });

    // Assert
    expect(output).toMatchObject({ count: 3 });
    expect(attempts.get(0)).toBe(2);
    expect(attempts.get(1)).toBe(1);
    const { succeeded } = await readResults(await onlyManifest('r5'));
    expect(JSON.parse(succeeded[0].Output ?? 'null')).toEqual({ attempt: 2 });
  });

  it('catches a handler error by its class name and reports the Lambda-style cause', async () => {
    // Act: Prepare throws EmptyCorpusError; its Catch leads to the PrepareFailed Fail state
    const failure = await runLocalExecution({
      definition,
      handlers: handlers(async () => ({})),
      blobStore,
      input: { runId: 'r6', items: 0, concurrency: 1, pct: 0 },
    }).catch((error: unknown) => error);

    // Assert
    expect(failure).toBeInstanceOf(ExecutionFailedError);
    const failed = failure as ExecutionFailedError;
    expect(failed.error).toBe('EmptyCorpusError');
    expect(JSON.parse(failed.causeText)).toMatchObject({ errorType: 'EmptyCorpusError', errorMessage: 'The corpus has no usable text' });
  });

  it('fails an uncaught handler error with the error name and keeps the original error as root cause', async () => {
    // Arrange
    const original = new ModelError('count broke');

    // Act
    const failure = await runLocalExecution({
      definition,
      handlers: handlers(async () => ({}), {
        CountFn: async () => {
          throw original;
        },
      }),
      blobStore,
      input: { runId: 'r7', items: 1, concurrency: 1, pct: 0 },
    }).catch((error: unknown) => error);

    // Assert
    expect(failure).toBeInstanceOf(ExecutionFailedError);
    expect((failure as ExecutionFailedError).error).toBe('ModelError');
    expect((failure as ExecutionFailedError).rootCause).toBe(original);
  });

  it('fails with the terminal States.DataLimitExceeded when a handler returns more than 256 KiB', async () => {
    // Act
    const failure = await runLocalExecution({
      definition,
      handlers: handlers(async () => ({}), { CountFn: async () => ({ big: 'x'.repeat(300_000) }) }),
      blobStore,
      input: { runId: 'r8', items: 1, concurrency: 1, pct: 0 },
    }).catch((error: unknown) => error);

    // Assert
    expect((failure as ExecutionFailedError).error).toBe('States.DataLimitExceeded');
  });

  it('refuses to start when a Task has no local handler, naming the state and the function', async () => {
    // Arrange
    let prepareCalls = 0;
    const all = handlers(async () => ({}), {
      PrepareFn: async () => {
        prepareCalls += 1;
        return {};
      },
    });
    delete all[arns.WorkFn];

    // Act
    const failure = await runLocalExecution({ definition, handlers: all, blobStore, input: { runId: 'r9', items: 1, concurrency: 1, pct: 0 } }).catch(
      (error: unknown) => error,
    );

    // Assert
    expect(failure).toBeInstanceOf(ConfigurationError);
    expect((failure as Error).message).toContain(`Task 'Work' invokes ${arns.WorkFn} but no local handler is registered`);
    expect(prepareCalls).toBe(0);
  });

  it('times a Task out with States.Timeout after taskTimeoutMs and returns only once the handler settled', async () => {
    // Arrange: Count outlives a 1-second Task timeout
    let countSettled = false;
    const slowCount: LocalLambdaHandler = async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      countSettled = true;
      return event;
    };

    // Act
    const failure = await runLocalExecution({
      definition,
      handlers: handlers(async () => ({}), { CountFn: slowCount }),
      blobStore,
      input: { runId: 'r10', items: 1, concurrency: 1, pct: 0 },
      taskTimeoutMs: 1_000,
    }).catch((error: unknown) => error);

    // Assert
    expect((failure as ExecutionFailedError).error).toBe('States.Timeout');
    expect(countSettled).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// The real stack (infra/extagents-stack.ts)
// ---------------------------------------------------------------------------------------------

describe('local engine on the real ExtAgents stack', () => {
  let realTemplate: object;
  let realDefinition: AslDefinition;
  let functionArnOf: Record<HandlerName, string>;
  let tableNames: Record<string, string>;

  beforeAll(() => {
    const stack = buildStack(createSynthesisApp(), { modelSpec: 'extractive' });
    realTemplate = Template.fromStack(stack).toJSON();
    const resolved = resolveStateMachineDefinition(realTemplate, stack.getLogicalId(stack.stateMachine.node.defaultChild as sfn.CfnStateMachine));
    realDefinition = resolved.definition;
    tableNames = resolved.tableNames;
    functionArnOf = Object.fromEntries(
      HANDLER_NAMES.map((name) => [name, resolved.lambdaArns[stack.getLogicalId(stack.functions[name].node.defaultChild as CfnFunction)]]),
    ) as Record<HandlerName, string>;
  });

  it('resolves and localizes the definition: every state present, SeekChunks local, every Lambda Task on one of the five functions', () => {
    // Arrange
    const stubs = Object.fromEntries(Object.values(functionArnOf).map((arn) => [arn, async () => ({})]));

    // Act
    const prepared = prepareLocalExecution({ definition: realDefinition, handlers: stubs, blobStore });

    // Assert
    expect(Object.values(functionArnOf).every((arn) => typeof arn === 'string')).toBe(true);
    const topLevel = Object.keys(prepared.definition.States).sort();
    const nested = [
      ...Object.values(prepared.parallels).flatMap((p) => p.Branches),
      ...Object.values(prepared.distributedMaps).map((m) => m.ItemProcessor),
    ].flatMap((m) => Object.keys(m.States));
    expect([...topLevel, ...nested].sort()).toEqual(Object.values(STATE_NAMES).sort());
    expect(prepared.definition.States[STATE_NAMES.PipelinedRound]).toMatchObject({ Type: 'Task', Resource: LOCAL_PARALLEL_RESOURCE });
    expect(prepared.definition.States[STATE_NAMES.SeekChunks]).toMatchObject({ Type: 'Task', Resource: LOCAL_DISTRIBUTED_MAP_RESOURCE, ResultPath: null });
    expect(Object.keys(prepared.distributedMaps).sort()).toEqual([STATE_NAMES.SeekChunks, STATE_NAMES.SpeculativeSeekChunks].sort());
    expect(prepared.distributedMaps[STATE_NAMES.SeekChunks].ItemProcessor.States[STATE_NAMES.Seek]).toBeDefined();
    const lambdaRoutes = Object.values(prepared.routes).filter((r) => r.kind === 'lambda');
    expect(lambdaRoutes.map((r) => r.stateName).sort()).toEqual(
      [
        STATE_NAMES.Prepare,
        STATE_NAMES.Seek,
        STATE_NAMES.Reason,
        STATE_NAMES.AnswerBestEffort,
        STATE_NAMES.Synchronize,
        STATE_NAMES.GrowCoverage,
        STATE_NAMES.Finalize,
        STATE_NAMES.PipelinedReason,
        STATE_NAMES.SpeculativeSynchronize,
        STATE_NAMES.SpeculativeSeek,
        STATE_NAMES.SubmitSeekBatch,
        STATE_NAMES.CheckSeekBatch,
      ].sort(),
    );
    for (const route of lambdaRoutes) expect(Object.values(functionArnOf)).toContain(route.kind === 'lambda' ? route.functionArn : '');
  });

  it('runs the real definition end to end with stand-in handlers: two rounds of seeking, synchronization, an answer', async () => {
    // Arrange: stand-ins that follow the payload contract of infra/extagents-workflow.ts
    const seeks: Array<{ runId: string; round: number; chunk: number }> = [];
    const reasonForces: boolean[] = [];
    type State = { runId: string; manifestKey: string; round: number; k: number; seq: number; outcome: string | null; exhausted: boolean; poolSize: number };
    const stubs: Record<string, LocalLambdaHandler> = {
      [functionArnOf.prepare]: async (event) => {
        const { runId } = event as { runId: string };
        const manifestKey = `runs/${runId}/manifest.json`;
        await blobStore.put(manifestKey, JSON.stringify([{ chunk: 0 }, { chunk: 1 }, { chunk: 2 }]));
        return {
          runId,
          manifestKey,
          chunks: 3,
          covered: 3,
          round: 1,
          k: 1,
          seq: 0,
          outcome: null,
          exhausted: false,
          poolSize: 0,
          config: { rounds: 2, concurrency: 2, toleratedFailurePercentage: 5, bestEffort: false, pipelineRounds: false, coverageCap: 3 },
        };
      },
      [functionArnOf.seek]: async (event) => {
        seeks.push(event as { runId: string; round: number; chunk: number });
        return { chunk: (event as { chunk: number }).chunk, outcome: 'message' };
      },
      [functionArnOf.reason]: async (event) => {
        const { state, force } = event as { state: State; force: boolean };
        reasonForces.push(force);
        return { ...state, outcome: state.round === 2 ? 'answered' : 'refused', exhausted: true, poolSize: 3, seq: state.seq + 1 };
      },
      // As Synchronize: the next round with no outcome yet (an outcome 'refused' would be a skipped round, reseek promising).
      [functionArnOf.synchronize]: async (event) => ({
        ...(event as State),
        round: (event as State).round + 1,
        k: 1,
        outcome: null,
        exhausted: false,
        poolSize: 0,
      }),
      [functionArnOf.finalize]: async (event) => ({ runId: (event as State).runId, answerable: true, resultKey: `runs/${(event as State).runId}/result.json` }),
    };

    // Act
    const output = await runLocalExecution({
      definition: realDefinition,
      handlers: stubs,
      blobStore,
      input: { runId: 'real1', question: 'q?', corpus: { prefix: 'corpora/x/' } },
      retryIntervalMs: 0,
    });

    // Assert
    expect(output).toEqual({ runId: 'real1', answerable: true, resultKey: 'runs/real1/result.json' });
    expect(seeks.map((s) => `${s.round}:${s.chunk}`).sort()).toEqual(['1:0', '1:1', '1:2', '2:0', '2:1', '2:2']);
    expect(seeks.every((s) => s.runId === 'real1')).toBe(true);
    expect(reasonForces).toEqual([false, false]);
    const manifests = (await blobStore.list('runs/real1/map/')).filter((o) => o.key.endsWith('/manifest.json'));
    expect(manifests).toHaveLength(2); // one Map Run per round, under the ResultWriter prefix runs/<runId>/map
  });

  it('creates the template table in dynalite, where the relevance GSI gives the top-k in descending order', async () => {
    // Arrange
    const dynamo = await startDynalite();
    const client = new DynamoDBClient(localClientConfig(dynamo.endpoint));
    try {
      const [tableName] = await createTablesFromTemplate(client, realTemplate, tableNames);
      const message = (score: number, chunk: number) => ({
        PutRequest: {
          Item: {
            pk: { S: 'RUN#r' },
            sk: { S: `MSG#01#${String(chunk).padStart(7, '0')}` },
            gsi1pk: { S: 'POOL#r' },
            gsi1sk: { S: `${String(score).padStart(3, '0')}#${String(9_999_999 - chunk).padStart(7, '0')}#98` },
          },
        },
      });
      await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: [message(40, 0), message(90, 1), message(90, 2), message(70, 3)] } }));

      // Act
      const top = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: RELEVANCE_INDEX_NAME,
          KeyConditionExpression: 'gsi1pk = :p',
          ExpressionAttributeValues: { ':p': { S: 'POOL#r' } },
          ScanIndexForward: false,
          Limit: 3,
        }),
      );

      // Assert: score descending, then corpus order
      expect(top.Items?.map((item) => item.sk.S)).toEqual(['MSG#01#0000001', 'MSG#01#0000002', 'MSG#01#0000003']);
    } finally {
      client.destroy();
      await dynamo.stop();
    }
  });
});

describe('local engine: Parallel states', () => {
  const fnArn = (name: string): string => `arn:aws:lambda:us-east-1:000000000000:function:${name}`;
  /** A Parallel: branch A runs `Slow` then `A` (a Pass, or a Fail with error Stopped); branch B a Distributed Map of 100 `Work` items, one at a time. */
  const parallelDefinition = (failA: boolean): AslDefinition => ({
    StartAt: 'Both',
    States: {
      Both: {
        Type: 'Parallel',
        Branches: [
          {
            StartAt: 'Slow',
            States: {
              Slow: { Type: 'Task', Resource: fnArn('Slow'), Next: 'A' },
              A: failA ? { Type: 'Fail', Error: 'Stopped', Cause: 'branch A is done' } : { Type: 'Pass', Result: 'a', End: true },
            },
          },
          {
            StartAt: 'Items',
            States: {
              Items: {
                Type: 'Map',
                ItemProcessor: {
                  ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
                  StartAt: 'Work',
                  States: { Work: { Type: 'Task', Resource: fnArn('Work'), End: true } },
                },
                ItemReader: {
                  Resource: 'arn:aws:states:::s3:getObject',
                  ReaderConfig: { InputType: 'JSON' },
                  Parameters: { Bucket: 'bucket', Key: 'items.json' },
                },
                MaxConcurrency: 1,
                ResultPath: null,
                End: true,
              },
            },
          },
        ],
        Catch: [{ ErrorEquals: ['Stopped'], ResultPath: '$.stopped', Next: 'After' }],
        Next: 'After',
      },
      After: { Type: 'Pass', End: true },
    },
  });

  const run = async (failA: boolean, slowMs: number) => {
    await blobStore.put('items.json', JSON.stringify(Array.from({ length: 100 }, (_, n) => ({ n }))));
    let works = 0;
    const handlers: Record<string, LocalLambdaHandler> = {
      // Branch A ends once branch B has worked at least once (then after slowMs): on a loaded machine a
      // fixed delay alone could end A before B's first item started.
      [fnArn('Slow')]: async () => {
        while (works === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        return new Promise((resolve) => setTimeout(() => resolve({}), slowMs));
      },
      [fnArn('Work')]: async () => {
        works += 1;
        return new Promise((resolve) => setTimeout(() => resolve({}), 5));
      },
    };
    const output = await runLocalExecution({ definition: parallelDefinition(failA), handlers, blobStore, input: { x: 1 } });
    return { output, works };
  };

  it('runs the branches at once on the same input and returns their outputs in branch order', async () => {
    // Act
    const { output, works } = await run(false, 1);

    // Assert
    expect(works).toBe(100);
    expect(output).toEqual(['a', { x: 1 }]);
  });

  it('stops the Distributed Map Run of the other branch when a branch fails, and the Catch takes the error', async () => {
    // Act: branch A fails after 50 ms; the 100 items of branch B would take at least 500 ms
    const { output, works } = await run(true, 50);

    // Assert
    expect(output).toEqual({ x: 1, stopped: { Error: 'Stopped', Cause: 'branch A is done' } });
    expect(works).toBeGreaterThan(0);
    expect(works).toBeLessThan(100);
  });
});
