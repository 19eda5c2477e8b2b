/**
 * The prebuilt CLI (issue 11, item 1): bin/prebuilt.cjs picks dist/cli/cli.cjs only while no source
 * file it was built from is newer or gone, and the bundle that scripts/build-cli.cjs builds answers
 * as the sources do, finding the files that modules read next to their source (the generated stack
 * template, the extractive reader's weights, the price table).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

const root = path.resolve(__dirname, '..', '..');
// oxlint-disable-next-line typescript/no-require-imports -- the bin's CommonJS helper, loaded as bin/extagents loads it
const { prebuiltCli } = require('../../bin/prebuilt.cjs') as { prebuiltCli: (root: string) => { bundle?: string; reason: string } };

describe('bin/prebuilt.cjs: the bundle runs only while it is fresh', () => {
  let tree: string;
  const at = (file: string, seconds: number): void => utimesSync(path.join(tree, file), seconds, seconds);

  beforeEach(() => {
    tree = mkdtempSync(path.join(tmpdir(), 'extagents-prebuilt-'));
    mkdirSync(path.join(tree, 'dist', 'cli'), { recursive: true });
    // The CLI's entry source: a checkout has it, an installed package does not.
    mkdirSync(path.join(tree, 'local', 'cli'), { recursive: true });
    writeFileSync(path.join(tree, 'local', 'cli', 'cli.ts'), '');
    writeFileSync(path.join(tree, 'local', 'a.ts'), 'a');
    writeFileSync(path.join(tree, 'package.json'), '{}');
    writeFileSync(path.join(tree, 'dist', 'cli', 'cli.cjs'), '');
    writeFileSync(path.join(tree, 'dist', 'cli', 'inputs.json'), JSON.stringify({ inputs: ['local/a.ts', 'package.json'] }));
    at('local/a.ts', 1_000);
    at('package.json', 1_000);
    at('dist/cli/cli.cjs', 2_000);
  });
  afterEach(() => {
    rmSync(tree, { recursive: true, force: true });
    delete process.env.EXTAGENTS_CLI;
  });

  it('picks the bundle when every input is as old as it or older', () => {
    at('package.json', 2_000);
    expect(prebuiltCli(tree)).toEqual({ bundle: path.join(tree, 'dist', 'cli', 'cli.cjs'), reason: 'dist/cli/cli.cjs is up to date with its 2 source files' });
  });

  it('falls back to the sources when an input is newer, gone, or the bundle is missing, and when asked to', () => {
    at('local/a.ts', 3_000);
    expect(prebuiltCli(tree)).toEqual({ reason: 'local/a.ts is newer than dist/cli/cli.cjs (npm run build:cli rebuilds it)' });
    rmSync(path.join(tree, 'local', 'a.ts'));
    expect(prebuiltCli(tree).reason).toBe('local/a.ts is gone since the CLI was built');
    rmSync(path.join(tree, 'dist', 'cli', 'cli.cjs'));
    expect(prebuiltCli(tree).bundle).toBeUndefined();
    writeFileSync(path.join(tree, 'local', 'a.ts'), 'a');
    at('local/a.ts', 1_000);
    writeFileSync(path.join(tree, 'dist', 'cli', 'cli.cjs'), '');
    process.env.EXTAGENTS_CLI = 'source';
    expect(prebuiltCli(tree)).toEqual({ reason: 'EXTAGENTS_CLI=source' });
  });

  it('picks the bundle in an installed package, which ships no TypeScript sources', () => {
    rmSync(path.join(tree, 'local'), { recursive: true });
    expect(prebuiltCli(tree)).toEqual({
      bundle: path.join(tree, 'dist', 'cli', 'cli.cjs'),
      reason: 'an installed package (no TypeScript sources): the prebuilt CLI',
    });
  });
});

describe('scripts/build-cli.cjs: the bundle answers as the sources do', () => {
  let dir: string;
  let runner: string;

  beforeAll(() => {
    // Inside the project (dist/ is ignored by git), so the bundle's packages resolve from its node_modules.
    mkdirSync(path.join(root, 'dist'), { recursive: true });
    dir = mkdtempSync(path.join(root, 'dist', 'test-bundle-'));
    const outdir = path.join(dir, 'cli');
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build-cli.cjs'), '--outdir', outdir]);
    runner = path.join(outdir, 'run.cjs');
    writeFileSync(runner, "const cli = require('./cli.cjs');\ncli.installFatalErrorHandler();\ncli.main();\n");
    writeFileSync(path.join(dir, 'town.txt'), 'Millbrook was founded in 1842. Its library opened in 1903; the first librarian was Edward Pike.\n');
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [runner, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, AWS_REGION: 'us-east-1' } });

  it('lists its inputs: the project sources it bundled, no package of node_modules', () => {
    const { inputs } = JSON.parse(readFileSync(path.join(dir, 'cli', 'inputs.json'), 'utf8')) as { inputs: string[] };
    expect(inputs).toEqual(expect.arrayContaining(['local/cli/cli.ts', 'local/engine/stack.ts', 'shared/method.ts', 'package.json']));
    expect(inputs.filter((input) => input.startsWith('node_modules/') || input.startsWith('..'))).toEqual([]);
  });

  it('answers a question with the local workflow as the sources do (stack template and reader weights found from the bundle)', () => {
    const question = ['ask', '-c', 'town.txt', '-q', 'When did the library of Millbrook open?', '--json'];
    const bundled = cli(...question, '--state-dir', path.join(dir, 'state-bundle'));
    const sources = spawnSync(process.execPath, [path.join(root, 'bin', 'extagents'), ...question, '--state-dir', path.join(dir, 'state-sources')], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, EXTAGENTS_CLI: 'source' },
    });
    expect(bundled.stderr).toBe('');
    expect(bundled.status).toBe(0);
    const pick = (stdout: string) => {
      const { answer, answerable, citations, trace } = JSON.parse(stdout) as Record<string, unknown>;
      return { answer, answerable, citations, trace };
    };
    expect(pick(bundled.stdout)).toEqual(pick(sources.stdout));
    expect(pick(bundled.stdout)).toMatchObject({ answerable: true, citations: [expect.objectContaining({ documentId: 'town.txt', start: 0 })] });
  });

  it("bundles serve's ingestion worker beside the CLI, which ingests without tsx or the sources", async () => {
    const bucketDir = path.join(dir, 'bucket');
    mkdirSync(path.join(bucketDir, 'corpora', 'town'), { recursive: true });
    writeFileSync(path.join(bucketDir, 'corpora', 'town', 'town.txt'), 'Millbrook was founded in 1842.\n');

    const reply = await new Promise<unknown>((resolve, reject) => {
      const worker = new Worker(path.join(dir, 'cli', 'ingest-worker.cjs'), { workerData: { bucketDir, corpusId: 'town' } });
      worker.once('message', resolve);
      worker.once('error', reject);
    });

    expect(reply).toEqual({ ok: true, outcome: 'ingested' });
    const bundle = readFileSync(path.join(dir, 'cli', 'ingest-worker.cjs'), 'utf8');
    expect(bundle).not.toMatch(/require\("tsx/);
  });

  it('prices an estimate from the bundled price table and reports usage errors like the sources', () => {
    const estimate = cli('ask', '-c', 'town.txt', '-q', 'q?', '--estimate', '--json', '--model', 'bedrock:us.meta.llama3-1-8b-instruct-v1:0');
    expect(estimate.status).toBe(0);
    expect(JSON.parse(estimate.stdout)).toMatchObject({
      seeker: { calls: 2 },
      prices: { seeker: { priced: true, priceKey: 'meta.llama3-1-8b-instruct-v1:0' } },
    });
    const usage = cli('ask', '-c', 'town.txt', '-q', 'q?', '--rounds', '0');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^extagents: .*--rounds/);
  });
});
