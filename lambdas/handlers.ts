/**
 * The workflow's Lambda handlers as factories over ports, so the same code runs in AWS (entry
 * modules lambdas/<name>.ts bind AWS adapters) and locally (local/ binds a directory and dynalite).
 * Each handler reads like a table of contents: validate the event, call one use case, return a
 * small result. Errors propagate with their class `name`, which Step Functions Retry/Catch match.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { AgentModel, BlobStore, MessageStore } from '../shared/ports';
import { finalizeRun } from '../shared/pipeline/finalize';
import { prepareRun } from '../shared/pipeline/prepare';
import { reasonStep } from '../shared/pipeline/reason';
import { seekChunk } from '../shared/pipeline/seek';
import {
  PrepareEventSchema,
  ReasonEventSchema,
  SeekEventSchema,
  WorkflowStateSchema,
  parseEvent,
  type FinalizeOutput,
  type SeekOutcome,
  type WorkflowState,
} from '../shared/pipeline/state';
import { synchronizeRound } from '../shared/pipeline/synchronize';

export interface HandlerDeps {
  blobs: BlobStore;
  store: MessageStore;
  /** Created on first use: Prepare, Synchronize and Finalize never call a model. */
  model: () => AgentModel;
  /**
   * Structured logger (Powertools Logger in AWS, lambdas/adapters/logging.ts). Absent = no logging:
   * the local run passes none, so it stays quiet.
   */
  logger?: HandlerLogger;
}

/** What the handlers need of a logger (a subset of the Powertools Logger's methods). */
export type HandlerLogger = Pick<Logger, 'appendPersistentKeys' | 'removePersistentKeys' | 'debug' | 'info' | 'error'>;

/** The five task handlers of the workflow, keyed like `ExtAgentsWorkflow.functions`. */
export interface WorkflowHandlers {
  prepare(event: unknown): Promise<WorkflowState>;
  seek(event: unknown): Promise<SeekOutcome>;
  reason(event: unknown): Promise<WorkflowState>;
  synchronize(event: unknown): Promise<WorkflowState>;
  finalize(event: unknown): Promise<FinalizeOutput>;
}

/** Build the handlers over the given adapters. */
export function makeHandlers(deps: HandlerDeps): WorkflowHandlers {
  const { blobs, store, logger } = deps;
  return {
    prepare: logged(logger, 'Prepare', 'info', async (event) => prepareRun(parseEvent(PrepareEventSchema, event, 'Prepare'), { blobs })),
    seek: logged(logger, 'Seek', 'debug', async (event) => seekChunk(parseEvent(SeekEventSchema, event, 'Seek'), { blobs, store, model: deps.model })),
    reason: logged(logger, 'Reason', 'info', async (event) => reasonStep(parseEvent(ReasonEventSchema, event, 'Reason'), { blobs, store, model: deps.model() })),
    synchronize: logged(logger, 'Synchronize', 'info', async (event) => synchronizeRound(parseEvent(WorkflowStateSchema, event, 'Synchronize'), { blobs, store })),
    finalize: logged(logger, 'Finalize', 'info', async (event) => {
      const { result: _result, ...output } = await finalizeRun(parseEvent(WorkflowStateSchema, event, 'Finalize'), { blobs, store });
      return output;
    }),
  };
}

/**
 * A handler that logs: the run id (and the task name) become persistent keys of the logger for
 * this invocation, so every line it prints carries them; one line when the task ends (`level`;
 * Seek logs at debug, it runs once per chunk and round) with its small result, one error line with
 * the error's name when it fails. The error is rethrown unchanged.
 */
function logged<T>(logger: HandlerLogger | undefined, task: string, level: 'debug' | 'info', handler: (event: unknown) => Promise<T>): (event: unknown) => Promise<T> {
  if (!logger) return handler;
  return async (event) => {
    // A warm container keeps persistent keys: replace the previous invocation's (an undefined
    // value would not overwrite it).
    logger.removePersistentKeys(['runId', 'task']);
    const runId = runIdOf(event);
    logger.appendPersistentKeys(runId === undefined ? { task } : { runId, task });
    try {
      const result = await handler(event);
      logger[level](`${task} done`, { result: result as Record<string, unknown> });
      return result;
    } catch (error) {
      logger.error(`${task} failed`, error as Error);
      throw error;
    }
  };
}

/** The run id of a task event: `runId` of the event, or of its `state` (Reason), else undefined. */
export function runIdOf(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const direct = (event as { runId?: unknown }).runId;
  if (typeof direct === 'string') return direct;
  const state = (event as { state?: { runId?: unknown } }).state;
  return typeof state?.runId === 'string' ? state.runId : undefined;
}
