/**
 * The local stack: everything the synthesized workflow needs on this machine, started once and used
 * for any number of executions (the CLI's one question, `extagents serve`, benchmarks).
 * - The CDK stack is synthesized in-process (asset bundling skipped); its state machine definition is
 *   resolved and run by aws-local-stepfunctions (local/engine.ts), every Lambda Task bound to its
 *   in-process handler (lambdas/handlers.ts): the same definition and handlers as in AWS.
 * - DynamoDB: dynalite on 127.0.0.1 through the real SDK, the table created from the template
 *   (in memory, or kept under `<stateDir>/dynamodb` when `persistent`).
 * - S3: the directory `<stateDir>/bucket` behind the same BlobStore port.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnElement } from 'aws-cdk-lib';
import path from 'node:path';
import { buildStack, createSynthesisApp, type ExtAgentsStack } from '../infra/extagents-stack';
import { HANDLER_NAMES } from '../infra/extagents-function';
import { createBedrockClient } from '../lambdas/adapters/bedrock';
import { DynamoMessageStore } from '../lambdas/adapters/dynamo-message-store';
import { createAgentModel } from '../lambdas/adapters/model';
import { makeHandlers, type WorkflowHandlers } from '../lambdas/handlers';
import { ExtAgentsError, errorFromFailure } from '../shared/errors';
import { parseModelSpec } from '../shared/llm/model-spec';
import type { AgentModel, BlobStore, MessageStore } from '../shared/ports';
import type { AslDefinition } from './definition';
import { resolveStateMachineDefinition } from './definition';
import { createTablesFromTemplate, localClientConfig, startDynalite, type LocalDynamo } from './dynalite';
import { ExecutionFailedError, LambdaFunctionError, prepareLocalExecution, type LocalLambdaHandler, type PreparedExecution } from './engine';
import { FsBlobStore } from './fs-blob-store';
import type { MapRunStartedEvent } from './distributed-map';

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /** Directory of the local bucket (and of the DynamoDB data when `persistent`). */
  stateDir: string;
  /** `extractive` (default) or `bedrock:<seeker>[,<reasoner>]`. */
  modelSpec?: string;
  /** Use this model instead of the one the spec names (tests: scripted or fault-injecting models). */
  model?: AgentModel;
  /** Keep DynamoDB data on disk under `<stateDir>/dynamodb` (resume); in memory by default. */
  persistent?: boolean;
  /** Replace every Retry backoff by this pause, ms (tests). */
  retryIntervalMs?: number;
}

/** Callbacks of one local execution (progress of the Distributed Map). */
export interface ExecutionCallbacks {
  onMapRunStarted?: (event: MapRunStartedEvent) => void;
  onItemDone?: (index: number, ok: boolean, stateName: string) => void;
  signal?: AbortSignal;
}

/** A running local stack. */
export interface LocalStack {
  readonly blobs: BlobStore;
  readonly store: MessageStore;
  readonly handlers: WorkflowHandlers;
  /** The resolved (not yet localized) state machine definition. */
  readonly definition: AslDefinition;
  /**
   * Run one execution of the state machine.
   * @returns the execution output.
   * @throws the domain error that failed the execution when it names one of ours (EmptyCorpusError,
   *   ModelConfigurationError, …), otherwise ExecutionFailedError (e.g. States.ExceedToleratedFailureThreshold).
   */
  execute(input: unknown, callbacks?: ExecutionCallbacks): Promise<unknown>;
  /** Stop dynalite and release clients; waits for nothing else. Idempotent. */
  stop(): Promise<void>;
}

/** The synthesized stack and its template, built once per process and model spec (~1 s). */
const synthesized = new Map<string, { stack: ExtAgentsStack; template: Record<string, unknown> }>();

function synthesize(modelSpec: string): { stack: ExtAgentsStack; template: Record<string, unknown> } {
  let entry = synthesized.get(modelSpec);
  if (!entry) {
    const stack = buildStack(createSynthesisApp(), { modelSpec });
    entry = { stack, template: Template.fromStack(stack).toJSON() as Record<string, unknown> };
    synthesized.set(modelSpec, entry);
  }
  return entry;
}

const logicalIdOf = (stack: ExtAgentsStack, construct: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/**
 * Start the local stack.
 * @throws ConfigurationError for an invalid model spec or a definition the local engine cannot run.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const modelSpec = options.modelSpec ?? 'extractive';
  parseModelSpec(modelSpec);
  const { stack, template } = synthesize(modelSpec);
  const stateDir = path.resolve(options.stateDir);
  const blobs = new FsBlobStore(path.join(stateDir, 'bucket'));

  let dynamo: LocalDynamo | undefined = await startDynalite(options.persistent ? { path: path.join(stateDir, 'dynamodb') } : {});
  const raw = new DynamoDBClient(localClientConfig(dynamo.endpoint));
  try {
    const tableLogicalId = logicalIdOf(stack, stack.table);
    // The question-answering state machine by its logical id: the stack also holds the jobs one.
    const resolved = resolveStateMachineDefinition(template, logicalIdOf(stack, stack.stateMachine), {
      tableNames: { [tableLogicalId]: 'extagents-local' },
    });
    await createTablesFromTemplate(raw, template, resolved.tableNames);
    const store = new DynamoMessageStore(DynamoDBDocumentClient.from(raw), { tableName: resolved.tableNames[tableLogicalId] });

    let model: AgentModel | undefined = options.model;
    const handlers = makeHandlers({
      blobs,
      store,
      model: () => (model ??= createAgentModel(modelSpec, () => createBedrockClient())),
    });
    const byArn: Record<string, LocalLambdaHandler> = {};
    for (const name of HANDLER_NAMES) {
      byArn[resolved.lambdaArns[logicalIdOf(stack, stack.functions[name])]] = handlers[name] as LocalLambdaHandler;
    }
    const preparedFor = (callbacks: ExecutionCallbacks): PreparedExecution =>
      prepareLocalExecution({
        definition: resolved.definition,
        handlers: byArn,
        blobStore: blobs,
        retryIntervalMs: options.retryIntervalMs,
        onMapRunStarted: callbacks.onMapRunStarted,
        onItemDone: callbacks.onItemDone,
      });

    return {
      blobs,
      store,
      handlers,
      definition: resolved.definition,
      async execute(input, callbacks = {}) {
        try {
          return await preparedFor(callbacks).run(input, callbacks.signal);
        } catch (error) {
          throw domainErrorOf(error);
        }
      },
      async stop() {
        if (!dynamo) return;
        const running = dynamo;
        dynamo = undefined;
        raw.destroy();
        await running.stop();
      },
    };
  } catch (error) {
    raw.destroy();
    await dynamo?.stop();
    throw error;
  }
}

/**
 * A domain error that failed an execution (directly, or through a Fail state that keeps its name and
 * cause) as itself, so callers see e.g. EmptyCorpusError with its message; anything else unchanged.
 */
function domainErrorOf(error: unknown): unknown {
  if (!(error instanceof ExecutionFailedError)) return error;
  // Walk the cause chain from the outside: the first error of ours named like the failure (and not
  // the engine's LambdaFunctionError envelope) is the handler's own error, with its own message.
  let current: unknown = error.cause;
  while (current instanceof Error) {
    if (current instanceof ExtAgentsError && !(current instanceof LambdaFunctionError) && current.name === error.error) return current;
    current = current.cause;
  }
  return errorFromFailure(error.error, error.causeText) ?? error;
}
