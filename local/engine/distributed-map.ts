/**
 * Local emulation of a Step Functions Map state in distributed mode (a "Map Run"), which
 * `aws-local-stepfunctions` 3.0.0 does not implement. local/engine/definition.ts replaces each Distributed
 * Map state by a Task of the same name; local/engine/engine.ts routes that Task to `runDistributedMap`,
 * which does what the service does:
 *
 * 1. ItemReader: evaluates `ItemReader.Parameters` (`Bucket`, `Key`, `.$` paths allowed) against the
 *    state's effective input and reads the S3 object through the `BlobStore` (a JSON array, or JSON
 *    Lines); `ReaderConfig.MaxItems(Path)` caps the items. There is one local bucket: the bucket
 *    name is not used. Without an ItemReader, the items are the array at `ItemsPath` (default `$`).
 * 2. ItemSelector: each item's input is the selector evaluated with `$` = the state's effective
 *    input and `$$.Map.Item.Value` / `$$.Map.Item.Index` = the item and its zero-based index.
 *    Evaluated by the library itself (a one-state Pass machine), so paths and intrinsic functions
 *    behave as in every other state.
 * 3. ItemProcessor: runs as a child `StateMachine` per item, with the parent's run options (task
 *    overrides, retry/wait overrides), at most MaxConcurrency(Path) at once (0 or absent: 10,000,
 *    the service's limit for child executions of one Map Run).
 * 4. Tolerated failures: the Map Run fails when failed items exceed ToleratedFailureCount(Path) or
 *    ToleratedFailurePercentage(Path) of all items (neither given: no failure is tolerated). Then no
 *    further item starts, items in flight are drained, results are written, and the state fails with
 *    `States.ExceedToleratedFailureThreshold`.
 * 5. ResultWriter: writes `<Prefix>/<MapRunId>/SUCCEEDED_<n>.json`, `FAILED_<n>.json` (at most
 *    `resultsPerFile` executions each, flushed as they fill, so outputs are not all kept in memory)
 *    and `manifest.json` (`{DestinationBucket, MapRunArn, ResultFiles: {FAILED, PENDING, SUCCEEDED}}`),
 *    and returns `{MapRunArn, ResultWriterDetails: {Bucket, Key}}` (Key = the manifest). Without a
 *    ResultWriter the state's result is the array of item outputs, in item order.
 *
 * Not emulated (refused when the engine prepares the run): ItemBatcher, CSV / MANIFEST / PARQUET
 * readers, `s3:listObjectsV2`, JSONL result output. Child executions have no `$$.Execution.Id`.
 *
 * Sources: Step Functions Developer Guide, "Map state in Distributed mode", "ItemReader (Map)",
 * "ItemSelector (Map)", "ResultWriter (Map)", "Tolerated failure threshold"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html and the pages
 * linked from it).
 */
