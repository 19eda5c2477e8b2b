/**
 * What the crash-point sweeps share (test/integration/crash-sweep.test.ts, crash-sweep-reseek.test.ts):
 * one run of test/support/crash-run.ts in a child process, its result, what must not change across a
 * kill and a resume, and the event log.
 */
import { spawn } from 'node:child_process';
import pLimit from 'p-limit';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RunResult } from '../../shared/types';

const REPO = path.resolve(__dirname, '..', '..');

export interface ChildRun {
  signal: NodeJS.Signals | null;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run test/support/crash-run.ts (run id `sweep`), killed at event `killAt` (0: never). */
export function runChild(corpus: string, stateDir: string, killAt: number, log: string, mode = 'plain'): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['-r', 'tsx/cjs', path.join(REPO, 'test/support/crash-run.ts'), corpus, stateDir, 'sweep', String(killAt), log, mode],
      {
        cwd: REPO,
        env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The event count and result of a run that finished. */
export function finished(run: ChildRun): { events: number; result: RunResult } {
  if (run.code !== 0) throw new Error(`the run failed (exit ${run.code}, signal ${run.signal}): ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() as string) as { events: number; result: RunResult };
}

/**
 * What must not change across a kill and a resume: the answer and its evidence, and the usage of
 * both agents (a call counts once its result is recorded: a seek or a KAR step in flight at the
 * kill is made again and counted once).
 */
export function comparable(result: RunResult): unknown {
  const { answer, answerable, citations, trace, rounds, chunks, poolSize, chunkFailures, skipped } = result;
  const { seeker, reasoner } = result.usage;
  return { answer, answerable, citations, trace, rounds, chunks, poolSize, chunkFailures, skipped, usage: { seeker, reasoner } };
}

/** The log's events, in order: `{ pid, label }`. */
export function events(log: string): Array<{ pid: string; label: string }> {
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [pid, , ...label] = line.split(' ');
      return { pid, label: label.join(' ') };
    });
}

/** One kill point of a sweep: the killed child, the resumed run's result, and the log both wrote. */
export interface SweepOutcome {
  point: number;
  killed: ChildRun;
  resumed: { events: number; result: RunResult };
  log: string;
}

/**
 * Kill a run at each point and resume it in the same state directory (`<dir>/<prefix>state-<point>`,
 * log `<dir>/<prefix>kill-<point>.log`), two points at a time (2 cores).
 * @throws when a resumed run fails (see {@link finished}).
 */
export async function killAndResume(corpus: string, dir: string, points: number[], mode = 'plain', prefix = ''): Promise<SweepOutcome[]> {
  const limit = pLimit(2);
  return Promise.all(
    points.map((point) =>
      limit(async () => {
        const stateDir = path.join(dir, `${prefix}state-${point}`);
        const log = path.join(dir, `${prefix}kill-${point}.log`);
        const killed = await runChild(corpus, stateDir, point, log, mode);
        const resumed = finished(await runChild(corpus, stateDir, 0, log, mode));
        return { point, killed, resumed, log };
      }),
    ),
  );
}

/** Seeking calls of a log sent after their chunk was recorded as sought in that round (a resume must make none). */
export function seeksAfterRecorded(log: string): number {
  const seen = new Set<string>();
  let duplicates = 0;
  for (const { label } of events(log)) {
    const sought = /^sought (r\d+ c\d+)( with message)?$/.exec(label);
    if (sought) seen.add(sought[1]);
    const call = /^call seek (r\d+ c\d+)$/.exec(label);
    if (call && seen.has(call[1])) duplicates += 1;
  }
  return duplicates;
}
