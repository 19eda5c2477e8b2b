/**
 * Usage errors of `extagents serve`, `job`, `ingest` and `eval` (local/cli/serve-command.ts,
 * local/cli/uploads-command.ts, local/cli/eval-command.ts): one line on stderr, no stack trace, exit status 2, and nothing started
 * (no local stack, no server). A rejected job file still gets its `rejected` summary.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { RunOptionsSchema } from '../../shared/config';

let dir: string;
let stateDir: string;
let stderr: string[];
let savedExitCode: typeof process.exitCode;
let savedToken: string | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-cli-'));
  stateDir = path.join(dir, 'state');
  stderr = [];
  savedExitCode = process.exitCode;
  savedToken = process.env.EXTAGENTS_TOKEN;
  delete process.env.EXTAGENTS_TOKEN;
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
});

afterEach(() => {
  jest.restoreAllMocks();
  process.exitCode = savedExitCode;
  if (savedToken === undefined) delete process.env.EXTAGENTS_TOKEN;
  else process.env.EXTAGENTS_TOKEN = savedToken;
  rmSync(dir, { recursive: true, force: true });
});

/** Run the CLI; the exit status and what it wrote to stderr. */
async function run(...args: string[]): Promise<{ status: number; stderr: string }> {
  process.exitCode = undefined;
  await main(['node', 'extagents', ...args]);
  const status = Number(process.exitCode ?? 0);
  process.exitCode = undefined;
  return { status, stderr: stderr.join('') };
}

/** A usage error as the CLI writes it: one line, then the hint naming the command's help; returns the line (which starts with `extagents: `; no stack trace). */
function oneLine(text: string): string {
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.trimEnd().split('\n');
  expect(lines.length === 1 || (lines.length === 2 && /^\(see 'extagents [a-z ]+--help'\)$/.test(lines[1]))).toBe(true);
  expect(text).toMatch(/^extagents: /);
  expect(text).not.toMatch(/\n\s+at /);
  return lines[0];
}

