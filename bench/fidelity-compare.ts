/**
 * One condition of the fidelity bench in two runs (`bench/fidelity.ts --records`), paired by
 * question: how a change of the product (a prompt layout, a default) moves its F1 on the same
 * questions. Over the question ids both files hold for the condition: F1 and EM means (95% bootstrap
 * intervals), the paired F1 difference B − A with its interval and two-sided p (eval/stats.ts), how
 * many answers changed, refusals, and seconds per question. Nothing is run.
 *
 * Usage: npx tsx bench/fidelity-compare.ts <recordsA> <recordsB> [condition=gold]
 */
import { realpathSync } from 'node:fs';
import { z } from 'zod';
import { bootstrapMeanInterval, pairedBootstrap } from '../eval/stats';
import { benchArgs, usageError } from './support/args';
import { readBenchRecords } from './support/records';

const USAGE = `Usage: npx tsx bench/fidelity-compare.ts <recordsA> <recordsB> [condition=gold]

One condition of the fidelity bench in two runs ('bench/fidelity.ts --records FILE'), paired by
question: F1 and EM of each (95% bootstrap intervals), the paired F1 difference B - A with its
interval and two-sided p, answers changed, refusals and seconds per question, over the questions both
files hold. Nothing is run; prints a Markdown table.

Arguments (positional, in this order):
  recordsA     the first records file (JSON lines)
  recordsB     the second records file
  condition    plain, gold, own or padded (default gold)
Options:
  -h, --help   print this and exit
`;

/** The fields of a fidelity record this script reads (bench/fidelity.ts writes more), checked per line. */
const FidelityRecordSchema = z.looseObject({
  id: z.string().min(1),
  condition: z.string(),
  answer: z.string(),
  answered: z.boolean(),
  f1: z.number().min(0).max(1),
  em: z.number().min(0).max(1),
  ms: z.number().min(0),
});
type FidelityRecord = z.infer<typeof FidelityRecordSchema>;

const { positionals } = benchArgs(USAGE, {}, true);
if (positionals.length < 2 || positionals.length > 3)
  usageError(USAGE, `two records files and an optional condition expected, got ${positionals.length} arguments`);
const [fileA, fileB, condition = 'gold'] = positionals;
if (!['plain', 'gold', 'own', 'padded'].includes(condition)) usageError(USAGE, `condition: plain, gold, own or padded expected, got ${condition}`);

/**
 * The file's records of the condition, by question id.
 * @returns never for a line that is not a fidelity record or a question's second record of the
 *   condition: a usage error naming the file and line (bench/fidelity.ts writes one per pair).
 */
function read(file: string): Map<string, FidelityRecord> {
  const byId = new Map<string, FidelityRecord>();
  const records = readBenchRecords(file, FidelityRecordSchema, USAGE, 'a fidelity record');
  for (const { line, value: record } of records) {
    if (record.condition !== condition) continue;
    if (byId.has(record.id)) usageError(USAGE, `${file}:${line}: a second '${condition}' record of question ${record.id}`);
    byId.set(record.id, record);
  }
  if (records.length === 0) usageError(USAGE, `${file} holds no fidelity record`);
  return byId;
}

const a = read(fileA);
const b = read(fileB);
const ids = [...a.keys()].filter((id) => b.has(id));
if (ids.length === 0) usageError(USAGE, `no question has a '${condition}' record in both files (${a.size} in ${fileA}, ${b.size} in ${fileB})`);
/** A file name inside a Markdown table cell. */
const cell = (text: string): string => text.replace(/\|/g, '\\|');
const pct = (x: number): string => (x * 100).toFixed(1);
const row = (name: string, file: string, rs: FidelityRecord[]): string => {
  const f1 = bootstrapMeanInterval(rs.map((r) => r.f1));
  const em = rs.reduce((s, r) => s + r.em, 0) / rs.length;
  const refusals = rs.filter((r) => !r.answered).length;
  const seconds = rs.reduce((s, r) => s + r.ms, 0) / rs.length / 1000;
  return `| ${name} (${cell(file)}) | ${pct(f1.mean)} [${pct(f1.low)}, ${pct(f1.high)}] | ${pct(em)} | ${refusals} | ${seconds.toFixed(1)} |`;
};
const ra = ids.map((id) => a.get(id) as FidelityRecord);
const rb = ids.map((id) => b.get(id) as FidelityRecord);
const diff = pairedBootstrap(
  rb.map((r) => r.f1),
  ra.map((r) => r.f1),
);
const changed = ids.filter((_, i) => ra[i].answer !== rb[i].answer).length;
const unpaired = (m: Map<string, FidelityRecord>, other: Map<string, FidelityRecord>): number => [...m.keys()].filter((id) => !other.has(id)).length;
process.stdout.write(
  `condition ${condition}, ${ids.length} question${ids.length === 1 ? '' : 's'} in both files (left out, without a pair: ${unpaired(a, b)} of A, ${unpaired(b, a)} of B)\n`,
);
if (realpathSync(fileA) === realpathSync(fileB)) process.stdout.write('A and B are the same file\n');
process.stdout.write('\n');
process.stdout.write('| run | F1 [95% CI] | EM | refusals | s/question |\n|---|---|---|---|---|\n');
process.stdout.write(`${row('A', fileA, ra)}\n${row('B', fileB, rb)}\n\n`);
process.stdout.write(
  `B − A F1: ${pct(diff.mean)} [${pct(diff.low)}, ${pct(diff.high)}], p = ${diff.p.toFixed(2)}; answers changed: ${changed} of ${ids.length}\n`,
);
