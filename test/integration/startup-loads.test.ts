/**
 * Start-up loads only what the command and the corpus need (issue 27, item 3): an `ask` over a .txt
 * file with the offline model (`extractive`) never loads the readers of other formats (parse5,
 * markdown-it and yaml; unpdf and mammoth are dynamic imports inside their readers), fast-glob (a
 * plain file argument needs no glob), nor the Bedrock adapter and its SDK. The CLI runs in a child
 * process with a `--require` hook that writes the keys of `require.cache` at exit (what CommonJS
 * loaded: the packages, and under tsx the project's own .ts files), as the prebuilt bundle and as the
 * TypeScript sources. A Markdown corpus is the control: it loads markdown-it, so a hook that saw
 * nothing would fail the test.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/** Packages and project modules that a .txt `ask` with the offline model must not load. */
const UNNEEDED_PACKAGES = ['parse5', 'markdown-it', 'yaml', '@aws-sdk/client-bedrock-runtime', 'unpdf', 'mammoth', 'fast-glob'];
/**
 * The optional peers and the dev-only packages an installed library does not have (issue 26, item 1):
 * an offline `ask` must never load them (node-llama-cpp is an ES module, loaded by `import()`, which
 * require.cache does not see; it is listed for a `require` of it). The prebuilt CLI loads no tsx.
 */
const PACKAGES_NOT_INSTALLED = ['node-llama-cpp', 'vega', 'vega-lite', '@resvg/resvg-js', 'aws-cdk-lib', 'constructs', '@aws-lambda-powertools/logger'];
const UNNEEDED_SOURCES = [
  'shared/readers/html.ts',
  'shared/readers/markdown.ts',
  'shared/readers/pdf.ts',
  'shared/readers/docx.ts',
  'models/bedrock/bedrock.ts',
];

const packageOf = (file: string): string | undefined => /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file)?.[1]?.replace('\\', '/');

describe('start-up: an ask loads only what its command, corpus and model need', () => {
  let dir: string;
  let runner: string;
  let hook: string;
  let run = 0;

  beforeAll(() => {
    // Inside the project (dist/ is ignored by git), so the bundle's packages resolve from its node_modules.
    mkdirSync(path.join(root, 'dist'), { recursive: true });
    dir = mkdtempSync(path.join(root, 'dist', 'test-loads-'));
    const outdir = path.join(dir, 'cli');
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build-cli.cjs'), '--outdir', outdir]);
    runner = path.join(outdir, 'run.cjs');
    writeFileSync(runner, "const cli = require('./cli.cjs');\ncli.installFatalErrorHandler();\ncli.main();\n");
    hook = path.join(dir, 'record-loads.cjs');
    writeFileSync(
      hook,
      "process.on('exit', () => require('node:fs').writeFileSync(process.env.EXTAGENTS_TEST_LOADS, JSON.stringify(Object.keys(require.cache))));\n",
    );
    writeFileSync(path.join(dir, 'town.txt'), 'Millbrook was founded in 1842. Its library opened in 1903; the first librarian was Edward Pike.\n');
    writeFileSync(path.join(dir, 'town.md'), '# Millbrook\n\nMillbrook was founded in 1842. Its library opened in 1903.\n');
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The files CommonJS had loaded when an `ask` over `corpus` exited (it must succeed). */
  function loadedBy(mode: 'prebuilt' | 'source', corpus: string): string[] {
    const out = path.join(dir, `loads-${run++}.json`);
    const entry = mode === 'prebuilt' ? runner : path.join(root, 'bin', 'extagents');
    const ask = [
      'ask',
      '-c',
      corpus,
      '-q',
      'When did the library of Millbrook open?',
      '--model',
      'extractive',
      '--json',
      '--state-dir',
      path.join(dir, `state-${run}`),
    ];
    const result = spawnSync(process.execPath, ['--require', hook, entry, ...ask], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, EXTAGENTS_TEST_LOADS: out, ...(mode === 'source' && { EXTAGENTS_CLI: 'source' }) },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ answerable: true });
    return JSON.parse(readFileSync(out, 'utf8')) as string[];
  }

  it.each(['prebuilt', 'source'] as const)(
    '%s: a .txt corpus with the offline model loads no HTML, Markdown, PDF or DOCX reader and no Bedrock SDK',
    (mode) => {
      const loaded = loadedBy(mode, 'town.txt');
      const packages = new Set(loaded.map(packageOf));
      expect(packages).toContain('gpt-tokenizer'); // the hook sees the packages the run loads
      expect(UNNEEDED_PACKAGES.filter((name) => packages.has(name))).toEqual([]);
      expect(PACKAGES_NOT_INSTALLED.filter((name) => packages.has(name))).toEqual([]);
      if (mode === 'prebuilt') expect(packages).not.toContain('tsx');
      const sources = loaded
        .filter((file) => !file.includes(`${path.sep}node_modules${path.sep}`))
        .map((file) => path.relative(root, file).split(path.sep).join('/'));
      expect(UNNEEDED_SOURCES.filter((file) => sources.includes(file))).toEqual([]);
    },
  );

  it('a Markdown corpus loads its reader (the control: the hook would see a reader that loads)', () => {
    const packages = new Set(loadedBy('prebuilt', 'town.md').map(packageOf));
    expect(packages).toContain('markdown-it');
    expect(packages).not.toContain('@aws-sdk/client-bedrock-runtime');
  });
});
