/**
 * A reader that stops early (`extagents runs ls | head -2`, `npx tsx bench/chunk-stats.ts | head`)
 * closes stdout: the rest of the output has nowhere to go. The process then ends quietly with the
 * status of a process a broken pipe stopped (128 + SIGPIPE = 141, as `git log | head` ends), so that
 * `set -o pipefail` does not take an unfinished command for a success, instead of node's EPIPE trace.
 * One rule for the CLI (local/cli/cli.ts) and the bench scripts (bench/support/args.ts).
 */
export function exitQuietlyOnBrokenPipe(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(141);
    throw error;
  });
}
