/**
 * Live events of a run for `GET /v1/runs/{runId}/events` (server-sent events, local server only;
 * the deployed API keeps polling `GET /v1/runs/{runId}`). Events come from the workflow itself: the
 * local engine's Distributed Map callbacks (chunks done and failed per round, as they happen) and
 * reads of the run table and bucket (messages per round, KAR steps, the status and result), polled
 * every {@link POLL_MS} while someone listens.
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
 * Event types (the `event:` field; `data:` is one JSON object):
 * - `status`: `{runId, status, phase, question, chunks, tokens}` on every change of status or phase;
 * - `seek`: `{round, done, failed, total, messages}` chunks sought (done), failed permanently, of
 *   `total`, and messages found in that round;
 * - `sync`: `{round}` the pool of rounds 1..round was synchronized and round+1 starts;
 * - `kar`: one KAR step `{seq, round, k, messagesUsed, evidenceTokens, outcome, forced?}`;
 * - `end`: `{status, answer?, answerable?, error?}`, last; the stream closes after it.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ApiCore } from '../../shared/api/core';
import type { RunStatus } from '../../shared/api/schemas';
import type { MessageStore } from '../../shared/ports';

/** Pause between two reads of a run's state while a stream is open, ms. */
export const POLL_MS = 250;
/** Runs whose event logs are kept (the oldest finished ones are dropped first). */
const MAX_LOGS = 200;

/** One server-sent event of a run. */
export interface RunEvent {
  /** `<epoch>.<run tag>.<n>`, n from 1 (see {@link runEventTag}). */
  id: string;
  type: 'status' | 'seek' | 'sync' | 'kar' | 'end';
  data: Record<string, unknown>;
}

/** Live Distributed Map counters of one running run, from the engine's callbacks. */
interface LiveRound {
  round: number;
  done: number;
  failed: number;
  total: number;
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
 * The event logs of the runs of one server, fed by the engine's callbacks ({@link mapStarted},
 * {@link itemDone}) and by reads of the run's state while a client listens.
 */
export class RunEventHub {
  /** This process's epoch in event ids (12 hex digits). */
  readonly epoch = randomBytes(6).toString('hex');
  private readonly live = new Map<string, LiveRound>();
  private readonly logs = new Map<string, RunLog>();
  private closed = false;

  constructor(private readonly sources: RunEventSources) {}

  /** Engine callback: a Distributed Map run of `runId` started (one per seeking round). */
  mapStarted(runId: string, totalItems: number): void {
    const previous = this.live.get(runId);
    this.live.set(runId, { round: (previous?.round ?? 0) + 1, done: 0, failed: 0, total: totalItems });
    this.poke(runId);
  }

  /** Engine callback: one chunk of the current round ended (`ok` false: failed after its retries). */
  itemDone(runId: string, ok: boolean): void {
    const live = this.live.get(runId);
    if (!live) return;
    live.done += 1;
    if (!ok) live.failed += 1;
    this.poke(runId);
  }

  /** Engine callback: the execution of `runId` ended (its counters are no longer needed once read). */
  executionEnded(runId: string): void {
    // From now on the stored result has the final counts (failures included).
    this.live.delete(runId);
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
        const victim = [...this.logs.entries()].find(([, l]) => l.ended && l.listeners.size === 0) ?? [...this.logs.entries()].find(([, l]) => l.listeners.size === 0);
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
    const append = (type: RunEvent['type'], key: string, data: Record<string, unknown>): void => {
      const json = JSON.stringify(data);
      if (log.sent.get(key) === json) return;
      log.sent.set(key, json);
      log.events.push({ id: `${this.epoch}.${runEventTag(runId)}.${log.events.length + 1}`, type, data });
    };
    const { progress } = status;
    const statusData = { runId, status: status.status, phase: progress.phase, question: status.question ?? null, chunks: progress.chunks, tokens: progress.tokens };
    // While running the status leads; once finished it follows the last counts and steps, before `end`.
    if (status.status === 'RUNNING') append('status', 'status', statusData);
    const live = this.live.get(runId);
    let before = 0;
    const rounds = [...progress.rounds];
    // A round whose Map has started before any of its chunks was recorded.
    if (live && status.status === 'RUNNING' && live.round > (rounds.at(-1)?.round ?? 0)) rounds.push({ round: live.round, sought: 0, total: live.total });
    for (const round of rounds) {
      const pool = await this.sources.store.poolSize(runId, round.round);
      const isLive = live !== undefined && live.round === round.round;
      const failed = isLive ? live.failed : failedIn(status, round.round);
      const done = isLive ? Math.max(live.done, round.sought) : round.sought;
      if (round.round > 1) append('sync', `sync:${round.round - 1}`, { round: round.round - 1 });
      append('seek', `seek:${round.round}`, { round: round.round, done, failed, total: round.total, messages: pool - before });
      before = pool;
    }
    for (const step of progress.karSteps) append('kar', `kar:${step.seq}`, { ...step });
    if (status.status !== 'RUNNING') {
      append('status', 'status', statusData);
      const result = status.result;
      append('end', 'end', {
        status: status.status,
        ...(result && { answer: result.answer, answerable: result.answerable }),
        ...(status.error && { error: status.error }),
      });
      log.ended = true;
      this.live.delete(runId);
    }
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
