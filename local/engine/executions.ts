/**
 * The local execution registry: Step Functions' named executions for one local bucket, the
 * RunLauncher and ExecutionLookup (shared/executions.ts) of every local command: the one registry of
 * the runs of a state directory. `serve` starts its runs with {@link LocalExecutions.start} (in the
 * background, at most `maxConcurrentRuns` at once; the others wait, reported RUNNING as a Step
 * Functions execution would be), `job`/`upload` run a job's questions with {@link LocalExecutions.run}
 * (in the foreground), `ask` (the CLI and the library) its run with {@link LocalExecutions.record},
 * and all describe executions from the same records, so `serve` (its API's run list, the page) sees
 * the runs of an `ask` or a `job` beside it, `runs ls` those of `serve`, each with the same status.
 *
 * Records: `runs/_executions/<name>.json` (an `ExecutionDescription` plus the pid of the process
 * that runs it), written at start and at the end, so that a name runs at most once per bucket across
 * processes, and a restarted process still knows finished executions. The failure cause is parsed
 * once, when it is recorded (`causeMessage`). A record still RUNNING whose process is gone (killed,
 * crashed) is reported ABORTED (`ProcessStopped`);
 * `run` runs such an interrupted execution again under its name, which resumes the run (a job's
 * question has a run id derived from the job: docs/ARCHITECTURE.md, "Resume"). Records of earlier
 * versions of `serve` (`api/executions/<name>.json`) are still read.
 */
import pLimit from 'p-limit';
import { ConfigurationError, InvalidInputError, NotFoundError, RunNotCancellableError } from '../../shared/errors';
import { causeMessage, type ExecutionControl, type ExecutionDescription, type ExecutionPage, type RunLauncher, type StopReason } from '../../shared/executions';
import type { PrepareEvent } from '../../shared/pipeline/state';
import type { BlobStore } from '../../shared/ports';
import { ExecutionFailedError } from './engine';

/** Key of a local execution's record. */
export const executionRecordKey = (name: string): string => `runs/_executions/${name}.json`;
/** Where `serve` kept its records before the registry was shared (read only). */
const legacyRecordKey = (name: string): string => `api/executions/${name}.json`;

/** A record as stored: the description and the pid of the process running it. */
type ExecutionRecord = ExecutionDescription & { pid?: number };

/** Options of {@link LocalExecutions}. */
export interface LocalExecutionsOptions {
  /** The local bucket (execution records). */
  blobs: BlobStore;
  /** Runs one execution to its end (`LocalStack.execute`); rejects when it fails. Needed by `start`. */
  execute?: (input: PrepareEvent, signal: AbortSignal) => Promise<unknown>;
  /** Executions `start` runs at once; at least 1. @default 1 */
  maxConcurrentRuns?: number;
  now?: () => Date;
  /** Called when an execution ends (logging). */
  onEnded?: (description: ExecutionDescription) => void;
}

/** Names being started in this process, per bucket (a second claim of one is refused at once). */
const claimedByBucket = new WeakMap<BlobStore, Set<string>>();

/** An execution of this process: its description, its end, and (background ones) its own abort. */
interface ActiveExecution {
  description: ExecutionDescription;
  done: Promise<void>;
  /** Aborts this execution alone (`abort`); absent for foreground ones (`run`). */
  controller?: AbortController;
  /** Why it was aborted through {@link LocalExecutions.abort}: what its record says at its end. */
  stopReason?: StopReason;
}

export class LocalExecutions implements RunLauncher, ExecutionControl {
  private readonly active = new Map<string, ActiveExecution>();
  private readonly limit: ReturnType<typeof pLimit>;
  private readonly stopping = new AbortController();
  private readonly now: () => Date;
  private startedCount = 0;

  constructor(private readonly options: LocalExecutionsOptions) {
    this.limit = pLimit(Math.max(1, Math.floor(options.maxConcurrentRuns ?? 1)));
    this.now = options.now ?? (() => new Date());
  }

