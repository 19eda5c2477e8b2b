/**
 * Telling a running `ask` from an interrupted one (local/engine/run-heartbeat.ts): a heartbeat is live
 * while it is fresh and, on this host, its process runs; and what `runs show` says of each
 * (local/cli/runs-command.ts `describeUnfinished`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeUnfinished } from '../../local/cli/runs-command';
import { isLive, STALE_MS, type RunHeartbeat } from '../../local/engine/run-heartbeat';
import type { StoredRun } from '../../local/engine/runs';

const now = new Date('2026-12-03T12:00:00Z');
const ago = (ms: number): string => new Date(now.getTime() - ms).toISOString();
/** The pid of a process that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid as number;

describe('isLive', () => {
  it('is true for a fresh heartbeat of a process that runs here, or of another host', () => {
    expect(isLive({ pid: process.pid, host: os.hostname(), heartbeatAt: ago(1000) }, now)).toBe(true);
    expect(isLive({ pid: 1, host: `not-${os.hostname()}`, heartbeatAt: ago(1000) }, now)).toBe(true);
  });

  it('is false once the process is gone (killed) or the heartbeat is stale (the pid may be another process now)', () => {
    expect(isLive({ pid: deadPid(), host: os.hostname(), heartbeatAt: ago(1000) }, now)).toBe(false);
    expect(isLive({ pid: process.pid, host: os.hostname(), heartbeatAt: ago(STALE_MS + 1) }, now)).toBe(false);
    expect(isLive({ pid: 1, host: `not-${os.hostname()}`, heartbeatAt: ago(STALE_MS + 1) }, now)).toBe(false);
    expect(isLive({ pid: process.pid, host: os.hostname(), heartbeatAt: 'garbled' }, now)).toBe(false);
  });
});

describe('runs show of a run without a result', () => {
  const heartbeat: RunHeartbeat = {
    pid: 4242,
    host: 'h',
    startedAt: '2026-12-03T11:50:00.000Z',
    heartbeatAt: ago(4000),
    status: { type: 'status', runId: 'r1', status: 'RUNNING', phase: 'seeking', question: 'q?', chunks: 40, tokens: 9000, round: 2 },
    seek: { type: 'seek', round: 2, done: 10, failed: 1, total: 40, messages: 3, etaMs: 185_000 },
  };
  const run = (extra: Partial<StoredRun>): StoredRun => ({ runId: 'r1', question: 'q?', chunks: 40, status: 'ABORTED', bytes: 1, ...extra });

  it('says running, in which process, since when and what it does', () => {
    expect(describeUnfinished(run({ status: 'RUNNING', live: { state: 'running', heartbeat } }), now)).toBe(
      'run r1: running in process 4242 since 2026-12-03 11:50:00 UTC: round 2 seeking agents: 10/40 chunks (3 messages, 1 failed, ETA 3m05s) (last heartbeat 4 s ago; 40 chunks; question: q?)',
    );
    const reasoning = { ...heartbeat, status: { ...heartbeat.status!, phase: 'reasoning' as const, k: 4 } };
    expect(describeUnfinished(run({ status: 'RUNNING', live: { state: 'running', heartbeat: reasoning } }), now)).toMatch(/: round 2: KAR step with k=4 /);
    // a served or job run (an execution record, no heartbeat)
    expect(describeUnfinished(run({ status: 'RUNNING' }), now)).toBe('run r1: running, no result yet (40 chunks; question: q?)');
  });

  it('says interrupted, when and where, and how to resume; else that it stopped', () => {
    expect(describeUnfinished(run({ live: { state: 'interrupted', heartbeat } }), now)).toBe(
      `run r1: interrupted: its process 4242 stopped after ${ago(4000).slice(0, 19).replace('T', ' ')} UTC, at round 2 seeking agents: 10/40 chunks (3 messages, 1 failed, ETA 3m05s); no result (40 chunks; question: q?); resume it with 'extagents ask ... --run-id r1'`,
    );
    expect(describeUnfinished(run({}), now)).toBe(
      "run r1: no result (it stopped before it ended; 40 chunks; question: q?); resume it with 'extagents ask ... --run-id r1'",
    );
    // why it stopped, from its execution record: cancelled through the API
    expect(describeUnfinished(run({ stopped: { error: 'RunCancelled', cause: 'cancelled through the API' } }), now)).toBe(
      "run r1: no result (it stopped before it ended: RunCancelled (cancelled through the API); 40 chunks; question: q?); resume it with 'extagents ask ... --run-id r1'",
    );
    // a run with a generated id kept nothing: no advice to resume it
    const lost = describeUnfinished(run({ live: { state: 'interrupted', heartbeat: { ...heartbeat, resumable: false } } }), now);
    expect(lost).toMatch(/; it kept no progress to resume \(started without --run-id\): ask the question again, with --run-id <id> to make a run resumable$/);
    expect(lost).not.toContain('resume it with');
  });
});

describe('startHeartbeat', () => {
  it('leaves the latest progress when the process exits before stop (Ctrl-C), not the last timed beat', () => {
    // Arrange: a child starts a heartbeat at 0 chunks, then reaches 7 of 9 and exits at once (as the CLI does on Ctrl-C)
    const dir = mkdtempSync(path.join(os.tmpdir(), 'extagents-heartbeat-'));
    const script = `
      const { startHeartbeat } = require('./local/engine/run-heartbeat');
      const { FsBlobStore } = require('./local/engine/fs-blob-store');
      let seek = { type: 'seek', round: 1, done: 0, failed: 0, total: 9, messages: 0, etaMs: null };
      startHeartbeat(new FsBlobStore(${JSON.stringify(dir)}), 'r1', () => ({ seek }), { resumable: true }).then(() => {
        seek = { ...seek, done: 7, messages: 2 };
        process.exit(130);
      });`;

    // Act
    const child = spawnSync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: path.join(__dirname, '..', '..'), encoding: 'utf8' });

    // Assert
    try {
      expect(child.status).toBe(130);
      const written = JSON.parse(readFileSync(path.join(dir, 'runs', 'r1', 'live.json'), 'utf8')) as RunHeartbeat;
      expect(written).toMatchObject({ pid: child.pid, resumable: true, seek: { done: 7, messages: 2, total: 9 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