describe('extagents job', () => {
  it('exits 2 with one line for a job file that does not exist', async () => {
    const missing = path.join(dir, 'missing.json');

    const result = await run('job', missing, '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toBe(`extagents: job file ${missing}: no such file`);
    expect(existsSync(path.join(stateDir, 'dynamodb'))).toBe(false);
  });

  it('exits 2 for a job file whose corpus the API would refuse, and writes the rejected summary', async () => {
    const file = path.join(dir, 'internal.json');
    writeFileSync(file, JSON.stringify({ corpus: { prefix: 'runs/' }, questions: [{ question: 'Q' }], priority: 1 }));

    const result = await run('job', file, '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toContain(
      'Invalid job file: corpus.prefix: prefix must not point into runs/ (the service\'s own data); unknown field "priority" (nothing ran',
    );
    const summary = JSON.parse(readFileSync(path.join(stateDir, 'bucket', 'results', 'internal.summary.json'), 'utf8')) as { status: string };
    expect(summary.status).toBe('rejected');
  });

  it('exits 2 for a job name that cannot be one, saying to use --name', async () => {
    const file = path.join(dir, 'my job.json');
    writeFileSync(file, JSON.stringify({ corpus: 'c1', questions: [{ question: 'Q' }] }));

    const result = await run('job', file, '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toContain('Invalid job name "my job" (taken from the file name; give another with --name)');
  });

  it('prints a line per question on stderr as it ends, and none with --no-progress', async () => {
    const corpus = path.join(dir, 'corpus');
    mkdirSync(corpus, { recursive: true });
    writeFileSync(path.join(corpus, 'eiffel.txt'), 'The Eiffel Tower was completed in 1889.');
    await run('ingest', '--id', 'c1', '-c', corpus, '--state-dir', stateDir);
    const file = path.join(dir, 'weekly.json');
    writeFileSync(file, JSON.stringify({ corpus: 'c1', questions: [{ question: 'When was the Eiffel Tower completed?' }] }));
    stderr.length = 0;

    const shown = await run('job', file, '--state-dir', stateDir);
    const quiet = await run('job', file, '--name', 'weekly-2', '--state-dir', stateDir, '--no-progress');

    expect([shown.status, quiet.status]).toEqual([0, 0]);
    expect(shown.stderr).toContain('question 0: SUCCEEDED');
    expect(quiet.stderr.slice(shown.stderr.length)).not.toContain('question 0:');
  });

  it('exits 2 for a corpus id nothing was ingested under, naming the ingest command and the folder of that name', async () => {
    const notes = path.join(dir, 'notes');
    mkdirSync(notes);
    writeFileSync(path.join(notes, 'mill.txt'), 'The mill opened in 1821.');
    const file = path.join(dir, 'j.json');
    writeFileSync(file, JSON.stringify({ corpus: 'notes', questions: [{ question: 'When did the mill open?' }, { question: 'Where?' }] }));

    const result = await run('job', file, '--state-dir', stateDir, '--no-progress');

    expect(result.status).toBe(2);
    const line = oneLine(result.stderr);
    expect(line).toContain('corpus "notes" has no documents');
    expect(line).toMatch(/run 'extagents ingest --id notes --corpus \S*notes --state-dir \S+' first \(nothing ran\)/);
    expect(existsSync(path.join(stateDir, 'bucket', 'results', 'j.jsonl'))).toBe(false);
  });

  it('exits 1 when every question of the job failed, and says a rerun started nothing', async () => {
    const images = path.join(dir, 'images');
    mkdirSync(images);
    writeFileSync(path.join(images, 'a.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]));
    await run('ingest', '--id', 'images', '-c', images, '--state-dir', stateDir);
    const file = path.join(dir, 'k.json');
    writeFileSync(file, JSON.stringify({ corpus: 'images', questions: [{ question: 'What is shown?' }] }));
    const stdout: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });

    const first = await run('job', file, '--state-dir', stateDir, '--no-progress');
    const again = await run('job', file, '--state-dir', stateDir, '--no-progress');

    expect([first.status, again.status]).toEqual([1, 1]);
    expect(first.stderr).toContain('every question of');
    expect(stdout.join('')).toMatch(/0 started, 1 already started\n[^\n]*\n  nothing started: every question ran in an earlier run of this job file/);
  });

  it('exits 2 for an invalid model spec before anything starts', async () => {
    const file = path.join(dir, 'weekly.json');
    writeFileSync(file, JSON.stringify({ corpus: 'c1', questions: [{ question: 'Q' }] }));

    const result = await run('job', file, '-m', 'gpt', '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toMatch(/^extagents: --model: Invalid model spec "gpt"/);
  });
});

describe('numeric flags take decimal digits only and say their real range (a number out of range: the range alone)', () => {
  it.each([
    [
      ['ask', '-c', 'x', '-q', 'y', '--chunk-tokens', '0x40'],
      '--chunk-tokens must be a whole number of tokens 64-200000 (digits, or with a suffix k = 1,000 or M = 1,000,000: 8k, 1.5M; got "0x40")',
    ],
    [
      ['ask', '-c', 'x', '-q', 'y', '--chunk-tokens', '1e3'],
      '--chunk-tokens must be a whole number of tokens 64-200000 (digits, or with a suffix k = 1,000 or M = 1,000,000: 8k, 1.5M; got "1e3")',
    ],
    [['ask', '-c', 'x', '-q', 'y', '--chunk-tokens', '10'], '--chunk-tokens must be a whole number of tokens 64-200000; got 10, below 64'],
    [['ask', '-c', 'x', '-q', 'y', '--chunk-tokens', '1M'], '--chunk-tokens must be a whole number of tokens 64-200000; got 1M, above 200000'],
    [
      ['ask', '-c', 'x', '-q', 'y', '--reasoner-budget', '64.0'],
      '--reasoner-budget must be a whole number of tokens 256-1000000 (digits, or with a suffix k = 1,000 or M = 1,000,000: 8k, 1.5M; got "64.0")',
    ],
    [['ask', '-c', 'x', '-q', 'y', '--rounds', '2.0'], '--rounds must be a whole number 1-10 (decimal digits only; got "2.0")'],
    [['ask', '-c', 'x', '-q', 'y', '--tolerated-failure', '1e1'], '--tolerated-failure must be a number 0-100 (decimal digits only; got "1e1")'],
    [['survey', '-c', 'x', '-t', 'y', '--target-words', '0x100'], '--target-words must be a whole number 200-50000 (decimal digits only; got "0x100")'],
    [['eval', '--limit', '0b11'], '--limit must be a whole number >= 1 (decimal digits only; got "0b11")'],
    [['serve', '--port', '8e3'], '--port must be a whole number 0-65535 (decimal digits only; got "8e3")'],
    [['job', 'x.json', '--concurrency', ' 4'], '--concurrency must be a whole number 1-64 (decimal digits only; got " 4")'],
    // Runs at once: one range for job, eval and serve (local/engine/defaults.ts RUNS_AT_ONCE); eval had none.
    [['eval', '--concurrency', '65'], '--concurrency must be a whole number 1-64; got 65, above 64'],
    [['serve', '--max-concurrent-runs', '65'], '--max-concurrent-runs must be a whole number 1-64; got 65, above 64'],
    // Seeking agents at once: one range for ask and survey, the run option's (survey's was 1-1000).
    [['survey', '-c', 'x', '-t', 'y', '--concurrency', '10001'], '--concurrency must be a whole number 1-10000; got 10001, above 10000'],
  ])('%j exits 2: %s', async (args, message) => {
    const result = await run(...args, '--state-dir', stateDir);

    expect(result.status).toBe(2);
    // One line with the CLI's prefix and a hint to the command's help, not the whole help
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    // Our message alone: it names the flag and the value, so commander's "option … is invalid." prefix goes.
    expect(lines[0]).toBe(`extagents: ${message}`);
    expect(lines[1]).toBe(`(see 'extagents ${args[0]} --help')`);
    expect(existsSync(stateDir)).toBe(false);
  });

  it('states each range in --help, from the schema that validates the option', async () => {
    const help: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      help.push(String(chunk));
      return true;
    });

    await run('ask', '--help');

    const text = help.join('').replace(/\s+/g, ' ');
    expect(text).toContain('maximum tokens per chunk (L); llama: models default to 40% of their context (64-200000; 8k = 8,000, 1.5M = 1,500,000)');
    expect(text).toContain('(0-100) (default: 5)');
  });

  it("takes each run option's default in --help from the schema (a schema default is the CLI default)", async () => {
    const help: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      help.push(String(chunk));
      return true;
    });
    const defaults = RunOptionsSchema.parse({});

    await run('ask', '--help');

    const text = help.join('').replace(/\s+/g, ' ');
    for (const [flag, field] of [
      ['--chunk-tokens', 'chunkTokens'],
      ['--rounds', 'rounds'],
      ['--concurrency', 'concurrency'],
      ['--reasoner-budget', 'reasonerBudgetTokens'],
      ['--sync-budget', 'syncBudgetTokens'],
      ['--tolerated-failure', 'toleratedFailurePercentage'],
    ] as const) {
      const entry = text.slice(text.indexOf(`${flag} <`), text.indexOf(' --', text.indexOf(`${flag} <`) + 3));
      expect(entry).toContain(`(default: ${defaults[field]})`);
    }
  });
});

