/**
 * `extagents eval`: run the evaluation harness (eval/runner.ts) over a data set, strategies
 * and target lengths, appending one `EvalRecord` per line to `<out>/records.jsonl` (resumable), with
 * a progress bar on stderr; then a summary table (mean EM / F1 / evidence recall / calls / input
 * tokens per query, per strategy and length) on stdout and the report (eval/report.ts,
 * `buildReport`) written into the output directory.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { Progress, type ProgressTask } from './progress';
import { recordModelIds } from '../../models';
import { contextFittedRunOptionDefaults } from '../../models/context';
import { ExtAgentsError } from '../../shared/errors';
import { buildReport } from '../../eval/report';
import { EVAL_STRATEGIES, type EvalRecord, EXTENSIONS, RANKING_ABLATIONS, STRATEGIES, type StrategyName } from '../../eval/records';
import { defaultDataRoot } from '../../eval/datasets';
import { checkLengths, DATASET_NAMES, parseDatasetSpec, parseLengths, readRecords, recordsFile, runEval } from '../../eval/runner';
import { parseModelSpec, DEFAULT_LOCAL_MODEL_SPEC } from '../../models/spec';
import type { AgentRole } from '../../shared/types';
import { applyStructured, checkLocalModelFiles, handleInterrupts, MODEL_OPTION_HELP, structuredOption, UsageError } from './common';
import { MAX_MODEL_SEQUENCES } from '../engine/defaults';
import { localWorkflowRunner } from '../engine/eval-workflow';
import { existsSync } from 'node:fs';
import { RunOptionsSchema } from '../../shared/config';
import type { KarRounds, KarStopRule, SynchronizationMode } from '../../shared/kar';
import { karRoundsOption, karStopOption, synchronizationOption } from './method-options';
import { numberFlag, rangeText, schemaDefault, schemaFlag, schemaHelp } from './cli-numbers';
import { RUNS_AT_ONCE } from '../engine/defaults';

/** Options of `extagents eval` as commander parses them. */
interface EvalOptions {
  dataset: string;
  strategies: string;
  lengths?: string;
  limit?: number;
  seed: string;
  concurrency: number;
  model: string;
  chunkTokens: number;
  outDir: string;
  /** The deprecated -o/--out. */
  out?: string;
  json: boolean;
  report: boolean;
  progress: boolean;
  bestEffort: boolean;
  karStop: KarStopRule;
  karRounds: KarRounds;
  synchronization: SynchronizationMode;
  reuseCalls: boolean;
}

/** Parse `--strategies` ("all" = `STRATEGIES`, or a comma list of `EVAL_STRATEGIES`). @throws InvalidArgumentError naming the unknown one. */
export function parseStrategies(value: string): StrategyName[] {
  if (value.trim() === 'all') return [...STRATEGIES];
  return value.split(',').map((s) => {
    const name = s.trim();
    if (!(EVAL_STRATEGIES as readonly string[]).includes(name))
      throw new InvalidArgumentError(`unknown strategy "${name}" (expected all or ${EVAL_STRATEGIES.join(', ')})`);
    return name as StrategyName;
  });
}

