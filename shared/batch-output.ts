/**
 * Batch inference output lines that cannot be read (a torn write, a damaged file): each is the failure
 * of the record it names, with its cause, so its chunk is sought on demand like a record the job did
 * not return, instead of failing the whole round (or being skipped with only a log line). One rule for
 * every batch adapter: the local batch runner (local/engine/local-batch.ts) and Bedrock
 * (models/bedrock/batch-records.ts).
 */
import type { BatchRecordResult } from './ports';

/** The error code of a record whose output line is not the JSON object the adapter expects. */
export const MALFORMED_BATCH_OUTPUT = 'MalformedBatchOutput';

/**
 * The record id an output line names, read without parsing it as JSON (`"recordId":"…"`), so a line
 * cut short still names its record; undefined when the line names none.
 */
export function namedRecordId(line: string): string | undefined {
  return /"recordId"\s*:\s*"([^"\\]{1,256})"/.exec(line)?.[1];
}

/**
 * The failed result of an output line that could not be read: the record it names, failed with
 * `MalformedBatchOutput` and why (the parse error, the first 80 characters of the line); undefined when
 * the line names no record (the record then counts as missing, sought on demand all the same).
 */
export function malformedBatchOutput(line: string, why: string): BatchRecordResult | undefined {
  const recordId = namedRecordId(line);
  if (recordId === undefined) return undefined;
  const head = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return { recordId, error: { code: MALFORMED_BATCH_OUTPUT, message: `its output line could not be read (${why}): ${JSON.stringify(head)}` } };
}