describe('--json', () => {
  it('writes a usage error as one JSON line on stderr, without the help hint, exit 2', async () => {
    const result = await run('ask', '--corpus', 'README.md', '--question', 'x', '--rounds', '0', '--json');

    expect(result.status).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({
      error: { name: 'UsageError', message: expect.stringContaining('--rounds must be a whole number 1-10'), exitStatus: 2 },
    });
  });

  it('writes an error the command raises (a corpus that matches nothing) as JSON too', async () => {
    const result = await run('ask', '--corpus', path.join(dir, 'nothing-here'), '--question', 'x', '--json', '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(JSON.parse(result.stderr.trim())).toMatchObject({ error: { name: 'UsageError', message: expect.stringMatching(/^--corpus: /) } });
  });

  it('is on every command that prints a result', async () => {
    const help: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      help.push(String(chunk));
      return true;
    });
    for (const command of ['ask', 'job', 'ingest', 'survey', 'eval', 'serve']) {
      help.length = 0;
      await run(command, '--help');
      expect([command, help.join('').includes('--json')]).toEqual([command, true]);
    }
  });

  it("keeps eval's old -o/--out working as a hidden alias of --out-dir", async () => {
    const out = path.join(dir, 'old-out');
    const result = await run('eval', '--dataset', 'squad', '--out', out);

    // Refused for the data set, not for the flag.
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('squad');
    expect(result.stderr).not.toContain('unknown option');
    expect(existsSync(out)).toBe(false);
  });
});