/** Add `eval` to the program. */
export function addEvalCommand(program: Command): void {
  program
    .command('eval')
    .option('-d, --dataset <name>', DATASET_NAMES, 'hotpotqa')
    .option(
      '-s, --strategies <list>',
      `"all" (${STRATEGIES.join(', ')}) or a comma list of those and the ranking ablations ${RANKING_ABLATIONS.join(', ')} (extagents with the run option ranking score / retrieval) and the extensions ${EXTENSIONS.join(', ')} (extagents with coverage grow / reseek promising / synchronization follow-up / synchronization plain / karFirstK 1 / karRounds last; the eval runs 2 rounds)`,
      'all',
    )
    .option(
      '-l, --lengths <list>',
      "target lengths in tokens, e.g. 4k,8k,16k,32k (hotpotqa: default 8k,128k; cmrc: each question's passage among other passages, or full for one haystack, the default); other data sets: full",
    )
    .option('--limit <n>', 'first n examples of the data set (per length; >= 1)', numberFlag('--limit', { min: 1 }))
    .option('--seed <seed>', 'seed of the long-context construction', '0')
    .option(
      '--concurrency <n>',
      `examples evaluated at once (runs at once, ${rangeText(RUNS_AT_ONCE)}; each example's strategies run one after another); not seeking agents, which each run takes from the run option concurrency (default ${schemaDefault(RunOptionsSchema, 'concurrency')})`,
      numberFlag('--concurrency', RUNS_AT_ONCE),
      2,
    )
    .option('-m, --model <spec>', MODEL_OPTION_HELP, DEFAULT_LOCAL_MODEL_SPEC)
    .option(
      '--chunk-tokens <n>',
      schemaHelp('maximum tokens per chunk (L), the same for every strategy', RunOptionsSchema, 'chunkTokens'),
      schemaFlag('--chunk-tokens', RunOptionsSchema, 'chunkTokens'),
      schemaDefault(RunOptionsSchema, 'chunkTokens'),
    )
    .option(
      '--reuse-calls',
      'answer a model call from memory when another strategy of the same example already sent the same request (round-1 seeks of extagents and its ablations): the same records for a deterministic model, less model time; the records count them (reusedCalls) and their wallMs excludes them',
      false,
    )
    .addOption(karStopOption())
    .addOption(karRoundsOption())
    .addOption(synchronizationOption())
    .option('--no-best-effort', 'let the strategies refuse ("NO ANSWER") instead of answering from the best evidence')
    .option('--out-dir <dir>', 'output directory (records.jsonl, the report)', 'eval-out')
    // Before the CLI's flags had one meaning each, eval's output directory was -o/--out (-o is a file elsewhere).
    .addOption(new Option('-o, --out <dir>', 'deprecated: --out-dir').hideHelp())
    .option('--json', 'print the summary as one JSON object on stdout (no progress on stderr)', false)
    .option('--no-report', 'do not build the report at the end')
    .option('--no-progress', 'no progress bar on stderr')
    .addOption(structuredOption())
    .action(async (opts: EvalOptions & { structured?: string }, command: Command) => {
      const outDir = opts.out ?? opts.outDir;
      const showProgress = opts.progress && !opts.json;
      let strategies;
      let dataset;
      let lengths;
      let spec;
      try {
        strategies = parseStrategies(opts.strategies);
        dataset = parseDatasetSpec(opts.dataset);
        lengths = opts.lengths === undefined ? undefined : parseLengths(opts.lengths);
        // A length the data set does not take is a usage error, reported before the output directory is made.
        if (lengths !== undefined) checkLengths(dataset, lengths);
        spec = parseModelSpec(opts.model);
      } catch (error) {
        // Thrown from the action, commander's own errors would exit 2 silently: a UsageError prints one line.
        if (error instanceof ExtAgentsError || error instanceof InvalidArgumentError) throw new UsageError(error.message, { cause: error });
        throw error;
      }
      // The data sets live outside the repository (../shared/data): say where they were looked for. A
      // data file given by path needs no data folder, but HotpotQA's long contexts take its filler paragraphs.
      const dataRoot = defaultDataRoot();
      if ((dataset.kind === 'hotpotqa' || !opts.dataset.includes(':')) && !existsSync(dataRoot)) {
        throw new UsageError(`the eval's data sets are not at ${dataRoot}: set EXTAGENTS_DATA_DIR to the folder that holds hotpotqa/, sotu/, … (docs/EVAL.md)`);
      }
      // A data file or folder the user named must be there (a usage error naming it, not a failure mid-run).
      const named = 'file' in dataset ? dataset.file : dataset.dir;
      if (!existsSync(named)) throw new UsageError(`--dataset: ${named} does not exist`);
      applyStructured(opts.structured);
      // An in-process (llama:) model loads once here, with as many sequences as the calls that may
      // run at once (capped), and its context sets the defaults the user left unset: the chunk size,
      // the reasoner and synchronization budgets (contextFittedRunOptionDefaults). One window for
      // every strategy: `direct` reads as much corpus as the reasoning agent's evidence budget (the
      // budget less the question), the same text budget as `rag` and each KAR step.
      const loadedModel = await checkLocalModelFiles(spec, { sequences: Math.min(opts.concurrency * 2, MAX_MODEL_SEQUENCES) });
      const contextTokens = loadedModel.contextTokens;
      const modelIds: Record<AgentRole, string> = recordModelIds(spec);
      const model = loadedModel.agents();
      const fitted = contextTokens !== undefined ? contextFittedRunOptionDefaults(contextTokens, loadedModel.runDefaults) : undefined;
      const chunkTokens = fitted && command.getOptionValueSource('chunkTokens') === 'default' ? fitted.chunkTokens : opts.chunkTokens;
      const contextOptions =
        fitted && contextTokens !== undefined
          ? {
              reasonerBudgetTokens: fitted.reasonerBudgetTokens,
              syncBudgetTokens: fitted.syncBudgetTokens,
              contextWindowTokens: fitted.reasonerBudgetTokens,
              promptReserveTokens: 0,
              ...(fitted.karFirstK !== undefined && { karFirstK: fitted.karFirstK }),
            }
          : {};
      // The records as one counted task (local/cli/progress.ts): a bar on a terminal, else lines.
      const progress = new Progress(showProgress);
      let task: ProgressTask | undefined;
      const started = Date.now();
      let run: { written: number; skipped: number; failed: number; recordsFile: string; warnings: string[]; wallMs: number } | undefined;
      // Ctrl-C / SIGTERM: one line; the records written so far are kept and skipped by the next run.
      const unhandle = handleInterrupts(opts.json, () => {
        progress.stop();
        return 'rerun the same command to resume (the records already written are kept)';
      });
      try {
        const summary = await runEval({
          dataset,
          strategies,
          lengths,
          limit: opts.limit,
          seed: opts.seed,
          concurrency: opts.concurrency,
          model,
          modelIds,
          chunkTokens,
          strategyOptions: {
            ...contextOptions,
            bestEffort: opts.bestEffort,
            karStop: opts.karStop,
            karRounds: opts.karRounds,
            synchronization: opts.synchronization,
          },
          reuseCalls: opts.reuseCalls,
          ...(contextTokens !== undefined && { windowTokens: contextTokens }),
          // extagents and extagents-no-sync run the product's workflow, as `ask` does.
          workflow: localWorkflowRunner,
          outDir,
          onProgress: (p) => {
            if (p.record === undefined) task = progress.task('eval', p.total, 'records');
            else task?.update(p.done, `${p.record.strategy} ${p.record.targetTokens} ${p.record.exampleId}`);
          },
        });
        progress.stop();
        run = {
          written: summary.written,
          skipped: summary.skipped,
          failed: summary.failed,
          recordsFile: summary.recordsFile,
          warnings: summary.warnings,
          wallMs: Date.now() - started,
        };
        if (!opts.json) {
          for (const w of summary.warnings) process.stderr.write(`warning: ${w}\n`);
          process.stderr.write(
            `${summary.written} record(s) written, ${summary.skipped} already present (skipped), ${summary.failed} failed, in ${((Date.now() - started) / 1000).toFixed(1)} s → ${summary.recordsFile}\n`,
          );
        }
      } finally {
        unhandle();
        progress.stop();
      }
      const { records } = readRecords(recordsFile(outDir));
      const selected = records.filter((r) => strategies.includes(r.strategy));
      let report: { markdownPath?: string; error?: string } = {};
      if (opts.report) {
        try {
          report = { markdownPath: (await buildReport(outDir)).markdownPath };
          if (!opts.json) process.stderr.write(`report: ${report.markdownPath}\n`);
        } catch (error) {
          report = { error: error instanceof Error ? error.message : String(error) };
          if (!opts.json) process.stderr.write(`report not built: ${report.error}\n`);
        }
      }
      process.stdout.write(opts.json ? `${JSON.stringify({ run, rows: summaryRows(selected), report })}\n` : `${formatSummary(selected)}\n`);
    });
}

