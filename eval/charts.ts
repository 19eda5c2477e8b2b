/**
 * PNG line charts for the evaluation report: a Vega-Lite spec compiled to Vega, rendered headless to
 * SVG (`renderer: 'none'`, no canvas), rasterized by resvg (@resvg/resvg-js, a prebuilt native
 * binary shipped in its npm platform package). Text uses the system fonts (DejaVu Sans or any
 * sans-serif found); a machine without fonts gets charts without labels.
 */
import type * as resvgJs from '@resvg/resvg-js';
import type * as vegaTypes from 'vega';
import type * as vegaLiteTypes from 'vega-lite';
import { loadOptionalPackages } from '../shared/optional-packages';

/** The chart packages, loaded on the first chart: optional peer dependencies of the package (shared/optional-packages.ts). */
interface ChartPackages {
  vega: typeof vegaTypes;
  vegaLite: typeof vegaLiteTypes;
  Resvg: typeof resvgJs.Resvg;
}
let chartPackages: ChartPackages | undefined;

/** @throws MissingPackageError when vega, vega-lite or @resvg/resvg-js is not installed. */
function charts(): ChartPackages {
  chartPackages ??= loadOptionalPackages("the eval report's charts", ['vega', 'vega-lite', '@resvg/resvg-js'], () => ({
    vega: require('vega') as typeof vegaTypes,
    vegaLite: require('vega-lite') as typeof vegaLiteTypes,
    Resvg: (require('@resvg/resvg-js') as typeof resvgJs).Resvg,
  }));
  return chartPackages;
}

/** One point of a series. */
export interface ChartPoint {
  /** Series name (one line per series, e.g. a strategy). */
  series: string;
  x: number;
  y: number;
  /** Lower and upper end of the point's interval (e.g. a 95% confidence interval), drawn as an error bar. */
  low?: number;
  high?: number;
}

/** A line chart: one line per series, points marked. */
export interface LineChart {
  title: string;
  /** Second title line (e.g. "modeled, not measured"). */
  subtitle?: string;
  xTitle: string;
  yTitle: string;
  points: ChartPoint[];
  /** Log-scale x axis (input lengths from 8k to 1M tokens). Default true. */
  logX?: boolean;
  /** Log-scale y axis. Default false. */
  logY?: boolean;
  /** d3-format of the y axis labels, e.g. ".0%", "~s". */
  yFormat?: string;
  /** Legend title. Default "strategy". */
  seriesTitle?: string;
}

/** Chart size in CSS pixels before the PNG scale. */
const WIDTH = 560;
const HEIGHT = 320;
/** PNG pixels per CSS pixel. */
const PNG_SCALE = 2;
const FONT = 'DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif';

/** The Vega-Lite spec of a chart (exported for tests and for anyone wanting the JSON). */
export function lineChartSpec(chart: LineChart): vegaLiteTypes.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: chart.subtitle ? { text: chart.title, subtitle: chart.subtitle } : chart.title,
    width: WIDTH,
    height: HEIGHT,
    background: 'white',
    config: { font: FONT },
    data: { values: chart.points.map((p) => ({ ...p })) },
    // Error bars (when the points carry intervals) under the lines; the lines dashed by series, so
    // that series lying on top of each other stay visible.
    layer: [
      ...(chart.points.some((p) => p.low !== undefined && p.high !== undefined)
        ? [
            {
              mark: { type: 'rule' as const, strokeWidth: 1.5, opacity: 0.7 },
              encoding: {
                y: { field: 'low', type: 'quantitative' as const },
                y2: { field: 'high' },
              },
            },
          ]
        : []),
      { mark: { type: 'line' as const, point: true, strokeWidth: 2 } },
    ],
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: chart.xTitle,
        // nice: false keeps a log axis to the data's range (a nice log domain snaps to powers of ten).
        scale: chart.logX === false ? { zero: false } : { type: 'log', nice: false, padding: 12 },
        axis: { format: '~s' },
      },
      y: {
        field: 'y',
        type: 'quantitative',
        title: chart.yTitle,
        scale: chart.logY ? { type: 'log', nice: false, padding: 12 } : { zero: true },
        axis: chart.yFormat ? { format: chart.yFormat } : {},
      },
      // Colour and dash by series, one legend (same field and title); a shape channel on a
      // line-with-points mark would give a second, separate legend.
      color: { field: 'series', type: 'nominal', title: chart.seriesTitle ?? 'strategy' },
      strokeDash: { field: 'series', type: 'nominal', title: chart.seriesTitle ?? 'strategy' },
    },
  };
}

/**
 * Render a chart to SVG text.
 * @throws MissingPackageError when the chart packages are not installed.
 */
export async function renderLineChartSvg(chart: LineChart): Promise<string> {
  const { vega, vegaLite } = charts();
  const compiled = vegaLite.compile(lineChartSpec(chart)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Rasterize SVG text to PNG bytes at `PNG_SCALE`.
 * @throws MissingPackageError when the chart packages are not installed.
 */
export function svgToPng(svg: string): Buffer {
  const { Resvg } = charts();
  const resvg = new Resvg(svg, {
    fitTo: { mode: 'zoom', value: PNG_SCALE },
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans' },
  });
  return resvg.render().asPng();
}

/** Render a chart to PNG bytes. */
export async function renderLineChartPng(chart: LineChart): Promise<Buffer> {
  return svgToPng(await renderLineChartSvg(chart));
}
