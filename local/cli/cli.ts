/**
 * The `extagents` command line (commander): the entry point. `extagents ask` runs the CDK-synthesized workflow
 * locally: in-process Lambda handlers, DynamoDB on dynalite (127.0.0.1), the bucket as a directory.
 * The commands are listed in local/cli/commands.ts and share local/cli/common.ts.
 */
import { exitQuietlyOnBrokenPipe } from './broken-pipe';
import { Command, CommanderError, Help } from 'commander';
import packageJson from '../../package.json';
import { EmptyCorpusError, ExtAgentsError } from '../../shared/errors';
import { COMMANDS } from './commands';
import { disposeAll } from '../../models/disposers';
import { errorJson, UsageError } from './common';
import { applySettings, loadSettings, settingsHelp, type Settings } from './settings';

// Loaded when needed, not at start-up: the local stack when an error is reported.
const stackModule = (): typeof import('../engine/stack') => require('../engine/stack') as typeof import('../engine/stack');

/**
 * Build the CLI program. Only the modules of the command `argv` runs are loaded (`extagents help
 * <command>` counts as running it); every other command of local/cli/commands.ts is listed by its name,
 * term and summary alone. Without `argv` (tests), every command is loaded.
 * @param argv the process arguments (`node`, the script, then the command line).
 */
export function buildProgram(argv?: readonly string[]): Command {
  const program = new Command();
  const json = argv !== undefined && wantsJson(argv);
  program
    .name('extagents')
    .description(
      'ExtAgents: question answering over external knowledge far larger than a context window.\n' +
        'Runs the same Step Functions workflow as the AWS stack, locally (no AWS account needed).',
    )
    .version(packageJson.version)
    // A usage error is one line with the CLI's prefix, then a hint where the help is (not the help);
    // with --json, one JSON line (errorJson) and no hint.
    .configureOutput({
      outputError: (text, write) => {
        // commander prefixes a parser's error with the flag and value ("option '--rounds <n>' argument
        // '0' is invalid. --rounds must be …"): ours already names both, so the prefix goes.
        const said = text.replace(/^error: option '[^']*' argument '[^']*' is invalid\. (?=--)/, 'error: ');
        write(json ? errorJson('UsageError', said.replace(/^error: /, '').trim(), 2) : said.replace(/^error: /, 'extagents: '));
      },
    })
    .showHelpAfterError(json ? false : "(see 'extagents --help')")
    // The listing of a command that is not loaded comes from its table entry.
    .configureHelp({ subcommandTerm: (command) => COMMANDS.find((c) => c.name === command.name())?.term ?? new Help().subcommandTerm(command) })
    // Usage errors throw CommanderError (mapped to exit status 2) instead of exiting.
    .exitOverride();

  const args = argv?.slice(2) ?? [];
  const running = args[0] === 'help' ? args[1] : args[0];
  for (const entry of COMMANDS) {
    if (argv !== undefined && entry.name !== running) continue;
    // A module registers all of its commands at once (ingest and job).
    if (program.commands.some((c) => c.name() === entry.name)) continue;
    entry.register(program);
    // Each command's description is its table summary (the modules do not import the table).
    for (const command of program.commands) {
      const summary = COMMANDS.find((c) => c.name === command.name())?.summary;
      if (summary !== undefined) command.description(summary);
    }
  }
  // The others, by name and summary only (the program's help lists them in the table's order when
  // none is loaded, which is when it is shown).
  const loaded = new Set(program.commands.map((c) => c.name()));
  for (const entry of COMMANDS) if (!loaded.has(entry.name)) program.command(entry.name).description(entry.summary);
  // Each command's hint names its own help (settings are copied to commands when they are created).
  // Each command's hint names its own help, subcommands too (`extagents runs rm --help`); none with --json.
  const hint = (command: Command, path: string): void => {
    command.showHelpAfterError(json ? false : `(see 'extagents ${path} --help')`);
    for (const sub of command.commands) hint(sub, `${path} ${sub.name()}`);
  };
  for (const command of program.commands) hint(command, command.name());
  // Option defaults from EXTAGENTS_<OPTION> and the defaults file (local/cli/settings.ts), loaded and
  // validated once when a command runs (not for its help), and given to the command before it parses
  // its flags, so a flag wins. `runs` hands them on to its subcommands.
  let settings: Settings | undefined;
  const asksForHelp = argv !== undefined && (argv[2] === 'help' || argv.slice(2).some((arg) => arg === '--help' || arg === '-h'));
  const giveSettings =
    (top: string) =>
    (_parent: Command, command: Command): void => {
      if (asksForHelp) return;
      settings ??= loadSettings();
      applySettings(command, top, settings);
    };
  for (const command of program.commands) {
    const help = settingsHelp(command.name());
    if (help !== undefined && loaded.has(command.name())) command.addHelpText('after', help);
    if (command.commands.length > 0) command.hook('preSubcommand', giveSettings(command.name()));
  }
  program.hook('preSubcommand', (parent, command) => giveSettings(command.name())(parent, command));
  return program;
}

