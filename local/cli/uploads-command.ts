/**
 * The `extagents ingest` and `extagents job` subcommands (local/cli/cli.ts adds them): the upload
 * triggers of the AWS stack (docs/UPLOADS.md), run locally over the `--state-dir` bucket.
 *
 *   extagents ingest --id <corpusId> --corpus <paths...> [--chunk-tokens 8000]
 *   extagents job <file.json> [--name <name>] [--concurrency 4] [-m extractive]
 *
 * Exit status (local/cli/cli.ts `main`): 2 for a usage error (UsageError: an invalid option value, a
 * missing job file or corpus path, a rejected job file), 1 for any other error, one line each.
 */
import { type Command, Option } from 'commander';
import { accessSync, existsSync, constants as fsConstants } from 'node:fs';
import path from 'node:path';
import { ExtAgentsError, InvalidInputError } from '../../shared/errors';
import { corpusIdOfKey, corpusPrefix, parseCorpusId } from '../../shared/corpus';
import { jobNameOfKey, jobSummaryKey, loadJob } from '../../shared/pipeline/jobs';
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
import { BUNDLED_CORPORA } from '../engine/corpus';
import { FsBlobStore } from '../engine/fs-blob-store';
import { MAX_MODEL_SEQUENCES, startLocalStack } from '../engine/stack';
import { RUNS_AT_ONCE } from '../engine/defaults';
import { ingestLocalCorpus, planLocalJob, runJob, submitJobFile } from '../engine/uploads';
import { RunOptionsSchema } from '../../shared/config';
import { numberFlag, rangeText, schemaDefault, schemaFlag, schemaHelp } from './cli-numbers';
import { Progress, type ProgressTask } from './progress';
import { DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';

/**
 * Check that the corpus of a planned job has objects in the local bucket. A corpus id that names no
 * ingested corpus gets a UsageError with the `ingest` command that makes it (naming a local folder of
 * that name when there is one), before any question runs.
 * @throws UsageError when the job's corpus selection has no object.
 */
async function jobCorpusPresent(blobs: FsBlobStore, jobId: string, file: string, stateDir: string): Promise<void> {
  const { plan } = await loadJob(blobs, jobId);
  const { prefix, keys } = plan.corpus;
  if (prefix !== undefined) {
    if ((await blobs.list(prefix)).length > 0) return;
    const id = corpusIdOfKey(`${prefix}x`);
    const folder = id === undefined ? undefined : [path.resolve(id), path.resolve(path.dirname(file), id)].find((candidate) => existsSync(candidate));
    const source = folder === undefined ? '<your files>' : path.relative(process.cwd(), folder) || '.';
    throw new UsageError(
      `${file}: corpus ${JSON.stringify(id ?? prefix)} has no documents in ${path.join(stateDir, 'bucket', prefix)} (a job reads an ingested corpus, not a folder): ` +
        `run 'extagents ingest --id ${id ?? '<corpusId>'} --corpus ${source}${stateDir === '.extagents' ? '' : ` --state-dir ${stateDir}`}' first (nothing ran)`,
    );
  }
  const missing: string[] = [];
  for (const k of keys ?? []) if (!(await blobs.exists(k))) missing.push(k);
  if (missing.length > 0) {
    throw new UsageError(`${file}: ${missing.length} corpus key(s) not in ${path.join(stateDir, 'bucket')}: ${missing.slice(0, 3).join(', ')} (nothing ran)`);
  }
}

/** Run `check`; an InvalidInputError / ConfigurationError becomes a UsageError (exit status 2) prefixed with `what`. */
async function asUsage<T>(what: string, check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (error instanceof ExtAgentsError) throw new UsageError(`${what}${error.message}`, { cause: error });
    throw error;
  }
}

