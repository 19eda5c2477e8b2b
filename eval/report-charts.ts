/**
 * The report's PNG charts of one dataset (`writeReportCharts`): F1 and evidence recall with their 95%
 * intervals, modeled latency and tokens per query, against the target input length (eval/charts.ts
 * renders them).
 */
import { type MeanInterval } from './stats';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { renderLineChartPng, type ChartPoint } from './charts';
import { chartName } from './report-markdown';
import { ROLES, type ReportRow, type UncertaintyRow } from './report-stats';
import { ALL_TYPES, type CurveRow } from './report-curve';
// ---------------------------------------------------------------------------------------------
// Charts and the whole report
// ---------------------------------------------------------------------------------------------

/** Write the three charts of one dataset; returns their file names. */
export async function writeReportCharts(
  outDir: string,
  dataset: string,
  rows: readonly ReportRow[],
  uncertainty: readonly UncertaintyRow[],
  curve: readonly CurveRow[] = [],
): Promise<string[]> {
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
  // The curve (the paper's figure): F1 against multiples of the window, all questions and per type.
  const curveSeries = [...new Set(curve.map((c) => c.strategy))];
  for (const type of new Set(curve.map((c) => c.questionType))) {
    const cells = curve.filter((c) => c.questionType === type);
    charts.push([
      type === ALL_TYPES ? 'f1-vs-window' : `f1-vs-window-${type}`,
      {
        title: `F1 vs input length in multiples of the window W — ${dataset}${type === ALL_TYPES ? '' : `, ${type} questions`}`,
        subtitle: `W = ${[...new Set(cells.map((c) => c.windowTokens))].join(', ')} model tokens; mean with 95% bootstrap interval`,
        xTitle: 'input length / W',
        yTitle: 'F1 (mean)',
        yFormat: '.0%',
        points: cells.map((c) => ({
          series: c.strategy,
          x: c.multiple * 1.04 ** (curveSeries.indexOf(c.strategy) - (curveSeries.length - 1) / 2),
          y: c.f1.mean,
          low: c.f1.low,
          high: c.f1.high,
        })),
      },
    ]);
  }
  const names: string[] = [];
  for (const [kind, chart] of charts) {
    const name = chartName(kind, dataset);
    await fs.writeFile(path.join(outDir, name), await renderLineChartPng(chart));
    names.push(name);
  }
  return names;
}
