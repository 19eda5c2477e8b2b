/**
 * The names of the workflow's CloudWatch metrics (Powertools Metrics, embedded metric format): one
 * namespace, the metric names and their dimension, shared by the Lambda adapters that emit them
 * (lambdas/adapters/telemetry.ts) and the dashboard that graphs them (infra/dashboard.ts).
 */

/** The CloudWatch namespace of every metric of the stack. */
export const METRICS_NAMESPACE = 'ExtAgents';

/** Metric names (units: Count). Model calls and tokens carry the dimension `role` (seeker, reasoner). */
export const METRIC = {
  /** Model calls, per role. */
  modelCalls: 'ModelCalls',
  /** Input tokens of the model calls, per role (the model's own tokenizer). */
  inputTokens: 'InputTokens',
  /** Output tokens of the model calls, per role. */
  outputTokens: 'OutputTokens',
  /** Knowledge-accumulating reasoning steps taken. */
  karSteps: 'KarSteps',
  /** Runs that ended with "NO ANSWER". */
  refusals: 'Refusals',
  /** Runs finished (answered or refused). */
  runsFinished: 'RunsFinished',
  /** Chunks whose seeking agent failed permanently, summed over finished runs. */
  failedChunks: 'FailedChunks',
} as const;

/** The dimension of the per-role metrics. */
export const ROLE_DIMENSION = 'role';
