/**
 * `extagents ingest` under an id that already holds files: the new files are added (one of the same
 * name replaced), the others kept, and the command says so with how to start afresh.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { writeCorpus } from '../support/corpus';

jest.setTimeout(60_000);

let dir: string;
let stdout: string[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-ingest-'));
  stdout = [];
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(String(chunk));
    return true;
  });
  jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
});

afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<string> {
  stdout = [];
  process.exitCode = undefined;
  await main(['node', 'extagents', ...args]);
  return stdout.join('');
}

it('adds to a corpus ingested before under the same id, keeps its other files and says so', async () => {
  const stateDir = path.join(dir, 'state');
  const first = writeCorpus(path.join(dir, 'a'), { 'mill.txt': 'Millbrook was founded in 1842.', 'school.txt': 'The school opened in 1905.' });
  const second = writeCorpus(path.join(dir, 'b'), { 'mill.txt': 'Millbrook was founded in 1843.', 'library.txt': 'The library opened in 1903.' });

  const once = await cli('ingest', '--id', 'town', '-c', first, '--state-dir', stateDir);
  const again = await cli('ingest', '--id', 'town', '-c', second, '--state-dir', stateDir);

  expect(once).not.toContain('note:');
  expect(again).toMatch(/^corpus town: ingested; 3 file\(s\)/);
  expect(again).toContain(
    `note: corpus town already held 1 other file(s), kept: ingest adds files to a corpus (a file of the same name is replaced); to start it afresh, delete ${path.join(stateDir, 'bucket', 'corpora', 'town')} first, or ingest under a new id`,
  );
  expect(readdirSync(path.join(stateDir, 'bucket', 'corpora', 'town')).sort()).toEqual(['library.txt', 'mill.txt', 'school.txt']);
});
