/**
 * The command line of a bench script (bench/*.ts; this directory holds no script): node:util
 * `parseArgs` in strict mode, with `--help`/`-h` added to the script's options. `--help` writes the
 * script's USAGE to stdout and exits 0 before any work; an unknown option, an option without its
 * value, or a positional argument where none is taken writes the parser's message (it names the
 * argument) and the usage to stderr and exits 2. test/unit/bench-help.test.ts runs every script so.
 * A reader that closes stdout early (`| head`) ends the script quietly with exit 141.
 */
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { exitQuietlyOnBrokenPipe } from '../../local/cli/broken-pipe';

type Options = NonNullable<ParseArgsConfig['options']>;

const HELP = { help: { type: 'boolean', short: 'h', default: false } } as const;

/** This script's name as the usage writes it (`bench/<file>.ts`). */
function scriptName(): string {
  return `bench/${path.basename(process.argv[1] ?? 'script')}`;
}

/** Exit 2 with `message` and the usage on stderr (a bad command line: nothing was done). */
export function usageError(usage: string, message: string): never {
  process.stderr.write(`${scriptName()}: ${message}\n\n${usage}`);
  process.exit(2);
}

/**
 * The parsed command line (process.argv after the script) for `options` plus `help`; with
 * `allowPositionals`, the positional arguments too. Exits on `--help`/`-h` (0) and on a usage error (2).
 */
export function benchArgs<const O extends Options, const P extends boolean = false>(
  usage: string,
  options: O,
  allowPositionals?: P,
): ReturnType<typeof parseArgs<{ options: O & typeof HELP; allowPositionals: P; strict: true }>> {
  const config = { args: process.argv.slice(2), options: { ...options, ...HELP }, allowPositionals: allowPositionals ?? false, strict: true } as {
    args: string[];
    options: O & typeof HELP;
    allowPositionals: P;
    strict: true;
  };
  // `npx tsx bench/<script>.ts | head`: quietly, exit 141, not node's EPIPE trace.
  exitQuietlyOnBrokenPipe();
  let parsed;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    usageError(usage, error instanceof Error ? error.message : String(error));
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return parsed;
}
