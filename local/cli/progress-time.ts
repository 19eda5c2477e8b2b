/**
 * The `formatTime` option of the CLI's progress bars (cli-progress): the library's own format, except
 * for an ETA it cannot estimate yet. At 0 of n done cli-progress's ETA is the string "INF", which its
 * two-character padding turns into "NFs"; that is shown as "--" instead.
 */
import defaultFormatTime from 'cli-progress/lib/format-time';

/** Seconds as cli-progress formats them (`12s`, `3m05s`, `1h02m`), `--` when not a finite number. */
export function formatProgressTime(seconds: unknown, options: unknown, roundToMultipleOf: number): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '--';
  return defaultFormatTime(seconds, options, roundToMultipleOf);
}
