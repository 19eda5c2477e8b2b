/**
 * Metrics and traces of the workflow's Lambdas (issue 13, item 5), with Powertools for AWS Lambda:
 * - Metrics (embedded metric format in the function's log, namespace `METRICS_NAMESPACE`): model
 *   calls and input/output tokens per role (from each agent call's usage), KAR steps, and per
 *   finished run the refusal and the failed chunks; every metric line carries the run id as
 *   metadata (not a dimension: a dimension per run would be a metric per run).
 * - Tracer: the Bedrock Runtime and DynamoDB clients are captured, so each model call and table
 *   request is a subsegment of the function's X-Ray trace (the functions run with active tracing).
 * The local run never imports this module (the handlers take no metrics there).
 * Source: https://docs.aws.amazon.com/powertools/typescript/latest/features/metrics/ and /tracer/
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { METRIC, METRICS_NAMESPACE, ROLE_DIMENSION } from '../../shared/telemetry';
import type {
  AgentModel,
  CheckRequest,
  CheckResult,
  FollowUpRequest,
  FollowUpResult,
  ReasonRequest,
  ReasonResult,
  SeekRequest,
  SeekResult,
} from '../../shared/ports';
import type { AgentRole, RoleUsage, RunResult } from '../../shared/types';
import type { RunMetrics } from '../handlers';
import { runIdOf } from '../logged';

/** The container's metrics (module scope) in the stack's namespace. */
export const metrics = new Metrics({ namespace: METRICS_NAMESPACE });
/** The container's tracer; `tracer.captureAWSv3Client(client)` adds a client's calls to the trace. */
export const tracer = new Tracer();

/**
 * The per-role usage of one agent call as metrics, each with the `role` dimension. A Powertools
 * single metric publishes at its first `addMetric`, so each metric gets its own.
 */
export function recordUsage(role: AgentRole, usage: RoleUsage): void {
  for (const [name, value] of [
    [METRIC.modelCalls, usage.calls],
    [METRIC.inputTokens, usage.inputTokens],
    [METRIC.outputTokens, usage.outputTokens],
  ] as const) {
    const single = metrics.singleMetric();
    single.addDimension(ROLE_DIMENSION, role);
    single.addMetric(name, MetricUnit.Count, value);
  }
}

/** An agent model whose calls' usage is recorded as metrics (the Seek and Reason functions). */
export function withUsageMetrics(model: AgentModel): AgentModel {
  const followUp = model.followUp?.bind(model);
  const checkAnswer = model.checkAnswer?.bind(model);
  return {
    description: model.description,
    async seek(request: SeekRequest): Promise<SeekResult> {
      const result = await model.seek(request);
      recordUsage('seeker', result.usage);
      return result;
    },
    async reason(request: ReasonRequest): Promise<ReasonResult> {
      const result = await model.reason(request);
      recordUsage('reasoner', result.usage);
      return result;
    },
    ...(checkAnswer !== undefined && {
      async checkAnswer(request: CheckRequest): Promise<CheckResult> {
        const result = await checkAnswer(request);
        recordUsage('reasoner', result.usage);
        return result;
      },
    }),
    ...(followUp !== undefined && {
      async followUp(request: FollowUpRequest): Promise<FollowUpResult> {
        const result = await followUp(request);
        recordUsage('reasoner', result.usage);
        return result;
      },
    }),
  };
}

/** Count `value` of a metric without a role (KAR steps, refusals, runs, failed chunks). */
export function count(name: (typeof METRIC)[keyof typeof METRIC], value = 1): void {
  metrics.addMetric(name, MetricUnit.Count, value);
}

/** The handlers' run metrics (lambdas/handlers.ts `RunMetrics`): KAR steps, and per finished run its refusal and failed chunks. */
export const runMetrics: RunMetrics = {
  karStep: () => count(METRIC.karSteps),
  runFinished: (result: RunResult) => {
    count(METRIC.runsFinished);
    count(METRIC.refusals, result.answerable ? 0 : 1);
    count(METRIC.failedChunks, result.chunkFailures.length);
  },
};

/**
 * A handler whose stored metrics are published when it ends (also when it throws), with the run id
 * as metadata of the invocation's metric lines.
 */
export function withMetrics<T>(handler: (event: unknown) => Promise<T>): (event: unknown) => Promise<T> {
  return async (event) => {
    const runId = runIdOf(event);
    if (runId !== undefined) metrics.addMetadata('runId', runId);
    try {
      return await handler(event);
    } finally {
      metrics.publishStoredMetrics();
    }
  };
}
