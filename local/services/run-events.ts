/**
 * Live events of a run for `GET /v1/runs/{runId}/events` (server-sent events, local server only;
 * the deployed API keeps polling `GET /v1/runs/{runId}`). The events are those of shared/progress.ts,
 * the one vocabulary of the CLI's progress and the library's `onProgress`: the SSE `event:` is an
 * event's `type`, `data:` its other members. For a run this server runs, they come from the run's
 * progress tracker (local/engine/run-progress.ts: the workflow's tasks and Distributed Map items as
 * they happen); for any other run (a `job`'s, an `ask`'s, one of an earlier server process) from reads
 * of the run table and bucket (`getRun`: rounds sought, messages per round, KAR steps, the status and
 * result), polled every {@link POLL_MS} while someone listens.
 *
 * Each run has one event log in memory, numbered from 1; an event's SSE id is `<epoch>.<run>.<n>`,
 * where the epoch names this server process and `run` the run (12 hex digits of SHA-256 of its id).
 * A client that reconnects with `Last-Event-ID` of this process and this run, `n` within the log,
 * gets the events after `n` only; any other id (the server restarted, another run's id, an `n` this
 * log never had, a malformed one) replays the log from the start, which a client applies
 * idempotently (every event carries the full state of what it names: a round's counts, one KAR step
 * by its `seq`, the run's status). A finished run's stream always ends with its `end` event: an id
 * at or past it gets `end` again.
 *
 * Event types (the `event:` field; `data:` is one JSON object; shared/progress.ts has every member):
 * - `status`: `{runId, status, phase, question, chunks, tokens, round?, k?}` on every change of
 *   status or phase (preparing, seeking, synchronizing, reasoning, answering, finalizing, finished);
 * - `seek`: `{round, done, failed, total, messages, etaMs, speculative?}` chunks sought (done), failed
 *   permanently, of `total`, messages found in that round, the time left (ms; null when unknown);
 * - `sync`: `{round, messages?}` the pool of rounds 1..round was synchronized and round+1 starts;
 * - `kar`: one KAR step `{seq, round, k, messagesUsed, evidenceTokens, outcome, forced?}`;
 * - `end`: `{status, answer?, answerable?, error?}`, last; the stream closes after it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ApiCore } from '../../shared/api/core';
import type { RunStatus } from '../../shared/api/schemas';
import type { MessageStore } from '../../shared/ports';
import { progressEventKey, type RunProgressEvent } from '../../shared/progress';
import type { RunProgressTracker } from '../engine/run-progress';

/** Pause between two reads of a run's state while a stream is open, ms. */
export const POLL_MS = 250;
/** Runs whose event logs are kept (the oldest finished ones are dropped first). */
const MAX_LOGS = 200;

/** One server-sent event of a run. */
export interface RunEvent {
  /** `<epoch>.<run tag>.<n>`, n from 1 (see {@link runEventTag}). */
  id: string;
  /** The progress event's `type` (shared/progress.ts). */
  type: Exclude<RunProgressEvent['type'], 'info'>;
  /** The progress event's other members. */
  data: Record<string, unknown>;
}

interface RunLog {
  events: RunEvent[];
  /** Last data sent per key (`status`, `seek:<r>`, `kar:<seq>`), as JSON. */
  sent: Map<string, string>;
  ended: boolean;
  listeners: Set<() => void>;
  polling: boolean;
  /** A read is wanted as soon as the current one ends. */
  dirty: boolean;
}

/** What the hub reads. */
export interface RunEventSources {
  /** The API core's `getRun` (NotFoundError for an unknown run). */
  getRun: ApiCore['getRun'];
  store: Pick<MessageStore, 'poolSize'>;
}

/**
 * The event logs of the runs of one server, fed by the progress trackers of the runs it runs
 * ({@link track}) and by reads of the run's state while a client listens.
 */
export class RunEventHub {
  /** This process's epoch in event ids (12 hex digits). */
  readonly epoch = randomBytes(6).toString('hex');
  /** The progress trackers of the runs this server ran, kept after their end (as many as the logs). */
  private readonly trackers = new Map<string, RunProgressTracker>();
  private readonly logs = new Map<string, RunLog>();
  private closed = false;

  constructor(private readonly sources: RunEventSources) {}

  /** The run `runId` starts in this server: its events come from `tracker` (which calls {@link changed}). */
  track(runId: string, tracker: RunProgressTracker): void {
    this.trackers.delete(runId);
    this.trackers.set(runId, tracker);
    while (this.trackers.size > MAX_LOGS) this.trackers.delete(this.trackers.keys().next().value as string);
    this.poke(runId);
  }

  /** A tracker emitted an event of `runId` (read it soon). */
  changed(runId: string): void {
    this.poke(runId);
  }

  /** The execution of `runId` ended (its status is read from now on; its tracker's last counts are kept). */
  executionEnded(runId: string): void {
    this.poke(runId);
  }

