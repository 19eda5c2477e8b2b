/**
 * The `extagents ask` subcommand (registered by local/cli/cli.ts when it runs): one question over a
 * corpus through the local workflow (local/engine/run.ts), with a progress bar and the formatted result.
 */
import type { SkippedDocument } from '../../shared/types';
import { DEFAULT_RANKING, RANKING_MODES, type RankingMode } from '../../shared/ranking';
import { Option, type Command } from 'commander';
import { COVERAGE_MODES, type CoverageMode } from '../../shared/coverage';
import { RESEEK_MODES, type ReseekMode } from '../../shared/reseek';
import { karRoundsOption, karStopOption, synchronizationOption } from './method-options';
import type { KarRounds, KarStopRule, SynchronizationMode } from '../../shared/kar';
import { Progress, RunProgressReporter } from './progress';
import { ExtAgentsError } from '../../shared/errors';
import { RunOptionsSchema, SEEK_MODES, type RunOptionsInput, type SeekMode } from '../../shared/config';
import { parseRunRequest, type ParsedRunRequest } from '../../shared/run-request';
import { formatEstimate, formatResult } from './format';
import type { RunProgressEvent } from '../../shared/progress';
import { MAX_MODEL_SEQUENCES } from '../engine/defaults';
import { schemaDefault, schemaFlag, schemaHelp } from './cli-numbers';
import {
  applyStructured,
  checkLocalModelFiles,
  CORPUS_OPTION_HELP,
  handleInterrupts,
  MODEL_OPTION_HELP,
  parseModelFlag,
  resolveCorpusFlag,
  structuredOption,
  UsageError,
  writableStateDir,
} from './common';
import { DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';

// The engine loads when `ask` runs, not for `ask --help` (issue 11: start-up).
const engine = () => ({
  ...(require('../library') as typeof import('../library')),
  ...(require('../../models/context') as typeof import('../../models/context')),
  ...(require('../engine/estimate') as typeof import('../engine/estimate')),
  ...(require('../engine/stack') as typeof import('../engine/stack')),
});

/** Exit status of `ask --fail-on-refusal` when the run refuses (0: answered, 1: error, 2: usage error). */
export const REFUSAL_EXIT_STATUS = 3;

/** Add `ask` to the program. */
export function addAskCommand(program: Command): void {
  program
    .command('ask')
    .requiredOption('-c, --corpus <paths...>', CORPUS_OPTION_HELP)
    .requiredOption('-q, --question <text>', 'the question')
    .addOption(new Option('-m, --model <spec>', MODEL_OPTION_HELP).default(DEFAULT_LOCAL_MODEL_SPEC))
    .option(
      '--chunk-tokens <n>',
      schemaHelp('maximum tokens per chunk (L); llama: models default to 40% of their context', RunOptionsSchema, 'chunkTokens'),
      schemaFlag('--chunk-tokens', RunOptionsSchema, 'chunkTokens'),
      schemaDefault(RunOptionsSchema, 'chunkTokens'),
    )
    .option(
      '--rounds <n>',
      schemaHelp('seeking rounds; 1 disables global knowledge synchronization', RunOptionsSchema, 'rounds'),
      schemaFlag('--rounds', RunOptionsSchema, 'rounds'),
      schemaDefault(RunOptionsSchema, 'rounds'),
    )
    .option(
      '--kar-first-k <n>',
      schemaHelp(
        'messages the first KAR step reads (run option karFirstK): the reasoning agent reads the top k, then 2k, 4k, … after each refusal (the paper: 1)',
        RunOptionsSchema,
        'karFirstK',
      ),
      schemaFlag('--kar-first-k', RunOptionsSchema, 'karFirstK'),
      schemaDefault(RunOptionsSchema, 'karFirstK'),
    )
    .addOption(synchronizationOption())
    .addOption(karStopOption())
    .addOption(karRoundsOption())
    .option(
      '--concurrency <n>',
      schemaHelp('seeking agents run at once', RunOptionsSchema, 'concurrency'),
      schemaFlag('--concurrency', RunOptionsSchema, 'concurrency'),
      schemaDefault(RunOptionsSchema, 'concurrency'),
    )
    .option(
      '--quota-rpm <n>',
      schemaHelp(
        'the seeking model\'s quota of requests per minute (run option quotaRequestsPerMinute; Service Quotas: "On-demand InvokeModel requests per minute for <model>"): --concurrency becomes the cap and the quota sets MaxConcurrency below it',
        RunOptionsSchema,
        'quotaRequestsPerMinute',
      ),
      schemaFlag('--quota-rpm', RunOptionsSchema, 'quotaRequestsPerMinute'),
    )
    .option(
      '--quota-tpm <n>',
      schemaHelp(
        'the seeking model\'s quota of tokens per minute, input + output (run option quotaTokensPerMinute; "On-demand InvokeModel tokens per minute for <model>")',
        RunOptionsSchema,
        'quotaTokensPerMinute',
      ),
      schemaFlag('--quota-tpm', RunOptionsSchema, 'quotaTokensPerMinute'),
    )
    .option(
      '--seek-latency <seconds>',
      schemaHelp(
        "expected seconds per seek for the quota's concurrency (run option seekLatencySeconds; default: the eval's assumed seeker latency for the seek's tokens)",
        RunOptionsSchema,
        'seekLatencySeconds',
      ),
      schemaFlag('--seek-latency', RunOptionsSchema, 'seekLatencySeconds'),
    )
    .option(
      '--reasoner-budget <tokens>',
      schemaHelp('token budget of the evidence the reasoning agent reads per step; llama: 55% of the context', RunOptionsSchema, 'reasonerBudgetTokens'),
      schemaFlag('--reasoner-budget', RunOptionsSchema, 'reasonerBudgetTokens'),
      schemaDefault(RunOptionsSchema, 'reasonerBudgetTokens'),
    )
    .option(
      '--sync-budget <tokens>',
      schemaHelp(
        'token budget of the synchronized messages each seeking agent reads in rounds >= 2; llama: 12% of the context',
        RunOptionsSchema,
        'syncBudgetTokens',
      ),
      schemaFlag('--sync-budget', RunOptionsSchema, 'syncBudgetTokens'),
      schemaDefault(RunOptionsSchema, 'syncBudgetTokens'),
    )
    .option(
      '--tolerated-failure <percent>',
      schemaHelp('share of chunks whose seeking agent may fail before the run fails', RunOptionsSchema, 'toleratedFailurePercentage'),
      schemaFlag('--tolerated-failure', RunOptionsSchema, 'toleratedFailurePercentage'),
      schemaDefault(RunOptionsSchema, 'toleratedFailurePercentage'),
    )
    .option('--best-effort', 'answer from the best evidence after the last round instead of refusing', false)
    .option(
      '--pipeline',
      "pipelined rounds (run option pipelineRounds): seek round r+1 speculatively while round r's KAR runs; faster when round r+1 is needed, extra seeking calls (usage.speculative) when it is not",
      false,
    )
    .addOption(
      new Option(
        '--coverage <mode>',
        'which chunks the seeking agents read (run option coverage; docs/CONCEPTS.md, "Coverage that grows only when needed"): full = every chunk (the paper); grow = first the chunks BM25 ranks highest for the question, twice as many after each refusal at every k (an extension of the method)',
      )
        .choices([...COVERAGE_MODES])
        .default(RunOptionsSchema.shape.coverage.parse(undefined)),
    )
    .option(
      '--coverage-first <n>',
      schemaHelp('with --coverage grow: chunks sought first (run option coverageFirstChunks)', RunOptionsSchema, 'coverageFirstChunks'),
      schemaFlag('--coverage-first', RunOptionsSchema, 'coverageFirstChunks'),
      schemaDefault(RunOptionsSchema, 'coverageFirstChunks'),
    )
    .option(
      '--coverage-max <n>',
      schemaHelp(
        'with --coverage grow: the most chunks sought per round (run option coverageMaxChunks; default every chunk, so the worst case is the full read)',
        RunOptionsSchema,
        'coverageMaxChunks',
      ),
      schemaFlag('--coverage-max', RunOptionsSchema, 'coverageMaxChunks'),
    )
    .addOption(
      new Option(
        '--reseek <mode>',
        'which chunks rounds >= 2 seek (run option reseek; docs/CONCEPTS.md, "Later rounds that re-read only promising chunks"): all = every chunk covered (the paper); promising = only those that found something in the round before and those sharing a document with the synchronized messages (an extension of the method)',
      )
        .choices([...RESEEK_MODES])
        .default(RunOptionsSchema.shape.reseek.parse(undefined)),
    )
    .addOption(
      new Option(
        '--seek-mode <mode>',
        'how the seeking agents\' calls are made (run option seekMode; docs/CONCEPTS.md, "Batch seeking"): on-demand = one call per chunk as the round runs; batch = each round as batch jobs (Bedrock batch inference: about half the price, results within hours; locally the same states through the local batch runner, no saving), the rest on demand',
      )
        .choices([...SEEK_MODES])
        .default(RunOptionsSchema.shape.seekMode.parse(undefined)),
    )
    .addOption(
      new Option(
        '--ranking <mode>',
        'how the message pool is ranked (run option ranking; docs/CONCEPTS.md, "Evidence and ranking"): score = the seeking agents\' scores (the paper), hybrid = their mean with a lexical prior of the cited sentences, retrieval = the lexical prior alone',
      )
        .choices([...RANKING_MODES])
        .default(DEFAULT_RANKING),
    )
    .option(
      '--estimate',
      'print what the run would cost at most (calls, tokens, USD per role; docs/COST.md, "Cost before spending"), the seeking concurrency its quota allows (docs/COST.md, "Quota-aware fan-out") and its expected time on the AWS path (docs/CAPACITY.md), and exit, before any model call',
      false,
    )
    .option(
      '--max-cost <usd>',
      schemaHelp('refuse the run before any model call when its estimate is over this many USD, or its model has no price', RunOptionsSchema, 'maxCostUsd'),
      schemaFlag('--max-cost', RunOptionsSchema, 'maxCostUsd'),
    )
    .option(
      '--run-id <id>',
      'run id (default: generated); with an explicit id the run is kept under --state-dir and the same id resumes it (chunks already sought are not sent to the model again)',
    )
    .option('--state-dir <dir>', 'where local runs keep their objects', '.extagents')
    .option('--json', 'print the result as one JSON object on stdout', false)
    .option(
      '--no-progress',
      "no progress on stderr (by default: a bar of each round's seeking agents, a line for every other phase: KAR steps, synchronization, best-effort answer, finalize)",
    )
    .option('--fail-on-refusal', `exit with status ${REFUSAL_EXIT_STATUS} when the answer is NO ANSWER (for scripts; the result is printed as always)`, false)
    .addOption(structuredOption())
    .action(async (opts: AskOptions, command: Command) => {
      const started = Date.now();
      // Only the options the user gave: those left at their default are omitted, so the model's
      // own defaults (a llama: model's context, runOptionDefaultsForContext) or the configuration
      // defaults (shared/config.ts, the same values as the flags' defaults) apply.
      const given = <K extends keyof AskOptions>(flag: K): AskOptions[K] | undefined =>
        command.getOptionValueSource(flag) === 'default' ? undefined : opts[flag];
      const options: RunOptionsInput = Object.fromEntries(
        Object.entries({
          chunkTokens: given('chunkTokens'),
          rounds: given('rounds'),
          karFirstK: given('karFirstK'),
          karStop: given('karStop'),
          karRounds: given('karRounds'),
          synchronization: given('synchronization'),
          concurrency: given('concurrency'),
          reasonerBudgetTokens: given('reasonerBudget'),
          syncBudgetTokens: given('syncBudget'),
          toleratedFailurePercentage: given('toleratedFailure'),
          bestEffort: given('bestEffort'),
          pipelineRounds: given('pipeline'),
          ranking: given('ranking'),
          coverage: given('coverage'),
          coverageFirstChunks: given('coverageFirst'),
          coverageMaxChunks: opts.coverageMax,
          reseek: given('reseek'),
          seekMode: given('seekMode'),
          maxCostUsd: opts.maxCost,
          quotaRequestsPerMinute: opts.quotaRpm,
          quotaTokensPerMinute: opts.quotaTpm,
          seekLatencySeconds: opts.seekLatency,
        }).filter(([, value]) => value !== undefined),
      );
      applyStructured(opts.structured);
      // The model spec is parsed once, here; the parsed value goes to the model check and the run.
      const model = parseModelFlag(opts.model);
      // The question, run id and options, parsed once here (shared/run-request.ts) and passed on.
      let parsed = validateAsk(opts, options);
      // The model next (a llama: file is loaded once here and reused by the run), so a bad model
      // or a chunk size its context cannot hold stops before the state directory is made.
      // An estimate sends no request, so an openai: server's settings (its key) are not needed for it.
      const loadedModel = await checkLocalModelFiles(
        model,
        { sequences: Math.min(parsed.filled.concurrency, MAX_MODEL_SEQUENCES) },
        { estimate: opts.estimate },
      );
      // The model's defaults and the one check of the chunks against its context (models/context.ts);
      // the run does not check the request again.
      try {
        parsed = engine().fitRunRequest(parsed, loadedModel.contextTokens, loadedModel.runDefaults);
      } catch (error) {
        if (error instanceof ExtAgentsError) throw new UsageError(`--chunk-tokens: ${error.message}`, { cause: error });
        throw error;
      }
      // The state directory last of the checks: a refused model or chunk size leaves nothing behind.
      writableStateDir(opts.stateDir);
      // What the arguments named but cannot be read (a FIFO, a socket, a link loop): in the result's skipped.
      const unreadable: SkippedDocument[] = [];
      const files = await resolveCorpusFlag(opts.corpus, opts.stateDir, unreadable);
      if (opts.estimate) {
        const { estimate, corpus, concurrency, time, costRefusal } = await engine().estimateLocal({ files, parsed, model });
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ ...estimate, corpus, concurrency, time, ...(costRefusal !== undefined && { costRefusal }) })}\n`
            : `${formatEstimate(estimate, corpus, concurrency, time, costRefusal)}\n`,
        );
        return;
      }
      const progress = new RunProgressReporter(new Progress(opts.progress && !opts.json));
      // Ctrl-C / SIGTERM: one line naming the run to resume (the generated id once the run named it).
      let runId = opts.runId;
      const onProgress = (p: RunProgressEvent): void => {
        if (p.type === 'info' && p.runId !== undefined) runId = p.runId;
        progress.onProgress(p);
      };
      const unhandle = handleInterrupts(opts.json, () => {
        progress.stop();
        if (runId === undefined) return undefined;
        // Only a run with its own id keeps its progress on disk (local/engine/run.ts, `persistent`).
        return opts.runId !== undefined
          ? `rerun with --run-id ${runId} to resume`
          : `run ${runId} kept no progress to resume (started without --run-id): ask again, with --run-id <id> to make a run resumable`;
      });
      try {
        // The library's ask (local/library.ts), over the files resolved above.
        const result = await engine().ask({
          corpus: files,
          unreadable,
          parsed,
          model,
          stateDir: opts.stateDir,
          onProgress,
        });
        progress.stop();
        process.stdout.write(opts.json ? `${JSON.stringify(result)}\n` : `${formatResult(result, Date.now() - started)}\n`);
        if (opts.failOnRefusal && !result.answerable) process.exitCode = REFUSAL_EXIT_STATUS;
      } finally {
        unhandle();
        progress.stop();
      }
    });
}

interface AskOptions {
  corpus: string[];
  question: string;
  model: string;
  chunkTokens: number;
  rounds: number;
  karFirstK: number;
  karStop: KarStopRule;
  karRounds: KarRounds;
  synchronization: SynchronizationMode;
  concurrency: number;
  reasonerBudget: number;
  syncBudget: number;
  toleratedFailure: number;
  bestEffort: boolean;
  pipeline: boolean;
  ranking: RankingMode;
  coverage: CoverageMode;
  coverageFirst: number;
  coverageMax?: number;
  reseek: ReseekMode;
  seekMode: SeekMode;
  estimate: boolean;
  maxCost?: number;
  quotaRpm?: number;
  quotaTpm?: number;
  seekLatency?: number;
  runId?: string;
  stateDir: string;
  json: boolean;
  progress: boolean;
  failOnRefusal: boolean;
  structured?: string;
}

/**
 * Check the question, run id and options before any work (no corpus copy, no server, no state
 * directory): parsed once, the value returned is what the run takes.
 * @returns the parsed request (shared/run-request.ts).
 * @throws UsageError with the validator's message, naming the flag.
 */
function validateAsk(opts: AskOptions, options: RunOptionsInput): ParsedRunRequest {
  let parsed: ParsedRunRequest;
  try {
    parsed = parseRunRequest({ question: opts.question, runId: opts.runId, options }, { question: '--question', runId: '--run-id' });
  } catch (error) {
    if (error instanceof ExtAgentsError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  return parsed;
}
