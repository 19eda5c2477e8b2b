/**
 * The `extagents survey` subcommand (local/cli/cli.ts adds it): one survey from a corpus and a topic, or
 * every survey of a schedule file, each run through the synthesized survey state machine on the local
 * stack (local/engine/stack.ts, local/engine/survey.ts), with progress lines on stderr (docs/SURVEY.md).
 */
import { type Command, Option } from 'commander';
import { accessSync, constants as fsConstants } from 'node:fs';
import path from 'node:path';
import { SurveyOptionsSchema, type SurveyOptionsInput } from '../../shared/survey/options';
import { SEEK_MODES, type SeekMode } from '../../shared/config';
import { formatUsd } from '../../shared/cost';
import type { SurveySeekingEstimate } from '../../shared/survey/types';
import { TopicSchema } from '../../shared/survey/workflow';
import { issueMessages } from '../../shared/validation';
import {
  applyStructured,
  checkLocalModelFiles,
  CORPUS_OPTION_HELP,
  handleInterrupts,
  makeDirectories,
  MODEL_OPTION_HELP,
  parseModelFlag,
  resolveCorpusFlag,
  structuredOption,
  UsageError,
  writableStateDir,
} from './common';
import { MAX_MODEL_SEQUENCES, startLocalStack } from '../engine/stack';
import { runLocalSchedule, runLocalSurvey, type LocalSurveyProgress } from '../engine/survey';
import { schemaFlag, schemaHelp } from './cli-numbers';
import { terminalSafe } from './format';
import { Progress, type ProgressTask } from './progress';
import { DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';

interface SurveyCommandOptions {
  corpus?: string[];
  topic?: string;
  output: string;
  schedule?: string;
  outDir: string;
  model: string;
  stateDir: string;
  targetWords?: number;
  maxSections?: number;
  chunkTokens?: number;
  rounds?: number;
  concurrency?: number;
  quotaRpm?: number;
  quotaTpm?: number;
  seekLatency?: number;
  seekMode?: SeekMode;
  progress: boolean;
  json: boolean;
}

/** Make the output's folder if needed. @throws UsageError naming the flag unless it is (or can be made) a writable directory. */
function writableOutputDir(dir: string, flag: string): void {
  try {
    makeDirectories(dir);
    accessSync(dir, fsConstants.W_OK);
  } catch (error) {
    throw new UsageError(`${flag}: ${dir} is not a writable directory (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
}

/**
 * The survey's progress (local/cli/progress.ts): each seeking Map Run as a counted task, every other
 * task of the survey execution as a line.
 */
function progressLines(progress: Progress): (p: LocalSurveyProgress) => void {
  let task: ProgressTask | undefined;
  let seeking = '';
  return (p) => {
    if (p.phase === 'seek') {
      const label = `  seeking (${p.detail ?? ''})`;
      if (!task || label !== seeking || p.done === 0) {
        seeking = label;
        task = progress.task(label, p.total, 'items');
      }
      task.update(p.done, p.failed ? `${p.failed} failed` : undefined);
      return;
    }
    task = undefined;
    if (p.phase === 'prepare') progress.line(`  prepared: ${p.detail ?? ''}`);
    else if (p.phase === 'outline') progress.line(`  outline: ${p.detail ?? ''}`);
    else if (p.phase === 'section') progress.line(`  evidence: ${p.done}/${p.total} (${p.detail ?? ''})`);
    else if (p.phase === 'write') progress.line(`  writing: ${p.done}/${p.total} (${p.detail ?? ''})`);
    else progress.line('  assembling');
  };
}

/** Add `survey` to the program. */
export function addSurveyCommand(program: Command): Command {
  const command = program
    .command('survey')
    .option('-c, --corpus <paths...>', `${CORPUS_OPTION_HELP}; a JSONL / JSON file holds one source per record`)
    .option('-t, --topic <text>', 'the survey topic')
    .option('-o, --output <file>', 'Markdown output (metadata goes to the same name with .json)', 'survey.md')
    .option('--schedule <file>', 'run every survey of this schedule file instead (writes <out-dir>/surveys/<slug>/<date>/ and <out-dir>/surveys/index.json)')
    .option('--out-dir <dir>', 'output directory of --schedule', '.')
    .option('--state-dir <dir>', 'local bucket of the survey executions (corpora/<survey id>/, runs/<survey id>/, surveys/)', '.extagents')
    .addOption(new Option('-m, --model <spec>', `${MODEL_OPTION_HELP}; the extractive reader writes an extractive survey`).default(DEFAULT_LOCAL_MODEL_SPEC))
    .option(
      '--target-words <n>',
      schemaHelp('target length in words', SurveyOptionsSchema, 'targetWords', { showDefault: true }),
      schemaFlag('--target-words', SurveyOptionsSchema, 'targetWords'),
    )
    .option(
      '--max-sections <n>',
      schemaHelp('at most this many sections', SurveyOptionsSchema, 'maxSections', { showDefault: true }),
      schemaFlag('--max-sections', SurveyOptionsSchema, 'maxSections'),
    )
    .option(
      '--chunk-tokens <n>',
      schemaHelp('maximum tokens per chunk', SurveyOptionsSchema, 'chunkTokens', { showDefault: true }),
      schemaFlag('--chunk-tokens', SurveyOptionsSchema, 'chunkTokens'),
    )
    .option(
      '--rounds <n>',
      schemaHelp('1 = no synchronized seeking round for thin sections', SurveyOptionsSchema, 'rounds', { showDefault: true }),
      schemaFlag('--rounds', SurveyOptionsSchema, 'rounds'),
    )
    .option(
      '--concurrency <n>',
      schemaHelp('seeking agents at once (the run option concurrency, as ask --concurrency)', SurveyOptionsSchema, 'concurrency', { showDefault: true }),
      schemaFlag('--concurrency', SurveyOptionsSchema, 'concurrency'),
    )
    .option(
      '--quota-rpm <n>',
      schemaHelp(
        "the seeking model's quota of requests per minute, as ask --quota-rpm: --concurrency becomes the cap and the quota sets the seeking Maps' MaxConcurrency below it",
        SurveyOptionsSchema,
        'quotaRequestsPerMinute',
      ),
      schemaFlag('--quota-rpm', SurveyOptionsSchema, 'quotaRequestsPerMinute'),
    )
    .option(
      '--quota-tpm <n>',
      schemaHelp("the seeking model's quota of tokens per minute, input + output, as ask --quota-tpm", SurveyOptionsSchema, 'quotaTokensPerMinute'),
      schemaFlag('--quota-tpm', SurveyOptionsSchema, 'quotaTokensPerMinute'),
    )
    .option(
      '--seek-latency <seconds>',
      schemaHelp("expected seconds per seek for the quota's concurrency, as ask --seek-latency", SurveyOptionsSchema, 'seekLatencySeconds'),
      schemaFlag('--seek-latency', SurveyOptionsSchema, 'seekLatencySeconds'),
    )
    .addOption(
      new Option(
        '--seek-mode <mode>',
        "how the first seeking round's calls are made (survey option seekMode, as ask --seek-mode): on-demand, or batch = as batch jobs (a scheduled survey's default)",
      ).choices([...SEEK_MODES]),
    )
    .option('--no-progress', 'no progress lines on stderr')
    .option('--json', 'print the survey (paths, execution, metadata) or the schedule index as one JSON object on stdout (no progress on stderr)', false)
    .addOption(structuredOption());
  command.action(async (opts: SurveyCommandOptions & { structured?: string }) => {
    if ((opts.schedule === undefined) === (opts.corpus === undefined || opts.topic === undefined)) {
      command.error('extagents survey: give either --corpus and --topic, or --schedule', { exitCode: 2 });
    }
    // The topic by the rule SurveyPrepare applies, before anything starts.
    if (opts.topic !== undefined) {
      const topic = TopicSchema.safeParse(opts.topic);
      if (!topic.success) throw new UsageError(`--topic: ${issueMessages(topic.error)}`);
    }
    applyStructured(opts.structured);
    writableStateDir(opts.stateDir);
    // The output's folder is made (or refused) now, not after the survey ran.
    writableOutputDir(
      path.dirname(path.resolve(opts.schedule !== undefined ? path.join(opts.outDir, 'x') : opts.output)),
      opts.schedule !== undefined ? '--out-dir' : '--output',
    );
    const model = parseModelFlag(opts.model);
    await checkLocalModelFiles(model, { sequences: Math.min(opts.concurrency ?? 2, MAX_MODEL_SEQUENCES) });
    // The corpus by the rule of every command (a corpus id of --state-dir too), before the stack starts.
    const files = opts.corpus === undefined ? undefined : await resolveCorpusFlag(opts.corpus, opts.stateDir);
    // With --json, stdout holds one JSON object and stderr no progress.
    const progress = new Progress(opts.progress && !opts.json);
    const onProgress = progressLines(progress);
    // One local stack for the survey or the whole schedule: the survey state machine, its handlers,
    // dynalite in memory and the bucket under --state-dir.
    const stack = await startLocalStack({ stateDir: opts.stateDir, modelSpec: model, modelSequences: Math.min(opts.concurrency ?? 2, MAX_MODEL_SEQUENCES) });
    // Ctrl-C / SIGTERM: one line (a survey keeps no state to resume: the same command starts it again).
    const unhandle = handleInterrupts(opts.json, () => {
      progress.stop();
      return `rerun the same command to start ${opts.schedule !== undefined ? 'the unfinished surveys' : 'the survey'} again`;
    });
    try {
      if (opts.schedule !== undefined) {
        const { index, indexPath } = await runLocalSchedule(opts.schedule, opts.outDir, stack, {
          onProgress,
          onSurvey: (i, total, topic) => progress.line(`survey ${i}/${total}: ${topic}`),
        });
        if (opts.json) process.stdout.write(`${JSON.stringify({ index, indexPath })}\n`);
        else
          for (const e of index.surveys) {
            process.stdout.write(
              e.status === 'succeeded'
                ? `ok      ${e.topic}: ${e.markdown} (${e.words} words, ${e.citations} citations)\n`
                : `FAILED  ${e.topic}: ${e.error?.name}: ${e.error?.message}\n`,
            );
          }
        if (!opts.json) process.stdout.write(`index: ${indexPath}\n`);
        if (index.surveys.some((e) => e.status === 'failed')) process.exitCode = 1;
        return;
      }
      const options: SurveyOptionsInput = {
        ...(opts.targetWords !== undefined && { targetWords: opts.targetWords }),
        ...(opts.maxSections !== undefined && { maxSections: opts.maxSections }),
        ...(opts.chunkTokens !== undefined && { chunkTokens: opts.chunkTokens }),
        ...(opts.rounds !== undefined && { rounds: opts.rounds }),
        ...(opts.concurrency !== undefined && { concurrency: opts.concurrency }),
        ...(opts.quotaRpm !== undefined && { quotaRequestsPerMinute: opts.quotaRpm }),
        ...(opts.quotaTpm !== undefined && { quotaTokensPerMinute: opts.quotaTpm }),
        ...(opts.seekLatency !== undefined && { seekLatencySeconds: opts.seekLatency }),
        ...(opts.seekMode !== undefined && { seekMode: opts.seekMode }),
      };
      progress.line(`survey: ${opts.topic}`);
      const {
        markdownPath,
        metadataPath,
        metadata: m,
        execution,
      } = await runLocalSurvey({ corpus: files ?? [], topic: opts.topic ?? '', options, output: opts.output, onProgress }, stack);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ markdownPath, metadataPath, execution, metadata: m })}\n`);
        return;
      }
      process.stdout.write(
        [
          `${m.title}${m.extractive ? ' (extractive survey: selected, ordered, cited corpus sentences)' : ''}`,
          ...m.sections.map((s, i) => `  ${i + 1}. ${s.heading} — ${s.scope}`),
          `${m.words} words, ${m.sections.length} sections, citations ${m.citations.kept} kept / ${m.citations.removed} removed, ${m.sources.cited} of ${m.sources.available} sources cited`,
          ...(m.seekingEstimate ? [formatSeekingEstimate(m.seekingEstimate)] : []),
          `survey execution ${execution.surveyId}: ${execution.markdownKey} in ${path.join(opts.stateDir, 'bucket')}`,
          `written: ${path.relative(process.cwd(), markdownPath)} and ${path.relative(process.cwd(), metadataPath)}`,
        ].join('\n') + '\n',
      );
      // What the metadata's warnings say (skipped sources, a forced outline, sections without evidence), on the terminal too.
      for (const w of m.warnings) process.stderr.write(`warning: ${terminalSafe(w)}\n`);
    } finally {
      unhandle();
      progress.stop();
      await stack.stop();
    }
  });
  return command;
}

