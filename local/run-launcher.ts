/**
 * The local RunLauncher (shared/api/ports.ts) of `extagents serve`: executions of the synthesized
 * state machine run in the background in this process (local/stack.ts `execute`), at most
 * `maxConcurrentRuns` at once (the others wait, reported RUNNING as a Step Functions execution
 * would be), and their status is tracked like DescribeExecution reports it.
 *
 * Each execution's description is also kept in the local bucket (`api/executions/<name>.json`,
 * written at start and at the end), so that a restarted server still knows finished runs and never
 * starts a name twice. A record still RUNNING that this process did not start belongs to a server
 * that stopped meanwhile: it is reported ABORTED.
 */
import pLimit from 'p-limit';
import { executionRecordKey } from '../shared/api/layout';
import { causeMessage, type ExecutionDescription, type RunLauncher } from '../shared/api/ports';
import { NotFoundError } from '../shared/errors';
import type { PrepareEvent } from '../shared/pipeline/state';
import type { BlobStore } from '../shared/ports';
import { ExecutionFailedError } from './engine';

/** Options of {@link LocalRunLauncher}. */
export interface LocalRunLauncherOptions {
  /** Runs one execution to its end (`LocalStack.execute`); rejects when it fails. */
  execute: (input: PrepareEvent, signal: AbortSignal) => Promise<unknown>;
  /** The local bucket (execution records). */
  blobs: BlobStore;
  /** Executions run at once; at least 1. */
  maxConcurrentRuns: number;
  now?: () => Date;
  /** Called when an execution ends (logging). */
  onEnded?: (description: ExecutionDescription) => void;
}

export class LocalRunLauncher implements RunLauncher {
  private readonly active = new Map<string, { description: ExecutionDescription; done: Promise<void> }>();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly abort = new AbortController();
  private readonly now: () => Date;
  private startedCount = 0;

  constructor(private readonly options: LocalRunLauncherOptions) {
    this.limit = pLimit(Math.max(1, Math.floor(options.maxConcurrentRuns)));
    this.now = options.now ?? (() => new Date());
  }

  /** Executions started by this launcher since it was created. */
  get started(): number {
    return this.startedCount;
  }

  /** Executions of this launcher that have not ended (running or waiting for a slot). */
  get running(): number {
    return [...this.active.values()].filter((e) => e.description.status === 'RUNNING').length;
  }

  async start(name: string, input: PrepareEvent): Promise<{ started: boolean }> {
    if (this.active.has(name) || this.abort.signal.aborted) return { started: false };
    // Reserve the name before the first await, so a concurrent start of it sees it taken.
    const description: ExecutionDescription = { name, status: 'RUNNING', startedAt: this.now().toISOString() };
    let finish!: () => void;
    const entry = { description, done: new Promise<void>((resolve) => (finish = resolve)) };
    this.active.set(name, entry);
    if (await this.options.blobs.exists(executionRecordKey(name))) {
      this.active.delete(name);
      finish();
      return { started: false };
    }
    try {
      await this.persist(description);
    } catch (error) {
      this.active.delete(name);
      finish();
      throw error;
    }
    this.startedCount += 1;
    void this.limit(async () => {
      if (this.abort.signal.aborted) throw new ExecutionFailedError('ExecutionAborted', 'The server stopped before the run started');
      return this.options.execute(input, this.abort.signal);
    })
      .then(
        () => Object.assign(description, { status: 'SUCCEEDED' }),
        (error: unknown) => Object.assign(description, failureOf(error)),
      )
      .then(async () => {
        description.stoppedAt = this.now().toISOString();
        await this.persist(description).catch(() => undefined);
        this.options.onEnded?.({ ...description });
      })
      .finally(finish);
    return { started: true };
  }

  async describe(name: string): Promise<ExecutionDescription | undefined> {
    const entry = this.active.get(name);
    if (entry) return { ...entry.description };
    let stored: ExecutionDescription;
    try {
      stored = JSON.parse(await this.options.blobs.getText(executionRecordKey(name))) as ExecutionDescription;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
    if (stored.status === 'RUNNING') {
      return { ...stored, status: 'ABORTED', error: 'ServerStopped', cause: 'The server that ran this execution stopped before it ended' };
    }
    return stored;
  }

  /** Abort every execution and wait until each has ended (its record written). Idempotent. */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all([...this.active.values()].map((e) => e.done));
  }

  private async persist(description: ExecutionDescription): Promise<void> {
    await this.options.blobs.put(executionRecordKey(description.name), JSON.stringify(description), 'application/json');
  }
}

/** The status, error and cause of a failed execution, as DescribeExecution would report them. */
function failureOf(error: unknown): Pick<ExecutionDescription, 'status' | 'error' | 'cause'> {
  if (error instanceof ExecutionFailedError) {
    return { status: error.error === 'ExecutionAborted' ? 'ABORTED' : 'FAILED', error: error.error, cause: causeMessage(error.causeText) };
  }
  if (error instanceof Error) return { status: 'FAILED', error: error.name, cause: causeMessage(error.message) };
  return { status: 'FAILED', error: 'Error', cause: causeMessage(String(error)) };
}
