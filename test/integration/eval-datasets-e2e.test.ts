/**
 * End to end: `extagents eval` (the commander action of local/cli/eval-command.ts, i.e. `runEval` then
 * the summary and `buildReport`) with the offline extractive model on every data set other than
 * HotpotQA, on the real data of ../shared/data (`defaultDataRoot()`, read in place):
 * FairytaleQA, NarrativeQA (Siddhartha), the SOTU question file, the CMRC 2018 Chinese haystack; and
 * InfiniteBench-format long QA, whose books are not shipped, on tiny fixtures in the real JSONL format
 * (`{id, context, input, answer[], options[]}`) written to a temp dir from real English (Siddhartha)
 * and Chinese (三国演义) text of ../shared/data.
 *
 * Each run: 2 examples, `extagents` and `rag`. Asserted: one valid record per strategy and example,
 * scored with the data set's scorer (recomputed here with the official scorer functions), model calls
 * recorded, the report (Markdown, JSON, charts) written, and a rerun appending nothing.
 *
 * The extractive reader is English only: on Chinese it refuses (with --no-best-effort), and a
 * refusal scores 0. No network, no AWS.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { addEvalCommand } from '../../local/cli/eval-command';
import { UsageError } from '../../local/cli/common';
import { defaultDataRoot } from '../../eval/datasets';
import { type EvalRecord } from '../../eval/records';
import { EvalRecordSchema, type Report } from '../../eval/report';
import { parseDatasetSpec, readRecords, recordsFile, runEval } from '../../eval/runner';
import {
  cmrcExactMatch,
  cmrcF1,
  hotpotExactMatch,
  hotpotF1,
  infiniteBenchEnF1,
  infiniteBenchZhF1,
  normalizeAnswer,
  normalizeZhAnswer,
} from '../../eval/scorers';
import { ExtractiveReader } from '../../shared/extractive';
import { NO_ANSWER } from '../../shared/types';
import { describeWithSharedData } from '../support/shared-data';

const DATA = defaultDataRoot();
const STRATEGIES = ['extagents', 'rag'] as const;
const EXTRACTIVE = { seeker: 'extractive', reasoner: 'extractive' };

jest.setTimeout(180_000);

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'eval-e2e-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A fresh output directory (not created: the command makes it). */
function outDir(name: string): string {
  return path.join(tmp, name);
}

/** Run `extagents eval <args>` in process, capturing stdout and stderr. */
async function evalCli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const program = new Command().name('extagents').exitOverride();
  addEvalCommand(program);
  const stdout: string[] = [];
  const stderr: string[] = [];
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout.push(String(chunk));
    return true;
  });
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  });
  try {
    await program.parseAsync(['eval', '--no-progress', ...args], { from: 'user' });
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return { stdout: stdout.join(''), stderr: stderr.join('') };
}

/** The "N record(s) written, M already present" line of a run. */
function counts(stderr: string): { written: number; skipped: number; failed: number } {
  const m = /(\d+) record\(s\) written, (\d+) already present \(skipped\), (\d+) failed/.exec(stderr);
  if (!m) throw new Error(`no summary line in:\n${stderr}`);
  return { written: Number(m[1]), skipped: Number(m[2]), failed: Number(m[3]) };
}

/** The records of a run, each checked against the report's schema; the file must have no bad line. */
function records(dir: string): EvalRecord[] {
  const read = readRecords(recordsFile(dir));
  expect(read.warnings).toEqual([]);
  for (const r of read.records) expect(EvalRecordSchema.safeParse(r).success).toBe(true);
  return read.records;
}

type Scorer = 'en' | 'zh' | 'cmrc' | 'sotu';