  /**
   * Follow a run: `onEvent` gets every event after `lastEventId` (all of them when it is absent, of
   * another epoch or run, or names no event of the log), then each new one; after `end`, `onEnd` is
   * called once. A finished run's `end` event is always sent, even when `lastEventId` names it.
   * @returns a function that stops following.
   * @throws NotFoundError (from `getRun`) when the run does not exist.
   */
  async subscribe(runId: string, lastEventId: string | undefined, onEvent: (event: RunEvent) => void, onEnd: () => void): Promise<() => void> {
    const log = this.logOf(runId);
    if (log.events.length === 0) await this.read(runId, log); // throws NotFoundError for an unknown run
    let next = 0;
    const match = /^([0-9a-f]{12})\.([0-9a-f]{12})\.(\d{1,9})$/.exec(lastEventId ?? '');
    if (match && match[1] === this.epoch && match[2] === runEventTag(runId)) {
      const n = Number(match[3]);
      // An n this log never had is impossible: replay from the start.
      if (n >= 1 && n <= log.events.length) next = n;
    }
    // A finished run's stream ends with `end`, also for a client that had it already (else a
    // browser's EventSource would reconnect for ever to an empty 200).
    if (log.ended && next >= log.events.length) next = log.events.length - 1;
    let stopped = false;
    const flush = (): void => {
      if (stopped) return;
      while (next < log.events.length) onEvent(log.events[next++]);
      if (log.ended) {
        stop();
        onEnd();
      }
    };
    const stop = (): void => {
      stopped = true;
      log.listeners.delete(flush);
    };
    log.listeners.add(flush);
    flush();
    if (!stopped) this.startPolling(runId, log);
    return stop;
  }

  /** Stop every poll loop (the server stops). */
  close(): void {
    this.closed = true;
  }

  private logOf(runId: string): RunLog {
    let log = this.logs.get(runId);
    if (!log) {
      log = { events: [], sent: new Map(), ended: false, listeners: new Set(), polling: false, dirty: false };
      this.logs.set(runId, log);
      if (this.logs.size > MAX_LOGS) {
        const victim =
          [...this.logs.entries()].find(([, l]) => l.ended && l.listeners.size === 0) ?? [...this.logs.entries()].find(([, l]) => l.listeners.size === 0);
        if (victim) this.logs.delete(victim[0]);
      }
    }
    return log;
  }

  private poke(runId: string): void {
    const log = this.logs.get(runId);
    if (log && log.listeners.size > 0) log.dirty = true;
  }

  private startPolling(runId: string, log: RunLog): void {
    if (log.polling) return;
    log.polling = true;
    const loop = async (): Promise<void> => {
      while (!this.closed && !log.ended && log.listeners.size > 0) {
        if (!log.dirty) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        log.dirty = false;
        try {
          await this.read(runId, log);
        } catch {
          // a transient read failure: the next poll tries again
        }
        for (const listener of log.listeners) listener();
      }
      log.polling = false;
    };
    void loop();
  }

  /** Read the run's state and append the events of what changed. */
  private async read(runId: string, log: RunLog): Promise<void> {
    const status = await this.sources.getRun(runId, { principal: 'local', baseUrl: '' });
    const append = (event: RunProgressEvent, key: string): void => {
      if (event.type === 'info') return;
      const { type, ...data } = event;
      const json = JSON.stringify(data);
      if (log.sent.get(key) === json) return;
      log.sent.set(key, json);
      log.events.push({ id: `${this.epoch}.${runEventTag(runId)}.${log.events.length + 1}`, type, data });
    };
    const running = status.status === 'RUNNING';
    const tracked = this.trackers.get(runId)?.current();
    const { progress } = status;
    const stored: RunProgressEvent = {
      type: 'status',
      runId,
      status: status.status,
      phase: progress.phase,
      question: status.question ?? null,
      chunks: progress.chunks,
      tokens: progress.tokens,
    };
    if (running && tracked) {
      // The tracker's events in the order they last changed, the status first in a new log.
      const first = log.events.length === 0 ? tracked.find((e) => e.type === 'status') : undefined;
      if (first) append(first, 'status');
      for (const event of tracked) if (event.type !== 'end') append(event, progressEventKey(event));
    } else {
      // While running the status leads; once finished it follows the last counts and steps, before `end`.
      if (running) append(stored, 'status');
      for (const event of tracked ?? (await this.storedEvents(runId, status)))
        if (event.type !== 'status' && event.type !== 'end') append(event, progressEventKey(event));
    }
    if (!running) {
      append(stored, 'status');
      const result = status.result;
      append(
        {
          type: 'end',
          status: status.status,
          ...(result && { answer: result.answer, answerable: result.answerable }),
          ...(status.error && { error: status.error }),
        },
        'end',
      );
      log.ended = true;
    }
  }

  /** The progress events of a run this server does not track, from its stored state (`getRun`, the pool per round). */
  private async storedEvents(runId: string, status: RunStatus): Promise<RunProgressEvent[]> {
    const events: RunProgressEvent[] = [];
    let before = 0;
    for (const round of status.progress.rounds) {
      const pool = await this.sources.store.poolSize(runId, round.round);
      if (round.round > 1) events.push({ type: 'sync', round: round.round - 1 });
      const failed = failedIn(status, round.round);
      // `done`: chunks that ended, sought or failed for good.
      const done = Math.min(round.total, round.sought + failed);
      events.push({ type: 'seek', round: round.round, done, failed, total: round.total, messages: pool - before, etaMs: done >= round.total ? 0 : null });
      before = pool;
    }
    for (const step of status.progress.karSteps) events.push({ type: 'kar', ...step });
    return events;
  }
}

/** The run's part of its event ids: 12 hex digits of SHA-256 of the run id. */
export function runEventTag(runId: string): string {
  return createHash('sha256').update(`events\n${runId}`).digest('hex').slice(0, 12);
}

/** Chunks of a round that failed permanently, from a finished run's result (0 while running). */
function failedIn(status: RunStatus, round: number): number {
  return status.result?.chunkFailures.filter((f) => f.round === round).length ?? 0;
}

/** One event in the SSE wire format (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export function formatSse(event: RunEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