describe('a state directory that cannot be made', () => {
  // Node 20's recursive mkdir never returns for /proc/x (ENOENT with an existing parent, retried forever).
  it.each([
    [['ask', '-c', 'README.md', '-q', 'x', '--state-dir', '/proc/x']],
    [['ingest', '--id', 'a', '-c', 'README.md', '--state-dir', '/proc/x']],
    [['serve', '--port', '0', '--state-dir', '/proc/x']],
    [['survey', '-c', 'README.md', '-t', 'x', '--state-dir', '/proc/x']],
  ])('%j exits 2 at once with one line naming it', async (args) => {
    const result = await run(...args);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toBe('extagents: --state-dir /proc/x is not a writable directory (ENOENT)');
  });
});

describe('extagents serve', () => {
  it.each([
    [['--token', 'short'], undefined, 'extagents: --token must have at least 16 characters (got 5); or leave it out to have a token generated'],
    [[], 'short', 'extagents: EXTAGENTS_TOKEN must have at least 16 characters (got 5); or leave it out to have a token generated'],
    [['--model', 'bogus'], undefined, 'extagents: --model: Invalid model spec "bogus"'],
  ])('exits 2 with one line for %j (EXTAGENTS_TOKEN=%s)', async (args, envToken, message) => {
    if (envToken !== undefined) process.env.EXTAGENTS_TOKEN = envToken;

    const result = await run('serve', '--port', '0', '--state-dir', stateDir, ...args);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toContain(message);
    expect(existsSync(path.join(stateDir, 'dynamodb'))).toBe(false);
  });
});

describe('one corpus vocabulary across commands', () => {
  it('asks a corpus made with ingest --id by that id, and ingests with --chunk-tokens 1k', async () => {
    const corpus = path.join(dir, 'town');
    mkdirSync(corpus);
    writeFileSync(path.join(corpus, 'mill.txt'), 'Millbrook was founded in 1842. Its library opened in 1903; the first librarian was Edward Pike.');
    const stdout: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });

    const ingest = await run('ingest', '--id', 'mill', '-c', corpus, '--chunk-tokens', '1k', '--state-dir', stateDir, '--json');
    const ingestion = JSON.parse(stdout.join('')) as { ingestion: { chunkTokens: number } };
    stdout.length = 0;
    const ask = await run('ask', '-c', 'mill', '-q', 'When did the library open?', '--chunk-tokens', '1k', '--state-dir', stateDir, '--json');

    expect([ingest.status, ask.status]).toEqual([0, 0]);
    expect(ingestion.ingestion.chunkTokens).toBe(1000);
    const result = JSON.parse(stdout.join('')) as { answer: string; citations: Array<{ documentId: string }> };
    expect(result.answer).toContain('1903');
    expect(result.citations[0].documentId).toBe('mill.txt');
    // Read in place: no content-addressed copy beside the ingested corpus.
    expect(readdirSync(path.join(stateDir, 'bucket', 'corpora'))).toEqual(['mill']);
  });

  it('refuses an id the state directory does not hold, in one line listing what was tried (exit 2)', async () => {
    const result = await run('ask', '-c', 'mil', '-q', 'x', '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toMatch(
      /^extagents: --corpus: Corpus argument "mil" matches nothing; tried a bundled corpus \(sotu\), a file or directory .*, a corpus id in .* \(no corpus is ingested there; `extagents ingest -c <files> --id mil` makes one\), a glob pattern/,
    );
  });

  it('does not offer a file name as a corpus id to ingest', async () => {
    const result = await run('ask', '-c', 'report.pdf', '-q', 'x', '--state-dir', stateDir);

    expect(result.status).toBe(2);
    const line = oneLine(result.stderr);
    expect(line).toMatch(/a corpus id in .* \(no corpus is ingested there\), a glob pattern/);
    expect(line).not.toMatch(/extagents ingest/);
  });

  it('names a run id that is not there with one hint, where to list the runs (exit 2)', async () => {
    const result = await run('runs', 'show', 'nope', '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`extagents: No run "nope" in ${path.resolve(stateDir)} (see 'extagents runs ls')\n`);
  });

  it("says a survey's warnings on stderr too (skipped corpus records), not only in its metadata file", async () => {
    const corpus = path.join(dir, 'mixed.jsonl');
    writeFileSync(corpus, '{"id":"p1","title":"Solar","abstract":"Agrivoltaic systems combine solar panels and crops."}\nnot json\n');
    jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const result = await run('survey', '-c', corpus, '-t', 'agrivoltaic systems', '--state-dir', stateDir, '-o', path.join(dir, 's.md'), '--no-progress');

    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/^warning: 1 corpus record\(s\) skipped, e\.g\. mixed\.jsonl:2: not a JSON object$/m);
  });

  it('refuses to ingest under the name of a bundled corpus, which -c would never reach (exit 2)', async () => {
    const file = path.join(dir, 'a.txt');
    writeFileSync(file, 'A document.');
    const result = await run('ingest', '--id', 'sotu', '-c', file, '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toBe('extagents: --id: sotu is the name of a bundled corpus (ask -c sotu reads that one): choose another id');
  });

  it('refuses an eval data file that does not exist, naming it, before anything starts (exit 2)', async () => {
    const missing = path.join(dir, 'nope.jsonl');
    const result = await run('eval', '-d', `infinitebench:${missing}`, '--out-dir', path.join(dir, 'ev'), '--no-progress');

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toBe(`extagents: --dataset: ${missing} does not exist`);
    expect(existsSync(path.join(dir, 'ev'))).toBe(false);
  });

  it('refuses an empty survey topic before anything starts, by the rule SurveyPrepare applies (exit 2)', async () => {
    const result = await run('survey', '-c', 'sotu', '-t', '   ', '--state-dir', stateDir, '-o', path.join(dir, 's.md'));

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toBe('extagents: --topic: topic must not be empty');
    expect(existsSync(stateDir)).toBe(false);
  });

  it('takes the same corpus arguments in survey, refused before anything starts', async () => {
    const result = await run('survey', '-c', 'mil', '-t', 'x', '--state-dir', stateDir, '-o', path.join(dir, 's.md'));

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toMatch(/^extagents: --corpus: Corpus argument "mil" matches nothing; tried /);
  });
});

