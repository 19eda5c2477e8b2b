/**
 * Local mode: run one question through the CDK-synthesized state machine on this machine.
 * - The stack is synthesized in-process (asset bundling skipped) and its definition resolved and run
 *   by aws-local-stepfunctions (local/engine.ts), every Lambda Task bound to its in-process handler
 *   (lambdas/handlers.ts) — the same definition and handlers as in AWS.
 * - DynamoDB: dynalite on 127.0.0.1 through the real SDK, its table created from the template.
 * - S3: a directory (`<stateDir>/bucket`) behind the same BlobStore port.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnElement } from 'aws-cdk-lib';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { buildStack, createSynthesisApp, type ExtAgentsStack } from '../infra/extagents-stack';
import { HANDLER_NAMES } from '../infra/extagents-function';
import { createBedrockClient } from '../lambdas/adapters/bedrock';
import { DynamoMessageStore } from '../lambdas/adapters/dynamo-message-store';
import { createAgentModel } from '../lambdas/adapters/model';
import { makeHandlers, type WorkflowHandlers } from '../lambdas/handlers';
import { parseRunOptions, type RunOptionsInput } from '../shared/config';
import { ExtAgentsError, errorFromFailure } from '../shared/errors';
import { parseModelSpec } from '../shared/llm/model-spec';
import type { AgentModel } from '../shared/ports';
import { RunIdSchema, parseEvent, type FinalizeOutput } from '../shared/pipeline/state';
import type { RunResult } from '../shared/types';
import type { CorpusFile } from './corpus';
import { resolveStateMachineDefinition } from './definition';
import { createTablesFromTemplate, localClientConfig, startDynalite } from './dynalite';
import { ExecutionFailedError, runLocalExecution, type LocalLambdaHandler } from './engine';
import { FsBlobStore } from './fs-blob-store';

/** Progress of a local run, for a progress bar. */
export type LocalProgress =
  | { phase: 'seek'; round: number; done: number; failed: number; total: number }
  | { phase: 'info'; message: string };

export interface LocalRunRequest {
  files: CorpusFile[];
  question: string;
  options?: RunOptionsInput;
  /** `extractive` (default) or `bedrock:<seeker>[,<reasoner>]`. */
  modelSpec?: string;
  /** Directory of the local bucket. */
  stateDir: string;
  /** Default: `run-<UTC time>-<random>`. */
  runId?: string;
  onProgress?: (progress: LocalProgress) => void;
  /** Replace every Retry backoff by this pause, ms (tests). */
  retryIntervalMs?: number;
  /** Use this model instead of the one the spec names (tests: a scripted or fault-injecting model). */
  model?: AgentModel;
}

/** The synthesized stack and its template, built once per process (synth costs ~1 s). */
let synthesized: { stack: ExtAgentsStack; template: Record<string, unknown>; modelSpec: string } | undefined;

function synthesize(modelSpec: string): { stack: ExtAgentsStack; template: Record<string, unknown> } {
  if (synthesized?.modelSpec !== modelSpec) {
    const stack = buildStack(createSynthesisApp(), { modelSpec });
    synthesized = { stack, template: Template.fromStack(stack).toJSON() as Record<string, unknown>, modelSpec };
  }
  return synthesized;
}

const logicalIdOf = (stack: ExtAgentsStack, construct: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/**
 * Run one question locally and return its result.
 * @throws ConfigurationError / InvalidInputError for bad options, model spec or run id (before any
 *   work); the domain error that failed the execution (EmptyCorpusError, …) when it has one;
 *   ExecutionFailedError otherwise (e.g. States.ExceedToleratedFailureThreshold).
 */
export async function runLocal(request: LocalRunRequest): Promise<RunResult> {
  const modelSpec = request.modelSpec ?? 'extractive';
  parseModelSpec(modelSpec);
  parseRunOptions(request.options);
  const runId = request.runId ?? `run-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
  parseEvent(RunIdSchema, runId, 'run id');
  const report = request.onProgress ?? (() => undefined);

  const { stack, template } = synthesize(modelSpec);
  const blobs = new FsBlobStore(path.resolve(request.stateDir, 'bucket'));
  const corpusPrefix = `corpora/${runId}/`;
  await Promise.all(request.files.map(async (f) => blobs.put(corpusPrefix + f.id, await fs.readFile(f.path))));

  const dynamo = await startDynalite();
  const raw = new DynamoDBClient(localClientConfig(dynamo.endpoint));
  try {
    const tableLogicalId = logicalIdOf(stack, stack.table);
    const resolved = resolveStateMachineDefinition(template, undefined, { tableNames: { [tableLogicalId]: 'extagents-local' } });
    const tableName = resolved.tableNames[tableLogicalId];
    await createTablesFromTemplate(raw, template, resolved.tableNames);

    let model: AgentModel | undefined = request.model;
    const handlers: WorkflowHandlers = makeHandlers({
      blobs,
      store: new DynamoMessageStore(DynamoDBDocumentClient.from(raw), { tableName }),
      model: () => (model ??= createAgentModel(modelSpec, () => createBedrockClient())),
    });
    const byArn: Record<string, LocalLambdaHandler> = {};
    for (const name of HANDLER_NAMES) {
      byArn[resolved.lambdaArns[logicalIdOf(stack, stack.functions[name])]] = handlers[name] as LocalLambdaHandler;
    }

    let round = 0;
    let done = 0;
    let failed = 0;
    let total = 0;
    report({ phase: 'info', message: `run ${runId}: ${request.files.length} corpus file(s), model ${modelSpec}` });
    const output = (await runLocalExecution({
      definition: resolved.definition,
      handlers: byArn,
      blobStore: blobs,
      input: { runId, question: request.question, corpus: { prefix: corpusPrefix }, options: request.options ?? {} },
      retryIntervalMs: request.retryIntervalMs,
      onMapRunStarted: (event) => {
        round += 1;
        done = 0;
        failed = 0;
        total = event.totalItems;
        report({ phase: 'seek', round, done, failed, total });
      },
      onItemDone: (_index, ok) => {
        done += 1;
        if (!ok) failed += 1;
        report({ phase: 'seek', round, done, failed, total });
      },
    })) as FinalizeOutput;
    return JSON.parse(await blobs.getText(output.resultKey)) as RunResult;
  } catch (error) {
    if (error instanceof ExecutionFailedError) {
      // A domain error that failed the run (directly, or through a Fail state that keeps its name and
      // cause) is rethrown as itself, so callers see e.g. EmptyCorpusError with its message.
      if (error.rootCause instanceof ExtAgentsError && error.rootCause.name === error.error) throw error.rootCause;
      throw errorFromFailure(error.error, error.causeText) ?? error;
    }
    throw error;
  } finally {
    raw.destroy();
    await dynamo.stop();
  }
}
