/**
 * The one loader of Lambda environments: each function's variables are a zod schema, read once at
 * cold start, and every missing or invalid variable is named in one ConfigurationError (no
 * placeholder defaults that would hide a missing value). Used by lambdas/adapters/env.ts (the
 * workflow's functions), trigger-env.ts (ingestion, jobs, the bulk survey index) and api-aws.ts (the API).
 */
import { z } from 'zod';
import { ConfigurationError } from '../../shared/errors';
import { issuesText } from '../../shared/validation';
import type { ModelQuota } from '../../shared/types';

/**
 * A Standard state machine's ARN: `arn:<partition>:states:<region>:<account>:stateMachine:<name>`
 * (name 1-80 characters of A-Z a-z 0-9 _ -). The one pattern of every function that starts or
 * describes executions (lambdas/adapters/sfn-run-launcher.ts).
 * Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachine.html
 */
export const StateMachineArnSchema = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/,
    'must be a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>)',
  );

/**
 * Read and validate an environment.
 * @param what which function's environment, for the message (e.g. "Lambda", "API Lambda").
 * @throws ConfigurationError `Invalid <what> environment: NAME: problem; …` naming every bad variable.
 */
export function loadLambdaEnv<T>(schema: z.ZodType<T>, source: NodeJS.ProcessEnv, what = 'Lambda'): T {
  const result = schema.safeParse(source);
  if (!result.success) throw new ConfigurationError(`Invalid ${what} environment: ${issuesText(result.error)}`);
  return result.data;
}

/**
 * The deployment's quota of the seeking model, requests and tokens per minute (CDK context
 * `quotaRequestsPerMinute`, `quotaTokensPerMinute`; shared/quota.ts), on the workflow's functions
 * (Prepare derives each run's MaxConcurrency from it) and the API's (which refuses with 422 a run
 * the quota cannot carry): absent = none stated.
 */
export const SEEK_QUOTA_ENV = {
  SEEK_QUOTA_REQUESTS_PER_MINUTE: z.coerce.number().int().positive().optional(),
  SEEK_QUOTA_TOKENS_PER_MINUTE: z.coerce.number().int().positive().optional(),
};

/** The quota of {@link SEEK_QUOTA_ENV}'s variables (an empty object when neither is set). */
export function seekQuotaOf(env: { SEEK_QUOTA_REQUESTS_PER_MINUTE?: number; SEEK_QUOTA_TOKENS_PER_MINUTE?: number }): ModelQuota {
  return {
    ...(env.SEEK_QUOTA_REQUESTS_PER_MINUTE !== undefined && { requestsPerMinute: env.SEEK_QUOTA_REQUESTS_PER_MINUTE }),
    ...(env.SEEK_QUOTA_TOKENS_PER_MINUTE !== undefined && { tokensPerMinute: env.SEEK_QUOTA_TOKENS_PER_MINUTE }),
  };
}