describe('extagents ingest', () => {
  it('exits 2 for an invalid corpus id and for a corpus path that matches nothing', async () => {
    const badId = await run('ingest', '--id', '../x', '--corpus', dir, '--state-dir', stateDir);
    stderr.length = 0;
    const nothing = await run('ingest', '--id', 'ok', '--corpus', path.join(dir, 'nothing-here'), '--state-dir', stateDir);

    expect(badId.status).toBe(2);
    expect(oneLine(badId.stderr)).toMatch(/^extagents: --id: Invalid corpus id "\.\.\/x"/);
    expect(nothing.status).toBe(2);
    expect(oneLine(nothing.stderr)).toMatch(/^extagents: --corpus: /);
  });
});

describe('extagents eval', () => {
  it('exits 2 with one line for a dataset, strategy or length it cannot take, and makes no output directory', async () => {
    const out = path.join(dir, 'eval-out');

    const lengths = await run('eval', '--dataset', 'sotu', '--lengths', '8k', '--out-dir', out);
    stderr.length = 0;
    const strategy = await run('eval', '--dataset', 'sotu', '--strategies', 'extagent', '--out-dir', out);
    stderr.length = 0;
    const dataset = await run('eval', '--dataset', 'squad', '--out', out);

    expect(lengths.status).toBe(2);
    expect(oneLine(lengths.stderr)).toBe('extagents: sotu is evaluated at its full length only: use --lengths full');
    expect(strategy.status).toBe(2);
    expect(oneLine(strategy.stderr)).toMatch(/^extagents: unknown strategy "extagent"/);
    expect(dataset.status).toBe(2);
    expect(oneLine(dataset.stderr)).toMatch(/squad/);
    expect(existsSync(out)).toBe(false);
  });
});

