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

/**
 * The error that explains a failed seeking round.
 * - Every recorded failure has the same typed error (name and message): that error, its message
 *   whole plus how many chunks it failed, so `ModelConfigurationError: Amazon Bedrock refused …`
 *   reaches the user as itself.
 * - Otherwise a SeekingFailedError listing each distinct error (name, chunk count, message whole),
 *   most frequent first.
 * @param failures the round's recorded failures (chunk, error name, message), any order.
 * @param at.round the 1-based round; `at.chunks` the run's chunk count.
 */
export function seekingFailureError(failures: SeekFailure[], at: { round: number; chunks: number }): ExtAgentsError {
  const where = `${failures.length} of the ${at.chunks} chunk(s) of round ${at.round}`;
  if (failures.length === 0) {
    return new SeekingFailedError(`Too many seeking agents failed in round ${at.round}; none recorded its error (killed by a timeout or crash?)`);
  }
  const groups = new Map<string, { error: string; message: string; chunks: number }>();
  for (const failure of failures) {
    const key = `${failure.error}\u0000${failure.message}`;
    const group = groups.get(key) ?? { error: failure.error, message: failure.message, chunks: 0 };
    group.chunks += 1;
    groups.set(key, group);
  }
  const sorted = [...groups.values()].sort((a, b) => b.chunks - a.chunks || a.error.localeCompare(b.error));
  const ErrorClass = ERROR_CLASSES[sorted[0].error];
  if (sorted.length === 1 && ErrorClass !== undefined) {
    return new ErrorClass(`${sorted[0].message} (this error failed the seeking agents of ${where}; the run stopped)`);
  }
  const listed = sorted.slice(0, MAX_LISTED_ERRORS).map((g) => `${g.error} (${g.chunks} chunk(s)): ${g.message}`);
  const more = sorted.length > MAX_LISTED_ERRORS ? `; and ${sorted.length - MAX_LISTED_ERRORS} other error(s)` : '';
  return new SeekingFailedError(`Too many seeking agents failed in round ${at.round} (${where}; the run stopped): ${listed.join('; ')}${more}`);
}
