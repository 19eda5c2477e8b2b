/**
 * The one state-directory lock of every local command: `<stateDir>/extagents.lock` holds the process
 * id and the command of the process that keeps its DynamoDB data in the state directory (LevelDB
 * takes one process at a time, and dynalite given a locked folder crashes its process at the first
 * request). `startLocalStack` takes it whenever it opens that data (`persistent`: `serve`, `ask
 * --run-id`, `runs rm` of runs with table items) and releases it in `stop()`. Commands that keep
 * DynamoDB in memory (`ask` without `--run-id`, `job`, `survey`, `eval`) write only their
 * own run's objects to the bucket and take no lock, so they run beside any other. A lock file left
 * by a process that no longer runs is taken over. (Earlier versions used `serve.pid` for `serve` and
 * probed LevelDB for `ask`.)
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigurationError } from '../../shared/errors';

/** The lock file of a state directory. */
export const lockFile = (stateDir: string): string => path.join(path.resolve(stateDir), 'extagents.lock');

export class StateDirLock {
  /** Lock files held in this process. */
  private static readonly held = new Set<string>();

  private constructor(private readonly file: string) {}

  /**
   * Take the state directory for this process.
   * @param command what holds it, for the message another process gets (`serve`, `ask`, …).
   * @throws ConfigurationError while another running process (or another stack of this one) holds it.
   */
  static async acquire(stateDir: string, command: string): Promise<StateDirLock> {
    const file = lockFile(stateDir);
    await mkdir(path.dirname(file), { recursive: true });
    for (let attempt = 0; ; attempt++) {
      try {
        await writeFile(file, `${JSON.stringify({ pid: process.pid, command })}\n`, { flag: 'wx' });
        StateDirLock.held.add(file);
        return new StateDirLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      }
      const holder = await readHolder(file);
      const running = holder.pid === process.pid ? StateDirLock.held.has(file) : holder.pid !== undefined && processRuns(holder.pid);
      if (running) {
        const who = `process ${holder.pid}${holder.command ? `, extagents ${holder.command}` : ''}`;
        throw new ConfigurationError(
          `The state directory ${path.resolve(stateDir)} is in use by another extagents process (${who}): wait for it to end or stop it, ` +
            `or give this command another --state-dir (if process ${holder.pid} is not extagents, delete ${file})`,
        );
      }
      await rm(file, { force: true }); // stale: its process is gone
    }
  }

  /** Give the state directory back. Idempotent. */
  async release(): Promise<void> {
    if (!StateDirLock.held.delete(this.file)) return;
    await rm(this.file, { force: true });
  }
}

/** The pid and command of a lock file (an unreadable or garbled file: no pid, taken over). */
async function readHolder(file: string): Promise<{ pid?: number; command?: string }> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as { pid?: unknown; command?: unknown };
    const pid = Number.isInteger(parsed.pid) && (parsed.pid as number) > 0 ? (parsed.pid as number) : undefined;
    return { pid, command: typeof parsed.command === 'string' ? parsed.command : undefined };
  } catch {
    return {};
  }
}

/** Whether a process with this id runs (signal 0 checks without signalling; EPERM means it exists). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
