/**
 * Whether a local `ask` run is still going: `runs/<runId>/live.json` in the state directory's bucket,
 * written when the run starts, rewritten at each change of phase and as each seeking agent ends (so a
 * run killed at any point leaves the counts it had, not those of a beat seconds before: writes
 * coalesce, one at a time) and every {@link HEARTBEAT_MS} with the run's latest progress (its `status` and current `seek`
 * event, shared/progress.ts), and deleted when the run ends (answered,
 * refused, failed or aborted). A process killed at any point (SIGKILL, a crash, the machine
 * stopped) leaves the file behind, so a reader decides from its content: the run is `running` while
 * its process lives (same host, the pid answers signal 0) and its heartbeat is younger than
 * {@link STALE_MS} (a pid the system gave to another process meanwhile has no heartbeat), else
 * `interrupted`. `extagents runs ls | show` read it (local/engine/runs.ts).
 *
 * Runs of `serve` and `job` have their execution records instead (local/engine/executions.ts).
 */
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import { NotFoundError } from '../../shared/errors';
import { runPrefix } from '../../shared/pipeline/layout';
import type { BlobStore } from '../../shared/ports';
import type { RunSeekEvent, RunStatusEvent } from '../../shared/progress';
import type { FsBlobStore } from './fs-blob-store';

/** `runs/<runId>/live.json`: the heartbeat of a local run in progress ({@link RunHeartbeat}). */
export const runLiveKey = (runId: string): string => `${runPrefix(runId)}live.json`;

/** Pause between two heartbeats of a running run, ms. */
export const HEARTBEAT_MS = 10_000;
/**
 * Age after which a heartbeat no longer shows a live run, ms: many missed beats, so that a loaded
 * machine (or an event loop busy for a while) does not make a live run look interrupted.
 */
export const STALE_MS = 120_000;

/** What `runs/<runId>/live.json` holds. */
export interface RunHeartbeat {
  pid: number;
  /** `os.hostname()` of the process (a pid says nothing of another host's processes). */
  host: string;
  /** ISO-8601 time the run (this execution of it) started. */
  startedAt: string;
  /** ISO-8601 time of the latest heartbeat. */
  heartbeatAt: string;
  /** The run's latest status event, when it had one. */
  status?: RunStatusEvent;
  /** The latest round's seeking counts, when seeking started. */
  seek?: RunSeekEvent;
  /**
   * Whether the run keeps its progress for a resume (its DynamoDB data on disk: an `ask` with
   * `--run-id`); false for a run with a generated id, which an interruption loses (`runs show` says so).
   * Unset in heartbeats written before this field: taken as resumable.
   */
  resumable?: boolean;
}

/** The liveness of a run that has a heartbeat file. */
export interface RunLiveness {
  state: 'running' | 'interrupted';
  heartbeat: RunHeartbeat;
}

/** The last beats of the heartbeats still going, written when the process exits (one listener for all: many runs may share a process). */
const exitBeats = new Set<() => void>();
let exitListening = false;
function onExit(lastBeat: () => void): void {
  exitBeats.add(lastBeat);
  if (exitListening) return;
  exitListening = true;
  process.on('exit', () => {
    for (const write of exitBeats) write();
  });
}

/**
 * Write the run's heartbeat now, every {@link HEARTBEAT_MS} and at each `beat()` (the caller beats
 * when the run's phase changes) and, synchronously, when the process exits before `stop` (an
 * interrupt: its latest progress, not the last timed beat's), until `stop` (timers unref'd: they never keep a process alive). A failed write is retried at the next beat (progress never fails a run).
 * @param blobs the state directory's bucket (a directory: the file is deleted there).
 * @param progress the latest progress to record, read at each beat.
 * @param options `resumable`: whether the run keeps its progress for a resume (recorded for `runs show`).
 * @returns `beat`: write now (after any write in flight); `stop`: no more beats, and the file
 *   deleted (after any write in flight).
 */
export async function startHeartbeat(
  blobs: FsBlobStore,
  runId: string,
  progress: () => { status?: RunStatusEvent; seek?: RunSeekEvent },
  options: { resumable?: boolean } = {},
  now: () => Date = () => new Date(),
): Promise<{ beat: () => void; stop: () => Promise<void> }> {
  const startedAt = now().toISOString();
  let writing: Promise<void> = Promise.resolve();
  let stopped = false;
  const current = (): RunHeartbeat => ({
    pid: process.pid,
    host: os.hostname(),
    startedAt,
    heartbeatAt: now().toISOString(),
    ...progress(),
    ...(options.resumable !== undefined && { resumable: options.resumable }),
  });
  // Beats coalesce: while one write waits its turn, another beat adds nothing (that write reads the
  // progress when it runs), so a beat per seeking agent costs at most one write at a time.
  let queued = false;
  const beat = (): Promise<void> => {
    if (queued) return writing;
    queued = true;
    return (writing = writing.then(async () => {
      queued = false;
      if (stopped) return;
      await blobs.put(runLiveKey(runId), JSON.stringify(current()), 'application/json').catch(() => undefined);
    }));
  };
  // A process that exits while the run goes (Ctrl-C: the CLI exits at once) leaves its latest
  // progress, not that of the last timed beat: one synchronous write as it exits (no async work runs
  // then); `stop` takes it out of the exit set, so a stopped run writes nothing more.
  const lastBeat = (): void => {
    try {
      writeFileSync(blobs.pathOf(runLiveKey(runId)), JSON.stringify(current()));
    } catch {
      // Progress never fails a run; the file keeps the previous beat.
    }
  };
  await beat();
  onExit(lastBeat);
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  return {
    beat: () => void beat(),
    stop: async () => {
      clearInterval(timer);
      exitBeats.delete(lastBeat);
      stopped = true;
      await writing;
      await rm(blobs.pathOf(runLiveKey(runId)), { force: true }).catch(() => undefined);
    },
  };
}

/**
 * Read a run's heartbeat file and judge it (see the file comment).
 * @returns undefined when the run has none (it ended, or never started here); a garbled file counts
 *   as none.
 */
export async function runLiveness(blobs: Pick<BlobStore, 'getText'>, runId: string, now: Date = new Date()): Promise<RunLiveness | undefined> {
  let heartbeat: RunHeartbeat;
  try {
    heartbeat = JSON.parse(await blobs.getText(runLiveKey(runId))) as RunHeartbeat;
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof SyntaxError) return undefined;
    throw error;
  }
  // A file of another shape (an array, a missing time or pid) counts as none, as garbled JSON does.
  if (typeof heartbeat !== 'object' || heartbeat === null || Array.isArray(heartbeat)) return undefined;
  if (typeof heartbeat.heartbeatAt !== 'string' || typeof heartbeat.startedAt !== 'string' || !Number.isInteger(heartbeat.pid)) return undefined;
  return { state: isLive(heartbeat, now) ? 'running' : 'interrupted', heartbeat };
}

/** A heartbeat of a live process: fresh, and (on this host) its pid runs. */
export function isLive(heartbeat: Pick<RunHeartbeat, 'pid' | 'host' | 'heartbeatAt'>, now: Date): boolean {
  const age = now.getTime() - Date.parse(heartbeat.heartbeatAt);
  if (!(age < STALE_MS)) return false;
  if (heartbeat.host !== os.hostname()) return true;
  return processRuns(heartbeat.pid);
}

/** Whether a process with this id runs (signal 0 checks without signalling; EPERM means it exists). */
function processRuns(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