import './polyfills';
import { randomUUID } from 'node:crypto';
import { StateMachine, type RunOptions, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { graphemeBoundary } from '../../shared/unicode';
import { ExtAgentsError, NotFoundError } from '../../shared/errors';
import type { BlobStore } from '../../shared/ports';
import { StatesError, type AslDefinition, type DistributedMapState, type JsonObject, type JsonValue } from './definition';

/** Child executions of one Map Run at most (the service's limit; also the default when 0 / absent). */
export const MAX_CHILD_CONCURRENCY = 10_000;

/** Default number of child execution results per SUCCEEDED_<n>.json / FAILED_<n>.json file. */
export const DEFAULT_RESULTS_PER_FILE = 1000;

// The event's type is public (the library's `startLocalStack` callbacks): it lives with the stack's public types.
import type { MapRunStartedEvent } from './stack-api';

export type { MapRunStartedEvent };

/** Options of one Map Run. */
export interface DistributedMapRunOptions {
  /** Name of the Distributed Map state (the local Task of the same name). */
  stateName: string;
  /** The Distributed Map state as it was in the definition (from `localizeDistributedMaps`). */
  state: DistributedMapState;
  /** The local bucket: ItemReader object and ResultWriter files. */
  blobStore: BlobStore;
  /**
   * Run options of each child execution: the same task overrides as the parent (so a Lambda Task of
   * the ItemProcessor runs its local handler), retry and wait overrides.
   */
  childRunOptions: RunOptions;
  /** ARN used in MapRunArn and the result entries. Default `arn:aws:states:local:000000000000:stateMachine:local`. */
  stateMachineArn?: string;
  /** Called once before the first item starts. */
  onMapRunStarted?: (event: MapRunStartedEvent) => void;
  /** Called when an item's child execution ends: `ok` is true when it succeeded. */
  onItemDone?: (index: number, ok: boolean, stateName: string) => void;
  /** Polled before each item starts; when it returns true no further item starts (in-flight ones finish). */
  shouldStop?: () => boolean;
  /** Results per SUCCEEDED_<n>.json / FAILED_<n>.json. Default {@link DEFAULT_RESULTS_PER_FILE}. */
  resultsPerFile?: number;
}

/** What a Distributed Map with an exporting ResultWriter returns (the service's shape). */
export interface ResultWriterOutput {
  MapRunArn: string;
  ResultWriterDetails: { Bucket: string; Key: string };
}

/** The manifest a Map Run writes under `<Prefix>/<MapRunId>/manifest.json`. */
export interface MapRunManifest {
  DestinationBucket: string;
  MapRunArn: string;
  ResultFiles: Record<'FAILED' | 'PENDING' | 'SUCCEEDED', Array<{ Key: string; Size: number }>>;
}

/** One child execution in SUCCEEDED_<n>.json / FAILED_<n>.json (Transformation NONE). */
export interface ChildExecutionResult {
  ExecutionArn: string;
  Name: string;
  StateMachineArn: string;
  Status: 'SUCCEEDED' | 'FAILED';
  /** The item's input, as a JSON string. */
  Input: string;
  InputDetails: { Included: boolean };
  /** The child's output, as a JSON string (SUCCEEDED only). */
  Output?: string;
  OutputDetails?: { Included: boolean };
  /** Error name and cause (FAILED only). */
  Error?: string;
  Cause?: string;
  /** ISO 8601. */
  StartDate: string;
  StopDate: string;
  RedriveCount: number;
  RedriveStatus: 'NOT_REDRIVABLE';
  RedriveStatusReason: string;
}

const S3_GET_OBJECT = /^arn:[^:]+:states:::s3:getObject$/;
const S3_PUT_OBJECT = /^arn:[^:]+:states:::s3:putObject$/;

/**
 * Features of a Distributed Map state this emulation does not implement.
 * @returns one sentence per problem (empty when the state can run locally).
 */
export function unsupportedDistributedMapFeatures(stateName: string, state: DistributedMapState): string[] {
  const problems: string[] = [];
  const where = `Distributed Map '${stateName}'`;
  if (state.QueryLanguage === 'JSONata') problems.push(`${where} uses JSONata; the local engine runs JSONPath only`);
  if (state.ItemBatcher !== undefined) problems.push(`${where}: ItemBatcher is not emulated locally`);
  const reader = state.ItemReader;
  if (reader !== undefined) {
    const inputType = reader.ReaderConfig?.InputType ?? 'JSON';
    if (!S3_GET_OBJECT.test(reader.Resource)) {
      problems.push(`${where}: ItemReader resource ${reader.Resource} is not emulated locally (only s3:getObject)`);
    } else if (inputType !== 'JSON' && inputType !== 'JSONL') {
      problems.push(`${where}: ItemReader InputType ${inputType} is not emulated locally (JSON and JSONL are)`);
    }
    if (reader.ReaderConfig?.ItemsPointer !== undefined) problems.push(`${where}: ReaderConfig.ItemsPointer is not emulated locally`);
  }
  const writer = state.ResultWriter;
  if (writer !== undefined) {
    if (writer.Resource !== undefined && !S3_PUT_OBJECT.test(writer.Resource)) {
      problems.push(`${where}: ResultWriter resource ${writer.Resource} is not emulated locally (only s3:putObject)`);
    }
    if (writer.WriterConfig?.OutputType === 'JSONL') problems.push(`${where}: ResultWriter OutputType JSONL is not emulated locally`);
  }
  return problems;
}

/**
 * The child state machine of a Distributed Map: its ItemProcessor without `ProcessorConfig`.
 */
export function itemProcessorDefinition(state: DistributedMapState): AslDefinition {
  const { ProcessorConfig: _processorConfig, ...machine } = state.ItemProcessor;
  return machine as AslDefinition;
}

/**
 * Run one Map Run: the body of the local Task that stands in for a Distributed Map state.
 *
 * @param input the state's effective input (after InputPath), as the library hands it to the Task.
 * @param options the Map state, the bucket, the child run options and callbacks.
 * @returns `{MapRunArn, ResultWriterDetails: {Bucket, Key}}` with an exporting ResultWriter, otherwise
 *   the item outputs in item order (Transformation COMPACT, or as WriterConfig says).
 * @throws StatesError `States.ExceedToleratedFailureThreshold` (cause: counts, thresholds and the
 *   first failures) after in-flight items are drained and results written;
 *   `States.ItemReaderFailed` when the ItemReader object is missing or not a JSON array / JSON Lines;
 *   `States.ResultWriterFailed` when a result file cannot be written; `States.Runtime` when a path
 *   (ItemSelector, MaxConcurrencyPath, ToleratedFailure*Path, ItemReader/ResultWriter Parameters)
 *   does not resolve or has the wrong type. An error thrown by a callback is rethrown after draining.
 */
export async function runDistributedMap(input: unknown, options: DistributedMapRunOptions): Promise<JsonValue> {
  const { state, stateName } = options;
  const mapInput = (input ?? null) as JsonValue;
  const stateMachineArn = options.stateMachineArn ?? 'arn:aws:states:local:000000000000:stateMachine:local';
  const [, , , region = 'local', account = '000000000000', , machineName = 'local'] = stateMachineArn.split(':');
  const mapRunId = randomUUID();
  const mapRunArn = `arn:aws:states:${region}:${account}:mapRun:${machineName}/${state.Label ?? stateName}:${mapRunId}`;

  const items = await readItems(state, mapInput, options.blobStore);
  const maxConcurrency = await resolveMaxConcurrency(state, mapInput);
  const threshold = await resolveThreshold(state, mapInput);
  const writer = await ResultSink.create(state, mapInput, options, mapRunId, mapRunArn);

  const child = new StateMachine(itemProcessorDefinition(state) as unknown as StateMachineDefinition, {
    validationOptions: { noValidate: true }, // validated once by the engine before the run
  });
  const selector = state.ItemSelector ?? (state.Parameters as JsonObject | undefined);
  const selectorMachine = selector === undefined ? undefined : payloadTemplateMachine(selector);

  options.onMapRunStarted?.({ stateName, mapRunArn, totalItems: items.length, maxConcurrency, input: mapInput });

  let failed = 0;
  let succeeded = 0;
  let exceeded = false;
  let fatal: unknown;
  const firstFailures: string[] = [];
  let next = 0;

  const runItem = async (index: number): Promise<void> => {
    const context = { Map: { Item: { Index: index, Value: items[index] } } };
    const itemInput = selectorMachine ? await evaluateWith(selectorMachine, mapInput, context) : items[index];
    const startDate = new Date().toISOString();
    const name = randomUUID();
    let result: ItemResult;
    try {
      const output = (await child.run(itemInput as never, options.childRunOptions).result) as JsonValue;
      succeeded += 1;
      result = { name, startDate, input: itemInput, output };
    } catch (error) {
      const { name: errorName, cause } = executionErrorOf(error);
      failed += 1;
      if (firstFailures.length < 5) firstFailures.push(`item ${index}: ${errorName}: ${truncate(cause, 300)}`);
      if (isThresholdExceeded(threshold, failed, items.length)) exceeded = true;
      result = { name, startDate, input: itemInput, error: errorName, cause };
    }
    await writer.add(index, result);
    options.onItemDone?.(index, result.error === undefined, stateName);
  };

  // A small worker pool rather than p-limit: items start lazily (no promise per item up front for
  // 100,000 items), and "stop starting new items, let the in-flight ones finish" is one flag.
  const worker = async (): Promise<void> => {
    while (next < items.length && !exceeded && fatal === undefined && !(options.shouldStop?.() ?? false)) {
      const index = next;
      next += 1;
      try {
        await runItem(index);
      } catch (error) {
        fatal ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(maxConcurrency, items.length) }, worker));

  let output: JsonValue;
  try {
    if (fatal !== undefined) throw fatal;
    output = await writer.finish();
  } catch (error) {
    throw error instanceof ResultSinkError ? error.statesError : error;
  }
  if (exceeded) {
    const limits = [
      threshold.count !== undefined ? `ToleratedFailureCount ${threshold.count}` : undefined,
      threshold.percentage !== undefined ? `ToleratedFailurePercentage ${threshold.percentage}%` : undefined,
    ].filter((x): x is string => x !== undefined);
    throw new StatesError(
      'States.ExceedToleratedFailureThreshold',
      `Map Run ${mapRunArn} of state '${stateName}' failed: ${failed} of ${items.length} items failed ` +
        `(${succeeded} succeeded, ${items.length - failed - succeeded} not started), more than tolerated ` +
        `(${limits.join(', ') || 'no failure tolerated'}). First failures: ${firstFailures.join('; ')}`,
    );
  }
  return output;
}

// ---------------------------------------------------------------------------------------------
// Items, concurrency, threshold
// ---------------------------------------------------------------------------------------------

async function readItems(state: DistributedMapState, input: JsonValue, blobStore: BlobStore): Promise<JsonValue[]> {
  let items: JsonValue[];
  const reader = state.ItemReader;
  if (reader === undefined) {
    const value = await evaluatePath(state.ItemsPath ?? '$', input);
    if (!Array.isArray(value)) throw new StatesError('States.Runtime', `ItemsPath ${state.ItemsPath ?? '$'} did not select an array`);
    items = value;
  } else {
    const parameters = (reader.Parameters === undefined ? {} : await evaluateTemplate(reader.Parameters, input)) as JsonObject;
    const key = parameters.Key;
    if (typeof key !== 'string' || key === '') {
      throw new StatesError('States.ItemReaderFailed', `ItemReader Parameters.Key must be a non-empty string (got ${JSON.stringify(key)})`);
    }
    let text: string;
    try {
      text = await blobStore.getText(key);
    } catch (error) {
      const reason = error instanceof NotFoundError ? 'does not exist' : `cannot be read (${String(error)})`;
      throw new StatesError('States.ItemReaderFailed', `ItemReader object ${JSON.stringify(key)} ${reason}`, { cause: error });
    }
    items = parseItems(text, key, reader.ReaderConfig?.InputType ?? 'JSON');
    const maxItems =
      reader.ReaderConfig?.MaxItemsPath !== undefined ? await evaluatePath(reader.ReaderConfig.MaxItemsPath, input) : reader.ReaderConfig?.MaxItems;
    if (maxItems !== undefined && maxItems !== null) {
      if (typeof maxItems !== 'number' || !Number.isInteger(maxItems) || maxItems < 0) {
        throw new StatesError('States.Runtime', `ReaderConfig MaxItems must be a non-negative integer (got ${JSON.stringify(maxItems)})`);
      }
      if (maxItems > 0) items = items.slice(0, maxItems); // 0 means "all items" (the service's default)
    }
  }
  return items;
}

function parseItems(text: string, key: string, inputType: string): JsonValue[] {
  try {
    if (inputType === 'JSONL') {
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as JsonValue);
    }
    const parsed = JSON.parse(text) as JsonValue;
    if (!Array.isArray(parsed)) throw new StatesError('States.ItemReaderFailed', `ItemReader object ${JSON.stringify(key)} is not a JSON array`);
    return parsed;
  } catch (error) {
    if (error instanceof StatesError) throw error;
    throw new StatesError('States.ItemReaderFailed', `ItemReader object ${JSON.stringify(key)} is not valid ${inputType}`, { cause: error });
  }
}

