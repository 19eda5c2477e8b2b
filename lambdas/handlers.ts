/**
 * The workflow's Lambda handlers as factories over ports, so the same code runs in AWS (entry
 * modules lambdas/<name>.ts bind AWS adapters) and locally (local/ binds a directory and dynalite).
 * Each handler reads like a table of contents: validate the event, call one use case, return a
 * small result. Errors propagate with their class `name`, which Step Functions Retry/Catch match.
 */
import { logged, type HandlerLogger } from './logged';
import type { AgentModel, BlobStore, MessageStore } from '../shared/ports';
import type { RunResult } from '../shared/types';
import type { ModelPricing } from '../shared/cost';
import { finalizeRun } from '../shared/pipeline/finalize';
import { prepareRun } from '../shared/pipeline/prepare';
import type { ModelQuota } from '../shared/quota';
import { reasonStep } from '../shared/pipeline/reason';
import { seekChunk } from '../shared/pipeline/seek';
import { checkSeekBatch, submitSeekBatch, type BatchSeeking } from '../shared/pipeline/seek-batch';
import {
  PrepareEventSchema,
  ReasonEventSchema,
  SeekBatchEventSchema,
  SeekEventSchema,
  type SeekBatchOutcome,
  SynchronizeEventSchema,
  WorkflowStateSchema,
  parseEvent,
  type FinalizeOutput,
  type SeekOutcome,
  type WorkflowState,
} from '../shared/pipeline/state';
import { synchronizeRound } from '../shared/pipeline/synchronize';
import { growCoverage } from '../shared/pipeline/grow-coverage';

export interface HandlerDeps {
  blobs: BlobStore;
  store: MessageStore;
  /** Created on first use (the spec's models loaded then: models/index.ts `loadModels`): Prepare, Synchronize and Finalize never call a model. */
  model: () => Promise<AgentModel>;
  /** How the model is priced (models/ `modelPricing`), for Prepare's cost estimate under `maxCostUsd` (shared/cost.ts). */
  pricing?: ModelPricing;
  /** The deployment's quota of the seeking model (CDK context; shared/quota.ts), which a run's options override. */
  quota?: ModelQuota;
  /**
   * Structured logger (Powertools Logger in AWS, lambdas/adapters/logging.ts). Absent = no logging:
   * the local run passes none, so it stays quiet.
   */
  logger?: HandlerLogger;
  /** Run metrics (Powertools Metrics in AWS, lambdas/adapters/telemetry.ts); absent = none (the local run). */
  metrics?: RunMetrics;
  /**
   * Batch seeking (run option `seekMode: 'batch'`, shared/pipeline/seek-batch.ts): the batch service
   * (Bedrock model invocation jobs; the local batch runner) and the agents with their seeker's chat
   * model wrapped. Absent = none: such runs seek on demand and say so.
   */
  batch?: BatchSeeking;
}

/** What the handlers report as metrics: each KAR step taken, and each finished run's result. */
export interface RunMetrics {
  karStep(): void;
  runFinished(result: RunResult): void;
}

/** The five task handlers of the workflow, keyed like `ExtAgentsWorkflow.functions`. */
export interface WorkflowHandlers {
  prepare(event: unknown): Promise<WorkflowState>;
  /** A chunk's seeking agent, or (event `{seekBatch: …}`) the round's batch seeking tasks. */
  seek(event: unknown): Promise<SeekOutcome | SeekBatchOutcome>;
  reason(event: unknown): Promise<WorkflowState>;
  synchronize(event: unknown): Promise<WorkflowState>;
  finalize(event: unknown): Promise<FinalizeOutput>;
}

/** Build the handlers over the given adapters. */
export function makeHandlers(deps: HandlerDeps): WorkflowHandlers {
  const { blobs, store, logger } = deps;
  return {
    prepare: logged(logger, 'Prepare', 'info', async (event) =>
      prepareRun(parseEvent(PrepareEventSchema, event, 'Prepare'), { blobs, pricing: deps.pricing, quota: deps.quota }),
    ),
    seek: logged(logger, 'Seek', 'debug', async (event) => {
      if (typeof event === 'object' && event !== null && 'seekBatch' in event) {
        const parsed = parseEvent(SeekBatchEventSchema, event, 'SeekBatch');
        const batchDeps = { blobs, store, batch: deps.batch };
        return parsed.seekBatch === 'submit' ? submitSeekBatch(parsed, batchDeps) : checkSeekBatch(parsed, batchDeps);
      }
      return seekChunk(parseEvent(SeekEventSchema, event, 'Seek'), { blobs, store, model: deps.model });
    }),
    reason: logged(logger, 'Reason', 'info', async (event) => {
      const state = await reasonStep(parseEvent(ReasonEventSchema, event, 'Reason'), { blobs, store, model: await deps.model() });
      deps.metrics?.karStep();
      return state;
    }),
    // The Synchronize task (the state) and the GrowCoverage task (`{growCoverage: state}`).
    synchronize: logged(logger, 'Synchronize', 'info', async (event) => {
      const parsed = parseEvent(SynchronizeEventSchema, event, 'Synchronize');
      return 'growCoverage' in parsed ? growCoverage(parsed.growCoverage, { blobs }) : synchronizeRound(parsed, { blobs, store });
    }),
    finalize: logged(logger, 'Finalize', 'info', async (event) => {
      const { result, ...output } = await finalizeRun(parseEvent(WorkflowStateSchema, event, 'Finalize'), { blobs, store });
      deps.metrics?.runFinished(result);
      return output;
    }),
  };
}