/** The command path the command line runs (`ask`, `runs rm`), for a usage error's hint; undefined for none. */
function commandPath(argv: readonly string[]): string | undefined {
  const [first, second] = argv.slice(2);
  const entry = COMMANDS.find((c) => c.name === first);
  if (!entry) return undefined;
  return entry.name === 'runs' && ['ls', 'show', 'rm'].includes(second ?? '') ? `runs ${second}` : entry.name;
}

/** Does the command line ask for JSON output (`--json` before any `--`)? Then errors are JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/** Entry point: exit 0 on a result (answered or refused), 1 on an error, 2 on a usage error or a corpus with no text (EmptyCorpusError). */
export async function main(argv: string[] = process.argv): Promise<void> {
  const json = wantsJson(argv);
  const report = (name: string, message: string, exitStatus: number, text: string): void => {
    process.stderr.write(json ? errorJson(name, message, exitStatus) : text);
    process.exitCode = exitStatus;
  };
  try {
    await buildProgram(argv).parseAsync(argv);
    await disposeAll();
  } catch (error) {
    await disposeAll();
    if (error instanceof CommanderError) {
      // Help and version are not errors; every other commander error is a usage error (exit 2).
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof UsageError) {
      const path = commandPath(argv);
      // One hint: a message that already names where to look (`(see 'extagents runs ls')`) gets no second one.
      const hint = path && !/\(see '[^']+'\)/.test(error.message) ? `(see 'extagents ${path} --help')\n` : '';
      report('UsageError', error.message, 2, `extagents: ${error.message}\n${hint}`);
      return;
    }
    // A corpus with no text to read is the user's input, as an empty corpus folder is (a usage error,
    // exit 2): one rule whether it is known from the listing or only once Prepare decoded the files
    // (nothing but binary files), both before any model call. The line keeps the error's name.
    if (error instanceof EmptyCorpusError) {
      report(error.name, error.message, 2, `extagents: ${error.name}: ${error.message}\n`);
      return;
    }
    // A full disk or an unwritable state directory mid-run: one line naming the error and the path.
    const reported = error instanceof ExtAgentsError ? error : stackModule().storageErrorOf(error);
    if (reported) {
      report(reported.name, reported.message, 1, `extagents: ${reported.name}: ${reported.message}\n`);
      return;
    }
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    report(error instanceof Error ? error.name : 'Error', detail, 1, `extagents: unexpected error: ${detail}\n`);
  }
}

/**
 * For the CLI process: an error thrown outside any awaited call (a library callback, e.g. dynalite
 * rethrowing LevelDB's `IO error: …: No space left on device` from a write callback) would crash the
 * process with a stack trace. A storage failure among them is said in one line (exit 1), as
 * `main` says the errors it catches; any other is reported as unexpected, with its stack.
 */
export function installFatalErrorHandler(): void {
  // `extagents runs ls | head -2`: quietly, exit 141 (local/cli/broken-pipe.ts).
  exitQuietlyOnBrokenPipe();
  process.on('uncaughtException', (error: unknown) => {
    const storage = stackModule().storageErrorOf(error);
    process.stderr.write(
      storage
        ? `extagents: ${storage.name}: ${storage.message}\n`
        : `extagents: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}

if (require.main === module) {
  installFatalErrorHandler();
  void main();
}