/** One row of the eval's summary: a dataset, target length and strategy (means per example; EM, F1, recall as fractions 0-1). */
export interface SummaryRow {
  dataset: string;
  targetTokens: number;
  strategy: string;
  examples: number;
  em: number;
  f1: number;
  /** null when no example has gold evidence. */
  evidenceRecall: number | null;
  callsPerQuery: number;
  inputTokensPerQuery: number;
  failed: number;
}

/** The summary rows of the records, by dataset, target length and strategy (in EVAL_STRATEGIES order). */
export function summaryRows(records: readonly EvalRecord[]): SummaryRow[] {
  const groups = new Map<string, EvalRecord[]>();
  for (const r of records) {
    const key = JSON.stringify([r.dataset, r.targetTokens, EVAL_STRATEGIES.indexOf(r.strategy)]);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  return [...groups.entries()]
    .sort(([a], [b]) => {
      const [da, ta, sa] = JSON.parse(a) as [string, number, number];
      const [db, tb, sb] = JSON.parse(b) as [string, number, number];
      return da.localeCompare(db) || ta - tb || sa - sb;
    })
    .map(([, rs]) => {
      const recalls = rs.map((r) => r.evidenceRecall).filter((x): x is number => x !== null);
      return {
        dataset: rs[0].dataset,
        targetTokens: rs[0].targetTokens,
        strategy: rs[0].strategy,
        examples: rs.length,
        em: mean(rs.map((r) => r.em)),
        f1: mean(rs.map((r) => r.f1)),
        evidenceRecall: recalls.length === 0 ? null : mean(recalls),
        callsPerQuery: mean(rs.map((r) => r.calls.length)),
        inputTokensPerQuery: mean(rs.map((r) => r.calls.reduce((s, c) => s + c.inputTokens, 0))),
        failed: rs.filter((r) => r.error !== undefined).length,
      };
    });
}

/**
 * A plain-text table of the records ({@link summaryRows}): per dataset, strategy and target length,
 * the number of examples, mean EM, F1 and evidence recall (in %), mean model calls and input tokens
 * per query, and failures.
 */
export function formatSummary(records: readonly EvalRecord[]): string {
  const rows = summaryRows(records).map((r) => [
    r.dataset,
    String(r.targetTokens),
    r.strategy,
    String(r.examples),
    (100 * r.em).toFixed(1),
    (100 * r.f1).toFixed(1),
    r.evidenceRecall === null ? '-' : (100 * r.evidenceRecall).toFixed(1),
    r.callsPerQuery.toFixed(1),
    Math.round(r.inputTokensPerQuery).toString(),
    String(r.failed),
  ]);
  const header = ['dataset', 'target', 'strategy', 'n', 'EM%', 'F1%', 'recall%', 'calls/q', 'in-tok/q', 'failed'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i >= 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
