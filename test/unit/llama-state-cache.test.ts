/**
 * The llama adapter's prompt-state cache (models/llama/llama.ts `PromptStates`) when its temporary
 * directory fails it (issue 51, item 3): a directory that cannot be made, or a disk that is full,
 * turns the cache off with one warning and never fails the call; the directories of processes that
 * are gone are removed by the next one that makes its own. No model is loaded: the sequence is a
 * stand-in that writes (or fails to write) a state file.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ChatRequest } from '../../shared/ports';
import { PromptStates } from '../../models/llama/llama';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'llama-states-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const request = (prefix: string): ChatRequest => ({
  role: 'seeker',
  system: 'Answer from the passage.',
  messages: [{ role: 'user', text: `${prefix}\nQuestion?` }],
  cacheable: { prefix, suffix: 'Question?' },
  maxTokens: 10,
});
/** A sequence whose saves write a small file, or fail as `fail` says. */
const sequence = (fail?: NodeJS.ErrnoException) => ({
  sequence: {
    saveStateToFile: async (file: string) => {
      if (fail) throw fail;
      await writeFile(file, 'state');
      return { fileSize: 5 };
    },
  },
});

describe('the prompt-state cache', () => {
  it('turns itself off with one warning when its folder cannot be made, and never fails the call', async () => {
    const notADir = path.join(root, 'file');
    writeFileSync(notADir, 'not a directory');
    const states = new PromptStates(1 << 20, () => notADir);
    const chat = sequence() as never;
    const first = await states.keep(chat, states.keyOf(request('Passage one.')));
    const second = await states.keep(chat, states.keyOf(request('Passage two.')));
    expect(first).toMatch(/^the llama prompt-state cache is off: its folder cannot be made in .*file \(ENOTDIR\); each passage is evaluated whole again/);
    expect(second).toBeUndefined();
  });

  it('turns itself off with one warning on a full disk', async () => {
    const states = new PromptStates(1 << 20, () => root);
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const first = await states.keep(sequence(full) as never, states.keyOf(request('Passage one.')));
    const second = await states.keep(sequence(full) as never, states.keyOf(request('Passage two.')));
    expect(first).toMatch(/cache is off: .*extagents-llama-state-.* cannot hold another state \(ENOSPC\)/);
    expect(second).toBeUndefined();
    // Nothing of it left behind.
    expect(readdirSync(root).filter((n) => n.startsWith('extagents-llama-state-'))).toEqual([]);
  });

  it("removes the folders of processes that are gone, keeps a live process's, and names its own owner", async () => {
    const gone = path.join(root, 'extagents-llama-state-gone');
    const live = path.join(root, 'extagents-llama-state-live');
    for (const [dir, pid] of [
      [gone, '999999999'],
      [live, String(process.ppid)],
    ]) {
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'owner.pid'), pid);
      writeFileSync(path.join(dir, 'state'), 'x'.repeat(1000));
    }
    const states = new PromptStates(1 << 20, () => root);
    expect(await states.keep(sequence() as never, states.keyOf(request('Passage one.')))).toBeUndefined();
    expect(existsSync(gone)).toBe(false);
    expect(existsSync(live)).toBe(true);
    const mine = readdirSync(root).filter((n) => n.startsWith('extagents-llama-state-') && n !== 'extagents-llama-state-live');
    expect(mine).toHaveLength(1);
    await states.clear();
  });
});
