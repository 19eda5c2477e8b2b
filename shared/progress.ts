/**
 * The progress of a question-answering run: ONE event vocabulary for every place that reports it —
 * the CLI's progress lines and bars (local/cli/progress.ts), the library's `onProgress`
 * (local/library.ts `ask`) and the server-sent events of `serve` (`GET /v1/runs/{runId}/events`,
 * local/services/run-events.ts; docs/API.md, "Live events"). The local engine makes them from the
 * workflow itself (local/engine/run-progress.ts: the Lambda tasks as they start and end, the
 * Distributed Map's items); `serve` also rebuilds them from the stored run (run table and bucket) for
 * a run it did not start or that has ended.
 *
 * Each event is one JSON object; `type` is its kind (the SSE `event:` name). Every event but `info`
 * carries the whole state of what it names (a round's counts, one KAR step by `seq`, the run's
 * status), so a consumer that sees one twice, or late, applies it as it comes.
 *
 * Order, for one run (docs/ARCHITECTURE.md, "Workflow"): `status` (preparing) → per round r:
 * `status` (seeking, r), `seek` (r) as chunks end, then for each KAR step `status` (reasoning, r, k)
 * and `kar`; a refused round with a next one: `status` (synchronizing, r), `sync` (r) → round r+1; after
 * the last round, with `bestEffort`: `status` (answering) and a `kar` with `forced: true`; then
 * `status` (finalizing) and `end`. Pipelined rounds (`pipelineRounds`) interleave round r+1's `sync`
 * and `seek` (with `speculative: true`) with round r's KAR steps.
 */
import type { ExecutionStatus } from './executions';
import type { KarStep } from './types';

/**
 * The phases of a run, in workflow order: Prepare (`preparing`), the seeking Map (`seeking`),
 * Synchronize (`synchronizing`), a KAR step (`reasoning`), AnswerBestEffort (`answering`), Finalize
 * (`finalizing`); once the execution ended, how: `finished` (SUCCEEDED), `aborted` (ABORTED: cancelled,
 * or its process stopped) or `failed` (FAILED, TIMED_OUT).
 */
export const RUN_PHASES = ['preparing', 'seeking', 'synchronizing', 'reasoning', 'answering', 'finalizing', 'finished', 'aborted', 'failed'] as const;

/**
 * The phase of a run whose execution ended, by its status: `finished` (SUCCEEDED), `aborted`
 * (ABORTED: cancelled, or its process stopped) or `failed` (FAILED, TIMED_OUT).
 */
export function stoppedPhase(status: Exclude<ExecutionStatus, 'RUNNING'>): RunPhase {
  return status === 'SUCCEEDED' ? 'finished' : status === 'ABORTED' ? 'aborted' : 'failed';
}

/** One of {@link RUN_PHASES}. */
export type RunPhase = (typeof RUN_PHASES)[number];

/**
 * What the run is doing now. `round` (1-based): the round sought, synchronized (into `round + 1`) or
 * reasoned over; `k`: the k a KAR step asks for (`reasoning`, `answering`; the step may take fewer
 * when the pool is smaller). `chunks` / `tokens` (tokens of all chunks): null until Prepare is done.
 */
export interface RunStatusEvent {
  type: 'status';
  runId: string;
  /** The execution's status (Step Functions' words): `RUNNING` until the run ends. */
  status: ExecutionStatus;
  phase: RunPhase;
  question: string | null;
  chunks: number | null;
  tokens: number | null;
  round?: number;
  k?: number;
}

/**
 * The seeking agents of one round: `done` of `total` chunks ended (sought, or failed for good:
 * `failed` of them), `messages` the messages found in that round so far. `etaMs`: the time left at
 * the pace of the chunks sought so far in this process, milliseconds ({@link estimateRemainingMs});
 * null until one chunk was sought here (or when it is not known: a run `serve` did not start), 0 once
 * the round is done. `speculative`: round `round` sought while KAR of round `round - 1` runs
 * (`pipelineRounds`).
 */
