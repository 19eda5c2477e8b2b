/**
 * The `extagents` command line (commander). `extagents ask` runs the CDK-synthesized workflow
 * locally: in-process Lambda handlers, DynamoDB on dynalite (127.0.0.1), the bucket as a directory.
 */
import { Command, CommanderError, Option } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { accessSync, constants as fsConstants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import packageJson from '../package.json';
import { ExtAgentsError, InvalidInputError } from '../shared/errors';
import { parseRunOptions, RunOptionsSchema, type RunOptionsInput } from '../shared/config';
import { parseModelSpec } from '../shared/llm/model-spec';
import { PrepareEventSchema, RunIdSchema } from '../shared/pipeline/state';
import { formatResult } from './format';
import { checkGgufFile, disposeLlamaModels, loadLlamaModels, MAX_LLAMA_SEQUENCES } from './llama';
import { chunkFitProblem, storageErrorOf } from './stack';
import { STRUCTURED_MODES } from '../lambdas/adapters/openai';
import { runLocal, type LocalProgress } from './run';
import { resolveCorpus } from './corpus';
import { addServeCommand } from './serve-command';
import { addUploadCommands } from './uploads-command';
import { addSurveyCommand } from './survey-command';
import { addEvalCommand } from './eval-command';
import { rangeText, schemaFlag, schemaRange } from './cli-numbers';

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
 * Check a `llama:` spec's model files before any work or state: missing, not GGUF, larger than
 * memory; with `load`, also load the model (once per process: the local stack then reuses it), so a
 * damaged file fails here too. One clear line and exit status 2. Other specs: nothing to check here.
 * @param load the sequences the command's stack will ask for (the same load options hit the cache).
 * @returns the model's context size (tokens) when it was loaded.
 * @throws UsageError naming the file and the problem.
 */
export async function checkLocalModelFiles(spec: string, load?: { sequences: number }): Promise<number | undefined> {
  let parsed;
  try {
    parsed = parseModelSpec(spec);
  } catch (error) {
    throw new UsageError(`--model: ${(error as Error).message}`, { cause: error });
  }
  if (parsed.kind !== 'llama') return undefined;
  try {
    // Loading checks each file first (checkGgufFile), then loads it.
    if (load) return (await loadLlamaModels(spec, { sequences: load.sequences })).contextTokens;
    for (const file of new Set([parsed.seekerModelId, parsed.reasonerModelId])) await checkGgufFile(file);
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

/** A run option's help with the range its schema validates (shared/config.ts). */
function runOptionHelp(help: string, field: keyof typeof RunOptionsSchema.shape): string {
  return `${help} (${rangeText(schemaRange(RunOptionsSchema, field))})`;
}

/**
 * Check everything the user typed before any work (no corpus copy, no server): options, question,
 * model spec, run id, state directory.
 * @throws UsageError with the validator's message.
 */
function validateAsk(opts: AskOptions, options: RunOptionsInput): void {
  try {
    parseRunOptions(options);
    parseModelSpec(opts.model);
    const question = PrepareEventSchema.shape.question.safeParse(opts.question);
    if (!question.success) throw new UsageError(`--question: ${question.error.issues.map((i) => i.message).join('; ')}`);
    if (opts.runId !== undefined) {
      const runId = RunIdSchema.safeParse(opts.runId);
      if (!runId.success) throw new UsageError(`--run-id: ${runId.error.issues.map((i) => i.message).join('; ')}`);
    }
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (error instanceof ExtAgentsError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  writableStateDir(opts.stateDir);
}

/** A progress bar on stderr for the seeking agents of each round (quiet in --json mode unless a TTY). */
function progressReporter(enabled: boolean): { onProgress: (p: LocalProgress) => void; stop: () => void } {
  if (!enabled) return { onProgress: () => undefined, stop: () => undefined };
  if (!process.stderr.isTTY) return lineReporter();
  let bar: SingleBar | undefined;
  let round = 0;
  return {
    onProgress: (p) => {
      if (p.phase === 'seek') {
        if (!bar || p.round !== round) {
          bar?.stop();
          round = p.round;
          bar = new SingleBar(
            {
              stream: process.stderr,
              format: `round ${p.round} seeking agents |{bar}| {value}/{total} chunks | {percentage}% | ETA {eta_formatted}`,
              noTTYOutput: true,
              notTTYSchedule: 5000,
              hideCursor: true,
            },
            Presets.shades_classic,
          );
          bar.start(p.total, 0);
        }
        bar.update(p.done);
      } else {
        bar?.stop();
        bar = undefined;
        process.stderr.write(`${p.message}\n`);
      }
    },
    stop: () => bar?.stop(),
  };
}

/** Without a terminal: one line at the start of each round, then at every 10% of its chunks. */
function lineReporter(): { onProgress: (p: LocalProgress) => void; stop: () => void } {
  let lastDecile = -1;
  let round = 0;
  return {
    onProgress: (p) => {
      if (p.phase === 'info') {
        process.stderr.write(`${p.message}\n`);
        return;
      }
      if (p.round !== round) {
        round = p.round;
        lastDecile = -1;
      }
      const decile = p.total === 0 ? 10 : Math.floor((p.done / p.total) * 10);
      if (decile === lastDecile) return;
      lastDecile = decile;
      process.stderr.write(`round ${p.round} seeking agents: ${p.done}/${p.total} chunks${p.failed > 0 ? ` (${p.failed} failed)` : ''}\n`);
    },
    stop: () => undefined,
  };
}

/** Build the CLI program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('extagents')
    .description(
      'ExtAgents: question answering over external knowledge far larger than a context window.\n' +
        'Runs the same Step Functions workflow as the AWS stack, locally (no AWS account needed).',
    )
    .version(packageJson.version)
    // A usage error is one line with the CLI's prefix, then a hint where the help is (not the help).
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'extagents: ')) })
    .showHelpAfterError("(see 'extagents --help')")
    // Usage errors throw CommanderError (mapped to exit status 2 in main) instead of exiting.
    .exitOverride();

  program
    .command('ask')
    .description('Answer a question over a corpus with seeking agents, global knowledge synchronization and knowledge-accumulating reasoning.')
    .requiredOption('-c, --corpus <paths...>', 'files, directories, glob patterns, or "sotu" (233 State of the Union addresses)')
    .requiredOption('-q, --question <text>', 'the question')
    .addOption(
      new Option('-m, --model <spec>', MODEL_OPTION_HELP).default('extractive'),
    )
    .option('--chunk-tokens <n>', runOptionHelp('maximum tokens per chunk (L); llama: models default to 40% of their context', 'chunkTokens'), schemaFlag('--chunk-tokens', RunOptionsSchema, 'chunkTokens'), 8000)
    .option('--rounds <n>', runOptionHelp('seeking rounds; 1 disables global knowledge synchronization', 'rounds'), schemaFlag('--rounds', RunOptionsSchema, 'rounds'), 2)
    .option('--concurrency <n>', runOptionHelp('seeking agents run at once', 'concurrency'), schemaFlag('--concurrency', RunOptionsSchema, 'concurrency'), 8)
    .option('--reasoner-budget <tokens>', runOptionHelp('token budget of the evidence the reasoning agent reads per step; llama: 55% of the context', 'reasonerBudgetTokens'), schemaFlag('--reasoner-budget', RunOptionsSchema, 'reasonerBudgetTokens'), 16000)
    .option('--sync-budget <tokens>', runOptionHelp('token budget of the synchronized messages each seeking agent reads in rounds >= 2; llama: 12% of the context', 'syncBudgetTokens'), schemaFlag('--sync-budget', RunOptionsSchema, 'syncBudgetTokens'), 4000)
    .option('--tolerated-failure <percent>', runOptionHelp('share of chunks whose seeking agent may fail before the run fails', 'toleratedFailurePercentage'), schemaFlag('--tolerated-failure', RunOptionsSchema, 'toleratedFailurePercentage'), 5)
    .option('--best-effort', 'answer from the best evidence after the last round instead of refusing', false)
    .option('--run-id <id>', 'run id (default: generated); with an explicit id the run is kept under --state-dir and the same id resumes it (chunks already sought are not sent to the model again)')
    .option('--state-dir <dir>', 'where local runs keep their objects', '.extagents')
    .option('--json', 'print the result as one JSON object on stdout', false)
    .option('--no-progress', 'no progress bar on stderr')
    .addOption(structuredOption())
    .action(async (opts: AskOptions, command: Command) => {
      const started = Date.now();
      // Only the options the user gave: those left at their default are omitted, so the model's
      // own defaults (a llama: model's context, runOptionDefaultsForContext) or the configuration
      // defaults (shared/config.ts, the same values as the flags' defaults) apply.
      const given = <K extends keyof AskOptions>(flag: K): AskOptions[K] | undefined => (command.getOptionValueSource(flag) === 'default' ? undefined : opts[flag]);
      const options: RunOptionsInput = Object.fromEntries(
        Object.entries({
          chunkTokens: given('chunkTokens'),
          rounds: given('rounds'),
          concurrency: given('concurrency'),
          reasonerBudgetTokens: given('reasonerBudget'),
          syncBudgetTokens: given('syncBudget'),
          toleratedFailurePercentage: given('toleratedFailure'),
          bestEffort: given('bestEffort'),
        }).filter(([, value]) => value !== undefined),
      );
      applyStructured(opts.structured);
      // The model first (a llama: file is loaded once here and reused by the run), so a bad model
      // or a chunk size its context cannot hold stops before the state directory is made.
      const contextTokens = await checkLocalModelFiles(opts.model, { sequences: Math.min(opts.concurrency, MAX_LLAMA_SEQUENCES) });
      if (contextTokens !== undefined && options.chunkTokens !== undefined) {
        const problem = chunkFitProblem(options.chunkTokens, contextTokens);
        if (problem) throw new UsageError(`--chunk-tokens: ${problem}`);
      }
      validateAsk(opts, options);
      const files = await resolveCorpus(opts.corpus).catch((error: unknown) => {
        throw error instanceof InvalidInputError ? new UsageError(`--corpus: ${error.message}`, { cause: error }) : error;
      });
      const progress = progressReporter(opts.progress);
      try {
        const result = await runLocal({
          files,
          question: opts.question,
          options,
          modelSpec: opts.model,
          stateDir: opts.stateDir,
          runId: opts.runId,
          onProgress: progress.onProgress,
        });
        progress.stop();
        process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : `${formatResult(result, Date.now() - started)}\n`);
      } finally {
        progress.stop();
      }
    });
  addServeCommand(program);
  addUploadCommands(program);
  addSurveyCommand(program);
  addEvalCommand(program);
  // Each command's hint names its own help (settings are copied to commands when they are created).
  for (const command of program.commands) command.showHelpAfterError(`(see 'extagents ${command.name()} --help')`);
  return program;
}

interface AskOptions {
  corpus: string[];
  question: string;
  model: string;
  chunkTokens: number;
  rounds: number;
  concurrency: number;
  reasonerBudget: number;
  syncBudget: number;
  toleratedFailure: number;
  bestEffort: boolean;
  runId?: string;
  stateDir: string;
  json: boolean;
  progress: boolean;
  structured?: string;
}

/** Entry point: exit 0 on a result (answered or refused), 1 on an error, 2 on a usage error. */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
    await disposeLlamaModels();
  } catch (error) {
    await disposeLlamaModels();
    if (error instanceof CommanderError) {
      // Help and version are not errors; every other commander error is a usage error (exit 2).
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`extagents: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    // A full disk or an unwritable state directory mid-run: one line naming the error and the path.
    const reported = error instanceof ExtAgentsError ? error : storageErrorOf(error);
    if (reported) {
      process.stderr.write(`extagents: ${reported.name}: ${reported.message}\n`);
      process.exitCode = 1;
      return;
    }
    process.stderr.write(`extagents: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
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
    const storage = storageErrorOf(error);
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