describe('openai: configuration is checked before any work (exit 2, nothing written, no request)', () => {
  const saved = { base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };
  afterEach(() => {
    for (const [name, value] of [
      ['OPENAI_BASE_URL', saved.base],
      ['OPENAI_API_KEY', saved.key],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("says in one line that the default, OpenAI's API, needs OPENAI_API_KEY: ask, serve, job, survey and eval", async () => {
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    const corpus = path.join(dir, 'c.txt');
    writeFileSync(corpus, 'Some text.');
    const job = path.join(dir, 'job.json');
    writeFileSync(job, JSON.stringify({ corpus: { keys: ['corpora/x/a.txt'] }, questions: [{ question: 'q?' }] }));
    for (const args of [
      ['ask', '--corpus', corpus, '--question', 'What?', '--state-dir', stateDir],
      ['serve', '--state-dir', stateDir, '--port', '0'],
      ['job', job, '--state-dir', stateDir],
      ['survey', '--corpus', corpus, '--topic', 't', '--state-dir', stateDir, '-o', path.join(dir, 's.md')],
      ['eval', '--dataset', 'hotpotqa', '--lengths', '8k', '--limit', '1', '--out-dir', path.join(dir, 'eval')],
    ]) {
      stderr = [];
      const result = await run(...args, '--model', 'openai:gpt-4o-mini');
      expect({ command: args[0], status: result.status }).toEqual({ command: args[0], status: 2 });
      expect(oneLine(result.stderr)).toMatch(
        /^extagents: --model: OpenAI-compatible model: no OPENAI_API_KEY\. Without OPENAI_BASE_URL the model is OpenAI's API \(https:\/\/api\.openai\.com\/v1\)/,
      );
    }
    expect(existsSync(path.join(stateDir, 'bucket'))).toBe(false);
  });

  it('estimates without OPENAI_API_KEY: an estimate sends no request (README: no credentials needed)', async () => {
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
    const corpus = path.join(dir, 'e.txt');
    writeFileSync(corpus, 'Some text to estimate.');
    const stdout: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stdout.push(String(chunk));
      return true;
    });

    const result = await run(
      'ask',
      '--corpus',
      corpus,
      '--question',
      'What?',
      '--state-dir',
      stateDir,
      '--model',
      'openai:gpt-4o-mini',
      '--estimate',
      '--json',
    );

    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(stdout.join(''))).toMatchObject({ corpus: expect.anything() });
  });

  it('exits 2 for an OPENAI_BASE_URL that is not an http(s) URL', async () => {
    process.env.OPENAI_BASE_URL = 'ftp://127.0.0.1/v1';

    const result = await run('ask', '-c', 'README.md', '-q', 'x', '--model', 'openai:m', '--state-dir', stateDir);

    expect(result.status).toBe(2);
    expect(oneLine(result.stderr)).toBe('extagents: --model: OPENAI_BASE_URL "ftp://127.0.0.1/v1" must be an http:// or https:// URL');
  });
});

describe('llama: model files are checked before any work (exit 2, nothing written)', () => {
  it.each([
    ['a missing file', (d: string) => path.join(d, 'missing.gguf'), /llama: model file .*missing\.gguf not found/],
    [
      'a file that is not GGUF',
      (d: string) => {
        const file = path.join(d, 'fake.gguf');
        writeFileSync(file, 'hello');
        return file;
      },
      /is not a GGUF file/,
    ],
  ])('%s: ask, serve, job, survey and eval say so in one line', async (_what, make, message) => {
    const model = `llama:${make(dir)}`;
    const corpus = path.join(dir, 'c.txt');
    writeFileSync(corpus, 'Some text.');
    const job = path.join(dir, 'job.json');
    writeFileSync(job, JSON.stringify({ corpus: { keys: ['corpora/x/a.txt'] }, questions: [{ question: 'q?' }] }));
    for (const args of [
      ['ask', '--corpus', corpus, '--question', 'What?', '--model', model, '--state-dir', stateDir],
      ['serve', '--model', model, '--state-dir', stateDir, '--port', '0'],
      ['survey', '--corpus', corpus, '--topic', 't', '--model', model, '--state-dir', stateDir, '-o', path.join(dir, 's.md')],
      ['eval', '--dataset', 'hotpotqa', '--lengths', '8k', '--limit', '1', '--model', model, '--out-dir', path.join(dir, 'eval')],
    ]) {
      stderr = [];
      const result = await run(...args);
      expect({ command: args[0], status: result.status }).toEqual({ command: args[0], status: 2 });
      expect(oneLine(result.stderr)).toMatch(message);
    }
    expect(existsSync(path.join(stateDir, 'bucket'))).toBe(false);
    expect(existsSync(path.join(dir, 'eval', 'records.jsonl'))).toBe(false);
  });
});
