/**
 * `extagents runs ls | show | rm` over a real state directory: runs made by `ask` (with and without
 * `--run-id`), listed with their status, shown, and deleted with their own corpus copy and their
 * table items, while a corpus ingested under its own id stays.
 */
import { existsSync, mkdirSync, readdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { startLocalStack } from '../../local/engine/stack';
import { executionRecordKey } from '../../local/engine/executions';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
let stdout: string[];

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-runs-'));
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

describe('extagents runs', () => {
  it('lists, shows and deletes runs with their own files and table items, and leaves other corpora alone', async () => {
    const stateDir = path.join(dir, 'state');
    const corpus = writeCorpus(dir, { 'eiffel.txt': 'The Eiffel Tower was completed in 1889 for the World Fair in Paris.' });
    await cli('ask', '-c', corpus, '-q', 'When was the Eiffel Tower completed?', '--state-dir', stateDir, '--no-progress');
    await cli('ask', '-c', corpus, '-q', 'Which submarine sank in the Baltic Sea in 1957?', '--state-dir', stateDir, '--no-progress', '--run-id', 'keep-1');
    await cli('ingest', '--id', 'shared', '-c', corpus, '--state-dir', stateDir);

    const listed = JSON.parse(await cli('runs', 'ls', '--state-dir', stateDir, '--json')) as Array<{ runId: string; status: string; bytes: number }>;
    const shown = await cli('runs', 'show', 'keep-1', '--state-dir', stateDir);
    // Both asks read one content-addressed copy of the corpus and the chunks of one cache entry.
    const localCorpora = () => readdirSync(path.join(stateDir, 'bucket', 'corpora')).filter((id) => id.startsWith('local-'));
    const corporaBefore = localCorpora();
    const removed = await cli('runs', 'rm', 'keep-1', '--state-dir', stateDir);
    const corporaAfterOne = localCorpora();
    const after = JSON.parse(await cli('runs', 'ls', '--state-dir', stateDir, '--json')) as Array<{ runId: string }>;
    const oldOnly = await cli('runs', 'rm', '--older-than', '1', '--state-dir', stateDir);

    // One vocabulary with the API and the page: the execution status, and the outcome once answered or refused.
    expect(listed.map((r) => [r.runId.startsWith('run-') ? 'run-…' : r.runId, r.status, (r as { outcome?: string }).outcome])).toEqual([
      // newest first, as the API and the page list them
      ['keep-1', 'SUCCEEDED', 'refused'],
      ['run-…', 'SUCCEEDED', 'answered'],
    ]);
    expect(listed.every((r) => r.bytes > 0)).toBe(true);
    expect(shown).toContain('Question: Which submarine sank in the Baltic Sea in 1957?');
    expect(removed).toMatch(/^deleted run keep-1 \([\d.]+ KiB, \d+ table items\)\n1 run\(s\) deleted/);
    expect(after.map((r) => r.runId)).toEqual([listed[1].runId]);
    expect(oldOnly).toBe('0 run(s) deleted, 0 B freed\n');
    expect(existsSync(path.join(stateDir, 'bucket', 'runs', 'keep-1'))).toBe(false);
    expect(existsSync(path.join(stateDir, 'bucket', 'corpora', 'keep-1'))).toBe(false);
    expect(existsSync(path.join(stateDir, 'bucket', 'corpora', 'shared', 'eiffel.txt'))).toBe(true);
    expect(corporaBefore).toHaveLength(1);
    // The other run still reads the shared copy: it stays until the last run reading it goes.
    expect(corporaAfterOne).toEqual(corporaBefore);
    await cli('runs', 'rm', '--older-than', '0', '--state-dir', stateDir);
    expect(localCorpora()).toEqual([]);
    expect(readdirSync(path.join(stateDir, 'bucket', 'cache', 'chunks'))).toHaveLength(1);
    // No table item of the run is left.
    const stack = await startLocalStack({ stateDir, persistent: true });
    try {
      expect(await stack.deleteRunItems('keep-1')).toBe(0);
    } finally {
      await stack.stop();
    }
  });

  it("says the API's status words, and lists a run aborted before it started (an execution record only) and an interrupted ask", async () => {
    const stateDir = path.join(dir, 'state');
    const blobs = new FsBlobStore(path.join(stateDir, 'bucket'));
    // `serve` stopped while this run waited for a slot: its record says ABORTED, Prepare never ran.
    await blobs.put(
      executionRecordKey('early'),
      JSON.stringify({ status: 'ABORTED', startedAt: '2026-01-01T00:00:00.000Z', stoppedAt: '2026-01-01T00:00:01.000Z', error: 'ExecutionAborted' }),
    );
    // A server killed while this one ran: RUNNING, by a process that is gone.
    await blobs.put(executionRecordKey('killed'), JSON.stringify({ status: 'RUNNING', startedAt: '2026-01-01T00:00:02.000Z', pid: 2 ** 22 + 12345 }));
    // An `ask --run-id` interrupted after Prepare: its record and corpus marker, no result.
    await blobs.put('runs/cut/run.json', JSON.stringify({ question: 'Q?', createdAt: '2026-01-01T00:00:03.000Z', chunks: 2, options: {} }));

    const listed = JSON.parse(await cli('runs', 'ls', '--state-dir', stateDir, '--json')) as Array<{ runId: string; status: string; outcome?: string }>;
    const table = await cli('runs', 'ls', '--state-dir', stateDir);

    expect(listed.map((r) => [r.runId, r.status, r.outcome])).toEqual([
      ['cut', 'ABORTED', undefined],
      ['killed', 'ABORTED', undefined],
      ['early', 'ABORTED', undefined],
    ]);
    expect(table).not.toContain('incomplete');
    expect(table).toMatch(/^early\s+2026-01-01 00:00:00\s+ABORTED\s/m);
    // and `runs rm` deletes such a run, its record included
    await cli('runs', 'rm', 'early', '--state-dir', stateDir);
    expect((JSON.parse(await cli('runs', 'ls', '--state-dir', stateDir, '--json')) as Array<{ runId: string }>).map((r) => r.runId)).toEqual(['cut', 'killed']);
  });

  it('shows a run the quota check refused as refused, saying what to change, not to resume it; asked again under its id, it answers', async () => {
    const stateDir = path.join(dir, 'state');
    const corpus = writeCorpus(dir, { 'eiffel.txt': 'The Eiffel Tower was completed in 1889 for the World Fair in Paris.' });
    const question = 'When was the Eiffel Tower completed?';
    await cli('ask', '-c', corpus, '-q', question, '--state-dir', stateDir, '--no-progress', '--run-id', 'quota-1', '--quota-tpm', '100');
    expect(process.exitCode).toBe(1);

    const shown = await cli('runs', 'show', 'quota-1', '--state-dir', stateDir);
    const json = JSON.parse(await cli('runs', 'show', 'quota-1', '--state-dir', stateDir, '--json')) as { refusal?: { error: string } };
    await cli('ask', '-c', corpus, '-q', question, '--state-dir', stateDir, '--no-progress', '--run-id', 'quota-1');
    const answered = await cli('runs', 'show', 'quota-1', '--state-dir', stateDir);

    expect(shown).toMatch(
      /^run quota-1: refused before any model call at .* UTC: QuotaExceededError: Refused before any model call: one seek counts [\d,]+ tokens against a quota of 100 tokens per minute/,
    );
    expect(shown).toContain('resuming cannot help');
    expect(shown).not.toContain('resume it with');
    expect(json.refusal?.error).toBe('QuotaExceededError');
    expect(answered).toMatch(/^Question: When was the Eiffel Tower completed\?\nAnswer: .*1889/);
  });

  it('lists the runs beside stray entries of runs/ (a .DS_Store, a folder that is no run id, a plain file), and ignores a heartbeat of another shape', async () => {
    const stateDir = path.join(dir, 'state');
    const corpus = writeCorpus(dir, { 'eiffel.txt': 'The Eiffel Tower was completed in 1889 for the World Fair in Paris.' });
    await cli('ask', '-c', corpus, '-q', 'When was the Eiffel Tower completed?', '--state-dir', stateDir, '--no-progress', '--run-id', 'kept-1');
    const runsDir = path.join(stateDir, 'bucket', 'runs');
    writeFileSync(path.join(runsDir, '.DS_Store'), '');
    writeFileSync(path.join(runsDir, 'junkfile'), 'x');
    mkdirSync(path.join(runsDir, 'we ird'));
    writeFileSync(path.join(runsDir, 'we ird', 'x.json'), '{}');
    // a run without a result whose heartbeat file is an array
    mkdirSync(path.join(runsDir, 'odd-1'));
    writeFileSync(path.join(runsDir, 'odd-1', 'live.json'), '[]');

    const listed = JSON.parse(await cli('runs', 'ls', '--state-dir', stateDir, '--json')) as Array<{ runId: string }>;
    const exitCode = process.exitCode;
    const shown = await cli('runs', 'show', 'odd-1', '--state-dir', stateDir);

    expect(exitCode).toBeUndefined();
    expect(listed.map((r) => r.runId).sort()).toEqual(['kept-1', 'odd-1']);
    expect(shown).toMatch(/^run odd-1: no result \(it stopped before it ended/);
  });

  it('refuses a run id that is not one, a run that does not exist, and rm with neither ids nor --older-than (exit 2)', async () => {
    const stateDir = path.join(dir, 'state');
    for (const args of [
      ['runs', 'rm', '../x'],
      ['runs', 'show', 'nosuch'],
      ['runs', 'rm'],
    ]) {
      await cli(...args, '--state-dir', stateDir);
      expect([args.join(' '), process.exitCode]).toEqual([args.join(' '), 2]);
    }
  });
});