export interface RunSeekEvent {
  type: 'seek';
  round: number;
  done: number;
  failed: number;
  total: number;
  messages: number;
  etaMs: number | null;
  speculative?: boolean;
}

/**
 * Global knowledge synchronization: the pool of rounds 1..`round` was synchronized and round
 * `round + 1` begins; `messages`: the messages of the snapshot each seeking agent of that round reads
 * (absent when not known: a run `serve` did not start).
 */
export interface RunSyncEvent {
  type: 'sync';
  round: number;
  messages?: number;
}

/**
 * One knowledge-accumulating reasoning step, once it ended (`seq` numbers the run's steps from 1):
 * its round, the k asked, the messages it read (`messagesUsed`) and their tokens, its outcome;
 * `forced`: the best-effort answer after the last round.
 */
export interface RunKarEvent extends KarStep {
  type: 'kar';
  seq: number;
}

/**
 * The end of the run, last: its status, the answer (`SUCCEEDED`), or the error that ended it
 * (`FAILED`, `ABORTED`, `TIMED_OUT`; `name` is the error's class or Step Functions name).
 */
export interface RunEndEvent {
  type: 'end';
  status: ExecutionStatus;
  answer?: string;
  answerable?: boolean;
  error?: { name: string; message: string };
}

/**
 * A line of text for a person (the run's id and model at its start, what a resumed run reuses); the
 * library and the CLI only (the server-sent events carry state, not prose). `runId`: the run's id
 * (the first info event names it: a generated id is known from then on).
 */
export interface RunInfoEvent {
  type: 'info';
  message: string;
  runId?: string;
}

/** Every progress event of a run (see the file comment for their order). */
export type RunProgressEvent = RunStatusEvent | RunSeekEvent | RunSyncEvent | RunKarEvent | RunEndEvent | RunInfoEvent;

/** The `type` of every {@link RunProgressEvent} the server-sent events carry (all but `info`), in workflow order. */
export const RUN_EVENT_TYPES = ['status', 'seek', 'sync', 'kar', 'end'] as const;

/** Members every event of a type has (besides `type`): what docs/openapi.yaml requires of an SSE's `data`. */
export const RUN_EVENT_REQUIRED: Readonly<Record<(typeof RUN_EVENT_TYPES)[number], readonly string[]>> = {
  status: ['runId', 'status', 'phase', 'question', 'chunks', 'tokens'],
  seek: ['round', 'done', 'failed', 'total', 'messages', 'etaMs'],
  sync: ['round'],
  kar: ['seq', 'round', 'k', 'messagesUsed', 'evidenceTokens', 'outcome'],
  end: ['status'],
};

/**
 * What an event names, so that a later event with the same key replaces it (every event but `info`
 * carries the whole state of what it names): `status`, `seek:<round>`, `sync:<round>`, `kar:<seq>`,
 * `end`; an `info` event is its own (its message).
 */
export function progressEventKey(event: RunProgressEvent): string {
  switch (event.type) {
    case 'seek':
    case 'sync':
      return `${event.type}:${event.round}`;
    case 'kar':
      return `kar:${event.seq}`;
    case 'info':
      return `info:${event.message}`;
    default:
      return event.type;
  }
}

/**
 * Milliseconds left for `total - done` items at the pace of the `measured` items that took
 * `elapsedMs` (items that did real work: a resumed run's chunks skipped at once would make the pace
 * look far faster than it is, so the caller leaves them out of `measured`).
 * @returns 0 when nothing is left, null when no item was measured yet; else rounded to whole ms.
 */
export function estimateRemainingMs(progress: { elapsedMs: number; measured: number; done: number; total: number }): number | null {
  const left = Math.max(0, progress.total - progress.done);
  if (left === 0) return 0;
  if (progress.measured <= 0 || !(progress.elapsedMs >= 0)) return null;
  return Math.round((progress.elapsedMs / progress.measured) * left);
}
