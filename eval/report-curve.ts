/**
 * The curve (docs/EVAL.md, "The curve"; the paper's main figure at this machine's scale): F1 against
 * the input length as a multiple of the model's context window W, per strategy, for all questions and
 * per question type (HotpotQA bridge / comparison), with 95% bootstrap intervals, the paired difference
 * of `extagents` with every other strategy on the same questions, evidence recall, calls, tokens and
 * measured wall time. Built from the records that carry `windowTokens` (a model with a known window:
 * a `llama:` model); records without it are left out of the curve (the rest of the report keeps them).
 */
import type { EvalRecord } from './records';
import { EVAL_STRATEGIES } from './records';
import { bootstrapMeanInterval, type MeanInterval, pairedBootstrap, type PairedComparison } from './stats';

/** The question types of the curve: every question, then each type the records name. */
export const ALL_TYPES = 'all';

/** One cell of the curve: a dataset, question type, strategy and length. */
export interface CurveRow {
  dataset: string;
  /** `all`, or a question type (`bridge`, `comparison`). */
  questionType: string;
  strategy: string;
  targetTokens: number;
  windowTokens: number;
  /** targetTokens / windowTokens (the paper's x axis). */
  multiple: number;
  n: number;
  f1: MeanInterval;
  em: MeanInterval;
  /** Over the examples with gold evidence; null when none has. */
  evidenceRecall: MeanInterval | null;
  callsPerQuery: number;
  inputTokensPerQuery: number;
  /** Measured wall time per question, ms (calls answered from a memo excluded: see `reusedCallsPerQuery`). */
  wallMsPerQuery: number;
  /** Calls answered from the example's call memo, per question (0 without `--reuse-calls`). */
  reusedCallsPerQuery: number;
  errors: number;
  /** F1(extagents) − F1(this strategy) on the questions both have; absent for extagents itself. */
  extagentsMinusThis?: PairedComparison;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * The curve's cells, ordered by dataset, question type (`all` first), strategy (report order), then
 * multiple. Intervals are seeded by the cell, so a report is reproducible.
 * @param records every record of the report; only those with `windowTokens` are used.
 */
export function curveRows(records: readonly EvalRecord[]): CurveRow[] {
  const usable = records.filter((r) => r.windowTokens !== undefined && r.windowTokens > 0);
  const cells = new Map<string, EvalRecord[]>();
  for (const r of usable) {
    for (const type of [ALL_TYPES, ...(r.questionType !== undefined ? [r.questionType] : [])]) {
      const key = JSON.stringify([r.dataset, type, r.strategy, r.targetTokens, r.windowTokens]);
      cells.set(key, [...(cells.get(key) ?? []), r]);
    }
  }
  const rows: CurveRow[] = [];
  for (const [key, rs] of cells) {
    const [dataset, questionType, strategy, targetTokens, windowTokens] = JSON.parse(key) as [string, string, string, number, number];
    const seed = `curve/${dataset}/${questionType}/${strategy}/${targetTokens}/${windowTokens}`;
    const recalls = rs.map((r) => r.evidenceRecall).filter((x): x is number => x !== null);
    const row: CurveRow = {
      dataset,
      questionType,
      strategy,
      targetTokens,
      windowTokens,
      multiple: targetTokens / windowTokens,
      n: rs.length,
      f1: bootstrapMeanInterval(
        rs.map((r) => r.f1),
        `${seed}/f1`,
      ),
      em: bootstrapMeanInterval(
        rs.map((r) => r.em),
        `${seed}/em`,
      ),
      evidenceRecall: recalls.length === 0 ? null : bootstrapMeanInterval(recalls, `${seed}/recall`),
      callsPerQuery: mean(rs.map((r) => r.calls.length)),
      inputTokensPerQuery: mean(rs.map((r) => r.calls.reduce((s, c) => s + c.inputTokens, 0))),
      wallMsPerQuery: mean(rs.map((r) => r.wallMs)),
      reusedCallsPerQuery: mean(rs.map((r) => r.reusedCalls ?? 0)),
      errors: rs.filter((r) => r.error !== undefined).length,
    };
    if (strategy !== 'extagents') {
      const base = new Map(
        usable
          .filter(
            (r) =>
              r.strategy === 'extagents' &&
              r.dataset === dataset &&
              r.targetTokens === targetTokens &&
              r.windowTokens === windowTokens &&
              (questionType === ALL_TYPES || r.questionType === questionType),
          )
          .map((r) => [r.exampleId, r]),
      );
      const paired = rs.filter((r) => base.has(r.exampleId));
      if (paired.length > 0) {
        row.extagentsMinusThis = pairedBootstrap(
          paired.map((r) => base.get(r.exampleId)!.f1),
          paired.map((r) => r.f1),
          `${seed}/paired`,
        );
      }
    }
    rows.push(row);
  }
  const order = (s: string): number => EVAL_STRATEGIES.indexOf(s as (typeof EVAL_STRATEGIES)[number]);
  const typeOrder = (t: string): string => (t === ALL_TYPES ? '' : t);
  return rows.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      typeOrder(a.questionType).localeCompare(typeOrder(b.questionType)) ||
      order(a.strategy) - order(b.strategy) ||
      a.multiple - b.multiple,
  );
}

