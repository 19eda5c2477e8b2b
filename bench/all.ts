/**
 * Issue 27's table from the project's own benchmarks, in one command: each figure's ratio (or wall
 * time) over several runs of the bench that measures it, as min / median / max, beside the issue's
 * figure and its target. Every ratio is taken against its floor in the same run of its bench:
 * bench/parallel-seek.ts (the seek phase against ceil(chunks / c) x the call's latency),
 * bench/orchestration.ts --model extractive --warm --lean (a cold and a warm local run over the SOTU
 * corpus with the default extractive model, and chunking alone, each in a fresh child, against a
 * child that reads and tokenizes the same text once; CPU time), bench/startup.ts (a 1 KB `ask` and
 * `--version` of the prebuilt CLI, each right after `node -e 0`). The benches run one after another,
 * never side by side (a 2-core machine). The model-heavy benches (fidelity.ts, llama-speed.ts,
 * sotu-dev.ts, survey.ts, eval-*.ts) are not run: they measure models, not the local engine.
 *
 * Usage: npx tsx bench/all.ts [--quick] [--runs N] [--json] [--model-time]
 * Prints a Markdown table: figure, the issue's figure (f131921), min / median / max measured, target,
 * met; then the runs' raw ratios. `npm run bench` runs it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/all.ts [--quick] [--runs N] [--json] [--model-time]

Issue 27's table in one command: the seek phase against its ideal at concurrency 16 and 64
(bench/parallel-seek.ts, 300 ms per call), a cold and a warm local run over the SOTU corpus with the
default extractive model against one read-and-tokenize pass over the same text (CPU time), chunking
alone against that floor (bench/orchestration.ts --model extractive --warm --lean), the wall time of
a 1 KB 'ask' and '--version' against 'node -e 0' (bench/startup.ts, prebuilt CLI). Each ratio is taken
against its floor in the same run of its bench; each bench runs N times, one after another, and the
table gives min / median / max over the runs, beside the issue's figure and its target. Not run: the
model-heavy benches (fidelity, llama-speed, sotu-dev, survey, eval-*). Takes about 12 minutes on a
loaded 2-core machine (--quick: about 4).

Options:
  --quick        one run of each bench (the start-up pairs: 3) instead of --runs
  --runs N       runs of each bench (default 3; the start-up bench: N + 2 pairs)
  --json         print the rows as one JSON line after the table
  --model-time   also issue 38's model-time figures (bench/llama-method-time.ts at 1x and 4x a
                 4,096-token window; the reference model when cached, else the test model; about
                 15 minutes more with the reference model)
  -h, --help     print this and exit
`;

const ROOT = path.resolve(__dirname, '..');

/** One bench's JSON lines (stdout), run as `npx tsx bench/<script> ...args` would run it. @throws Error when it fails. */
function bench(script: string, args: string[]): Array<Record<string, unknown>> {
  const started = performance.now();
  const out = spawnSync(process.execPath, ['-r', 'tsx/cjs', path.join(ROOT, 'bench', script), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (out.status !== 0) throw new Error(`bench/${script} ${args.join(' ')} exited ${out.status ?? out.signal}:\n${out.stderr}`);
  process.stderr.write(`bench/${script} ${args.join(' ')}: ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  return out.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface Row {
  figure: string;
  issue: string;
  target: string;
  /** True when a measured value meets the target. */
  meets: (value: number) => boolean;
  unit: 'x' | 's';
  values: number[];
}

const sorted = (values: readonly number[]): number[] => [...values].sort((a, b) => a - b);
const median = (values: readonly number[]): number => {
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const format = (value: number, unit: 'x' | 's'): string => (unit === 'x' ? `${value.toFixed(2)}×` : `${value.toFixed(2)} s`);

function main(): void {
  const { values } = benchArgs(USAGE, {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
    'model-time': { type: 'boolean', default: false },
  });
  const runs = values.quick ? 1 : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) usageError(USAGE, `--runs must be a positive integer, got ${values.runs}`);
  const rows: Row[] = [
    { figure: 'seek phase / ideal, c = 16 (parallel-seek.ts, 300 ms calls, 64 chunks)', issue: '2.06×', target: '—', meets: () => true, unit: 'x', values: [] },
    { figure: 'seek phase / ideal, c = 64', issue: '1.77-2.47×', target: '≤ 1.2×', meets: (v) => v <= 1.2, unit: 'x', values: [] },
    { figure: 'cold `ask --corpus sotu`, extractive, CPU / one tokenizer pass', issue: '7.6×', target: '≤ 3×', meets: (v) => v <= 3, unit: 'x', values: [] },
    { figure: 'warm `ask --corpus sotu` (chunk cache hit), CPU / that floor', issue: '4.3×', target: '≤ 1.5×', meets: (v) => v <= 1.5, unit: 'x', values: [] },
    { figure: 'chunking alone / floor (CPU)', issue: '1.84×', target: '≤ 1.3×', meets: (v) => v <= 1.3, unit: 'x', values: [] },
    { figure: 'a 1 KB `ask`, wall (prebuilt CLI)', issue: '1.9 s', target: '≤ 0.8 s', meets: (v) => v <= 0.8, unit: 's', values: [] },
    { figure: '`--version` / `node -e 0` (prebuilt CLI)', issue: '1.66×', target: 'keep (≤ 2×)', meets: (v) => v <= 2, unit: 'x', values: [] },
  ];
  const [seek16, seek64, cold, warm, chunking, tinyAsk, version] = rows;

  for (let run = 0; run < runs; run++) {
    for (const line of bench('parallel-seek.ts', ['--concurrency', '16,64'])) {
      (line.concurrency === 16 ? seek16 : seek64).values.push(Number(line.ratio));
    }
    for (const line of bench('orchestration.ts', ['--corpora', 'sotu', '--model', 'extractive', '--warm', '--lean'])) {
      cold.values.push(Number(line.cpuRatio));
      warm.values.push(Number(line.warmCpuRatio));
      chunking.values.push(Number(line.chunkingCpuRatio));
    }
  }
  // The start-up bench pairs every run with `node -e 0` itself; each pair is one value here.
  for (const line of bench('startup.ts', ['--runs', String(values.quick ? 3 : runs + 2)])) {
    if (line.mode !== 'prebuilt') continue;
    const runsMs = line.runsMs as number[];
    const nodeMs = line.nodeRunsMs as number[];
    if (line.command === 'extagents ask (1 KB, extractive)') tinyAsk.values.push(...runsMs.map((ms) => ms / 1000));
    if (line.command === 'extagents --version') version.values.push(...runsMs.map((ms, i) => ms / nodeMs[i]));
  }

  const lines = [
    '| figure | issue 27 (f131921) | measured: min / median / max (runs) | target | met (median) |',
    '|---|---|---|---|---|',
    ...rows.map((row) => {
      const s = sorted(row.values);
      const measured = `${format(s[0], row.unit)} / **${format(median(s), row.unit)}** / ${format(s.at(-1) ?? 0, row.unit)} (${s.length})`;
      return `| ${row.figure} | ${row.issue} | ${measured} | ${row.target} | ${row.target === '—' ? '—' : row.meets(median(s)) ? 'yes' : 'no'} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (values.json) process.stdout.write(`${JSON.stringify(rows.map(({ figure, values: measured }) => ({ figure, values: measured })))}\n`);
  if (values['model-time']) modelTime();
}

/**
 * Issue 38's figures with a real model (`--model-time`): bench/llama-method-time.ts at 1x and 4x a
 * 4,096-token window, with the reference model when it is cached, else the test model.
 */
function modelTime(): void {
  const cache = path.join(os.homedir(), '.cache', 'extagents', 'models');
  const reference = path.join(cache, 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf');
  const file = existsSync(reference) ? reference : (process.env.EXTAGENTS_TEST_MODEL ?? path.join(cache, 'SmolLM2-135M-Instruct.Q4_1.gguf'));
  const [line] = bench('llama-method-time.ts', ['--model', `llama:${file}?ctx=4096`, '--lengths', '4096,16384', '--json']);
  const results = (line?.results ?? []) as Array<{
    length: number;
    headline: { round1OverEngine: number; round2OverRound1: number };
    kar: Array<{ evaluated: number; addedTokens: number }>;
  }>;
  const out = [
    `\nModel time (${path.basename(file)}, prefill ${Number(line?.prefillRate ?? 0).toFixed(0)} tokens/s):`,
    '| length | round 1 seeking / engine time for the corpus (target <= 1.05) | forced round 2 / round 1 model time (target <= 0.35) | KAR steps after the first: evaluated / added tokens (target <= 1.1) |',
    '|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.length} | ${r.headline.round1OverEngine.toFixed(2)} | ${r.headline.round2OverRound1.toFixed(2)} | ${r.kar
          .slice(1)
          .map((s) => (s.addedTokens > 0 ? (s.evaluated / s.addedTokens).toFixed(2) : '-'))
          .join(', ')} |`,
    ),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
