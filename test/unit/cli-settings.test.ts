/**
 * Option defaults from the environment and the defaults file (local/cli/settings.ts): flag >
 * EXTAGENTS_<OPTION> > extagents.config.json (or EXTAGENTS_CONFIG) > built-in, each value validated
 * at load with the flag's own parser, a bad one named by its source to the commands that use it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildProgram, main } from '../../local/cli/cli';
import { loadSettings, SETTINGS, settingVariable } from '../../local/cli/settings';
import { UsageError } from '../../local/cli/common';

let dir: string;
let stateDir: string;
let stderr: string[];
let stdout: string[];
const variables = [...Object.keys(SETTINGS).map(settingVariable), 'EXTAGENTS_CONFIG'];
let saved: Record<string, string | undefined>;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-settings-'));
  stateDir = path.join(dir, 'state');
  stderr = [];
  stdout = [];
  saved = Object.fromEntries(variables.map((v) => [v, process.env[v]]));
  for (const v of variables) delete process.env[v];
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
  jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  jest.restoreAllMocks();
  for (const v of variables) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Run the CLI; the exit status, stdout and stderr. */
async function run(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  stdout.length = 0;
  stderr.length = 0;
  process.exitCode = undefined;
  await main(['node', 'extagents', ...args]);
  const status = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { status, stdout: stdout.join(''), stderr: stderr.join('') };
}

/** A defaults file in the test's folder. */
function defaultsFile(values: unknown): string {
  const file = path.join(dir, 'extagents.config.json');
  writeFileSync(file, JSON.stringify(values));
  return file;
}

describe('loadSettings', () => {
  it("reads the file and the environment with the flags' parsers, the environment winning", () => {
    const file = defaultsFile({ 'chunk-tokens': '2k', concurrency: 16, 'best-effort': true, model: 'extractive' });

    const settings = loadSettings({ EXTAGENTS_CONFIG: file, EXTAGENTS_CHUNK_TOKENS: '3k', EXTAGENTS_BEST_EFFORT: 'false' }, dir);

    expect(settings).toEqual({
      'chunk-tokens': { value: 3000, source: 'env', from: 'EXTAGENTS_CHUNK_TOKENS' },
      concurrency: { value: 16, source: 'config', from: file },
      'best-effort': { value: false, source: 'env', from: 'EXTAGENTS_BEST_EFFORT' },
      model: { value: 'extractive', source: 'config', from: file },
    });
  });

  it('finds extagents.config.json in the current directory', () => {
    defaultsFile({ rounds: 1 });

    expect(loadSettings({}, dir).rounds).toMatchObject({ value: 1, source: 'config' });
  });

  it.each([
    [{ EXTAGENTS_CHUNK_TOKENS: '8q' }, undefined, 'chunk-tokens', 'EXTAGENTS_CHUNK_TOKENS: --chunk-tokens must be a whole number of tokens 64-200000'],
    [{ EXTAGENTS_CONCURRENCY: '0' }, undefined, 'concurrency', 'EXTAGENTS_CONCURRENCY: --concurrency must be a whole number 1-10000'],
    [{ EXTAGENTS_PIPELINE: 'maybe' }, undefined, 'pipeline', 'EXTAGENTS_PIPELINE: --pipeline must be true or false'],
    [{ EXTAGENTS_MODEL: 'gpt' }, undefined, 'model', 'EXTAGENTS_MODEL: Invalid model spec "gpt"'],
    [{}, { rounds: 11 }, 'rounds', '"rounds": --rounds must be a whole number 1-10'],
    [{}, { ranking: 'best' }, 'ranking', '"ranking": --ranking must be one of score, hybrid, retrieval'],
    [{ EXTAGENTS_RESEEK: 'some' }, undefined, 'reseek', 'EXTAGENTS_RESEEK: --reseek must be one of all, promising (got "some")'],
  ] as const)('keeps the problem of %j / file %j for the commands that use %s, naming the source', (env, file, name, message) => {
    const where = file === undefined ? undefined : defaultsFile(file);

    const setting = loadSettings(env, dir)[name];

    expect(setting !== undefined && 'problem' in setting).toBe(true);
    const problem = (setting as { problem: Error }).problem;
    expect(problem).toBeInstanceOf(UsageError);
    expect(problem.message).toContain(message);
    if (where !== undefined) expect(problem.message.startsWith(`${where}: `)).toBe(true);
  });

  it.each([
    [{}, { chunkTokens: 4000 }, 'unknown option "chunkTokens" (options a file may set: model, state-dir, chunk-tokens'],
    [{}, ['model'], 'must be a JSON object of option names and values'],
  ])('refuses %j / file %j, naming the source', (env, file, message) => {
    const where = file === undefined ? undefined : defaultsFile(file);

    let error: unknown;
    try {
      loadSettings(env, dir);
    } catch (e) {
      error = e;
    }

    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(message);
    if (where !== undefined) expect((error as Error).message.startsWith(`${where}: `)).toBe(true);
  });

  it('refuses an EXTAGENTS_CONFIG that names no file', () => {
    expect(() => loadSettings({ EXTAGENTS_CONFIG: 'nope.json' }, dir)).toThrow('EXTAGENTS_CONFIG=nope.json: no such file');
  });

  it('names only options the commands take, with the same long name', () => {
    const program = buildProgram();
    for (const [name, commands] of Object.entries(SETTINGS)) {
      for (const top of commands) {
        const command = program.commands.find((c) => c.name() === top)!;
        const leaves = command.commands.length > 0 ? command.commands : [command];
        const has = leaves.some((c) => c.options.some((o) => o.long === `--${name}` || o.long === `--no-${name}`));
        expect([name, top, has]).toEqual([name, top, true]);
      }
    }
  });
});

