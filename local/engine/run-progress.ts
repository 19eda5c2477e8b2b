/**
 * The progress events of one local question-answering run (shared/progress.ts), made from the
 * workflow as the local engine runs it: the Lambda tasks as they start and end (Prepare, each Seek,
 * each Reason — a KAR step, or the best-effort answer —, Synchronize, Finalize) and the Distributed
 * Map's items, with a few reads of the run's own state for what a task's result does not carry (a KAR
 * step's messages and tokens, the synchronized snapshot's size, the run's token count, a round's
 * messages once it is done). One tracker per execution; `ask` (local/engine/run.ts, the library's
 * `onProgress` and the CLI) and `serve` (its server-sent events, local/services/run-events.ts) use it
 * alike.
 *
 * Events are emitted in the order their causes happened: every emission goes through one queue, so
 * an event that needs a read (a KAR step) is never overtaken by a later one.
 */
import { deferredToLastRound } from '../../shared/pipeline/reason';
import type { RunRecord } from '../../shared/pipeline/run-record';
import type { BlobStore, MessageStore } from '../../shared/ports';
import { runRecordKey, syncKey } from '../../shared/pipeline/layout';
import { batchRoundKey, type BatchRoundRecord } from '../../shared/pipeline/seek-batch';
import type { ReasonEvent, SeekBatchEvent, SeekBatchOutcome, SeekEvent, SeekOutcome, WorkflowState } from '../../shared/pipeline/state';
import {
  estimateRemainingMs,
  progressEventKey,
  stoppedPhase,
  type RunEndEvent,
  type RunKarEvent,
  type RunPhase,
  type RunProgressEvent,
  type RunSeekEvent,
  type RunStatusEvent,
  type RunSyncEvent,
} from '../../shared/progress';
import { STATE_NAMES } from '../../shared/pipeline/state-names';
import { RETRYABLE_ERRORS } from '../../shared/errors';
import { MODEL_RETRY_POLICY, retryDelaysSeconds } from '../../shared/quota';
import type { ExecutionCallbacks } from './stack';

/**
 * Within this time after a line about a failed model call, further failures with the same error are
 * counted into the next line instead of each printing one (ms): a server that is down fails every
 * chunk's seek at once.
 */
export const FAILURE_LINE_INTERVAL_MS = 10_000;
/** Longest error message quoted in a failure line, characters. */
const FAILURE_MESSAGE_CHARS = 300;

/** Options of {@link RunProgressTracker}. */
export interface RunProgressTrackerOptions {
  runId: string;
  question: string;
  /** The run table: KAR steps and pool sizes are read from it. */
  store: Pick<MessageStore, 'getSteps' | 'poolSize'>;
  /** The bucket: the run record (tokens) and synchronization snapshots are read from it. */
  blobs: Pick<BlobStore, 'getText'>;
  /** Gets every event, in order. */
  emit: (event: RunProgressEvent) => void;
  /** Clock, ms (tests). @default Date.now */
  now?: () => number;
}

/** A round's seeking counts, and what its ETA needs. */
interface RoundState {
  event: RunSeekEvent;
  /** When its Map started, ms. */
  startedAt: number;
  /** Chunks that ended at once, sought before this execution (a resumed run): left out of the pace. */
  skipped: number;
}

/**
 * Follows one execution through {@link RunProgressTracker.callbacks} and emits its progress events;
 * {@link RunProgressTracker.current} is the state so far as events (what `serve` streams).
 */
