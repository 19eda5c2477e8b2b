/**
 * Every benchmark script (bench/*.ts, listed from the directory, so a new one is covered without
 * naming it here) answers `--help` with its usage on stdout, exit status 0 and nothing on stderr
 * naming an error; the usage starts with the file comment's `Usage:` line (and its `[...]`
 * continuation lines), so the two agree. Every script parses its command line with
 * bench/support/args.ts (strict), so an unknown option is refused with exit status 2, the option and
 * the usage on stderr and nothing on stdout: run for one script, checked from the source for the
 * others (a process each costs 1 to 2 s here, mostly loading its modules). At most 2 at a time (a
 * 2-core machine). `-h` is not run: bench/support/args.ts gives it with `--help`.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const BENCH = path.join(ROOT, 'bench');
const SCRIPTS = readdirSync(BENCH)
  .filter((f) => f.endsWith('.ts'))
  .sort();
const PARALLEL = 2;
/** One run's bound: a script still running after it (its work started?) is killed and fails. */
const RUN_TIMEOUT_MS = 60_000;
/** The whole set, at most PARALLEL at a time: about 4x its time on the 2-core development machine (32 to 36 s, loaded). */
const ALL_TIMEOUT_MS = 150_000;

/**
 * `--help` of every script; an unknown option of one script (the refusal is bench/support/args.ts's,
 * which every script must parse its command line with: checked below from the source, without a
 * process each, to keep this file inside its share of the suite's time).
 */
const INVOCATIONS = [['--help']] as const;
const REFUSAL_PROBE = 'startup.ts';

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * `node -r tsx/cjs bench/<script> ...args`, killed after RUN_TIMEOUT_MS; with `closeAfterFirstData`,
 * stdout is closed once the first output arrives (a reader like `head -1` going away).
 */
function run(script: string, args: readonly string[], closeAfterFirstData = false): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(BENCH, script), ...args], {
      cwd: ROOT,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (closeAfterFirstData) child.stdout.destroy();
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', (error) => resolve({ status: null, signal: null, stdout, stderr: `${stderr}${String(error)}` }));
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

const runs = new Map<string, Run>();
const key = (script: string, args: readonly string[]): string => `${script} ${args.join(' ')}`;

beforeAll(async () => {
  const queue: Array<readonly [string, readonly string[]]> = [
    ...SCRIPTS.flatMap((script) => INVOCATIONS.map((args) => [script, args] as const)),
    [REFUSAL_PROBE, ['--no-such-option']],
  ];
  const worker = async (): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) runs.set(key(...next), await run(...next));
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
}, ALL_TIMEOUT_MS);

it('finds the benchmark scripts', () => {
  expect(SCRIPTS).toEqual(expect.arrayContaining(['orchestration.ts', 'pipeline.ts', 'startup.ts', 'tokenize.ts']));
});

describe.each(SCRIPTS)('bench/%s', (script) => {
  it('--help prints the usage and exits 0', () => {
    const result = runs.get(key(script, ['--help']));
    expect(result).toBeDefined();
    expect({ status: result?.status, signal: result?.signal, stderr: result?.stderr.match(/.*Error.*/g) ?? [] }).toEqual({
      status: 0,
      signal: null,
      stderr: [],
    });
    const commented = /^ \* (Usage: .*(?:\n \* {3}\[.*)*)/m.exec(readFileSync(path.join(BENCH, script), 'utf8'))?.[1].replace(/\n \* /g, '\n');
    expect(commented?.split(' ').slice(0, 4)).toEqual(['Usage:', 'npx', 'tsx', `bench/${script}`]);
    expect(result?.stdout.slice(0, (commented?.length ?? 0) + 1)).toBe(`${commented}\n`);
  });

  it('parses its command line with bench/support/args.ts (strict: an unknown option is refused)', () => {
    expect(readFileSync(path.join(BENCH, script), 'utf8')).toMatch(/import \{[^}]*\bbenchArgs\b[^}]*\} from '\.\/support\/args'/);
  });
});

describe(`bench/${REFUSAL_PROBE}`, () => {
  const script = REFUSAL_PROBE;
  it('refuses an unknown option, naming it, with the usage (exit 2, nothing on stdout)', () => {
    const result = runs.get(key(script, ['--no-such-option']));
    expect(result).toBeDefined();
    expect({ status: result?.status, signal: result?.signal, stdout: result?.stdout }).toEqual({ status: 2, signal: null, stdout: '' });
    expect(result?.stderr).toContain("'--no-such-option'");
    expect(result?.stderr).toContain(`Usage: npx tsx bench/${script}`);
  });
});

describe('a bench whose reader closes stdout early (`| head -1`)', () => {
  it("ends quietly with exit 141, not with node's EPIPE trace", async () => {
    // eval-compare over two committed record files: a table of many lines, written line by line.
    const records = (dir: string): string => path.join(ROOT, 'docs', 'eval-curve', dir, 'records.jsonl');
    const result = await run('eval-compare.ts', [records('hotpotqa'), records('hotpotqa-restate')], true);
    expect(result.stdout.length).toBeGreaterThan(0);
    expect({ status: result.status, signal: result.signal, stderr: result.stderr }).toEqual({ status: 141, signal: null, stderr: '' });
  }, 90_000);
});
