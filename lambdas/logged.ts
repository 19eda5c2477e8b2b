/**
 * The one logging wrapper of every Lambda handler factory (lambdas/handlers.ts for the workflow,
 * lambdas/survey-handlers.ts for the survey and bulk survey machines; the upload triggers log per
 * record with the same logger type). No runtime dependency: the Powertools Logger itself is created
 * in lambdas/adapters/logging.ts, which the local stack never imports (it passes no logger).
 */
import type { Logger } from '@aws-lambda-powertools/logger';

/** What the handlers need of a logger (a subset of the Powertools Logger's methods). */
export type HandlerLogger = Pick<Logger, 'appendPersistentKeys' | 'removePersistentKeys' | 'debug' | 'info' | 'error'>;

/**
 * A handler that logs: the run id (and the task name) become persistent keys of the logger for
 * this invocation, so every line it prints carries them; one line when the task ends (`level`;
 * Seek logs at debug, it runs once per chunk and round) with its small result, one error line with
 * the error's name when it fails. The error is rethrown unchanged. The one logging wrapper of the
 * workflow's, the survey's and the bulk survey's handlers (lambdas/survey-handlers.ts).
 */
export function logged<T>(
  logger: HandlerLogger | undefined,
  task: string,
  level: 'debug' | 'info',
  handler: (event: unknown) => Promise<T>,
): (event: unknown) => Promise<T> {
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

/**
 * The run id of a task event: `runId` of the event, or of its `state` (Reason, the survey steps), or
 * a survey execution's `surveyId` (SurveyPrepare; its run id), else undefined.
 */
export function runIdOf(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const { runId, surveyId, state } = event as { runId?: unknown; surveyId?: unknown; state?: { runId?: unknown } };
  if (typeof runId === 'string') return runId;
  if (typeof state?.runId === 'string') return state.runId;
  return typeof surveyId === 'string' ? surveyId : undefined;
}
