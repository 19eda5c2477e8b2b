/**
 * The report's figures (eval/report.ts): the records read back from `records.jsonl` (lenient: a
 * malformed line is skipped and named, a repeated record keeps its last line), their aggregation per
 * dataset × strategy × target length (scores, calls and tokens per role, cost, modeled latency,
 * measured wall time), and the 95% bootstrap intervals and paired tests against `extagents`.
 */
import type { CurveRow } from './report-curve';
import { bootstrapMeanInterval, pairedBootstrap, type MeanInterval, type PairedComparison } from './stats';
import { promises as fs } from 'node:fs';
import { z } from 'zod';
import type { AgentRole } from '../shared/types';
import { type DataWarning, parseJsonLines } from './jsonl';
import { DEFAULT_LATENCY_MODEL, type LatencyModel, modeledLatency, modeledPipelinedLatency } from './latency';
import { DEFAULT_STRATEGY_OPTIONS } from './strategies/types';
import { costUsd, type ModelPrice, type PriceTable, priceOf } from '../shared/prices';
import { type EvalRecord, EVAL_STRATEGIES, type StrategyName } from './records';
import { issuesText } from '../shared/validation';

/** The roles, in the order the tables show them. */
export const ROLES: readonly AgentRole[] = ['seeker', 'reasoner'];

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
  questionType: z.string().optional(),
  windowTokens: z.number().int().positive().optional(),
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
  /** F1 against multiples of the model's window (eval/report-curve.ts); empty when no record carries `windowTokens`. */
  curve?: CurveRow[];
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
