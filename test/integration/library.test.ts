/**
 * The library API (local/library.ts, the package's entry): `ask` answers over files with the offline
 * model and leaves no temporary state behind; a resumable run needs a state directory. The package's
 * entries as scripts/build-lib.cjs builds them: the ES module wrapper names every export of the
 * CommonJS bundle, and the declarations stay off the engine's internals. The packed package itself
 * is checked by scripts/check-pack.sh (CI), which installs it in an empty project.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as library from '../../local/library';
import { InvalidInputError, ask, resolveCorpus } from '../../local/library';
import { ERROR_CLASSES } from '../../shared/errors';
import { NoEvidenceError } from '../../shared/survey/errors';

jest.setTimeout(60_000);

const root = path.resolve(__dirname, '..', '..');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-library-'));
  writeFileSync(path.join(dir, 'bridge.txt'), 'The bridge opened to traffic in May 1937. Joseph Strauss was the chief engineer of the Golden Gate Bridge.');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const temporaryStates = (): string[] => readdirSync(tmpdir()).filter((name) => /^extagents-[A-Za-z0-9]{6}$/.test(name));

describe('ask (library)', () => {
  it('answers from the corpus with citations, and removes the temporary state directory it made', async () => {
    const before = new Set(temporaryStates());

    const result = await ask({ corpus: 'bridge.txt', cwd: dir, question: 'Who was the chief engineer of the Golden Gate Bridge?' });

    expect(result.answerable).toBe(true);
    expect(result.answer).toContain('Joseph Strauss');
    expect(result.citations[0]).toMatchObject({ documentId: 'bridge.txt', quote: expect.stringContaining('Strauss') });
    expect(temporaryStates().filter((name) => !before.has(name))).toEqual([]);
  });

  it('keeps the run in a given state directory, and takes files already resolved', async () => {
    const stateDir = path.join(dir, 'state');
    const files = await resolveCorpus([path.join(dir, 'bridge.txt')]);

    const result = await ask({ corpus: files, question: 'When did the bridge open to traffic?', stateDir, options: { rounds: 1 } });

    expect(result.answer).toContain('1937');
    expect(existsSync(path.join(stateDir, 'bucket', 'runs', result.runId, 'result.json'))).toBe(true);
  });

  it('refuses a corpus that is not paths or files, and an empty one, with InvalidInputError', async () => {
    for (const corpus of [42, null, [null], [], [{ id: 'a' }]]) {
      await expect(ask({ corpus: corpus as never, question: 'Who?' })).rejects.toThrow(InvalidInputError);
    }
    await expect(ask({ corpus: [], question: 'Who?' })).rejects.toThrow('ask: corpus is empty');
    await expect(ask(undefined as never)).rejects.toThrow(InvalidInputError);
  });

  it('rejects at once with RunAbortedError, writing nothing, when its signal was aborted before the call', async () => {
    const stateDir = path.join(dir, 'state');
    const controller = new AbortController();
    controller.abort('changed my mind');

    const run = ask({ corpus: 'bridge.txt', cwd: dir, question: 'Who?', stateDir, signal: controller.signal });

    await expect(run).rejects.toThrow(library.RunAbortedError);
    await expect(run).rejects.toMatchObject({ reason: 'changed my mind', message: expect.stringContaining('aborted before the run started') });
    expect(existsSync(stateDir)).toBe(false);
  });

  it('refuses a run id without a state directory (the run could not be resumed)', async () => {
    await expect(ask({ corpus: 'bridge.txt', cwd: dir, question: 'Who?', runId: 'r1' })).rejects.toThrow(InvalidInputError);
  });
});

describe('the package entries', () => {
  let dir: string;
  beforeAll(() => {
    // Inside the project (dist/ is ignored by git), so the bundle's packages resolve from its node_modules.
    mkdirSync(path.join(root, 'dist'), { recursive: true });
    dir = mkdtempSync(path.join(root, 'dist', 'test-lib-'));
    execFileSync(process.execPath, [path.join(root, 'scripts', 'build-lib.cjs'), '--outdir', dir]);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('name the same exports in the ES module entry as the library has values, one copy of each class behind both entries', () => {
    const values = Object.entries(library)
      .filter(([, value]) => value !== undefined)
      .map(([name]) => name);
    const script =
      `import * as esm from ${JSON.stringify(path.join(dir, 'lib', 'index.mjs'))};\n` +
      `import { createRequire } from 'node:module';\n` +
      `const cjs = createRequire(import.meta.url)(${JSON.stringify(path.join(dir, 'lib', 'index.cjs'))});\n` +
      `console.log(JSON.stringify({ names: Object.keys(esm).filter((n) => n !== 'default'), same: esm.CostLimitExceededError === cjs.CostLimitExceededError }));`;

    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { names: string[]; same: boolean };

    expect([...out.names].sort()).toEqual([...values].sort());
    expect(out.same).toBe(true);
  });

  it('declare only what the public surface reaches: no AWS SDK, Lambda handler or aws-local-stepfunctions types', () => {
    const declarations = (sub: string): string[] =>
      readdirSync(path.join(dir, 'types', sub), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.d.ts'));
    const all = declarations('.');

    expect(all).toContain(path.join('local', 'library.d.ts'));
    expect(all.filter((file) => file.startsWith('lambdas') || file.startsWith('models') || file.endsWith('stack.d.ts'))).toEqual([]);
    const imported = all.flatMap((file) => [...readFileSync(path.join(dir, 'types', file), 'utf8').matchAll(/from '([^.][^']*)'/g)].map((m) => m[1]));
    expect([...new Set(imported)]).toEqual(['zod']);
  });

  it("answer without the AWS SDK's Node-version warning on stderr (the local engine reaches only 127.0.0.1 stand-ins), a warning the SDK prints for a client of its own", () => {
    const corpus = mkdtempSync(path.join(tmpdir(), 'extagents-library-quiet-'));
    try {
      writeFileSync(path.join(corpus, 'bridge.txt'), 'Joseph Strauss was the chief engineer of the Golden Gate Bridge.');
      const env = { ...process.env };
      delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
      // npm test's NODE_OPTIONS holds --no-warnings=ExperimentalWarning, which Node 20 reads as no warnings at all.
      delete env.NODE_OPTIONS;
      const run = (script: string) =>
        spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env, cwd: root, timeout: 120_000 });
      const ours = run(
        `import { ask } from ${JSON.stringify(path.join(dir, 'lib', 'index.mjs'))};\n` +
          `const r = await ask({ corpus: [${JSON.stringify(corpus)}], question: 'Who was the chief engineer of the Golden Gate Bridge?' });\n` +
          `console.log(JSON.stringify({ answer: r.answer }));`,
      );
      // The control: the same SDK, a client made by the caller, warns under Node < 22 (the SDK's rule).
      const control = run(`import { DynamoDBClient } from '@aws-sdk/client-dynamodb';\nnew DynamoDBClient({ region: 'us-east-1' });`);

      expect(ours.status).toBe(0);
      expect(JSON.parse(ours.stdout).answer).toContain('Joseph Strauss');
      expect(ours.stderr).not.toContain('NodeVersionSupportWarning');
      if (Number(process.versions.node.split('.')[0]) < 22) expect(control.stderr).toContain('NodeVersionSupportWarning');
    } finally {
      rmSync(corpus, { recursive: true, force: true });
    }
  });

  it("export every typed error a run can fail with (ERROR_CLASSES, and the survey's NoEvidenceError), as the same classes", () => {
    const exported = library as unknown as Record<string, unknown>;
    for (const [name, ErrorClass] of Object.entries(ERROR_CLASSES)) expect([name, exported[name]]).toEqual([name, ErrorClass]);
    expect(exported.NoEvidenceError).toBe(NoEvidenceError);
  });
});
