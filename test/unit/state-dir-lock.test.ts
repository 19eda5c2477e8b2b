/**
 * The one state-directory lock (local/engine/state-dir-lock.ts): one holder at a time, the holder
 * named in the refusal, a lock of a process that is gone (or a garbled file) taken over.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StateDirLock, lockFile } from '../../local/engine/state-dir-lock';
import { ConfigurationError } from '../../shared/errors';

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'extagents-lock-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('StateDirLock', () => {
  it('refuses a second holder, naming the first, until the first releases it', async () => {
    const first = await StateDirLock.acquire(dir, 'serve');
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toEqual({ pid: process.pid, command: 'serve' });

    const second = StateDirLock.acquire(dir, 'ask');
    await expect(second).rejects.toThrow(ConfigurationError);
    await expect(StateDirLock.acquire(dir, 'ask')).rejects.toThrow(
      new RegExp(`in use by another extagents process \\(process ${process.pid}, extagents serve\\)`),
    );

    await first.release();
    await first.release(); // idempotent
    const third = await StateDirLock.acquire(dir, 'ask');
    await third.release();
  });

  it('takes over the lock of a process that is gone, and a garbled lock file', async () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
    writeFileSync(lockFile(dir), JSON.stringify({ pid: gone, command: 'serve' }));
    const taken = await StateDirLock.acquire(dir, 'ask');
    expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toMatchObject({ pid: process.pid, command: 'ask' });
    await taken.release();

    writeFileSync(lockFile(dir), 'not json');
    const again = await StateDirLock.acquire(dir, 'runs rm');
    await again.release();
  });
});