/**
 * The survey's first seeking round priced (`SurveySeekingEstimate`) as one line: both modes, the one
 * it used marked, or why it has no price.
 */
export function formatSeekingEstimate(e: SurveySeekingEstimate): string {
  const usd = (value: number | undefined) => (value === undefined ? 'no price' : `at most $${formatUsd(value)}`);
  const mark = (mode: SurveySeekingEstimate['mode']) => (e.mode === mode ? ' (this survey)' : '');
  const priced =
    e.onDemandUsd === undefined && e.batchUsd === undefined
      ? `no price (${e.unpriced ?? 'no price table entry'})`
      : `${usd(e.onDemandUsd)} on demand${mark('on-demand')}, ${usd(e.batchUsd)} as batch jobs${mark('batch')}${e.priceNote ? ` (${e.priceNote})` : ''}`;
  // A batch survey whose first round was sought on demand in fact (too few chunks for a batch job).
  const sought =
    e.sought !== undefined && e.sought.mode !== e.mode
      ? `; sought ${e.sought.mode === 'on-demand' ? 'on demand' : 'as batch jobs'}${e.sought.reason ? ` (${e.sought.reason})` : ''}`
      : '';
  return `seeking the sources: ${e.calls} call(s), ${e.inputTokens.toLocaleString('en-US')} input / ${e.outputTokens.toLocaleString('en-US')} output tokens at most; ${priced}${sought}`;
}
