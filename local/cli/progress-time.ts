/**
 * The `formatTime` option of the CLI's progress bars (cli-progress): the library's own format, except
 * for an ETA it cannot estimate yet. At 0 of n done cli-progress's ETA is the string "INF", which its
 * two-character padding turns into "NFs"; that is shown as "--" instead. And the time left of the
 * progress lines without a bar ({@link formatDurationMs}).
 */
import defaultFormatTime from 'cli-progress/lib/format-time';

/** Seconds as cli-progress formats them (`12s`, `3m05s`, `1h02m`), `--` when not a finite number. */
export function formatProgressTime(seconds: unknown, options: unknown, roundToMultipleOf: number): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '--';
  return defaultFormatTime(seconds, options, roundToMultipleOf);
}

/** A time left, ms, as the progress lines say it: `45s`, `3m05s`, `1h02m` (rounded to the second, or minute past an hour). */
export function formatDurationMs(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const two = (n: number): string => String(n).padStart(2, '0');
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${two(seconds % 60)}s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)}h${two(minutes % 60)}m`;
}