  /** Executions started by this registry since it was created. */
  get started(): number {
    return this.startedCount;
  }

  /** Executions of this registry that have not ended (running or waiting for a slot). */
  get running(): number {
    return [...this.active.values()].filter((e) => e.description.status === 'RUNNING').length;
  }

  /**
   * Start `input` in the background as the execution `name` (the API's run). Idempotent by name:
   * any record of the name (running, finished or interrupted) means nothing starts.
   * @throws Error when the registry was made without `execute`; a failed record write.
   */
  async start(name: string, input: PrepareEvent): Promise<{ started: boolean }> {
    const execute = this.options.execute;
    if (!execute) throw new Error('LocalExecutions.start needs the execute option');
    const claim = await this.claim(name);
    if (!claim) return { started: false };
    if (claim.existing !== undefined) {
      claim.release();
      return { started: false };
    }
    const description: ExecutionDescription = { name, status: 'RUNNING', startedAt: this.now().toISOString() };
    let finish!: () => void;
    // Aborted by `stop` (every execution) or `abort` (this one).
    const controller = new AbortController();
    const onStop = (): void => controller.abort();
    this.stopping.signal.addEventListener('abort', onStop, { once: true });
    const entry: ActiveExecution = { description, done: new Promise<void>((resolve) => (finish = resolve)), controller };
    this.active.set(name, entry);
    try {
      await this.persist(description);
    } catch (error) {
      this.stopping.signal.removeEventListener('abort', onStop);
      this.active.delete(name);
      finish();
      throw error;
    } finally {
      claim.release();
    }
    this.startedCount += 1;
    const notStarted = (): ExecutionFailedError =>
      entry.stopReason
        ? new ExecutionFailedError('ExecutionAborted', 'The execution was aborted before it started')
        : new ExecutionFailedError('ExecutionAborted', 'The server stopped before the run started');
    let begun = false;
    const running = this.limit(async () => {
      begun = true;
      if (controller.signal.aborted) throw notStarted();
      return execute(input, controller.signal);
    });
    // A queued execution (waiting for a slot) ends as soon as it is aborted, not when a slot frees:
    // its slot task then finds the abort and returns at once.
    const queued = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => (begun ? undefined : reject(notStarted())), { once: true });
    });
    running.catch(() => undefined);
    queued.catch(() => undefined);
    void Promise.race([running, queued])
      .then(
        () => Object.assign(description, { status: 'SUCCEEDED' }),
        (error: unknown) => Object.assign(description, failureOf(error)),
      )
      .then(async () => {
        this.stopping.signal.removeEventListener('abort', onStop);
        // Aborted through `abort` (the API's cancel): ABORTED with the caller's reason, even when the
        // abort reached the execution as it was failing for another reason.
        if (entry.stopReason && description.status !== 'SUCCEEDED') Object.assign(description, { status: 'ABORTED' }, entry.stopReason);
        description.stoppedAt = this.now().toISOString();
        await this.persist(description).catch(() => undefined);
        this.options.onEnded?.({ ...description });
      })
      .finally(() => {
        this.active.delete(name);
        finish();
      });
    return { started: true };
  }

  /**
   * Run `execute` in the foreground as the execution `name` (a job's question) unless an execution
   * of that name exists; an interrupted one (its process gone) runs again under the same name. A
   * failed execution is recorded with its error name and cause, not thrown.
   * @returns whether it ran, and the execution's status (the existing one's when it did not run).
   */
  async run(name: string, execute: () => Promise<unknown>): Promise<{ started: boolean; status: string }> {
    const claim = await this.claim(name);
    if (!claim) return { started: false, status: 'RUNNING' };
    try {
      if (claim.existing !== undefined && !isInterrupted(claim.existing)) return { started: false, status: claim.existing.status };
      const description: ExecutionDescription = { name, status: 'RUNNING', startedAt: this.now().toISOString() };
      this.active.set(name, { description, done: Promise.resolve() });
      try {
        await this.persist(description);
        try {
          await execute();
          description.status = 'SUCCEEDED';
        } catch (error) {
          Object.assign(description, failureOf(error));
        }
        description.stoppedAt = this.now().toISOString();
        await this.persist(description);
      } finally {
        this.active.delete(name);
      }
      this.startedCount += 1;
      this.options.onEnded?.({ ...description });
      return { started: true, status: description.status };
    } finally {
      claim.release();
    }
  }

  /**
   * Run `execute` in the foreground as the execution `name` whatever its record says (an `ask`: the
   * same run id runs again to resume its run, after it ended, failed or was interrupted), and record
   * it: RUNNING with this process's id, then how it ended. Unlike {@link run} the execution's error
   * is recorded and thrown.
   * @returns what `execute` returns.
   * @throws ConfigurationError when another live process (or another call of this one) runs `name`;
   *   the error of `execute`.
   */
  async record<T>(name: string, execute: () => Promise<T>): Promise<T> {
    const running = (pid?: number): never => {
      throw new ConfigurationError(`Run ${name} is running${pid === undefined ? ' in this process' : ` in process ${pid}`}: wait for it to end or stop it`);
    };
    const claim = (await this.claim(name)) ?? running();
    try {
      if (claim.existing?.status === 'RUNNING' && !isInterrupted(claim.existing)) running(claim.existing.pid);
      const description: ExecutionDescription = { name, status: 'RUNNING', startedAt: this.now().toISOString() };
      this.active.set(name, { description, done: Promise.resolve() });
      try {
        await this.persist(description);
        let value: T;
        try {
          value = await execute();
          description.status = 'SUCCEEDED';
        } catch (error) {
          Object.assign(description, failureOf(error));
          description.stoppedAt = this.now().toISOString();
          await this.persist(description).catch(() => undefined);
          throw error;
        }
        description.stoppedAt = this.now().toISOString();
        await this.persist(description);
        return value;
      } finally {
        this.active.delete(name);
      }
    } finally {
      claim.release();
    }
  }

  async describe(name: string): Promise<ExecutionDescription | undefined> {
    const entry = this.active.get(name);
    if (entry) return { ...entry.description };
    const stored = await this.read(name);
    if (stored === undefined) return undefined;
    const { pid: _pid, ...description } = stored;
    if (isInterrupted(stored)) {
      return { ...description, status: 'ABORTED', error: 'ProcessStopped', cause: 'The process that ran this execution stopped before it ended' };
    }
    return description;
  }

  /**
   * The executions of this bucket, newest first (start time descending, then name descending), from
   * the records (`runs/_executions/`, and the legacy `api/executions/`), each described as
   * {@link describe} does. `after` is the `next` of the previous page: `<startedAt> <name>` of its
   * last execution (keyset paging, so executions started meanwhile do not shift the pages).
   * @throws InvalidInputError for an `after` that is not such a position.
   */
  async list(options: { limit: number; after?: string }): Promise<ExecutionPage> {
    let after: { startedAt: string; name: string } | undefined;
    if (options.after !== undefined) {
      const match = /^(\S+) ([A-Za-z0-9._-]{1,80})$/.exec(options.after);
      if (!match) throw new InvalidInputError(`Not a position of the execution list: ${JSON.stringify(options.after)}`);
      after = { startedAt: match[1], name: match[2] };
    }
    const names = new Set<string>();
    for (const prefix of ['runs/_executions/', 'api/executions/']) {
      for (const object of await this.options.blobs.list(prefix)) {
        const name = /^[^/]+\/(?:_executions|executions)\/([^/]+)\.json$/.exec(object.key)?.[1];
        if (name !== undefined) names.add(name);
      }
    }
    for (const name of this.active.keys()) names.add(name);
    const limit = pLimit(16);
    const described = (await Promise.all([...names].map((name) => limit(() => this.describe(name))))).filter((d): d is ExecutionDescription => d !== undefined);
    const newestFirst = (a: { startedAt: string; name: string }, b: { startedAt: string; name: string }): number =>
      b.startedAt.localeCompare(a.startedAt) || b.name.localeCompare(a.name);
    described.sort(newestFirst);
    const rest = after === undefined ? described : described.filter((d) => newestFirst(after, d) < 0);
    const page = rest.slice(0, options.limit);
    const last = page.at(-1);
    return { executions: page, ...(rest.length > options.limit && last && { next: `${last.startedAt} ${last.name}` }) };
  }

  /**
   * Abort the RUNNING background execution `name` of this process and wait until it has ended (its
   * record written, ABORTED with `reason`). Its run's state stays, as after Ctrl-C: the run resumes
   * when run again under its id (docs/ARCHITECTURE.md, "Resume"). Nothing happens to an execution
   * that has ended, nor to one interrupted by a process that is gone (already reported ABORTED).
   * @returns the execution afterwards; undefined when there is none.
   * @throws RunNotCancellableError when another live process (a `job`, an `ask`) runs it.
   */
  async abort(name: string, reason: StopReason): Promise<ExecutionDescription | undefined> {
    const entry = this.active.get(name);
    if (entry?.controller) {
      entry.stopReason ??= reason;
      entry.controller.abort();
      await entry.done;
      return this.describe(name);
    }
    const description = await this.describe(name);
    if (description?.status === 'RUNNING') {
      throw new RunNotCancellableError(
        `Run ${name} is run by another process (${entry ? 'in the foreground' : 'a job or another command'}); stop that process to stop it`,
        'RUNNING',
      );
    }
    return description;
  }

  /** Abort every background execution and wait until each has ended (its record written). Idempotent. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all([...this.active.values()].map((e) => e.done));
  }

  /**
   * Claim `name` in this process (before any await, so a concurrent claim of it is refused), then
   * read its record. undefined: another call of this process holds the name.
   */
  private async claim(name: string): Promise<{ existing: ExecutionRecord | undefined; release: () => void } | undefined> {
    let claimed = claimedByBucket.get(this.options.blobs);
    if (!claimed) claimedByBucket.set(this.options.blobs, (claimed = new Set()));
    if (claimed.has(name) || this.active.has(name) || this.stopping.signal.aborted) return undefined;
    claimed.add(name);
    const release = () => claimed.delete(name);
    try {
      return { existing: await this.read(name), release };
    } catch (error) {
      release();
      throw error;
    }
  }

  private async read(name: string): Promise<ExecutionRecord | undefined> {
    for (const key of [executionRecordKey(name), legacyRecordKey(name)]) {
      try {
        return { name, ...(JSON.parse(await this.options.blobs.getText(key)) as Omit<ExecutionRecord, 'name'>) };
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error;
      }
    }
    return undefined;
  }

  private async persist(description: ExecutionDescription): Promise<void> {
    const record: ExecutionRecord = description.status === 'RUNNING' ? { ...description, pid: process.pid } : description;
    await this.options.blobs.put(executionRecordKey(description.name), JSON.stringify(record), 'application/json');
  }
}

/**
 * A RUNNING record whose process is gone (signal 0 fails; EPERM means the process exists). A record
 * without a pid (older versions) counts as gone.
 */
function isInterrupted(record: ExecutionRecord): boolean {
  if (record.status !== 'RUNNING') return false;
  const pid = record.pid;
  if (pid === undefined || !Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** The status, error and cause of a failed execution, as DescribeExecution would report them (the cause parsed once). */
function failureOf(error: unknown): Pick<ExecutionDescription, 'status' | 'error' | 'cause'> {
  if (error instanceof ExecutionFailedError) {
    return { status: error.error === 'ExecutionAborted' ? 'ABORTED' : 'FAILED', error: error.error, cause: causeMessage(error.causeText) };
  }
  if (error instanceof Error) return { status: 'FAILED', error: error.name, cause: causeMessage(error.message) };
  return { status: 'FAILED', error: 'Error', cause: causeMessage(String(error)) };
}
