/**
 * Start-up benchmark of the CLI (issue 11, issue 27 item 3): `extagents --version`, `extagents ask
 * --help`, an `ask` over a 1 KB file with the offline reader and the tokenizer's first count
 * (`gpt-tokenizer` loaded and one count), each against `node -e 0` run right before each of its runs
 * (A B A B: this machine is shared and noisy; compare the ratios, not the milliseconds). Each command runs in
 * a fresh process, `--runs` times (default 5), and the median wall time is kept; the first ask run
 * is warm afterwards only through the OS file cache (a new state directory each time).
 *
 * Each extagents command is measured twice, interleaved in the same run: with the prebuilt CLI
 * (dist/cli/cli.cjs, `npm run build:cli`; the bench builds it first when it is missing or stale) and
 * from the TypeScript sources through tsx (`EXTAGENTS_CLI=source`).
 *
 * Usage: npx tsx bench/startup.ts [--runs 5]
 * Prints one JSON line per command and mode: median ms, `node -e 0`'s median beside it, the median
 * of the per-pair ratios, and every run's ms.
 * Targets: `--version` at most 4x `node -e 0` (issue 11); the 1 KB `ask` at most 0.8 s (issue 27).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { benchArgs, usageError } from './support/args';
// oxlint-disable-next-line typescript/no-require-imports -- the bin's own CommonJS helper, as bin/extagents loads it
const { prebuiltCli } = require('../bin/prebuilt.cjs') as { prebuiltCli: (root: string) => { bundle?: string; reason: string } };

const USAGE = `Usage: npx tsx bench/startup.ts [--runs 5]

Start-up of the CLI: 'extagents --version', 'extagents ask --help' and an 'ask' over a 1 KB file with
the offline reader, and the tokenizer's first count (gpt-tokenizer loaded and one count, in a fresh
process), each against 'node -e 0' run right before each of its runs (A B A B; compare the ratios,
not the milliseconds, on a shared machine). Every command runs --runs times, each in a fresh process, with
the prebuilt CLI (dist/cli/cli.cjs, built first when missing or stale) and from the TypeScript
sources through tsx (EXTAGENTS_CLI=source). Prints one JSON line per command and mode: the median
wall time (ms), 'node -e 0''s median beside it, the median of the per-pair ratios, and every run's ms. Targets: '--version' at
most 4x 'node -e 0' (issue 11); the 1 KB 'ask' at most 0.8 s (issue 27).

Options:
  --runs N       fresh processes per command and mode; the median is kept (default 5)
  -h, --help     print this and exit
`;

const { values } = benchArgs(USAGE, { runs: { type: 'string', default: '5' } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) usageError(USAGE, `--runs must be a positive integer, got ${values.runs}`);

const root = path.resolve(__dirname, '..');
const bin = path.join(root, 'bin', 'extagents');
const dir = mkdtempSync(path.join(tmpdir(), 'extagents-startup-'));
const corpus = path.join(dir, 'note.txt');
const answer = 'The keeper of the lighthouse was Ann Lee.\n';
writeFileSync(corpus, 'The harvest was abundant in the district. '.repeat(30).slice(0, 1024 - answer.length) + answer); // 1,024 bytes

/** Wall time (ms) of one fresh process of `args`. @throws Error when it exits non-zero. */
function once(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const started = performance.now();
  const out = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } });
  const ms = Math.round(performance.now() - started);
  if (out.status !== 0) throw new Error(`${args.join(' ')} exited ${out.status}: ${out.stderr}`);
  return ms;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * `runs` fresh processes of `args`, each right after one of `node -e 0` (A B A B: the floor is
 * measured beside every run, so a change of load during the bench moves both): the command's median
 * wall time (ms), the floor's, the median of the per-pair ratios, and every run's time.
 */
function paired(args: string[], fresh: () => string[] = () => [], env: NodeJS.ProcessEnv = {}) {
  const runsMs: number[] = [];
  const floorMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    floorMs.push(once(['-e', '0']));
    runsMs.push(once([...args, ...fresh()], env));
  }
  const ratioToNode = Number(median(runsMs.map((ms, i) => ms / floorMs[i])).toFixed(1));
  return { medianMs: median(runsMs), nodeMedianMs: median(floorMs), ratioToNode, runsMs, nodeRunsMs: floorMs };
}

try {
  // The prebuilt CLI, as `npm run build` leaves it (rebuilt here when a source is newer).
  if (!prebuiltCli(root).bundle) execFileSync(process.execPath, [path.join(root, 'scripts', 'build-cli.cjs')], { stdio: 'inherit' });
  let state = 0;
  const commands: Array<[string, string[], (() => string[]) | undefined]> = [
    ['extagents --version', [bin, '--version'], undefined],
    ['extagents ask --help', [bin, 'ask', '--help'], undefined],
    [
      'extagents ask (1 KB, extractive)',
      [bin, 'ask', '-c', corpus, '-q', 'Who was the keeper of the lighthouse?', '--no-progress'],
      () => ['--state-dir', path.join(dir, `state-${state++}`)],
    ],
  ];
  // The tokenizer's first count as shared/tokenizer.ts makes it (the o200k ranks, the encoder, one count), in a fresh process.
  const tokenizer = paired(['-e', "require('gpt-tokenizer').countTokens('The harvest was abundant.', { disallowedSpecial: new Set() })"]);
  process.stdout.write(`${JSON.stringify({ command: 'tokenizer first count', ...tokenizer })}\n`);
  for (const [name, args, fresh] of commands) {
    for (const mode of ['prebuilt', 'source'] as const) {
      const measured = paired(args, fresh, mode === 'source' ? { EXTAGENTS_CLI: 'source' } : {});
      process.stdout.write(`${JSON.stringify({ command: name, mode, ...measured })}\n`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
