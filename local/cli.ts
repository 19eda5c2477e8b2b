/**
 * The `extagents` command line (commander). `extagents ask` runs the CDK-synthesized workflow
 * locally: in-process Lambda handlers, DynamoDB on dynalite (127.0.0.1), the bucket as a directory.
 */
import { Command, CommanderError, Help, Option } from 'commander';
import { accessSync, constants as fsConstants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import packageJson from '../package.json';
import { ExtAgentsError } from '../shared/errors';
import { toModelSpec, type ModelSpec, type ModelSpecInput } from '../shared/llm/model-spec';
import { STRUCTURED_MODES } from '../lambdas/adapters/openai';
import { COMMANDS } from './commands';

// Loaded when needed, not at start-up (`--version` and `--help` load commander and package.json):
// the model runtime when a llama: model is checked, the local stack when an error is reported.
const llamaModule = (): typeof import('./llama') => require('./llama') as typeof import('./llama');
const stackModule = (): typeof import('./stack') => require('./stack') as typeof import('./stack');
/** local/llama.ts if this process loaded it (so its models may need disposing), else undefined. */
const loadedLlamaModule = (): typeof import('./llama') | undefined => (require.cache[require.resolve('./llama')] ? llamaModule() : undefined);

/** A command-line usage error (exit status 2): bad option values, question, run id or state dir. */
export class UsageError extends ExtAgentsError {}

/** `--help` text of every command's `-m, --model <spec>` (parsed by shared/llm/model-spec.ts). */
export const MODEL_OPTION_HELP =
  'model: "extractive" (offline BM25 extractive reader, not an LLM), "bedrock:<seekerId>[,<reasonerId>]" (Amazon Bedrock Converse API; needs AWS credentials), "openai:<model>[,<reasonerModel>]" (an OpenAI-compatible server: vLLM, Ollama, llama.cpp; OPENAI_BASE_URL, OPENAI_API_KEY) or "llama:<model.gguf>[,<reasoner.gguf>]" (a GGUF model run in-process on the CPU)';

/** `--help` text of every command's `--structured <mode>` (the OpenAI-compatible adapter's structured-output mode). */
export const STRUCTURED_OPTION_HELP =
  'structured replies of an openai: model (default: OPENAI_STRUCTURED, else "auto"): "auto" (the best the server accepts: response_format json_schema, else json_object, else prose), "schema", "json" or "off"; llama: models always use a grammar and Bedrock a forced tool where the model supports one, so it does not apply to them';

/** The `--structured <mode>` option, added to every command that takes `--model`. */
export function structuredOption(): Option {
  return new Option('--structured <mode>', STRUCTURED_OPTION_HELP).choices(STRUCTURED_MODES);
}

/** Apply `--structured` (when given) for the OpenAI-compatible adapter, which reads OPENAI_STRUCTURED at load. */
export function applyStructured(mode: string | undefined): void {
  if (mode !== undefined) process.env.OPENAI_STRUCTURED = mode;
}

/**
 * Parse the `--model` flag: the one parse of the spec along a command (the parsed value is passed on).
 * @throws UsageError `--model: <why>`.
 */
export function parseModelFlag(text: string): ModelSpec {
  try {
    return toModelSpec(text);
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Check a `llama:` spec's model files before any work or state: missing, not GGUF, larger than
 * memory; with `load`, also load the model (once per process: the local stack then reuses it), so a
 * damaged file fails here too. One clear line and exit status 2. Other specs: nothing to check here.
 * @param load the sequences the command's stack will ask for (the same load options hit the cache).
 * @returns the model's context size (tokens) when it was loaded.
 * @throws UsageError naming the file and the problem.
 */
export async function checkLocalModelFiles(spec: ModelSpecInput, load?: { sequences: number }): Promise<number | undefined> {
  let parsed;
  try {
    parsed = toModelSpec(spec);
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
  if (parsed.kind !== 'llama') return undefined;
  try {
    // Loading checks each file first (checkGgufFile), then loads it.
    if (load) return (await llamaModule().loadLlamaModels(parsed, { sequences: load.sequences })).contextTokens;
    for (const file of new Set([parsed.seekerModelId, parsed.reasonerModelId])) await llamaModule().checkGgufFile(file);
    return undefined;
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Make a directory and its missing parents, one level at a time. Not `mkdirSync(dir, { recursive:
 * true })`: on Node 20 that never returns for a path under a pseudo file system that refuses new
 * entries (`/proc/x`: mkdir gives ENOENT although the parent exists, and Node retries forever).
 * @throws the first failing mkdir's error (ENOENT, EACCES, EROFS, ENOTDIR, …); EEXIST is not one.
 */
export function makeDirectories(dir: string): void {
  const absolute = path.resolve(dir);
  const missing: string[] = [];
  for (let current = absolute; !existsSync(current); current = path.dirname(current)) {
    missing.unshift(current);
    if (path.dirname(current) === current) break;
  }
  for (const folder of missing) {
    try {
      mkdirSync(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** Make `--state-dir` if needed. @throws UsageError unless `dir` is (or can be made) a writable directory. */
export function writableStateDir(dir: string): void {
  try {
    makeDirectories(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
    accessSync(dir, fsConstants.W_OK);
  } catch (error) {
    throw new UsageError(`--state-dir ${dir} is not a writable directory (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
}

/**
 * Build the CLI program. Only the modules of the command `argv` runs are loaded (`extagents help
 * <command>` counts as running it); every other command of local/commands.ts is listed by its name,
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
      outputError: (text, write) => write(json ? errorJson('UsageError', text.replace(/^error: /, '').trim(), 2) : text.replace(/^error: /, 'extagents: ')),
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
  }
  // The others, by name and summary only (the program's help lists them in the table's order when
  // none is loaded, which is when it is shown).
  const loaded = new Set(program.commands.map((c) => c.name()));
  for (const entry of COMMANDS) if (!loaded.has(entry.name)) program.command(entry.name).description(entry.summary);
  // Each command's hint names its own help (settings are copied to commands when they are created).
  if (!json) for (const command of program.commands) command.showHelpAfterError(`(see 'extagents ${command.name()} --help')`);
  return program;
}

/** Does the command line ask for JSON output (`--json` before any `--`)? Then errors are JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  const args = argv.slice(2);
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/**
 * An error as the CLI writes it with `--json`: one line on stderr,
 * `{"error":{"name":"UsageError","message":"…","exitStatus":2}}` (stdout keeps only results).
 */
function errorJson(name: string, message: string, exitStatus: number): string {
  return `${JSON.stringify({ error: { name, message, exitStatus } })}\n`;
}

/** Entry point: exit 0 on a result (answered or refused), 1 on an error, 2 on a usage error. */
export async function main(argv: string[] = process.argv): Promise<void> {
  const json = wantsJson(argv);
  const report = (name: string, message: string, exitStatus: number, text: string): void => {
    process.stderr.write(json ? errorJson(name, message, exitStatus) : text);
    process.exitCode = exitStatus;
  };
  try {
    await buildProgram(argv).parseAsync(argv);
    await loadedLlamaModule()?.disposeLlamaModels();
  } catch (error) {
    await loadedLlamaModule()?.disposeLlamaModels();
    if (error instanceof CommanderError) {
      // Help and version are not errors; every other commander error is a usage error (exit 2).
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof UsageError) {
      report('UsageError', error.message, 2, `extagents: ${error.message}\n`);
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
