/**
 * The `extagents` command line (commander). `extagents ask` runs the CDK-synthesized workflow
 * locally: in-process Lambda handlers, DynamoDB on dynalite (127.0.0.1), the bucket as a directory.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { ExtAgentsError } from '../shared/errors';
import type { RunOptionsInput } from '../shared/config';
import { formatResult } from './format';
import { runLocal, type LocalProgress } from './run';
import { resolveCorpus } from './corpus';
import { addServeCommand } from './serve-command';
import { addUploadCommands } from './uploads-command';

function positiveInt(name: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed <= 0) throw new InvalidArgumentError(`${name} must be a positive integer (got "${value}")`);
    return parsed;
  };
}

function percentage(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0 || parsed > 100) throw new InvalidArgumentError(`must be a number from 0 to 100 (got "${value}")`);
  return parsed;
}

/** A progress bar on stderr for the seeking agents of each round (quiet in --json mode unless a TTY). */
function progressReporter(enabled: boolean): { onProgress: (p: LocalProgress) => void; stop: () => void } {
  if (!enabled) return { onProgress: () => undefined, stop: () => undefined };
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

/** Build the CLI program (exported for tests). */
export function buildProgram(): Command {
  const program = new Command();
  program
    .name('extagents')
    .description(
      'ExtAgents: question answering over external knowledge far larger than a context window.\n' +
        'Runs the same Step Functions workflow as the AWS stack, locally (no AWS account needed).',
    )
    .showHelpAfterError()
    // Usage errors throw CommanderError (mapped to exit status 2 in main) instead of exiting.
    .exitOverride();

  program
    .command('ask')
    .description('Answer a question over a corpus with seeking agents, global knowledge synchronization and knowledge-accumulating reasoning.')
    .requiredOption('-c, --corpus <paths...>', 'files, directories, glob patterns, or "sotu" (233 State of the Union addresses)')
    .requiredOption('-q, --question <text>', 'the question')
    .addOption(
      new Option('-m, --model <spec>', 'model: "extractive" (offline BM25 extractive reader, not an LLM) or "bedrock:<seekerId>[,<reasonerId>]" (Amazon Bedrock Converse API; needs AWS credentials)').default('extractive'),
    )
    .option('--chunk-tokens <n>', 'maximum tokens per chunk (L)', positiveInt('--chunk-tokens'), 8000)
    .option('--rounds <n>', 'seeking rounds; 1 disables global knowledge synchronization', positiveInt('--rounds'), 2)
    .option('--concurrency <n>', 'seeking agents run at once', positiveInt('--concurrency'), 8)
    .option('--reasoner-budget <tokens>', 'token budget of the evidence the reasoning agent reads per step', positiveInt('--reasoner-budget'), 16000)
    .option('--sync-budget <tokens>', 'token budget of the synchronized messages each seeking agent reads in rounds >= 2', positiveInt('--sync-budget'), 4000)
    .option('--tolerated-failure <percent>', 'share of chunks whose seeking agent may fail before the run fails', percentage, 5)
    .option('--best-effort', 'answer from the best evidence after the last round instead of refusing', false)
    .option('--run-id <id>', 'run id (default: generated); reusing one resumes nothing yet, it overwrites the run')
    .option('--state-dir <dir>', 'where local runs keep their objects', '.extagents')
    .option('--json', 'print the result as one JSON object on stdout', false)
    .option('--no-progress', 'no progress bar on stderr')
    .action(async (opts: AskOptions) => {
      const started = Date.now();
      const files = await resolveCorpus(opts.corpus);
      const options: RunOptionsInput = {
        chunkTokens: opts.chunkTokens,
        rounds: opts.rounds,
        concurrency: opts.concurrency,
        reasonerBudgetTokens: opts.reasonerBudget,
        syncBudgetTokens: opts.syncBudget,
        toleratedFailurePercentage: opts.toleratedFailure,
        bestEffort: opts.bestEffort,
      };
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
}

/** Entry point: exit 0 on a result (answered or refused), 1 on an error, 2 on a usage error. */
export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are not errors; every other commander error is a usage error (exit 2).
      process.exitCode = error.exitCode === 0 ? 0 : 2;
      return;
    }
    if (error instanceof ExtAgentsError) {
      process.stderr.write(`extagents: ${error.name}: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    process.stderr.write(`extagents: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
