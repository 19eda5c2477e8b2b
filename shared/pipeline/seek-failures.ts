/**
 * What to tell the user when a round's seeking failed (the Distributed Map exceeded its tolerated
 * failure threshold): the errors its seeking agents recorded per chunk (`MessageStore.seekFailures`),
 * whole. The Map Run's own failure says only that the threshold was exceeded (in AWS) or lists a few
 * item causes as Lambda error JSON, cut (locally); the recorded errors carry the real reason, e.g. a
 * Bedrock model id the account cannot use.
 */
import { ERROR_CLASSES, ExtAgentsError, SeekingFailedError } from '../errors';
import type { SeekFailure } from '../ports';

/** Distinct errors listed in a SeekingFailedError message (the rest are counted). */
const MAX_LISTED_ERRORS = 5;
/** Chunk indexes named per error (the rest are counted). */
const MAX_LISTED_CHUNKS = 10;

/** `3`, `3, 11, 19`, `3, 11, … and 4 more`, ascending. */
function chunkList(chunks: number[]): string {
  const sorted = [...chunks].sort((a, b) => a - b);
  const shown = sorted.slice(0, MAX_LISTED_CHUNKS).join(', ');
  return sorted.length > MAX_LISTED_CHUNKS ? `${shown} and ${sorted.length - MAX_LISTED_CHUNKS} more` : shown;
}

/**
 * The error that explains a failed seeking round.
 * - Every recorded failure has the same typed error (name and message): that error, its message
 *   whole plus how many chunks it failed, so `ModelConfigurationError: Amazon Bedrock refused …`
 *   reaches the user as itself.
 * - Otherwise a SeekingFailedError listing each distinct error (name, its chunks, message whole),
 *   most frequent first.
 * @param failures the round's recorded failures (chunk, error name, message), any order.
 * @param at.round the 1-based round; `at.chunks` the run's chunk count; `at.toleratedPercentage`
 *   the run option `toleratedFailurePercentage`.
 */
export function seekingFailureError(failures: SeekFailure[], at: { round: number; chunks: number; toleratedPercentage: number }): ExtAgentsError {
  const where = `${failures.length} of the ${at.chunks} chunk(s) of round ${at.round}, more than the tolerated ${at.toleratedPercentage}%`;
  if (failures.length === 0) {
    return new SeekingFailedError(`Too many seeking agents failed in round ${at.round}; none recorded its error (killed by a timeout or crash?)`);
  }
  const groups = new Map<string, { error: string; message: string; chunks: number[] }>();
  for (const failure of failures) {
    const key = `${failure.error}\u0000${failure.message}`;
    const group = groups.get(key) ?? { error: failure.error, message: failure.message, chunks: [] };
    group.chunks.push(failure.chunk);
    groups.set(key, group);
  }
  const sorted = [...groups.values()].sort(
    (a, b) => b.chunks.length - a.chunks.length || a.error.localeCompare(b.error) || Math.min(...a.chunks) - Math.min(...b.chunks),
  );
  const ErrorClass = ERROR_CLASSES[sorted[0].error];
  if (sorted.length === 1 && ErrorClass !== undefined) {
    return new ErrorClass(`${sorted[0].message} (this error failed the seeking agents of ${where}; the run stopped)`);
  }
  const listed = sorted.slice(0, MAX_LISTED_ERRORS).map((g) => `${g.error} (chunk${g.chunks.length > 1 ? 's' : ''} ${chunkList(g.chunks)}): ${g.message}`);
  const more = sorted.length > MAX_LISTED_ERRORS ? `; and ${sorted.length - MAX_LISTED_ERRORS} other error(s)` : '';
  return new SeekingFailedError(`Too many seeking agents failed in round ${at.round} (${where}; the run stopped): ${listed.join('; ')}${more}`);
}
