/**
 * The local stack: everything the synthesized workflows need on this machine, started once and used
 * for any number of executions (the CLI's one question, `extagents serve`, `extagents survey`,
 * benchmarks).
 * - The CDK stack's template is read from local/engine/generated/stack-template.json (generated from the CDK
 *   app and checked against a fresh synth by a test; no synth at run time); the definitions of its
 *   question-answering state machine and of its survey state machine (infra/survey.ts) are resolved
 *   and run by aws-local-stepfunctions (local/engine/engine.ts), every Lambda Task bound to its in-process
 *   handler (lambdas/handlers.ts, lambdas/survey-handlers.ts): the same definitions and handlers as in
 *   AWS. The bulk survey machine is not run locally (its RunSurvey task is `startExecution.sync`,
 *   which the local engine does not implement; local/engine/survey.ts emulates it).
 * - DynamoDB: dynalite on 127.0.0.1 through the real SDK, the table created from the template
 *   (in memory, or kept under `<stateDir>/dynamodb` when `persistent`).
 * - S3: the directory `<stateDir>/bucket` behind the same BlobStore port.
 */
import { withThrottleNotices } from '../../models/call-signal';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { localStackTemplate, type LocalFunctionName } from './stack-template';
import { DynamoMessageStore } from '../../lambdas/adapters/dynamo-message-store';
import { checkModelAccess, loadModels, modelPricing, type LoadedModels, type ProviderDeps } from '../../models';
import { LocalBatchRunner } from './local-batch';
import { makeHandlers, type WorkflowHandlers } from '../../lambdas/handlers';
import { makeSurveyHandlers, type SurveyHandlers } from '../../lambdas/survey-handlers';
import { ConfigurationError, ExtAgentsError, StorageError, errorFromFailure } from '../../shared/errors';
import { EXCEED_TOLERATED_FAILURE_THRESHOLD } from '../../shared/pipeline/state';
import { loadRunRecord } from '../../shared/pipeline/run-record';
import { seekingFailureError } from '../../shared/pipeline/seek-failures';
import { toModelSpec, DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';
import type { RunOptionsInput } from '../../shared/config';
import { chunkFitProblem, contextFittedRunOptionDefaults, fitRunRequest } from '../../models/context';
import type { AgentModel, BlobStore, ChatModel, MessageStore } from '../../shared/ports';
import type { SurveyModel } from '../../shared/survey/ports';
import type { SurveyOutput } from '../../shared/survey/workflow';
import type { AslDefinition } from './definition';
import { resolveStateMachineDefinition } from './definition';
import { createTablesFromTemplate, localDynamoClient, startDynalite, type LocalDynamo } from './dynalite';
import { StateDirLock } from './state-dir-lock';
import { ExecutionFailedError, LambdaFunctionError, prepareLocalExecution, type LocalLambdaHandler, type PreparedExecution } from './engine';
import { FsBlobStore } from './fs-blob-store';
import type { ExecutionCallbacks, LocalStack as PublicLocalStack, LocalStackOptions } from './stack-api';

export type { ExecutionCallbacks, LocalStackOptions } from './stack-api';

export { MAX_MODEL_SEQUENCES } from './defaults';

/** A running local stack: the public one (local/engine/stack-api.ts) with the engine's handlers and definitions. */
export interface LocalStack extends PublicLocalStack {
  readonly handlers: WorkflowHandlers;
  readonly surveyHandlers: SurveyHandlers;
  /** The resolved (not yet localized) question-answering state machine definition. */
  readonly definition: AslDefinition;
  /** The resolved (not yet localized) survey state machine definition. */
  readonly surveyDefinition: AslDefinition;
}

/**
 * Start the local stack.
 * @throws ConfigurationError for an invalid model spec or a definition the local engine cannot run.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const modelSpec = toModelSpec(options.modelSpec ?? DEFAULT_LOCAL_MODEL_SPEC);
  if (options.model === undefined) await checkModelAccess(modelSpec);
  // An in-process model (llama:) loads now (once per process), so a bad file fails before any execution.
  const loaded: LoadedModels<ProviderDeps> | undefined =
    options.model === undefined ? await loadModels(modelSpec, { sequences: options.modelSequences ?? 1 }) : undefined;
  // A small context (a llama: model's, or a stand-in model's in tests) fits the option defaults and checks chunk sizes.
  const contextTokens = loaded !== undefined ? loaded.contextTokens : options.modelContextTokens;
  const runOptionDefaults: RunOptionsInput = contextTokens !== undefined ? contextFittedRunOptionDefaults(contextTokens, loaded?.runDefaults) : {};
  // The generated template (local/engine/stack-template.ts): no CDK synth at run time.
  const { template, logicalIds } = localStackTemplate();
  const stateDir = path.resolve(options.stateDir);
  const blobs = new FsBlobStore(path.join(stateDir, 'bucket'));

  // The DynamoDB data on disk is one process's at a time: the state directory's lock first.
  const lock = options.persistent ? await StateDirLock.acquire(stateDir, options.lockCommand ?? 'ask') : undefined;
  let dynamo: LocalDynamo | undefined;
  try {
    if (options.persistent) await checkDynamoData(stateDir);
    dynamo = await startDynalite(options.persistent ? { path: path.join(stateDir, 'dynamodb') } : {});
  } catch (error) {
    await lock?.release();
    throw error;
  }
  const raw = localDynamoClient(dynamo.endpoint, dynamo.requestHandler);
  try {
    const tableLogicalId = logicalIds.table;
    const tableNames = { [tableLogicalId]: 'extagents-local' };
    // Each state machine by its logical id: the stack also holds the jobs and bulk survey ones.
    const resolved = resolveStateMachineDefinition(template, logicalIds.workflow, { tableNames });
    const surveyResolved = resolveStateMachineDefinition(template, logicalIds.survey, { tableNames });
    await createTablesFromTemplate(raw, template, resolved.tableNames);
    // This process is the table's only writer (the state directory's lock, or a table in memory): the
    // store keeps each round's seek state and a seek costs one request (DynamoMessageStoreOptions.soleWriter).
    const store = new DynamoMessageStore(DynamoDBDocumentClient.from(raw), { tableName: resolved.tableNames[tableLogicalId], soleWriter: true });

    // The spec's models: loaded above unless a stand-in model was given (tests), then on first use
    // (a stand-in's stack may still build the spec's survey roles or batch seeker).
    let loadedSet = loaded;
    const built = async (): Promise<LoadedModels<ProviderDeps>> => (loadedSet ??= await loadModels(modelSpec, { sequences: options.modelSequences ?? 1 }));
    let model: AgentModel | undefined = options.model;
    let batchSeeker: ChatModel | undefined;
    const handlers = makeHandlers({
      blobs,
      store,
      // The extractive reader keeps each chunk's sentence analysis in the bucket (cache/extractive/).
      model: async () => (model ??= (await built()).agents({ extractive: { analyses: blobs } })),
      pricing: modelPricing(modelSpec),
      // Batch seeking (seekMode 'batch'): the local batch runner, through the spec's seeking model
      // (a stand-in model's own, in tests).
      batch: {
        inference: new LocalBatchRunner(
          blobs,
          async () => (batchSeeker ??= localBatchSeeker(options.batch?.seekerChat ?? (await built()).chat('seeker', { extractive: { analyses: blobs } }))),
          options.batch,
        ),
        agents: async (wrapSeeker) =>
          options.model !== undefined
            ? (options.batch?.agents?.(wrapSeeker) ?? options.model)
            : (await built()).agents({ extractive: { analyses: blobs }, wrapSeeker }),
      },
    });
    // The survey roles as the survey Lambda entry point builds them (lambdas/survey.ts), on first use.
    let survey: SurveyModel | undefined = options.surveyModel;
    const surveyHandlers = makeSurveyHandlers({
      blobs,
      store,
      model: async () => (survey ??= (await built()).survey()),
      pricing: modelPricing(modelSpec),
    });
    // Every bound function: its name (as in `ExtAgentsStack.functions`, or the survey function's),
    // its local ARN in the template and its in-process handler.
    const inProcess: Record<LocalFunctionName, LocalLambdaHandler> = {
      prepare: handlers.prepare as LocalLambdaHandler,
      seek: handlers.seek as LocalLambdaHandler,
      reason: handlers.reason as LocalLambdaHandler,
      synchronize: handlers.synchronize as LocalLambdaHandler,
      finalize: handlers.finalize as LocalLambdaHandler,
      SurveyPrepare: surveyHandlers.prepare,
      SurveySteps: surveyHandlers.steps,
      SurveyAssemble: surveyHandlers.assemble,
    };
    const bound: Array<{ name: string; arn: string; handler: LocalLambdaHandler }> = Object.entries(inProcess).map(([name, handler]) => ({
      name,
      arn: resolved.lambdaArns[logicalIds.functions[name as LocalFunctionName]],
      handler,
    }));

    const preparedFor = (definition: AslDefinition, callbacks: ExecutionCallbacks): PreparedExecution => {
      const byArn: Record<string, LocalLambdaHandler> = {};
      const { onTaskStarted, onTaskDone, onTaskFailed, onTaskWaiting } = callbacks;
      for (const { name, arn, handler } of bound) {
        byArn[arn] =
          onTaskStarted || onTaskDone || onTaskFailed || onTaskWaiting
            ? async (event) => {
                onTaskStarted?.(name, event);
                let result: Awaited<ReturnType<LocalLambdaHandler>>;
                try {
                  result = await (onTaskWaiting === undefined
                    ? handler(event)
                    : withThrottleNotices(
                        (ms, why) => onTaskWaiting(name, event, ms, why),
                        () => handler(event),
                      ));
                } catch (error) {
                  onTaskFailed?.(name, event, error);
                  throw error;
                }
                onTaskDone?.(name, event, result);
                return result;
              }
            : handler;
      }
      return prepareLocalExecution({
        definition,
        // The generated definitions are validated by test/infra/stack-template.test.ts, not on every run.
        libraryValidated: true,
        handlers: byArn,
        blobStore: blobs,
        retryIntervalMs: options.retryIntervalMs,
        retryTimeScale: options.retryTimeScale,
        onMapRunStarted: callbacks.onMapRunStarted,
        onItemDone: callbacks.onItemDone,
      });
    };
    const run = async (definition: AslDefinition, input: unknown, callbacks: ExecutionCallbacks): Promise<unknown> => {
      try {
        return await preparedFor(definition, callbacks).run(input, callbacks.signal);
      } catch (error) {
        if (definition === resolved.definition && error instanceof ExecutionFailedError && error.error === EXCEED_TOLERATED_FAILURE_THRESHOLD) {
          throw (await seekingFailureOf(input, blobs, store)) ?? error;
        }
        throw domainErrorOf(error);
      }
    };

    return {
      blobs,
      store,
      handlers,
      surveyHandlers,
      definition: resolved.definition,
      surveyDefinition: surveyResolved.definition,
      runOptionDefaults,
      modelSpec,
      stateDir,
      contextTokens,
      fit: (request) => fitRunRequest(request, contextTokens, loaded?.runDefaults),
      runOptionProblems: (runOptions) => {
        const chunkTokens = { ...runOptionDefaults, ...runOptions }.chunkTokens;
        if (contextTokens === undefined || chunkTokens === undefined) return [];
        const detail = chunkFitProblem(chunkTokens, contextTokens, 'options.chunkTokens');
        return detail === undefined ? [] : [{ option: 'chunkTokens', detail }];
      },
      execute: async (input, callbacks = {}) => {
        // The options were fitted to the model by the entry that took them (runLocal's `fit`, the
        // API's `runOptionProblems`, a job's plan); here only its defaults fill what is unset.
        return run(resolved.definition, withOptionDefaults(input, runOptionDefaults), callbacks);
      },
      // The output is SurveyAssemble's result (the machine's last state, no OutputPath).
      executeSurvey: async (input, callbacks = {}) => (await run(surveyResolved.definition, input, callbacks)) as SurveyOutput,
      deleteRunItems: (runId) => store.deleteRun(runId),
      async stop() {
        if (!dynamo) return;
        const running = dynamo;
        dynamo = undefined;
        raw.destroy();
        try {
          await running.stop();
        } finally {
          await lock?.release();
        }
      },
    };
  } catch (error) {
    raw.destroy();
    await dynamo?.stop();
    await lock?.release();
    throw error;
  }
}

/** The LevelDB database of classic-level 3 (dynalite's store), the two calls used here (no @types). */
interface LevelDatabase {
  open(): Promise<void>;
  close(): Promise<void>;
}
type ClassicLevelModule = { ClassicLevel: new (location: string) => LevelDatabase };

/**
 * Fail clearly when the DynamoDB data of the state directory cannot be opened (read-only, full,
 * damaged), or is held by a process of an older version that took no state-directory lock: dynalite,
 * given such a folder, crashes its process at the first request ("Database is not open"). Probed by
 * opening the folder with classic-level (the LevelDB binding dynalite uses) and closing it again,
 * after the lock (local/engine/state-dir-lock.ts) is taken.
 * The folder is `<stateDir>/dynamodb`, as local/engine/stack.ts lays it out.
 * @throws ConfigurationError naming the state directory when it is in use; StorageError naming the
 *   folder and LevelDB's reason when it cannot be opened for another reason (read-only, full, damaged).
 */
async function checkDynamoData(stateDir: string): Promise<void> {
  // classic-level comes with dynalite; loaded like dynalite itself (./dynalite.ts).
  const { ClassicLevel } = createRequire(__filename)('classic-level') as ClassicLevelModule;
  const folder = path.join(path.resolve(stateDir), 'dynamodb');
  await fs.mkdir(folder, { recursive: true });
  const db = new ClassicLevel(folder);
  try {
    await db.open();
  } catch (error) {
    // LEVEL_LOCKED (the cause) is another process; anything else (a read-only or full folder, a
    // damaged database) is said as it is, not as a lock.
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') {
      throw new ConfigurationError(
        `The state directory ${stateDir} is in use by another extagents process (its DynamoDB data in ${folder} is locked): ` +
          'wait for it to end, or use another --state-dir',
        { cause: error },
      );
    }
    throw new StorageError(
      `The DynamoDB data of the state directory (${folder}) cannot be opened: ${cause?.message ?? (error as Error).message}; ` +
        'check its permissions and free space, or use another --state-dir',
      { cause: error },
    );
  }
  await db.close();
}