export class RunProgressTracker {
  private status: RunStatusEvent;
  private readonly rounds = new Map<number, RoundState>();
  /** The round each running Distributed Map seeks, by state name. */
  private readonly mapRounds = new Map<string, number>();
  /** The latest event emitted of each key, in the order of their latest emission. */
  private readonly latest = new Map<string, RunProgressEvent>();
  private queue: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly options: RunProgressTrackerOptions) {
    this.now = options.now ?? Date.now;
    this.status = {
      type: 'status',
      runId: options.runId,
      status: 'RUNNING',
      phase: 'preparing',
      question: options.question.trim(),
      chunks: null,
      tokens: null,
    };
  }

  /** Per retryable error name: failed attempts not yet said, and when the last line was said (ms). */
  private readonly failures = new Map<string, { unsaid: number; saidAt: number }>();
  /** The batch-seeking lines already said (`<round>:<what>`). */
  private readonly batchLines = new Set<string>();

  /** The engine's callbacks of the execution (local/engine/stack.ts `execute`). */
  readonly callbacks: Required<Pick<ExecutionCallbacks, 'onTaskStarted' | 'onTaskDone' | 'onTaskFailed' | 'onTaskWaiting' | 'onMapRunStarted' | 'onItemDone'>> =
    {
      // A model call waiting for a throttling server (HTTP 429, its Retry-After) says so as the wait
      // starts, with until when, at most one line per FAILURE_LINE_INTERVAL_MS (the rest counted).
      onTaskWaiting: (name, event, waitMs, why) => {
        const now = this.now();
        const last = this.failures.get('throttle-wait');
        if (last !== undefined && now - last.saidAt < FAILURE_LINE_INTERVAL_MS) {
          last.unsaid += 1;
          return;
        }
        this.failures.set('throttle-wait', { unsaid: 0, saidAt: now });
        const seek = name === 'seek' && !isSeekBatch(event) ? (event as SeekEvent) : undefined;
        const who = seek ? `seeking agent of chunk ${seek.chunk} (round ${seek.round})` : name === 'reason' ? 'reasoning agent' : `${name} task`;
        const until = new Date(now + waitMs).toISOString().slice(11, 19);
        const more = last !== undefined && last.unsaid > 0 ? `; ${last.unsaid} more call(s) waited so since the last such line` : '';
        this.push({ type: 'info', runId: this.options.runId, message: `${who}: ${why}; waiting ${(waitMs / 1000).toFixed(1)} s, until ${until} UTC${more}` });
      },
      // A model call the workflow retries (RETRYABLE_ERRORS: a server down, throttling, a timeout) is
      // said as it happens, at most one line per error and FAILURE_LINE_INTERVAL_MS, so a run never
      // waits in silence; other errors end the task, and the result or the failed run names them.
      onTaskFailed: (name, event, error) => {
        const errorName = error instanceof Error ? error.name : 'Error';
        if (!(RETRYABLE_ERRORS as readonly string[]).includes(errorName)) return;
        const now = this.now();
        const last = this.failures.get(errorName);
        if (last !== undefined && now - last.saidAt < FAILURE_LINE_INTERVAL_MS) {
          last.unsaid += 1;
          return;
        }
        this.failures.set(errorName, { unsaid: 0, saidAt: now });
        const seek = name === 'seek' && !isSeekBatch(event) ? (event as SeekEvent) : undefined;
        const who = seek ? `seeking agent of chunk ${seek.chunk} (round ${seek.round})` : name === 'reason' ? 'reasoning agent' : `${name} task`;
        const raw = error instanceof Error ? error.message : String(error);
        const message = raw.length > FAILURE_MESSAGE_CHARS ? `${raw.slice(0, FAILURE_MESSAGE_CHARS)}…` : raw;
        const more = last !== undefined && last.unsaid > 0 ? `; ${last.unsaid} more attempt(s) failed so since the last such line` : '';
        this.push({
          type: 'info',
          runId: this.options.runId,
          message:
            `${who}: ${errorName}: ${message}; the workflow retries it (up to ${MODEL_RETRY_POLICY.retries} times, ` +
            `after at most ${retryDelaysSeconds().join(', ')} s)${more}`,
        });
      },
      onTaskStarted: (name, event) => {
        if (name === 'prepare') this.setStatus({ phase: 'preparing' });
        else if (name === 'seek' && isSeekBatch(event) && event.seekBatch === 'submit') this.setStatus({ phase: 'seeking', round: event.round });
        else if (name === 'reason') {
          const { state, force } = event as ReasonEvent;
          // An empty pool makes no KAR step (no model call, reason.ts): no "KAR step"/"best-effort answer" line for it.
          const pool =
            state.outcome !== null && state.poolSize > 0
              ? Promise.resolve(state.poolSize)
              : this.options.store.poolSize(this.options.runId, state.round, state.covered);
          this.queue = this.queue.then(async () => {
            if ((await pool.catch(() => 1)) === 0) return;
            // karRounds 'last': a round before the last makes no KAR step (the Reason task's one rule).
            if (!force) {
              const record = await this.options.blobs.getText(runRecordKey(this.options.runId)).then(
                (text) => JSON.parse(text) as Pick<RunRecord, 'options'>,
                () => undefined,
              );
              if (record !== undefined && deferredToLastRound(record, state)) return;
            }
            const { round: _round, k: _k, ...rest } = this.status;
            this.status = { ...rest, phase: force ? 'answering' : 'reasoning', round: state.round, k: state.k };
            await this.send({ ...this.status });
          });
        } else if (name === 'synchronize' && isGrowCoverage(event)) this.setStatus({ phase: 'seeking', round: event.growCoverage.round });
        else if (name === 'synchronize') this.setStatus({ phase: 'synchronizing', round: (event as WorkflowState).round });
        else if (name === 'finalize') this.setStatus({ phase: 'finalizing' });
      },
      onTaskDone: (name, event, result) => {
        if (name === 'prepare') this.prepared(result as WorkflowState);
        else if (name === 'seek' && isSeekBatch(event)) this.batchSought(event, result as SeekBatchOutcome);
        else if (name === 'seek') this.sought(event as SeekEvent, result as SeekOutcome);
        else if (name === 'reason') this.reasoned(event as ReasonEvent, result as WorkflowState);
        // GrowCoverage (the Synchronize function) writes no snapshot: its tranche's Map reports the seeks.
        else if (name === 'synchronize' && !isGrowCoverage(event)) this.synchronized(event as WorkflowState, result as WorkflowState);
      },
      onMapRunStarted: (event) => {
        // The map's input is the workflow state: its round (a speculative round's, or round r+1 sought
        // again after its speculative seeking failed).
        const inputRound = (event.input as { round?: unknown } | null)?.round;
        const round = typeof inputRound === 'number' ? inputRound : Math.max(0, ...this.rounds.keys()) + 1;
        const speculative = event.stateName === STATE_NAMES.SpeculativeSeekChunks;
        this.mapRounds.set(event.stateName, round);
        const seek: RunSeekEvent = {
          type: 'seek',
          round,
          done: 0,
          failed: 0,
          total: event.totalItems,
          messages: 0,
          etaMs: event.totalItems === 0 ? 0 : null,
          ...(speculative && { speculative }),
        };
        this.rounds.set(round, { event: seek, startedAt: this.now(), skipped: 0 });
        // A speculative round is sought beside round r's KAR steps, which stay what the run is doing.
        if (!speculative) this.setStatus({ phase: 'seeking', round });
        this.push(seek);
      },
      onItemDone: (_index, ok, stateName) => {
        const round = this.mapRounds.get(stateName);
        const state = round === undefined ? undefined : this.rounds.get(round);
        if (!state) return;
        const seek = state.event;
        seek.done += 1;
        if (!ok) seek.failed += 1;
        seek.etaMs = estimateRemainingMs({ elapsedMs: this.now() - state.startedAt, measured: seek.done - state.skipped, done: seek.done, total: seek.total });
        this.push(seek);
        // Chunks sought before this execution (a resumed run) found messages this one did not see: the
        // round's count is read once it is done.
        if (seek.done === seek.total)
          this.later(async () => {
            const messages =
              (await this.options.store.poolSize(this.options.runId, seek.round)) -
              (seek.round > 1 ? await this.options.store.poolSize(this.options.runId, seek.round - 1) : 0);
            if (messages === seek.messages) return undefined;
            seek.messages = messages;
            return { ...seek };
          });
      },
    };

  /**
   * The run's state so far as events: the latest event of each key (`progressEventKey`: the status,
   * each round's seeking counts, each synchronization and KAR step, the end), in the order of their
   * latest emission, `info` events left out.
   */
  current(): RunProgressEvent[] {
    return [...this.latest.values()].map((event) => ({ ...event }));
  }

  /**
   * The execution ended: `status` (finished, aborted or failed: `stoppedPhase`) and `end`, after every event before them.
   * @param end the run's status and answer (SUCCEEDED) or error.
   */
  end(end: Omit<RunEndEvent, 'type'>): void {
    this.setStatus({ phase: end.status === 'RUNNING' ? 'finished' : stoppedPhase(end.status), status: end.status });
    this.push({ type: 'end', ...end });
  }

  /** Resolves once every event so far was emitted (the reads they wait for done or failed). */
  flush(): Promise<void> {
    return this.queue;
  }

  private setStatus(change: { phase: RunPhase; round?: number; k?: number; status?: RunStatusEvent['status'] }): void {
    const { round: _round, k: _k, ...rest } = this.status;
    const status = { ...rest, ...change };
    this.status = status;
    // The corpus's size as known when the event is emitted (the run record's tokens are read after Prepare).
    this.queue = this.queue.then(() => this.send({ ...status, chunks: this.status.chunks, tokens: this.status.tokens }));
  }

  private prepared(state: WorkflowState): void {
    this.status = { ...this.status, chunks: state.chunks };
    this.later(async () => {
      const record = JSON.parse(await this.options.blobs.getText(runRecordKey(this.options.runId))) as { tokens?: unknown };
      if (typeof record.tokens === 'number') this.status = { ...this.status, tokens: record.tokens };
      return undefined;
    });
  }

  /** A batch-seeking task (seekMode 'batch'): one line when a round's records go out and when they are read. */
  private batchSought(event: SeekBatchEvent, outcome: SeekBatchOutcome): void {
    const said = `${event.round}:${event.seekBatch === 'submit' ? 'submit' : outcome.status}`;
    if (this.batchLines.has(said) || outcome.status === 'collecting' || (event.seekBatch === 'check' && outcome.status === 'waiting')) return;
    this.batchLines.add(said);
    const left = `${outcome.remaining} chunk(s) left for on-demand seeking`;
    if (outcome.status === 'waiting') {
      this.push({
        type: 'info',
        runId: this.options.runId,
        message: `round ${event.round}: ${outcome.remaining} chunk(s) submitted as batch records; waiting for the batch job`,
      });
      return;
    }
    if (event.seekBatch !== 'submit') {
      this.push({ type: 'info', runId: this.options.runId, message: `round ${event.round}: batch records read; ${left}` });
      return;
    }
    // Submit ended the round's batch part at once: the round record says why (on demand, and the
    // reason; or the jobs of a resumed run had already ended and their records were read).
    this.later(async () => {
      const record = JSON.parse(await this.options.blobs.getText(batchRoundKey(this.options.runId, event.round))) as BatchRoundRecord;
      const why =
        record.mode === 'on-demand'
          ? `sought on demand: ${record.reason ?? 'no batch job'}`
          : `its ${record.jobs.length} batch job(s) had already ended (${[...new Set(record.jobs.map((j) => j.ended ?? 'not ended'))].join(', ')}); their records read`;
      return { type: 'info', runId: this.options.runId, message: `round ${event.round}: ${why}; ${left}` };
    });
  }

  private sought(event: SeekEvent, outcome: SeekOutcome): void {
    const state = this.rounds.get(event.round);
    if (!state) return;
    if (outcome.outcome === 'message') state.event.messages += 1;
    else if (outcome.outcome === 'already-done') state.skipped += 1;
  }

  private reasoned(event: ReasonEvent, state: WorkflowState): void {
    // No step is recorded when the pool is empty (the round refuses at once).
    if (state.seq <= event.state.seq) return;
    this.later(async () => {
      const step = (await this.options.store.getSteps(this.options.runId)).find((s) => s.seq === state.seq);
      if (!step) return undefined;
      const kar: RunKarEvent = {
        type: 'kar',
        seq: step.seq,
        round: step.round,
        k: step.k,
        messagesUsed: step.messagesUsed,
        evidenceTokens: step.evidenceTokens,
        outcome: step.outcome,
        ...(step.forced !== undefined && { forced: step.forced }),
        ...(step.followUp !== undefined && { followUp: step.followUp }),
      };
      return kar;
    });
  }

  private synchronized(before: WorkflowState, after: WorkflowState): void {
    this.later(async () => {
      const snapshot = JSON.parse(await this.options.blobs.getText(syncKey(this.options.runId, after.round))) as unknown;
      const sync: RunSyncEvent = { type: 'sync', round: before.round, ...(Array.isArray(snapshot) && { messages: snapshot.length }) };
      return sync;
    });
  }

  /** Emit a copy of `event` after every event before it. */
  private push(event: RunProgressEvent): void {
    const copy = { ...event };
    this.queue = this.queue.then(() => this.send(copy));
  }

  /** A consumer that throws loses that event, never the run nor the events after it. */
  private send(event: RunProgressEvent): void {
    if (event.type !== 'info') {
      const key = progressEventKey(event);
      this.latest.delete(key); // to the end: the order of the latest emissions
      this.latest.set(key, event);
    }
    try {
      this.options.emit(event);
    } catch {
      // ignored: see above
    }
  }

  /** Run `read` after every event before it, and emit what it returns (nothing when it fails: progress never fails a run). */
  private later(read: () => Promise<RunProgressEvent | undefined>): void {
    this.queue = this.queue.then(async () => {
      let event: RunProgressEvent | undefined;
      try {
        event = await read();
      } catch {
        return;
      }
      if (event) this.send({ ...event });
    });
  }
}

/** Is this event of the Synchronize function a GrowCoverage task's (`{growCoverage: state}`; coverage 'grow')? */
function isSeekBatch(event: unknown): event is SeekBatchEvent {
  return typeof event === 'object' && event !== null && 'seekBatch' in event;
}

function isGrowCoverage(event: unknown): event is { growCoverage: WorkflowState } {
  return typeof event === 'object' && event !== null && 'growCoverage' in event;
}