/** @throws UsageError (one line) unless `file` is a readable file. */
function readableFile(file: string, what: string): void {
  try {
    accessSync(file, fsConstants.R_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${what} ${file}: ${code === 'ENOENT' ? 'no such file' : `not readable (${code ?? String(error)})`}`, { cause: error });
  }
}

interface IngestCommandOptions {
  id: string;
  corpus: string[];
  chunkTokens: number;
  stateDir: string;
  json: boolean;
}

interface JobCommandOptions {
  name?: string;
  concurrency: number;
  model: string;
  stateDir: string;
  json: boolean;
  progress: boolean;
}

/** Add `ingest` and `job` to the program. */
export function addUploadCommands(program: Command): Command {
  program
    .command('ingest')
    .requiredOption('--id <corpusId>', 'corpus id (A-Z a-z 0-9 . _ -)')
    .requiredOption('-c, --corpus <paths...>', CORPUS_OPTION_HELP)
    .option(
      '--chunk-tokens <n>',
      schemaHelp('maximum tokens per cached chunk (L)', RunOptionsSchema, 'chunkTokens'),
      schemaFlag('--chunk-tokens', RunOptionsSchema, 'chunkTokens'),
      schemaDefault(RunOptionsSchema, 'chunkTokens'),
    )
    .option('--state-dir <dir>', 'where the local bucket is kept', '.extagents')
    .option('--json', 'print the ingestion summary as JSON', false)
    .action(async (opts: IngestCommandOptions) => {
      await asUsage('--id: ', () => parseCorpusId(opts.id));
      // `-c <name>` reads a bundled corpus before an ingested one: an id of that name could never be asked.
      if (Object.hasOwn(BUNDLED_CORPORA, opts.id))
        throw new UsageError(`--id: ${opts.id} is the name of a bundled corpus (ask -c ${opts.id} reads that one): choose another id`);
      writableStateDir(opts.stateDir);
      const files = await resolveCorpusFlag(opts.corpus, opts.stateDir);
      const blobs = new FsBlobStore(path.join(path.resolve(opts.stateDir), 'bucket'));
      // Ingesting under an id that holds files adds to them (as uploads to the API's corpora do): said, not silent.
      const prefix = corpusPrefix(opts.id);
      const given = new Set(files.map((f) => prefix + f.id));
      const kept = (await blobs.list(prefix)).filter((o) => !given.has(o.key)).length;
      const outcome = await ingestLocalCorpus(blobs, opts.id, files, { chunkTokens: opts.chunkTokens });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(outcome)}\n`);
        return;
      }
      if (outcome.outcome === 'no-objects') {
        process.stdout.write(`corpus ${outcome.corpusId}: no objects\n`);
        return;
      }
      const { ingestion } = outcome;
      const t = ingestion.totals;
      process.stdout.write(
        `corpus ${ingestion.corpusId}: ${outcome.outcome}; ${t.files} file(s), ${t.bytes} bytes, ${t.documents} document(s), ` +
          `${t.tokens} tokens, ${t.chunks} chunk(s) of at most ${ingestion.chunkTokens} tokens (cache ${ingestion.cacheKey.slice(0, 12)}…)\n`,
      );
      for (const s of ingestion.skipped) process.stdout.write(`  skipped ${s.documentId}: ${s.reason}\n`);
      if (kept > 0) {
        process.stdout.write(
          `  note: corpus ${opts.id} already held ${kept} other file(s), kept: ingest adds files to a corpus (a file of the same name is replaced); ` +
            `to start it afresh, delete ${path.join(opts.stateDir, 'bucket', 'corpora', opts.id)} first, or ingest under a new id\n`,
        );
      }
    });

  program
    .command('job')
    .argument('<file>', 'the job file (JSON, docs/UPLOADS.md)')
    .option('--name <name>', 'job name (default: the file name without .json)')
    .option(
      '--concurrency <n>',
      `questions (runs) at once, ${rangeText(RUNS_AT_ONCE)}; not seeking agents: each question's run takes those from the job file's options.concurrency (run option, default ${schemaDefault(RunOptionsSchema, 'concurrency')})`,
      numberFlag('--concurrency', RUNS_AT_ONCE),
      4,
    )
    .addOption(new Option('-m, --model <spec>', MODEL_OPTION_HELP).default(DEFAULT_LOCAL_MODEL_SPEC))
    .option('--state-dir <dir>', 'where the local bucket is kept', '.extagents')
    .option('--json', 'print the job summary as JSON', false)
    .option('--no-progress', 'no progress on stderr (the questions done, the latest named)')
    .addOption(structuredOption())
    .action(async (file: string, opts: JobCommandOptions & { structured?: string }) => {
      // Everything the user typed, and the job file itself, is checked before the local stack starts.
      applyStructured(opts.structured);
      readableFile(file, 'job file');
      const model = parseModelFlag(opts.model);
      await checkLocalModelFiles(model, { sequences: Math.min(opts.concurrency, MAX_MODEL_SEQUENCES) });
      writableStateDir(opts.stateDir);
      const blobs = new FsBlobStore(path.join(path.resolve(opts.stateDir), 'bucket'));
      const key = await asUsage('', () => submitJobFile(blobs, file, opts.name));
      // A rejected job file gets results/<name>.summary.json (status "rejected"), as in AWS.
      let planned;
      try {
        planned = await planLocalJob(blobs, key);
      } catch (error) {
        if (!(error instanceof InvalidInputError)) throw error;
        const summary = path.join(opts.stateDir, 'bucket', jobSummaryKey(jobNameOfKey(key)));
        throw new UsageError(`${file}: ${error.message} (nothing ran; the rejection is in ${summary})`, { cause: error });
      }
      // A job reads an ingested corpus (as in AWS: objects under corpora/<id>/), never a local folder:
      // an empty one would fail every question the same way, so it is named now, with the command that fills it.
      await jobCorpusPresent(blobs, planned.jobId, file, opts.stateDir);
      const stack = await startLocalStack({ stateDir: opts.stateDir, modelSpec: model, modelSequences: Math.min(opts.concurrency, MAX_MODEL_SEQUENCES) });
      // The questions as one counted task (local/cli/progress.ts), each ending named in its detail.
      const progress = new Progress(opts.progress && !opts.json);
      let task: ProgressTask | undefined;
      let ended = 0;
      // Ctrl-C / SIGTERM: one line; the job resumes where it stopped (finished questions are not run again).
      const unhandle = handleInterrupts(opts.json, () => {
        progress.stop();
        return `rerun 'extagents job ${file}' to resume (finished questions are not run again)`;
      });
      try {
        const outcome = await runJob(stack, key, {
          concurrency: opts.concurrency,
          onPlanned: (questions) => (task = progress.task('job', questions, 'questions')),
          onQuestionDone: (index, done) => task?.update(++ended, `question ${index}: ${done.started ? done.status : 'already started'}`),
        });
        progress.stop();
        const { summary } = outcome;
        // Every question failed: the job failed (exit status 1), whatever the output format.
        if (summary.questions > 0 && summary.failed === summary.questions) process.exitCode = 1;
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(summary)}\n`);
          return;
        }
        process.stdout.write(
          `job ${summary.job}: ${summary.questions} question(s), ${summary.succeeded} succeeded (${summary.answerable} answered), ${summary.failed} failed; ` +
            `${outcome.started} started, ${outcome.alreadyStarted} already started\n` +
            `results: ${path.join(opts.stateDir, 'bucket', summary.resultsKey ?? '')}\n`,
        );
        if (outcome.started === 0 && outcome.alreadyStarted > 0) {
          // A rerun of the same job file (same name and content) starts nothing, as an S3 re-delivery would not: say so.
          process.stdout.write(
            `  nothing started: every question ran in an earlier run of this job file; the results above are those runs' (to run it again: --name <another name>)\n`,
          );
        }
        for (const f of summary.failures) process.stdout.write(`  question ${f.index} failed: ${f.error.name}: ${f.error.message}\n`);
        if (process.exitCode === 1) process.stderr.write(`extagents job: every question of ${file} failed\n`);
      } finally {
        unhandle();
        progress.stop();
        await stack.stop();
      }
    });
  return program;
}
