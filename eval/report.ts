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
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { defaultDataRoot } from './datasets';
import { DEFAULT_LATENCY_MODEL, type LatencyModel } from './latency';
import { loadPriceTable, type ModelPrice, type PriceTable, priceOf } from '../shared/prices';
import { writeReportCharts } from './report-charts';
import { renderMarkdown } from './report-markdown';
import { dataSourcesFor, parseDataReadme } from './report-sources';
import { aggregateRecords, type DataSource, readEvalRecords, type Report, ROLES, uncertaintyRows } from './report-stats';
import { curveRows } from './report-curve';
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
  const curve = curveRows(records);
  if (options.charts ?? true) {
    const uncertain = uncertaintyRows(records);
    for (const d of datasets)
      charts.push(
        ...(await writeReportCharts(
          outDir,
          d,
          rows.filter((r) => r.dataset === d),
          uncertain.filter((u) => u.dataset === d),
          curve.filter((c) => c.dataset === d),
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
    curve,
  };
  const jsonPath = path.join(outDir, 'report.json');
  const markdownPath = path.join(outDir, 'report.md');
  await fs.writeFile(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  await fs.writeFile(markdownPath, renderMarkdown(report));
  return { markdownPath, jsonPath, charts: charts.map((c) => path.join(outDir, c)), report };
}

export {
  aggregateRecords,
  EvalRecordSchema,
  readEvalRecords,
  ROLES,
  uncertaintyRows,
  type DataSource,
  type Report,
  type ReportRow,
  type RolePerQuery,
  type UncertaintyRow,
} from './report-stats';
export { dataSourcesFor, parseDataReadme } from './report-sources';
export { renderMarkdown } from './report-markdown';