/** EM and F1 by the official scorer functions themselves (a refusal is no prediction: 0, but see SOTU "NO ANSWER"). */
function officialScore(scorer: Scorer, r: EvalRecord): { em: number; f1: number } {
  const max = (xs: number[]): number => Math.max(0, ...xs);
  if (scorer === 'sotu') {
    if (r.gold.some((g) => g.toUpperCase() === NO_ANSWER)) return r.answerable ? { em: 0, f1: 0 } : { em: 1, f1: 1 };
    const said = r.answerable ? r.prediction : '';
    return { em: max(r.gold.map((g) => hotpotExactMatch(said, g))), f1: max(r.gold.map((g) => hotpotF1(said, g).f1)) };
  }
  if (!r.answerable) return { em: 0, f1: 0 };
  switch (scorer) {
    case 'en':
      return { em: max(r.gold.map((g) => Number(normalizeAnswer(r.prediction) === normalizeAnswer(g)))), f1: infiniteBenchEnF1(r.prediction, r.gold) };
    case 'zh':
      return { em: max(r.gold.map((g) => Number(normalizeZhAnswer(r.prediction) === normalizeZhAnswer(g)))), f1: infiniteBenchZhF1(r.prediction, r.gold) };
    case 'cmrc':
      return { em: cmrcExactMatch(r.prediction, r.gold), f1: cmrcF1(r.prediction, r.gold) };
  }
}

/**
 * What every run must give: one record per strategy and example of `dataset`, no failure, the
 * extractive model ids, the context's tokens, scores in [0, 1] equal to the data set's scorer, and
 * the calls of each strategy (extagents: seeking agents in stage 0, then reasoning; rag: one
 * reasoning call, no seeking).
 */
function expectRun(rs: EvalRecord[], dataset: string, scorer: Scorer, examples: number): void {
  expect(rs).toHaveLength(STRATEGIES.length * examples);
  expect(new Set(rs.map((r) => r.exampleId)).size).toBe(examples);
  for (const r of rs) {
    expect(r).toMatchObject({ dataset, models: EXTRACTIVE });
    expect(r.error).toBeUndefined();
    expect(STRATEGIES).toContain(r.strategy);
    expect(r.inputTokens).toBeGreaterThan(0);
    expect(r.targetTokens).toBeGreaterThanOrEqual(r.inputTokens);
    for (const score of [r.em, r.f1]) {
      expect(Number.isFinite(score)).toBe(true);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
    }
    expect({ em: r.em, f1: r.f1 }).toEqual(officialScore(scorer, r));
    if (!r.answerable) expect(r.prediction).toBe(NO_ANSWER);
    expect(r.calls.length).toBeGreaterThan(0);
    expect(r.calls.every((c) => c.inputTokens > 0)).toBe(true);
    const seeks = r.calls.filter((c) => c.role === 'seeker');
    const reasons = r.calls.filter((c) => c.role === 'reasoner');
    if (r.strategy === 'extagents') {
      expect(seeks.filter((c) => c.stage === 0).length).toBeGreaterThan(0);
      expect(reasons.every((c) => c.stage > 0)).toBe(true);
      // No reasoning call only when no seeking agent found anything (then it refuses).
      if (r.answerable) expect(reasons.length).toBeGreaterThan(0);
    } else {
      expect(seeks).toEqual([]);
      expect(reasons).toHaveLength(1);
    }
  }
}

/** The report of `dir`: Markdown with the data set's section, one JSON row per strategy, three or four charts, a zero cost. */
function expectReport(dir: string, dataset: string, examples: number, cited: boolean): Report {
  const md = readFileSync(path.join(dir, 'report.md'), 'utf8');
  expect(md).toContain(`## ${dataset}\n`);
  const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Report;
  const rows = report.rows.filter((r) => r.dataset === dataset);
  expect(rows.map((r) => r.strategy)).toEqual([...STRATEGIES]);
  for (const row of rows) {
    expect(row).toMatchObject({ examples, errors: 0, costUsdPerQuery: 0 });
    expect(row.perQuery.reasoner.calls).toBeGreaterThan(0);
    expect(row.f1).toBeGreaterThanOrEqual(0);
    expect(row.f1).toBeLessThanOrEqual(1);
  }
  // F1, latency and tokens vs length, plus evidence recall when the data set has gold evidence.
  const hasEvidence = report.uncertainty.some((u) => u.dataset === dataset && u.evidenceRecall !== null);
  expect(report.charts).toHaveLength(hasEvidence ? 4 : 3);
  expect(report.charts.some((c) => c.startsWith('recall-vs-length'))).toBe(hasEvidence);
  for (const chart of report.charts) expect(readFileSync(path.join(dir, chart)).subarray(1, 4).toString()).toBe('PNG');
  if (cited) expect(report.dataSources[dataset].length).toBeGreaterThan(0);
  return report;
}