async function resolveMaxConcurrency(state: DistributedMapState, input: JsonValue): Promise<number> {
  const value = state.MaxConcurrencyPath !== undefined ? await evaluatePath(state.MaxConcurrencyPath, input) : state.MaxConcurrency;
  if (value === undefined || value === null) return MAX_CHILD_CONCURRENCY;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new StatesError('States.Runtime', `MaxConcurrency must be a non-negative integer (got ${JSON.stringify(value)})`);
  }
  return value === 0 ? MAX_CHILD_CONCURRENCY : Math.min(value, MAX_CHILD_CONCURRENCY);
}

interface Threshold {
  /** Items. */
  count?: number;
  /** Percent 0-100. */
  percentage?: number;
}

async function resolveThreshold(state: DistributedMapState, input: JsonValue): Promise<Threshold> {
  const read = async (value: number | undefined, path: string | undefined, field: string, max?: number): Promise<number | undefined> => {
    const v = path !== undefined ? await evaluatePath(path, input) : value;
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (max !== undefined && v > max)) {
      throw new StatesError('States.Runtime', `${field} must be a number from 0${max !== undefined ? ` to ${max}` : ''} (got ${JSON.stringify(v)})`);
    }
    return v;
  };
  return {
    count: await read(state.ToleratedFailureCount, state.ToleratedFailureCountPath, 'ToleratedFailureCount'),
    percentage: await read(state.ToleratedFailurePercentage, state.ToleratedFailurePercentagePath, 'ToleratedFailurePercentage', 100),
  };
}

