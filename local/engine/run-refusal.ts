/**
 * Why Prepare refused a local `ask` run before any model call (an empty corpus, a cost limit, a
 * quota that cannot carry the seeks, bad input: the errors that end the workflow at PrepareFailed,
 * infra/extagents-workflow.ts `PREPARE_ERRORS`), kept under the run (`runs/<runId>/refused.json`)
 * when its id was given, so that `runs show` says what to change instead of advising to resume it:
 * resuming runs Prepare again with the same input and is refused the same way.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { NotFoundError } from '../../shared/errors';
import { runPrefix } from '../../shared/pipeline/layout';
import type { BlobStore } from '../../shared/ports';
import { bucketOf } from './runs';

/** `runs/<runId>/refused.json`: a {@link RunRefusal}. */
export const runRefusalKey = (runId: string): string => `${runPrefix(runId)}refused.json`;

/** A refusal as kept: the error's name (e.g. `QuotaExceededError`) and message, and when. */
export interface RunRefusal {
  error: string;
  message: string;
  /** ISO-8601 time of the refusal. */
  at: string;
}

/**
 * Names of Prepare's refusals (infra/extagents-workflow.ts `PREPARE_ERRORS`, which local code does
 * not import: it loads the CDK). The names are the workflow's contract, so they do not drift apart silently:
 * test/unit/run-refusal.test.ts compares the two lists.
 */
export const PREPARE_REFUSALS: readonly string[] = [
  'EmptyCorpusError',
  'ConfigurationError',
  'InvalidInputError',
  'InvalidRunOptionsError',
  'CostLimitExceededError',
  'QuotaExceededError',
];

/** Keep why Prepare refused the run, when `error` is one of its refusals. @returns whether it was one. */
export async function recordRefusal(blobs: BlobStore, runId: string, error: unknown): Promise<boolean> {
  if (!(error instanceof Error) || !PREPARE_REFUSALS.includes(error.name)) return false;
  const refusal: RunRefusal = { error: error.name, message: error.message, at: new Date().toISOString() };
  await blobs.put(runRefusalKey(runId), JSON.stringify(refusal), 'application/json');
  return true;
}

/** The refusal kept for a run, or undefined. */
export async function readRefusal(blobs: BlobStore, runId: string): Promise<RunRefusal | undefined> {
  try {
    return JSON.parse(await blobs.getText(runRefusalKey(runId))) as RunRefusal;
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

/** Forget a run's refusal (the same run id asked again), in the bucket of the state directory `stateDir`. */
export async function clearRefusal(stateDir: string, runId: string): Promise<void> {
  await rm(path.join(bucketOf(stateDir).root, ...runRefusalKey(runId).split('/')), { force: true });
}
