/**
 * One strategy in two evaluation runs, paired by example: how a setting that `extagents eval` keeps
 * per output directory (`--chunk-tokens`, `--model`, `--seed`, …) changes scores and cost. Over the
 * examples (dataset, target length, example id) that both records files hold without error: F1, EM
 * and evidence recall (means with 95% bootstrap intervals, and the paired difference B − A with its
 * interval and two-sided p, eval/stats.ts), model calls, input tokens and measured seconds per query.
 *
 * Usage: npx tsx bench/eval-compare.ts <recordsA> <recordsB> [strategy=extagents]
 */
import { existsSync } from 'node:fs';
import type { EvalRecord } from '../eval/records';
import { readRecords } from '../eval/runner';
import { bootstrapMeanInterval, type MeanInterval, pairedBootstrap } from '../eval/stats';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/eval-compare.ts <recordsA> <recordsB> [strategy=extagents]

One strategy in two evaluation runs ('extagents eval' writes <out-dir>/records.jsonl), paired by
example: over the examples (dataset, target length, example id) both files hold without error, per
dataset and target length (tokens): F1, EM and evidence recall in percent (means with 95% bootstrap
intervals, and the paired difference B - A with its interval and two-sided p), model calls, input
tokens and measured seconds per query. Nothing is run; prints a Markdown table.

Arguments (positional, in this order):
  recordsA     the first records file (JSON lines)
  recordsB     the second records file
  strategy     the strategy compared (default extagents)
Options:
  -h, --help   print this and exit
`;

const { positionals } = benchArgs(USAGE, {}, true);
if (positionals.length < 2 || positionals.length > 3) usageError(USAGE, `2 or 3 arguments, got ${positionals.length}`);
const [fileA, fileB, strategy = 'extagents'] = positionals;
for (const file of [fileA, fileB]) if (!existsSync(file)) usageError(USAGE, `no records file ${file}`);

/** The strategy's records of a file without error, by dataset, target length and example. */
function load(file: string): Map<string, EvalRecord> {
  const { records, warnings } = readRecords(file);
  for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
  const out = new Map<string, EvalRecord>();
  for (const r of records) if (r.strategy === strategy && r.error === undefined) out.set(JSON.stringify([r.dataset, r.targetTokens, r.exampleId]), r);
  return out;
}
const [a, b] = [load(fileA), load(fileB)];
const groups = new Map<string, Array<[EvalRecord, EvalRecord]>>();
for (const [key, ra] of a) {
  const rb = b.get(key);
  if (rb === undefined) continue;
  const group = `${ra.dataset} | ${ra.targetTokens}`;
  groups.set(group, [...(groups.get(group) ?? []), [ra, rb]]);
}
if (groups.size === 0) usageError(USAGE, `no example of ${strategy} is in both files`);

const pct = (m: MeanInterval): string => `${(100 * m.mean).toFixed(1)} [${(100 * m.low).toFixed(1)}, ${(100 * m.high).toFixed(1)}]`;
const mean = (xs: number[]): number => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
const inputTokens = (r: EvalRecord): number => r.calls.reduce((s, c) => s + c.inputTokens, 0);
process.stdout.write(`A = ${fileA}\nB = ${fileB}\nstrategy ${strategy}\n\n`);
process.stdout.write(
  '| dataset | target | n | F1 A | F1 B | ΔF1 B−A | EM A | EM B | recall A | recall B | Δrecall B−A | calls A / B | input tok A / B | s A / B |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n',
);
for (const [group, pairs] of groups) {
  const pick = (f: (r: EvalRecord) => number, side: 0 | 1): number[] => pairs.map((p) => f(p[side]));
  const f1 = (r: EvalRecord): number => r.f1;
  const em = (r: EvalRecord): number => r.em;
  // Evidence recall over the examples that have gold evidence in both runs.
  const withRecall = pairs.filter(([x, y]) => x.evidenceRecall !== null && y.evidenceRecall !== null);
  const recallA = withRecall.map(([x]) => x.evidenceRecall as number);
  const recallB = withRecall.map(([, y]) => y.evidenceRecall as number);
  const d = pairedBootstrap(pick(f1, 1), pick(f1, 0));
  const dr = recallA.length > 0 ? pairedBootstrap(recallB, recallA) : undefined;
  const delta = (c: { mean: number; low: number; high: number; p: number }): string =>
    `${c.mean >= 0 ? '+' : ''}${(100 * c.mean).toFixed(1)} [${(100 * c.low).toFixed(1)}, ${(100 * c.high).toFixed(1)}], p=${c.p.toFixed(2)}`;
  const cells = [
    ...group.split(' | '),
    String(pairs.length),
    pct(bootstrapMeanInterval(pick(f1, 0))),
    pct(bootstrapMeanInterval(pick(f1, 1))),
    delta(d),
    (100 * mean(pick(em, 0))).toFixed(1),
    (100 * mean(pick(em, 1))).toFixed(1),
    recallA.length > 0 ? pct(bootstrapMeanInterval(recallA)) : '–',
    recallB.length > 0 ? pct(bootstrapMeanInterval(recallB)) : '–',
    dr ? delta(dr) : '–',
    `${mean(pick((r) => r.calls.length, 0)).toFixed(1)} / ${mean(pick((r) => r.calls.length, 1)).toFixed(1)}`,
    `${Math.round(mean(pick(inputTokens, 0))).toLocaleString('en-US')} / ${Math.round(mean(pick(inputTokens, 1))).toLocaleString('en-US')}`,
    `${(mean(pick((r) => r.wallMs, 0)) / 1000).toFixed(1)} / ${(mean(pick((r) => r.wallMs, 1)) / 1000).toFixed(1)}`,
  ];
  process.stdout.write(`| ${cells.join(' | ')} |\n`);
}