/** The settings of the last run of `dir` (runs.jsonl). */
function lastRun(dir: string): { strategyOptions: { truncation: string; bestEffort: boolean }; sources: string[] } {
  const lines = readFileSync(path.join(dir, 'runs.jsonl'), 'utf8').trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as { strategyOptions: { truncation: string; bestEffort: boolean }; sources: string[] };
}

/** Rerun the same command: nothing appended, the records file unchanged. */
async function expectRerunSkips(args: string[], dir: string, examples: number): Promise<void> {
  const before = readFileSync(recordsFile(dir), 'utf8');
  const again = await evalCli([...args, '--no-report']);
  expect(counts(again.stderr)).toEqual({ written: 0, skipped: STRATEGIES.length * examples, failed: 0 });
  expect(readFileSync(recordsFile(dir), 'utf8')).toBe(before);
}

// ---------------------------------------------------------------------------------------------
// Fixtures in the InfiniteBench format (the books are not shipped)
// ---------------------------------------------------------------------------------------------

/** The planted sentence at the END of the English book: `direct` must keep the end (middle truncation) to see it. */
const LANTERN = "The old lantern of the ferry house had been painted vermilion by Vasudeva's grandfather.";

/** An English "book" (12,000 characters of Siddhartha, then LANTERN) and two questions over it; the second is not answered by the book and its gold contains "no". */
function writeEnglishFixture(): string {
  const siddhartha = readFileSync(path.join(DATA, 'longdoc_qa', 'narrativeqa_siddhartha', 'siddhartha_pg2500.txt'), 'utf8').slice(20_000, 32_000);
  for (const word of ['vermilion', 'lantern', 'astronaut', 'rocket']) expect(siddhartha.toLowerCase()).not.toContain(word);
  const context = `${siddhartha}\n\n${LANTERN}\n`;
  const lines = [
    { id: 0, context, input: "What colour had Vasudeva's grandfather painted the old lantern of the ferry house?", answer: ['vermilion'], options: [] },
    { id: 1, context, input: 'Why did the astronaut cancel the rocket launch on Tuesday?', answer: ['There was no fuel left.'], options: [] },
  ];
  const file = path.join(tmp, 'longbook_qa_eng.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

/** A Chinese "book" (the first 3,000 characters of chapter 1 of 三国演义) and two Zh.QA questions; the second gold has Latin letters (an option label). */
function writeChineseFixture(): string {
  const text = readFileSync(path.join(DATA, 'chinese', 'sanguo_yanyi.txt'), 'utf8');
  const start = text.indexOf('滚滚长江');
  expect(start).toBeGreaterThan(0);
  const context = text.slice(start, start + 3000);
  expect(context).toContain('字玄德');
  const lines = [
    { id: 0, context, input: '刘备字什么？', answer: ['玄德'], options: [] },
    { id: 1, context, input: '以下哪位与刘备在桃园结义？A. 张飞 B. 曹操', answer: ['A. 张飞'], options: [] },
  ];
  const file = path.join(tmp, 'longbook_qa_chn.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

// ---------------------------------------------------------------------------------------------

describeWithSharedData('extagents eval end to end, data sets other than HotpotQA', () => {
  test('FairytaleQA (real stories): InfiniteBench En token F1, report, and a longer --limit resumes', async () => {
    const out = outDir('fairytaleqa');
    const args = ['--dataset', 'fairytaleqa', '--strategies', 'extagents,rag', '--out-dir', out];
    const run = await evalCli([...args, '--limit', '2']);
    expect(counts(run.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    expect(run.stdout).toMatch(/^fairytaleqa\s+\d+\s+extagents\s+2\s/m);
    expect(run.stderr).toContain(`report: ${path.join(out, 'report.md')}`);
    const rs = records(out);
    expectRun(rs, 'fairytaleqa', 'en', 2);
    expect([...new Set(rs.map((r) => r.exampleId))].sort()).toEqual([
      'alleleiraugh-or-the-many-furred-creature#1',
      'alleleiraugh-or-the-many-furred-creature#2',
    ]);
    // The first questions are answered by sentences of the story: token F1 above 0, EM 0 (whole sentences).
    expect(rs.some((r) => r.f1 > 0)).toBe(true);
    for (const r of rs) {
      expect(r.gold).toHaveLength(2);
      expect(r.evidenceRecall).toBeNull();
    }
    // The nominal length is the longest story of the file (not this one).
    expect(rs[0].targetTokens).toBeGreaterThan(rs[0].inputTokens);
    expectReport(out, 'fairytaleqa', 2, true);

    // --limit 3 adds the third question only; the first four records stay as they were.
    const before = readFileSync(recordsFile(out), 'utf8');
    const more = await evalCli([...args, '--limit', '3', '--no-report']);
    expect(counts(more.stderr)).toEqual({ written: 2, skipped: 4, failed: 0 });
    expect(readFileSync(recordsFile(out), 'utf8').startsWith(before)).toBe(true);
    expectRun(records(out), 'fairytaleqa', 'en', 3);
    await expectRerunSkips([...args, '--limit', '3'], out, 3);
  });

  test('NarrativeQA Siddhartha (real book): En token F1 over the whole book, middle truncation, rerun skips', async () => {
    const out = outDir('narrativeqa');
    const args = ['--dataset', 'narrativeqa', '--strategies', 'extagents,rag', '--limit', '2', '--out-dir', out];
    const run = await evalCli(args);
    expect(counts(run.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rs = records(out);
    expectRun(rs, 'narrativeqa-siddhartha', 'en', 2);
    expect([...new Set(rs.map((r) => r.exampleId))].sort()).toEqual(['siddhartha#36', 'siddhartha#37']);
    for (const r of rs) {
      // The whole novel, Gutenberg licence removed: ~54k tokens, one context for every question.
      expect(r.inputTokens).toBeGreaterThan(45_000);
      expect(r.inputTokens).toBeLessThan(60_000);
      expect(r.targetTokens).toBe(r.inputTokens);
      expect(r.gold).toHaveLength(1);
    }
    // Chunks of at most 8,000 tokens (7 or so): one seeking agent each in round 1.
    const ext = rs.find((r) => r.strategy === 'extagents') as EvalRecord;
    const seekers = ext.calls.filter((c) => c.stage === 0 && c.role === 'seeker').length;
    expect(seekers).toBeGreaterThanOrEqual(Math.ceil(ext.inputTokens / 8000));
    expect(seekers).toBeLessThanOrEqual(Math.ceil(ext.inputTokens / 8000) + 2);
    expect(lastRun(out).strategyOptions).toMatchObject({ truncation: 'middle', bestEffort: true });
    expectReport(out, 'narrativeqa-siddhartha', 2, true);
    await expectRerunSkips(args, out, 2);
  });

  test('SOTU question file (real corpus of 233 addresses): SOTU scorer and evidence recall, rerun skips', async () => {
    const out = outDir('sotu');
    const args = ['--dataset', 'sotu', '--strategies', 'extagents,rag', '--limit', '2', '--out-dir', out];
    const run = await evalCli(args);
    expect(counts(run.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rs = records(out);
    expectRun(rs, 'sotu', 'sotu', 2);
    expect([...new Set(rs.map((r) => r.exampleId))].sort()).toEqual(['dev-001', 'dev-002']);
    for (const r of rs) {
      // The whole corpus (about 2.08M tokens) for every question.
      expect(r.inputTokens).toBeGreaterThan(2_000_000);
      // Gold evidence quotes are located in their addresses: recall is a fraction.
      expect(r.evidenceRecall).not.toBeNull();
      expect(r.evidenceRecall).toBeGreaterThanOrEqual(0);
      expect(r.evidenceRecall).toBeLessThanOrEqual(1);
    }
    const ext = rs.find((r) => r.strategy === 'extagents') as EvalRecord;
    expect(ext.calls.filter((c) => c.stage === 0 && c.role === 'seeker').length).toBeGreaterThan(200);
    expectReport(out, 'sotu', 2, true);
    await expectRerunSkips(args, out, 2);
  });

  test('CMRC 2018 haystack (real Chinese passages): CMRC F1; without best effort the English-only reader refuses, scored 0', async () => {
    const out = outDir('cmrc');
    const args = ['--dataset', 'cmrc:20000', '--strategies', 'extagents,rag', '--limit', '2', '--out-dir', out];
    const run = await evalCli(args);
    expect(counts(run.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rs = records(out);
    expectRun(rs, 'cmrc2018-20000', 'cmrc', 2);
    for (const r of rs) {
      expect(r.inputTokens).toBeLessThanOrEqual(20_000);
      // Gold answer spans located in the haystack.
      expect(r.evidenceRecall).not.toBeNull();
      expect(r.evidenceRecall).toBeGreaterThanOrEqual(0);
      expect(r.evidenceRecall).toBeLessThanOrEqual(1);
    }
    expectReport(out, 'cmrc2018-20000', 2, true);
    await expectRerunSkips(args, out, 2);

    // Without best effort (no forced answer) the English-only reader finds no support in Chinese and refuses.
    const strict = outDir('cmrc-strict');
    const refused = await evalCli([
      '--dataset',
      'cmrc:20000',
      '--strategies',
      'extagents,rag',
      '--limit',
      '2',
      '--no-best-effort',
      '--no-report',
      '--out-dir',
      strict,
    ]);
    expect(counts(refused.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rr = records(strict);
    expectRun(rr, 'cmrc2018-20000', 'cmrc', 2);
    for (const r of rr) expect(r).toMatchObject({ prediction: NO_ANSWER, answerable: false, em: 0, f1: 0 });
    expect(lastRun(strict).strategyOptions.bestEffort).toBe(false);
  });

  test('InfiniteBench En.QA format (fixture book): En token F1; a refusal scores 0 even when the gold says "no"', async () => {
    const file = writeEnglishFixture();
    const out = outDir('ib-en');
    const args = [
      '--dataset',
      `infinitebench:${file}`,
      '--strategies',
      'extagents,rag',
      '--limit',
      '2',
      '--chunk-tokens',
      '1000',
      '--no-best-effort',
      '--out-dir',
      out,
    ];
    const run = await evalCli(args);
    expect(counts(run.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rs = records(out);
    expectRun(rs, 'infinitebench-longbook_qa_eng', 'en', 2);
    for (const r of rs) expect(r.inputTokens).toBeGreaterThan(2000);
    // Both questions are over one book: the same context tokens.
    expect(new Set(rs.map((r) => r.inputTokens)).size).toBe(1);
    for (const strategy of STRATEGIES) {
      const answered = rs.find((r) => r.strategy === strategy && r.exampleId === '0') as EvalRecord;
      expect(answered).toMatchObject({ answerable: true, em: 0 });
      expect(answered.prediction).toContain('vermilion');
      expect(answered.f1).toBeGreaterThan(0);
      // Nothing in the book answers it: refused, and "NO ANSWER" earns nothing from the "no" of the gold.
      const refused = rs.find((r) => r.strategy === strategy && r.exampleId === '1') as EvalRecord;
      expect(refused).toMatchObject({ prediction: NO_ANSWER, answerable: false, em: 0, f1: 0 });
    }
    // extagents: several chunks of at most 1,000 tokens, one seeking agent each.
    const ext = rs.find((r) => r.strategy === 'extagents') as EvalRecord;
    expect(ext.calls.filter((c) => c.stage === 0 && c.role === 'seeker').length).toBeGreaterThanOrEqual(3);
    expect(lastRun(out)).toMatchObject({ strategyOptions: { truncation: 'middle', bestEffort: false }, sources: [file] });
    expectReport(out, 'infinitebench-longbook_qa_eng', 2, false);
    await expectRerunSkips(args, out, 2);
  });

  test('InfiniteBench books: `direct` keeps the first and last halves of the window (middle truncation)', async () => {
    const file = writeEnglishFixture();
    // A window of ~580 tokens over a ~2,800-token book: the planted last sentence survives only a middle cut.
    const run = (out: string, truncation?: 'front') =>
      runEval({
        dataset: parseDatasetSpec(`infinitebench:${file}`),
        strategies: ['direct'],
        limit: 1,
        model: new ExtractiveReader(),
        modelIds: EXTRACTIVE,
        chunkTokens: 1000,
        strategyOptions: { contextWindowTokens: 1600, ...(truncation ? { truncation } : {}) },
        outDir: out,
      });
    const middle = outDir('ib-direct-middle');
    expect(await run(middle)).toMatchObject({ written: 1, failed: 0 });
    const [kept] = records(middle);
    expect(kept.prediction).toContain('vermilion');
    expect(kept.f1).toBeGreaterThan(0);
    expect(kept.calls).toEqual([{ stage: 0, role: 'reasoner', inputTokens: expect.any(Number), outputTokens: expect.any(Number) }]);
    expect(kept.calls[0].inputTokens).toBeLessThan(700);
    expect(lastRun(middle).strategyOptions.truncation).toBe('middle');

    // The caller's options win: a front cut loses the end of the book and its answer.
    const front = outDir('ib-direct-front');
    await run(front, 'front');
    const [cut] = records(front);
    expect(cut.prediction).not.toContain('vermilion');
    expect(cut.f1).toBe(0);
    expect(lastRun(front).strategyOptions.truncation).toBe('front');
  });

  test('InfiniteBench Zh.QA format (fixture book): Zh character F1; without best effort the reader refuses, scored 0', async () => {
    const file = writeChineseFixture();
    const out = outDir('ib-zh');
    const args = ['--dataset', `infinitebench:${file}`, '--strategies', 'extagents,rag', '--limit', '2', '--out-dir', out];
    // Default best effort: the reader is forced to answer with Chinese text it cannot rank.
    const run = await evalCli(args);
    expect(counts(run.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rs = records(out);
    expectRun(rs, 'infinitebench-longbook_qa_chn', 'zh', 2);
    // The forced answers contain the gold characters somewhere: a character F1 above 0, where the
    // English token F1 (whitespace tokens) would give 0.
    const forced = rs.filter((r) => r.answerable && r.f1 > 0);
    expect(forced.length).toBeGreaterThan(0);
    for (const r of forced) expect(infiniteBenchEnF1(r.prediction, r.gold)).toBe(0);
    expectReport(out, 'infinitebench-longbook_qa_chn', 2, false);
    await expectRerunSkips(args, out, 2);

    const strict = outDir('ib-zh-strict');
    const refused = await evalCli([...args.slice(0, -2), '--no-best-effort', '--no-report', '--out-dir', strict]);
    expect(counts(refused.stderr)).toEqual({ written: 4, skipped: 0, failed: 0 });
    const rr = records(strict);
    expectRun(rr, 'infinitebench-longbook_qa_chn', 'zh', 2);
    // Refused and scored 0, also against "A. 张飞", whose "a" the letters of "NO ANSWER" would match.
    for (const r of rr) expect(r).toMatchObject({ prediction: NO_ANSWER, answerable: false, em: 0, f1: 0 });
  });

  test('a length other than "full" for a full-length data set is a usage error, before any output', async () => {
    const out = outDir('bad-length');
    const attempt = evalCli(['--dataset', 'fairytaleqa', '--lengths', '8k', '--out-dir', out]);
    // A UsageError: the CLI prints its message on one line and exits 2 (test/unit/cli-usage.test.ts).
    await expect(attempt).rejects.toBeInstanceOf(UsageError);
    await expect(attempt).rejects.toMatchObject({ message: expect.stringMatching(/fairytaleqa is evaluated at its full length only/) });
    expect(existsSync(out)).toBe(false);
    await expect(evalCli(['--dataset', 'hotpotqa', '--lengths', 'full', '--out-dir', out])).rejects.toMatchObject({
      message: expect.stringMatching(/hotpotqa needs target lengths/),
    });
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(tmp)).not.toContain('bad-length');
  });
});