const pct = (x: number): string => (100 * x).toFixed(1);
const fmtMultiple = (m: number): string => `${Number.isInteger(m) ? m : m.toFixed(2)}×W`;
const fmtInterval = (m: MeanInterval): string => `${pct(m.mean)} [${pct(m.low)}, ${pct(m.high)}]`;
const fmtPaired = (c: PairedComparison | undefined): string =>
  c === undefined ? '–' : `${c.mean >= 0 ? '+' : ''}${pct(c.mean)} [${pct(c.low)}, ${pct(c.high)}] p=${c.p.toFixed(2)}`;

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/**
 * The curve of one dataset as Markdown: per question type, one table of F1 [95% CI] (n) per strategy
 * and multiple of W, one of the paired difference extagents − strategy, and one of evidence recall,
 * calls, input tokens and measured seconds per question.
 */
export function renderCurveMarkdown(rows: readonly CurveRow[], dataset: string): string {
  const mine = rows.filter((r) => r.dataset === dataset);
  if (mine.length === 0) return '';
  const out: string[] = [];
  const windows = [...new Set(mine.map((r) => r.windowTokens))];
  out.push(
    `### The curve: F1 against the input length in multiples of the window (W = ${windows.map((w) => w.toLocaleString('en-US')).join(', ')} model tokens)`,
    '',
    'F1 in percent with its 95% bootstrap interval and n; the paired difference is extagents − the strategy on the same ' +
      "questions (bootstrap interval, two-sided p). Lengths are o200k tokens of the constructed context, W the model's " +
      'context (its own tokens). "s / q" is the measured wall time per question (calls answered from the call memo excluded).',
    '',
  );
  const types = [...new Set(mine.map((r) => r.questionType))];
  for (const type of types) {
    const cells = mine.filter((r) => r.questionType === type);
    const multiples = [...new Set(cells.map((r) => r.multiple))].sort((a, b) => a - b);
    const strategies = [...new Set(cells.map((r) => r.strategy))];
    const at = (s: string, m: number): CurveRow | undefined => cells.find((r) => r.strategy === s && r.multiple === m);
    out.push(`#### ${type === ALL_TYPES ? 'All questions' : `${type} questions`}`, '');
    out.push(
      table(
        ['strategy', ...multiples.map(fmtMultiple)],
        strategies.map((s) => [s, ...multiples.map((m) => (at(s, m) ? `${fmtInterval(at(s, m)!.f1)} (${at(s, m)!.n})` : '–'))]),
      ),
      '',
    );
    out.push(
      table(
        ['extagents − strategy (ΔF1)', ...multiples.map(fmtMultiple)],
        strategies.filter((s) => s !== 'extagents').map((s) => [s, ...multiples.map((m) => fmtPaired(at(s, m)?.extagentsMinusThis))]),
      ),
      '',
    );
    out.push(
      table(
        ['strategy: evidence recall / calls / input tok / s per q', ...multiples.map(fmtMultiple)],
        strategies.map((s) => [
          s,
          ...multiples.map((m) => {
            const r = at(s, m);
            if (!r) return '–';
            return `${r.evidenceRecall ? pct(r.evidenceRecall.mean) : '–'} / ${r.callsPerQuery.toFixed(1)} / ${Math.round(r.inputTokensPerQuery).toLocaleString('en-US')} / ${(r.wallMsPerQuery / 1000).toFixed(0)}${r.reusedCallsPerQuery > 0 ? ` (${r.reusedCallsPerQuery.toFixed(1)} reused)` : ''}${r.errors > 0 ? ` ${r.errors} err` : ''}`;
          }),
        ]),
      ),
      '',
    );
  }
  return out.join('\n');
}
