/**
 * A corpus file over the 500 MiB document limit (a sparse file: no disk, no memory) is skipped by its
 * size, before any read, with the size and the limit, by `ask`, `ask --estimate` and `ingest`; the
 * other files are read as usual. (On da72786 every one of them died with ERR_FS_FILE_TOO_LARGE, or
 * loaded the file whole before skipping it.)
 */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { MAX_DOCUMENT_BYTES } from '../../shared/decode';

let dir: string;
let out: string[];
let err: string[];
const HUGE = 4 * 1024 * 1024 * 1024; // 4 GiB, sparse

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-huge-'));
  mkdirSync(path.join(dir, 'c'));
  writeFileSync(path.join(dir, 'c', 'mill.txt'), 'The mill opened in 1821 in Dundee.');
  writeFileSync(path.join(dir, 'c', 'huge.txt'), '');
  truncateSync(path.join(dir, 'c', 'huge.txt'), HUGE);
  out = [];
  err = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true));
});

afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<number> {
  process.exitCode = undefined;
  await main(['node', 'extagents', ...args]);
  return Number(process.exitCode ?? 0);
}

const reason = `huge.txt: too large (${HUGE} bytes; a document is read as one string of at most ${MAX_DOCUMENT_BYTES} bytes, 500 MiB)`;

it('ask answers from the other files and lists the huge one as skipped, with its size and the limit', async () => {
  const status = await run('ask', '-c', path.join(dir, 'c'), '-q', 'When did the mill open?', '--state-dir', path.join(dir, 'st'), '--json', '--no-progress');

  expect(status).toBe(0);
  const result = JSON.parse(out.join('')) as { answer: string; skipped: Array<{ documentId: string; reason: string }> };
  expect(result.answer).toContain('1821');
  expect(result.skipped.map((s) => `${s.documentId}: ${s.reason}`).join('\n')).toContain(reason);
}, 60_000);

it('ask --estimate and ingest skip it too, and ingest places it without reading it', async () => {
  const estimate = await run('ask', '-c', path.join(dir, 'c'), '-q', 'When did the mill open?', '--estimate', '--state-dir', path.join(dir, 'st'));
  const ingest = await run('ingest', '--id', 'big', '-c', path.join(dir, 'c'), '--state-dir', path.join(dir, 'st'));

  expect([estimate, ingest]).toEqual([0, 0]);
  expect(out.join('')).toContain(`skipped ${reason}`);
  expect(err.join('')).not.toMatch(/ERR_FS_FILE_TOO_LARGE|unexpected error/);
}, 60_000);