/**
 * The service's rule: the Map Run fails when failed items exceed the count or the percentage of all
 * items (either, when both are given); with neither, any failure fails it.
 */
export function isThresholdExceeded(threshold: Threshold, failed: number, total: number): boolean {
  if (threshold.count === undefined && threshold.percentage === undefined) return failed > 0;
  if (threshold.count !== undefined && failed > threshold.count) return true;
  if (threshold.percentage !== undefined && total > 0 && (failed * 100) / total > threshold.percentage) return true;
  return false;
}

/** Error name and cause of a failed child execution (the library wraps the state's error in ExecutionError). */
function executionErrorOf(error: unknown): { name: string; cause: string } {
  const inner = error instanceof Error && error.name === 'ExecutionError' && error.cause instanceof Error ? error.cause : error;
  if (inner instanceof Error) return { name: inner.name, cause: inner.message };
  return { name: 'Error', cause: String(inner) };
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, graphemeBoundary(text, max, 'before'))}…`;
}

// ---------------------------------------------------------------------------------------------
// Payload templates and paths, evaluated by the library (one-state Pass machine)
// ---------------------------------------------------------------------------------------------

function payloadTemplateMachine(template: JsonValue): StateMachine {
  return new StateMachine(
    { StartAt: 'Evaluate', States: { Evaluate: { Type: 'Pass', Parameters: template, End: true } } } as unknown as StateMachineDefinition,
    { validationOptions: { noValidate: true } },
  );
}

async function evaluateWith(machine: StateMachine, input: JsonValue, context: Record<string, unknown>): Promise<JsonValue> {
  try {
    return (await machine.run(input as never, { context }).result) as JsonValue;
  } catch (error) {
    // ExecutionError wraps the library's States.Runtime error (a path that selects nothing).
    const inner = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const message = inner instanceof Error ? inner.message : String(inner);
    throw new StatesError('States.Runtime', message, { cause: inner });
  }
}

/** Evaluate a JSONPath payload template (`.$` keys, paths, intrinsic functions) against an input. */
export function evaluateTemplate(template: JsonValue, input: JsonValue, context: Record<string, unknown> = {}): Promise<JsonValue> {
  return evaluateWith(payloadTemplateMachine(template), input, context);
}

async function evaluatePath(path: string, input: JsonValue): Promise<JsonValue> {
  const result = (await evaluateTemplate({ 'value.$': path }, input)) as JsonObject;
  return result.value;
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

interface ItemResult {
  name: string;
  startDate: string;
  input: JsonValue;
  output?: JsonValue;
  error?: string;
  cause?: string;
}

class ResultSinkError extends ExtAgentsError {
  constructor(readonly statesError: StatesError) {
    super(statesError.message, { cause: statesError });
  }
}

/** Collects child results: to result files (exporting ResultWriter) or in memory (state output). */
class ResultSink {
  private readonly buffers: Record<'SUCCEEDED' | 'FAILED', unknown[]> = { SUCCEEDED: [], FAILED: [] };
  private readonly files: MapRunManifest['ResultFiles'] = { FAILED: [], PENDING: [], SUCCEEDED: [] };
  private readonly outputs: Array<JsonValue | undefined> = [];

  private constructor(
    private readonly options: DistributedMapRunOptions,
    private readonly mapRunArn: string,
    private readonly transformation: 'NONE' | 'COMPACT' | 'FLATTEN',
    /** Bucket and key folder when results are exported, else undefined. */
    private readonly destination: { bucket: string; folder: string } | undefined,
    private readonly resultsPerFile: number,
  ) {}

  static async create(
    state: DistributedMapState,
    input: JsonValue,
    options: DistributedMapRunOptions,
    mapRunId: string,
    mapRunArn: string,
  ): Promise<ResultSink> {
    const writer = state.ResultWriter;
    const exporting = writer?.Resource !== undefined;
    let destination: { bucket: string; folder: string } | undefined;
    if (exporting) {
      const parameters = (writer?.Parameters === undefined ? {} : await evaluateTemplate(writer.Parameters, input)) as JsonObject;
      const bucket = typeof parameters.Bucket === 'string' ? parameters.Bucket : 'local';
      const prefix = typeof parameters.Prefix === 'string' ? parameters.Prefix.replace(/\/+$/, '') : '';
      destination = { bucket, folder: prefix === '' ? mapRunId : `${prefix}/${mapRunId}` };
    }
    const transformation = writer?.WriterConfig?.Transformation ?? (exporting ? 'NONE' : 'COMPACT');
    const resultsPerFile = Math.max(1, options.resultsPerFile ?? DEFAULT_RESULTS_PER_FILE);
    return new ResultSink(options, mapRunArn, transformation, destination, resultsPerFile);
  }

  /** Record one child result; flushes a full result file. @throws ResultSinkError when writing fails. */
  async add(index: number, result: ItemResult): Promise<void> {
    const status = result.error === undefined ? 'SUCCEEDED' : 'FAILED';
    const entries = this.entriesOf(result);
    if (this.destination === undefined) {
      // State output: item order; the service keeps the same order for inline and distributed Maps.
      this.outputs[index] = entries.length === 1 ? (entries[0] as JsonValue) : (entries as JsonValue);
      return;
    }
    this.buffers[status].push(...entries);
    if (this.buffers[status].length >= this.resultsPerFile) await this.flush(status);
  }

  /** Write what remains and the manifest; return the state's result. */
  async finish(): Promise<JsonValue> {
    if (this.destination === undefined) {
      const all = this.outputs.filter((o): o is JsonValue => o !== undefined);
      return this.transformation === 'FLATTEN' ? all.flat() : all;
    }
    await this.flush('SUCCEEDED');
    await this.flush('FAILED');
    const manifest: MapRunManifest = { DestinationBucket: this.destination.bucket, MapRunArn: this.mapRunArn, ResultFiles: this.files };
    const key = `${this.destination.folder}/manifest.json`;
    await this.put(key, JSON.stringify(manifest));
    const output: ResultWriterOutput = { MapRunArn: this.mapRunArn, ResultWriterDetails: { Bucket: this.destination.bucket, Key: key } };
    return output as unknown as JsonValue;
  }

  private entriesOf(result: ItemResult): unknown[] {
    if (result.error === undefined && this.transformation !== 'NONE') {
      if (this.transformation === 'FLATTEN' && Array.isArray(result.output)) return result.output;
      return [result.output ?? null];
    }
    // NONE, and every failed child whatever the transformation ("returns its execution result unchanged").
    const arn = this.options.stateMachineArn ?? 'arn:aws:states:local:000000000000:stateMachine:local';
    const executionArn = `${this.mapRunArn.replace(':mapRun:', ':execution:')}:${result.name}`;
    const entry: ChildExecutionResult = {
      ExecutionArn: executionArn,
      Name: result.name,
      StateMachineArn: arn,
      Status: result.error === undefined ? 'SUCCEEDED' : 'FAILED',
      Input: JSON.stringify(result.input),
      InputDetails: { Included: true },
      ...(result.error === undefined
        ? { Output: JSON.stringify(result.output ?? null), OutputDetails: { Included: true } }
        : { Error: result.error, Cause: result.cause ?? '' }),
      StartDate: result.startDate,
      StopDate: new Date().toISOString(),
      RedriveCount: 0,
      RedriveStatus: 'NOT_REDRIVABLE',
      RedriveStatusReason: `Execution is ${result.error === undefined ? 'SUCCEEDED' : 'FAILED'} and cannot be redriven`,
    };
    return [entry];
  }

  private async flush(status: 'SUCCEEDED' | 'FAILED'): Promise<void> {
    if (this.destination === undefined || this.buffers[status].length === 0) return;
    const entries = this.buffers[status].splice(0); // taken synchronously: concurrent adds start a new buffer
    const key = `${this.destination.folder}/${status}_${this.files[status].length}.json`;
    const body = JSON.stringify(entries);
    this.files[status].push({ Key: key, Size: Buffer.byteLength(body) });
    await this.put(key, body);
  }

  private async put(key: string, body: string): Promise<void> {
    try {
      await this.options.blobStore.put(key, body, 'application/json');
    } catch (error) {
      throw new ResultSinkError(new StatesError('States.ResultWriterFailed', `Cannot write Map Run result ${key}: ${String(error)}`, { cause: error }));
    }
  }
}
