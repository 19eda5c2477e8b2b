/**
 * Local mode, one question: start the local stack (local/stack.ts), put the corpus files into the
 * local bucket, run the synthesized state machine, read the result, stop the stack.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { parseRunOptions, type RunOptionsInput } from '../shared/config';
import type { AgentModel } from '../shared/ports';
import { RunIdSchema, parseEvent, type FinalizeOutput } from '../shared/pipeline/state';
import type { RunResult } from '../shared/types';
import type { CorpusFile } from './corpus';
import { startLocalStack } from './stack';

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

/** A fresh run id: `run-<UTC yyyymmddThhmmss>-<6 hex>`. */
export function newRunId(now: Date = new Date()): string {
  return `run-${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
}

/**
 * Run one question locally and return its result.
 * @throws ConfigurationError / InvalidInputError for bad options, model spec or run id (before any
 *   work); the domain error that failed the execution (EmptyCorpusError, …) when it has one;
 *   ExecutionFailedError otherwise (e.g. States.ExceedToleratedFailureThreshold).
 */
export async function runLocal(request: LocalRunRequest): Promise<RunResult> {
  parseRunOptions(request.options);
  const runId = request.runId ?? newRunId();
  parseEvent(RunIdSchema, runId, 'run id');
  const report = request.onProgress ?? (() => undefined);

  const stack = await startLocalStack({
    stateDir: request.stateDir,
    modelSpec: request.modelSpec,
    model: request.model,
    retryIntervalMs: request.retryIntervalMs,
  });
  try {
    const corpusPrefix = `corpora/${runId}/`;
    await Promise.all(request.files.map(async (f) => stack.blobs.put(corpusPrefix + f.id, await fs.readFile(f.path))));
    let round = 0;
    let done = 0;
    let failed = 0;
    let total = 0;
    report({ phase: 'info', message: `run ${runId}: ${request.files.length} corpus file(s), model ${request.modelSpec ?? 'extractive'}` });
    const output = (await stack.execute(
      { runId, question: request.question, corpus: { prefix: corpusPrefix }, options: request.options ?? {} },
      {
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
      },
    )) as FinalizeOutput;
    return JSON.parse(await stack.blobs.getText(output.resultKey)) as RunResult;
  } finally {
    await stack.stop();
  }
}
