/**
 * Structured JSON logs of the Lambda handlers with Powertools for AWS Lambda (TypeScript) Logger:
 * one logger per container at module scope, the Lambda context (request id, function name, cold
 * start) added per invocation, the run id appended as a persistent key by the handlers
 * (lambdas/handlers.ts) so every line of an invocation carries it.
 *
 * Configuration by environment (set by the stack): `POWERTOOLS_SERVICE_NAME` (service key),
 * `POWERTOOLS_LOG_LEVEL` (DEBUG, INFO, WARN, ERROR, SILENT; default INFO).
 * Source: https://docs.aws.amazon.com/powertools/typescript/latest/features/logger/
 *
 * The local run never imports this module: local/engine/stack.ts builds the handlers without a logger, so
 * local runs print nothing of it.
 */
import { Logger } from '@aws-lambda-powertools/logger';

/** The container's logger (module scope: created once, reused by every invocation). */
export const logger = new Logger();

/**
 * The fields of the Lambda context object Powertools puts into every log line (a subset of the
 * Node.js runtime's `context`). Source: https://docs.aws.amazon.com/lambda/latest/dg/nodejs-context.html
 */
export interface LambdaInvocationContext {
  functionName: string;
  functionVersion: string;
  invokedFunctionArn: string;
  memoryLimitInMB: string;
  awsRequestId: string;
}

/**
 * A Lambda entry point around a handler: adds the invocation's context to the logger, then runs the
 * handler on the event. Errors propagate unchanged (their `name` is what Step Functions matches).
 */
export function withLambdaContext<T>(handler: (event: unknown) => Promise<T>): (event: unknown, context: LambdaInvocationContext) => Promise<T> {
  return async (event, context) => {
    // Powertools types `addContext` with the `aws-lambda` package's Context (not a dependency here);
    // it reads only the fields of LambdaInvocationContext.
    logger.addContext(context as Parameters<Logger['addContext']>[0]);
    return handler(event);
  };
}
