/**
 * The per-question counts behind docs/EVAL.md, "The coverage extensions of issue 28": in one eval
 * run's records, each extension strategy (`extagents-grow`, `extagents-reseek`) against `extagents`
 * on the same examples, per dataset and target length: how many examples it paid at least the full
 * read's seeking calls for (a refused-at-every-tranche `grow`), scored lower or higher F1, answered
 * in other words; and, where `extagents` sought a chunk again in a later stage (round 2), how many
 * chunks reseek sought there, beside the first stage's seeks that returned output (for the
 * extractive reader: found something). Nothing is run; prints a Markdown table.
 *
 * Usage: npx tsx bench/eval-extensions.ts <records.jsonl>
 */
import { existsSync } from 'node:fs';
import type { EvalRecord } from '../eval/records';
import { readRecords } from '../eval/runner';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/eval-extensions.ts <records.jsonl>

The coverage extensions against full coverage, per question ('extagents eval --strategies
extagents,extagents-grow,extagents-reseek' writes <out-dir>/records.jsonl): for each dataset, target
length and extension strategy, over the examples both it and extagents answered without error: n,
examples where it made at least extagents' seeking calls, lower / higher F1, other wording; and for
the examples where extagents sought in a later stage (round 2): the chunks extagents and the strategy
sought there, and the first stage's seeks that returned output (these three for extagents-reseek
only: a grow run's later stages are its tranches). Nothing is run.

Arguments:
  records.jsonl   an eval run's records file
Options:
  -h, --help      print this and exit
`;

const { positionals } = benchArgs(USAGE, {}, true);
if (positionals.length !== 1) usageError(USAGE, `1 argument, got ${positionals.length}`);
const [file] = positionals;
if (!existsSync(file)) usageError(USAGE, `no records file ${file}`);

const { records, warnings } = readRecords(file);
for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
const byKey = new Map<string, Map<string, EvalRecord>>();
for (const r of records) {
  if (r.error !== undefined) continue;
  const key = JSON.stringify([r.dataset, r.targetTokens, r.exampleId]);
  byKey.set(key, (byKey.get(key) ?? new Map()).set(r.strategy, r));
}

const seeks = (r: EvalRecord) => r.calls.filter((c) => c.role === 'seeker');
/** Seeking calls after the first stage: the later rounds' (the first stage is round 1's Map). */
const laterSeeks = (r: EvalRecord): number => {
  const first = Math.min(...seeks(r).map((c) => c.stage));
  return seeks(r).filter((c) => c.stage !== first).length;
};

process.stdout.write(
  `${file}\n\n| dataset | target | strategy | n | seeks >= full | F1 lower | F1 higher | other wording | with a later stage | later seeks: full / strategy | first-stage seeks with output |\n|---|---|---|---|---|---|---|---|---|---|---|\n`,
);
const groups = new Map<string, Array<[EvalRecord, EvalRecord]>>();
for (const strategies of byKey.values()) {
  const full = strategies.get('extagents');
  if (full === undefined) continue;
  for (const [name, r] of strategies) {
    if (name === 'extagents') continue;
    const group = JSON.stringify([full.dataset, full.targetTokens, name]);
    groups.set(group, [...(groups.get(group) ?? []), [full, r]]);
  }
}
if (groups.size === 0) usageError(USAGE, 'no example has extagents and another strategy');
for (const [group, pairs] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
  const [dataset, target, strategy] = JSON.parse(group) as [string, number, string];
  // The later-stage columns are reseek's (a grow run's later stages are its tranches, not round 2).
  const later = strategy === 'extagents-reseek' ? pairs.filter(([full]) => laterSeeks(full) > 0) : [];
  const sum = (xs: number[]): number => xs.reduce((s, x) => s + x, 0);
  const cells = [
    dataset,
    String(target),
    strategy,
    String(pairs.length),
    String(pairs.filter(([full, r]) => seeks(r).length >= seeks(full).length).length),
    String(pairs.filter(([full, r]) => r.f1 < full.f1).length),
    String(pairs.filter(([full, r]) => r.f1 > full.f1).length),
    String(pairs.filter(([full, r]) => r.prediction !== full.prediction).length),
    strategy === 'extagents-reseek' ? String(later.length) : '–',
    later.length === 0 ? '–' : later.map(([full, r]) => `${laterSeeks(full)}/${laterSeeks(r)}`).join(', '),
    later.length === 0
      ? '–'
      : later
          .map(([full]) => {
            const first = Math.min(...seeks(full).map((c) => c.stage));
            return String(sum(seeks(full).map((c) => (c.stage === first && c.outputTokens > 0 ? 1 : 0))));
          })
          .join(', '),
  ];
  process.stdout.write(`| ${cells.join(' | ')} |\n`);
}