/**
 * A question-answering execution input with the model's option defaults for the options it leaves
 * unset (any other input unchanged, so Prepare still rejects a malformed one).
 */
function withOptionDefaults(input: unknown, defaults: RunOptionsInput): unknown {
  if (Object.keys(defaults).length === 0 || typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const given = (input as { options?: unknown }).options;
  if (given !== undefined && (typeof given !== 'object' || given === null || Array.isArray(given))) return input;
  return { ...input, options: { ...defaults, ...(given as Record<string, unknown> | undefined) } };
}

/**
 * The errors the seeking agents recorded, for a QA execution that failed because too many of them
 * failed (`seekingFailureError`): the last round whose failed chunks have recorded errors.
 * @returns undefined when the run cannot be read (the Map's own failure is then reported).
 */
async function seekingFailureOf(input: unknown, blobs: BlobStore, store: MessageStore): Promise<ExtAgentsError | undefined> {
  const runId = (input as { runId?: unknown } | null)?.runId;
  if (typeof runId !== 'string') return undefined;
  try {
    const record = await loadRunRecord(blobs, runId);
    for (let round = record.options.rounds; round >= 1; round--) {
      const sought = new Set(await store.soughtChunks(runId, round));
      const failures = (await store.seekFailures(runId, round)).filter((f) => !sought.has(f.chunk));
      if (failures.length > 0)
        return seekingFailureError(failures, { round, chunks: record.chunks, toleratedPercentage: record.options.toleratedFailurePercentage });
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** What to do about a system error, by its code (the others: "local storage failed"). */
const STORAGE_ADVICE: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full; free space or use another --state-dir',
  EDQUOT: 'the disk quota is exhausted; free space or use another --state-dir',
  EACCES: 'permission denied; fix the permissions or use another --state-dir',
  EPERM: 'operation not permitted; fix the permissions or use another --state-dir',
  EROFS: 'the file system is read-only; use another --state-dir',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'the path is a directory, a file was expected',
  EMFILE: 'too many open files; raise the limit (ulimit -n) or lower --concurrency',
};

/**
 * A Node.js system error (`code` such as ENOSPC, EACCES, EROFS, EIO; `syscall`; often `path`) in an
 * error's cause chain, as a StorageError whose one-line message names the error and the path, or
 * undefined when there is none. A full disk or a read-only state directory mid-run then reads
 * "ENOSPC: no space left on device, write (/path/…)", never a Lambda error envelope or a stack.
 */
export function storageErrorOf(error: unknown): StorageError | undefined {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const { code, syscall, path: file } = current as NodeJS.ErrnoException;
    if (current.message === 'Database is closed' && current.stack?.includes('/dynalite/')) {
      // dynalite's word for LevelDB closed under it, which LevelDB does after a failed write.
      return new StorageError(
        "The state directory's DynamoDB data (LevelDB) closed after a failed write: local storage failed (a full disk?); free space or use another --state-dir",
        { cause: current },
      );
    }
    if (code === 'LEVEL_IO_ERROR') {
      // LevelDB (dynalite's store) failing to read or write its files: "IO error: <path>: <reason>".
      const advice = /no space left/i.test(current.message)
        ? STORAGE_ADVICE.ENOSPC
        : /permission denied/i.test(current.message)
          ? STORAGE_ADVICE.EACCES
          : 'local storage failed';
      return new StorageError(`${current.message.split('\n')[0]} (the state directory's DynamoDB data): ${advice}`, { cause: current });
    }
    if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && typeof syscall === 'string') {
      const where = typeof file === 'string' && !current.message.includes(file) ? ` (${file})` : '';
      return new StorageError(`${current.message.split('\n')[0]}${where}: ${STORAGE_ADVICE[code] ?? 'local storage failed'}`, { cause: current });
    }
  }
  return undefined;
}

/**
 * A system error named only in a failed execution's cause text (a Map Run's ResultWriter failing
 * with `Error: ENOSPC: no space left on device, write`), as a StorageError with that text.
 */
function storageErrorInCause(error: ExecutionFailedError): StorageError | undefined {
  const match = /\b(E[A-Z]{2,}): [^,\n]+, \w+(?: '[^'\n]*')?/.exec(error.causeText);
  if (!match || STORAGE_ADVICE[match[1]] === undefined) return undefined;
  return new StorageError(`${error.causeText.split('\n')[0]}: ${STORAGE_ADVICE[match[1]]}`, { cause: error });
}

/**
 * A domain error that failed an execution (directly, or through a Fail state that keeps its name and
 * cause) as itself, so callers see e.g. EmptyCorpusError with its message; anything else unchanged.
 */
function domainErrorOf(error: unknown): unknown {
  if (!(error instanceof ExecutionFailedError)) return error;
  const storage = storageErrorOf(error) ?? storageErrorInCause(error);
  if (storage) return storage;
  // Walk the cause chain from the outside: the first error of ours named like the failure (and not
  // the engine's LambdaFunctionError envelope) is the handler's own error, with its own message.
  let current: unknown = error.cause;
  while (current instanceof Error) {
    if (current instanceof ExtAgentsError && !(current instanceof LambdaFunctionError) && current.name === error.error) return current;
    current = current.cause;
  }
  return errorFromFailure(error.error, error.causeText) ?? error;
}

/**
 * The chat model the local batch runner runs records through: the spec's seeking model, or the
 * stand-in's (tests).
 * @throws ConfigurationError when the spec names no chat model (the extractive reader makes no call
 *   to batch, so its rounds never reach the runner).
 */
function localBatchSeeker(chat: ChatModel | undefined): ChatModel {
  if (chat === undefined) throw new ConfigurationError('the local batch runner needs a language model: this model spec has no chat model');
  return chat;
}
