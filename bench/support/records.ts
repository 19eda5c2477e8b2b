/**
 * A bench's own JSON-lines records file, read strictly (bench/fidelity-compare.ts, bench/round2-seek.ts):
 * the lines by eval/jsonl.ts `parseJsonLines` (the project's one JSON-lines reader), each checked
 * against the bench's zod schema. A records file is the bench's own output, so anything wrong in it
 * is a usage error naming the file and line (exit 2), never a line skipped or a number made of it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { z } from 'zod';
import { formatWarning, parseJsonLines } from '../../eval/jsonl';
import { usageError } from './args';

/**
 * The records of `file`, in file order, each with its 1-based line number.
 * @param what the records' name in the error ("a fidelity record").
 * @returns never for a missing file, a directory, or a line that is not JSON or not a record: a
 *   usage error naming the file (and line).
 */
export function readBenchRecords<T>(file: string, schema: z.ZodType<T>, usage: string, what: string): Array<{ line: number; value: T }> {
  if (!existsSync(file)) usageError(usage, `${file} does not exist`);
  if (!statSync(file).isFile()) usageError(usage, `${file} is not a file`);
  const { lines, warnings } = parseJsonLines(readFileSync(file, 'utf8'), file);
  if (warnings.length > 0) usageError(usage, formatWarning(warnings[0]).replace(/; line skipped.*$/, ''));
  return lines.map(({ line, value }) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return usageError(usage, `${file}:${line}: not ${what} (${issue.path.join('.') || 'the line'}: ${issue.message})`);
    }
    return { line, value: parsed.data };
  });
}
