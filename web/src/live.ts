/**
 * The live state of a run on the page and its reducer: the events of `GET /v1/runs/{runId}/events`
 * (api.ts `followEvents`: status, seek, sync, kar, end) applied one by one ({@link applyEvent}), and
 * a status read with `GET /v1/runs/{runId}` applied as a whole ({@link applyStatus}: when the
 * stream is lost, and for a run that has finished). Both are idempotent, as the stream's replays need.
 */
import type { StreamEvent } from './api';
import type { KarStep, RunStatus } from './types';

/** One seeking round's counts. */
export interface RoundState {
  round: number;
  done: number;
  failed: number;
  total: number;
  messages?: number;
}

/** What the run view shows while a run goes on. */
export interface LiveState {
  status?: string;
  phase?: string;
  question?: string | null;
  chunks?: number | null;
  tokens?: number | null;
  rounds: Record<number, RoundState>;
  syncs: number[];
  kar: Record<number, KarStep>;
  end?: { status: string; answer?: string; error?: { name: string; message: string } };
}

/** The live state before any event. */
export const EMPTY_LIVE: LiveState = { rounds: {}, syncs: [], kar: {} };

/** The state after one stream event (an unknown event type changes nothing). */
export function applyEvent(state: LiveState, event: StreamEvent): LiveState {
  const d = event.data;
  switch (event.type) {
    case 'status':
      return {
        ...state,
        status: d.status as string,
        phase: d.phase as string,
        question: d.question as string | null,
        chunks: d.chunks as number | null,
        tokens: d.tokens as number | null,
      };
    case 'seek':
      return { ...state, rounds: { ...state.rounds, [d.round as number]: d as unknown as RoundState } };
    case 'sync':
      return state.syncs.includes(d.round as number) ? state : { ...state, syncs: [...state.syncs, d.round as number] };
    case 'kar':
      return { ...state, kar: { ...state.kar, [d.seq as number]: d as unknown as KarStep } };
    case 'end':
      return { ...state, end: d as LiveState['end'], status: d.status as string };
    default:
      return state;
  }
}

/** The state after a status read (`GET /v1/runs/{runId}`): its rounds, KAR steps and syncs merged in. */
export function applyStatus(state: LiveState, status: RunStatus): LiveState {
  const rounds = { ...state.rounds };
  for (const r of status.progress.rounds) {
    const previous = rounds[r.round];
    const failed = status.result?.chunkFailures.filter((f) => f.round === r.round).length ?? previous?.failed ?? 0;
    rounds[r.round] = { round: r.round, done: Math.max(r.sought, previous?.done ?? 0), failed, total: r.total, messages: previous?.messages };
  }
  const kar = { ...state.kar };
  for (const step of status.progress.karSteps) kar[step.seq ?? 0] = step;
  const syncs = status.progress.rounds.filter((r) => r.round > 1).map((r) => r.round - 1);
  return {
    ...state,
    status: status.status,
    phase: status.progress.phase,
    question: status.question ?? state.question,
    chunks: status.progress.chunks,
    tokens: status.progress.tokens,
    rounds,
    syncs: [...new Set([...state.syncs, ...syncs])],
    kar,
  };
}