describe('precedence on the command line: flag > environment > file > built-in', () => {
  const ingestStatus = async (...flags: string[]): Promise<number> =>
    (await run('ingest', '--id', 'town', '-c', path.join(dir, 'town'), '--json', ...flags)).status;
  const ingest = async (...flags: string[]): Promise<number> => {
    const result = await run('ingest', '--id', 'town', '-c', path.join(dir, 'town'), '--json', ...flags);
    expect(result.status).toBe(0);
    return (JSON.parse(result.stdout) as { ingestion: { chunkTokens: number } }).ingestion.chunkTokens;
  };

  beforeEach(() => {
    mkdirSync(path.join(dir, 'town'));
    writeFileSync(path.join(dir, 'town', 'mill.txt'), 'Millbrook was founded in 1842.');
  });

  it('takes --chunk-tokens and --state-dir from the file, the environment over it, and the flag over both', async () => {
    process.env.EXTAGENTS_CONFIG = defaultsFile({ 'chunk-tokens': '2k', 'state-dir': stateDir });

    const fromFile = await ingest();
    process.env.EXTAGENTS_CHUNK_TOKENS = '3k';
    const fromEnv = await ingest();
    const fromFlag = await ingest('--chunk-tokens', '4k');
    delete process.env.EXTAGENTS_CONFIG;
    delete process.env.EXTAGENTS_CHUNK_TOKENS;
    const builtIn = await ingest('--state-dir', stateDir);

    expect([fromFile, fromEnv, fromFlag, builtIn]).toEqual([2000, 3000, 4000, 8000]);
  });

  it('stops at a bad value before any work, in one line naming its source (exit 2)', async () => {
    process.env.EXTAGENTS_CONFIG = defaultsFile({ 'state-dir': stateDir, 'max-cost': -1 });

    const result = await run('ask', '-c', path.join(dir, 'town'), '-q', 'x');

    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(`extagents: ${process.env.EXTAGENTS_CONFIG}: "max-cost": --max-cost must be a number 0-1000000; got -1, below 0`);
  });

  it('stops only the commands that use a bad EXTAGENTS_<OPTION>, and not when its flag is given', async () => {
    process.env.EXTAGENTS_CHUNK_TOKENS = '8q';

    const ask = await run('ask', '-c', path.join(dir, 'town'), '-q', 'x', '--state-dir', stateDir);
    const runs = await run('runs', 'ls', '--state-dir', stateDir);
    const ingest = await ingestStatus('--chunk-tokens', '4k', '--state-dir', stateDir);

    expect(ask.status).toBe(2);
    expect(ask.stderr.split('\n')[0]).toBe(
      'extagents: EXTAGENTS_CHUNK_TOKENS: --chunk-tokens must be a whole number of tokens 64-200000 (digits, or with a suffix k = 1,000 or M = 1,000,000: 8k, 1.5M; got "8q")',
    );
    expect(runs.status).toBe(0);
    expect(ingest).toBe(0);
  });

  it("lists its variables in each command's --help, which a bad value does not stop", async () => {
    process.env.EXTAGENTS_CHUNK_TOKENS = '8q';

    const ask = await run('ask', '--help');
    const job = await run('job', '--help');

    expect(ask.status).toBe(0);
    const text = ask.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('--model (EXTAGENTS_MODEL)');
    expect(text).toContain('--chunk-tokens (EXTAGENTS_CHUNK_TOKENS)');
    expect(text).toContain('a flag wins over the environment, the environment over the file, the file over the built-in default');
    expect(job.stdout.replace(/\s+/g, ' ')).not.toContain('EXTAGENTS_CONCURRENCY');
  });

  it("does not give job or eval the seeking agents' EXTAGENTS_CONCURRENCY (theirs counts runs)", async () => {
    process.env.EXTAGENTS_CONCURRENCY = '500';
    const file = path.join(dir, 'job.json');
    writeFileSync(file, JSON.stringify({ corpus: 'town', questions: [{ question: 'When was Millbrook founded?' }] }));
    await run('ingest', '--id', 'town', '-c', path.join(dir, 'town'), '--state-dir', stateDir);

    const result = await run('job', file, '--state-dir', stateDir, '--no-progress');

    expect(result.status).toBe(0);
  });
});
