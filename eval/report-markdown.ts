/**
 * The report as Markdown (`renderMarkdown`): the scores, intervals and paired tests, calls and tokens,
 * cost and modeled latency tables, the latency model, the data sources and the charts' links.
 */
import { type MeanInterval, type PairedComparison } from './stats';
import path from 'node:path';
import { formatWarning } from './jsonl';
import { ROLES, type Report } from './report-stats';
import { renderCurveMarkdown } from './report-curve';
const fmtInterval = (m: MeanInterval): string => `${(100 * m.mean).toFixed(1)} [${(100 * m.low).toFixed(1)}, ${(100 * m.high).toFixed(1)}]`;
const fmtPaired = (c: PairedComparison | undefined): string =>
  c === undefined
    ? '–'
    : `${c.mean >= 0 ? '+' : ''}${(100 * c.mean).toFixed(1)} [${(100 * c.low).toFixed(1)}, ${(100 * c.high).toFixed(1)}], p=${c.p.toFixed(2)}`;

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
export const chartName = (kind: string, dataset: string): string => `${kind}.${slug(dataset)}.png`;

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
    const curve = renderCurveMarkdown(report.curve ?? [], dataset);
    if (curve !== '') out.push(curve, '');
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
