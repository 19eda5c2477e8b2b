/**
 * The one loader of Lambda environments: each function's variables are a zod schema, read once at
 * cold start, and every missing or invalid variable is named in one ConfigurationError (no
 * placeholder defaults that would hide a missing value). Used by lambdas/adapters/env.ts (the
 * workflow's functions), trigger-env.ts (ingestion, jobs, the bulk survey index) and api-aws.ts (the API).
 */
import { z } from 'zod';
import { ConfigurationError } from '../../shared/errors';
import { issuesText } from '../../shared/validation';

/**
 * A Standard state machine's ARN: `arn:<partition>:states:<region>:<account>:stateMachine:<name>`
 * (name 1-80 characters of A-Z a-z 0-9 _ -). The one pattern of every function that starts or
 * describes executions (lambdas/adapters/sfn-run-launcher.ts).
 * Source: https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachine.html
 */
export const StateMachineArnSchema = z
  .string()
  .regex(/^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/, 'must be a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>)');

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
