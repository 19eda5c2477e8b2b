/**
 * Cost of `extagents` against the reference procedure (`official`) on the same inputs, from an
 * evaluation records file: per dataset and target length, over the examples both strategies ran
 * without error, the mean model calls and input tokens per query and their ratios.
 *
 * Usage: npx tsx bench/eval-ratio.ts [records=eval-out/records.jsonl] [strategy=extagents] [reference=official]
 */
import { existsSync } from 'node:fs';
import { readRecords } from '../eval/runner';
import type { EvalRecord } from '../eval/records';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/eval-ratio.ts [records=eval-out/records.jsonl] [strategy=extagents] [reference=official]

Cost of a strategy against a reference strategy on the same inputs, from an evaluation records file
('extagents eval' writes <out-dir>/records.jsonl): per dataset and target length (tokens), over the
examples both strategies ran without error, the mean model calls and input tokens per query of each
and their ratios (strategy / reference). Nothing is run; prints a tab-separated table.

Arguments (positional, in this order):
  records      the records file, JSON lines (default eval-out/records.jsonl)
  strategy     the strategy measured (default extagents)
  reference    the strategy compared against (default official)
Options:
  -h, --help   print this and exit
`;

const { positionals } = benchArgs(USAGE, {}, true);
if (positionals.length > 3) usageError(USAGE, `at most 3 arguments, got ${positionals.length}: ${positionals.join(' ')}`);
const [file = 'eval-out/records.jsonl', ours = 'extagents', theirs = 'official'] = positionals;
if (!existsSync(file)) usageError(USAGE, `no records file ${file}`);
const { records, warnings } = readRecords(file);
for (const w of warnings) process.stderr.write(`warning: ${w}\n`);

const byKey = new Map<string, EvalRecord>();
for (const r of records) if (r.error === undefined) byKey.set(JSON.stringify([r.dataset, r.targetTokens, r.exampleId, r.strategy]), r);
const groups = new Map<string, Array<[EvalRecord, EvalRecord]>>();
for (const r of records) {
  if (r.strategy !== ours || r.error !== undefined) continue;
  const other = byKey.get(JSON.stringify([r.dataset, r.targetTokens, r.exampleId, theirs]));
  if (other === undefined) continue;
  const key = `${r.dataset}\t${r.targetTokens}`;
  groups.set(key, [...(groups.get(key) ?? []), [r, other]]);
}
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const tokens = (r: EvalRecord): number => r.calls.reduce((s, c) => s + c.inputTokens, 0);
process.stdout.write(`dataset\ttarget\tn\t${ours} calls/q\t${theirs} calls/q\tcalls ratio\t${ours} in-tok/q\t${theirs} in-tok/q\ttokens ratio\n`);
for (const [key, pairs] of groups) {
  const [a, b] = [mean(pairs.map(([x]) => x.calls.length)), mean(pairs.map(([, y]) => y.calls.length))];
  const [ta, tb] = [mean(pairs.map(([x]) => tokens(x))), mean(pairs.map(([, y]) => tokens(y)))];
  process.stdout.write(
    `${key}\t${pairs.length}\t${a.toFixed(1)}\t${b.toFixed(1)}\t${(a / b).toFixed(2)}\t${Math.round(ta)}\t${Math.round(tb)}\t${(ta / tb).toFixed(2)}\n`,
  );
}
