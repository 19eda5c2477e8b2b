import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadPriceTable, priceOf, type PriceTable } from '../../shared/prices';
import type { EvalCall, EvalRecord } from '../../eval/records';
import { aggregateRecords, buildReport, dataSourcesFor, parseDataReadme, readEvalRecords, type Report } from '../../eval/report';

const SEEKER = 'us.meta.llama3-1-8b-instruct-v1:0';
const REASONER = 'us.meta.llama3-3-70b-instruct-v1:0';

/** A price table with round numbers: 8B $1 / $2 per 1M, 70B $10 / $20 per 1M. */
const PRICES: PriceTable = {
  currency: 'USD',
  unit: 'USD per 1M tokens',
  writtenOn: '2026-01-01',
  warning: 'test prices',
  models: {
    'meta.llama3-1-8b-instruct-v1:0': { inputUsdPerMTok: 1, outputUsdPerMTok: 2, asOf: '2026-01-01', source: 'test', verified: false },
    'meta.llama3-3-70b-instruct-v1:0': { inputUsdPerMTok: 10, outputUsdPerMTok: 20, asOf: '2026-01-01', source: 'test', verified: false },
    extractive: { inputUsdPerMTok: 0, outputUsdPerMTok: 0, asOf: '2026-01-01', source: 'test', verified: true },
  },
};

function record(over: Partial<EvalRecord> & Pick<EvalRecord, 'exampleId'>): EvalRecord {
  return {
    dataset: 'hotpotqa-8000',
    strategy: 'extagents',
    targetTokens: 8000,
    inputTokens: 7900,
    question: 'q?',
    prediction: 'a',
    answerable: true,
    gold: ['a'],
    em: 1,
    f1: 1,
    evidenceRecall: 1,
    models: { seeker: SEEKER, reasoner: REASONER },
    calls: [],
    wallMs: 100,
    ...over,
  };
}

const seekCalls = (n: number, input: number, output: number): EvalCall[] =>
  Array.from({ length: n }, () => ({ stage: 0, role: 'seeker', inputTokens: input, outputTokens: output }));
const reasonCall = (stage: number, input: number, output: number): EvalCall => ({ stage, role: 'reasoner', inputTokens: input, outputTokens: output });

/** Two extagents examples at 8k (different calls and scores), one direct at 8k, one extagents at 128k with no evidence gold. */
const RECORDS: EvalRecord[] = [
  record({ exampleId: 'e1', em: 1, f1: 1, evidenceRecall: 1, calls: [...seekCalls(2, 1000, 100), reasonCall(1, 500, 20)], wallMs: 100 }),
  record({
    exampleId: 'e2',
    em: 0,
    f1: 0.5,
    evidenceRecall: 0.5,
    calls: [...seekCalls(4, 1000, 50), reasonCall(1, 300, 10), reasonCall(2, 700, 30)],
    wallMs: 300,
  }),
  record({
    exampleId: 'e1',
    strategy: 'direct',
    em: 0,
    f1: 0.25,
    evidenceRecall: null,
    calls: [reasonCall(0, 8000, 40)],
    models: { seeker: 'none', reasoner: REASONER },
  }),
  record({
    exampleId: 'e1',
    targetTokens: 128_000,
    inputTokens: 127_000,
    evidenceRecall: null,
    calls: seekCalls(16, 8000, 0),
    error: 'ModelThrottledError: slow down',
    em: 0,
    f1: 0,
  }),
];

describe('evaluation report: aggregation', () => {
  const rows = aggregateRecords(RECORDS, PRICES);
  const ext8k = rows.find((r) => r.strategy === 'extagents' && r.targetTokens === 8000);
  const direct = rows.find((r) => r.strategy === 'direct');
  const ext128k = rows.find((r) => r.strategy === 'extagents' && r.targetTokens === 128_000);

  test('groups by dataset, strategy and target length, in strategy order then length', () => {
    expect(rows.map((r) => [r.strategy, r.targetTokens, r.examples])).toEqual([
      ['extagents', 8000, 2],
      ['extagents', 128_000, 1],
      ['direct', 8000, 1],
    ]);
  });

  test('EM, F1 and evidence recall are means over the group; evidence recall only over examples with gold evidence', () => {
    expect(ext8k?.em).toBeCloseTo(0.5, 12);
    expect(ext8k?.f1).toBeCloseTo(0.75, 12);
    expect(ext8k?.evidenceRecall).toBeCloseTo(0.75, 12);
    expect(ext8k?.evidenceExamples).toBe(2);
    expect(direct?.evidenceRecall).toBeNull();
    expect(ext128k?.errors).toBe(1);
    expect(ext8k?.measuredWallMs).toBe(200);
  });

  test('calls and tokens per role per query are means over the examples', () => {
    // seeker: (2 + 4) / 2 calls; input (2000 + 4000) / 2; output (200 + 200) / 2
    expect(ext8k?.perQuery.seeker).toEqual({ calls: 3, inputTokens: 3000, outputTokens: 200 });
    // reasoner: (1 + 2) / 2 calls; input (500 + 1000) / 2; output (20 + 40) / 2
    expect(ext8k?.perQuery.reasoner).toEqual({ calls: 1.5, inputTokens: 750, outputTokens: 30 });
    expect(direct?.perQuery.seeker).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0 });
  });

  test('cost per query comes from the price table, per role model, profile prefixes resolved', () => {
    // e1: seeker 2000 in × $1 + 200 out × $2 = $0.0024; reasoner 500 × $10 + 20 × $20 = $0.0054 → 0.0078
    // e2: seeker 4000 × 1 + 200 × 2 = 0.0044; reasoner 1000 × 10 + 40 × 20 = 0.0108 → 0.0152; mean 0.0115
    expect(ext8k?.costUsdPerQuery).toBeCloseTo(0.0115, 12);
    // direct: 8000 × 10 + 40 × 20 = 0.0808; its seeker model ("none") has no call, so it needs no price
    expect(direct?.costUsdPerQuery).toBeCloseTo(0.0808, 12);
    expect(direct?.unpricedModels).toEqual([]);
  });

  test('a model without a price makes the cost unknown, never zero', () => {
    const [row] = aggregateRecords([record({ exampleId: 'x', models: { seeker: 'mystery-model', reasoner: REASONER }, calls: seekCalls(1, 10, 1) })], PRICES);
    expect(row.costUsdPerQuery).toBeNull();
    expect(row.unpricedModels).toEqual(['mystery-model']);
  });

  test('modeled latency per query is the mean critical path under the latency model', () => {
    const model = {
      roles: {
        seeker: { fixedMs: 0, perInputTokenMs: 0.001, perOutputTokenMs: 0, quadraticCrossoverTokens: 1 },
        reasoner: { fixedMs: 0, perInputTokenMs: 0.001, perOutputTokenMs: 0, quadraticCrossoverTokens: 1 },
      },
      concurrency: 2,
      description: 'test',
    };
    const [row] = aggregateRecords(RECORDS.slice(0, 2), PRICES, model);
    // e1: stage 0 one wave of 2 × 1000 → 1 ms, stage 1 0.5 ms → 1.5; e2: two waves → 2 ms, 0.3, 0.7 → 3
    expect(row.modeledLatencyMs.mean).toBeCloseTo(2.25, 9);
    expect(row.modeledLatencyMs.max).toBeCloseTo(3, 9);
  });
});

describe('evaluation report: price table', () => {
  test('the shipped table prices the project models, dated and sourced, and extractive at 0', () => {
    const table = loadPriceTable();
    for (const id of [SEEKER, REASONER, 'bedrock:us.meta.llama3-1-8b-instruct-v1:0']) {
      const found = priceOf(table, id);
      expect(found?.price.inputUsdPerMTok).toBeGreaterThan(0);
      expect(found?.price.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(found?.price.source).toMatch(/^https:\/\//);
    }
    expect(priceOf(table, 'extractive')?.price).toMatchObject({ inputUsdPerMTok: 0, outputUsdPerMTok: 0 });
    expect(table.warning).toMatch(/change/);
    expect(priceOf(table, 'gpt-unknown')).toBeUndefined();
  });
});

describe('evaluation report: files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'eval-report-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const README = [
    '| path | what | count | source (repo @ path) | license |',
    '|---|---|---|---|---|',
    '| hotpotqa/hotpot_dev_distractor_100.reflexion.json | HotpotQA dev | 100 | noahshinn/reflexion | CC BY-SA 4.0 (HotpotQA) |',
    '| filler/musique_train_corpus_1890.hipporag.json | Wikipedia paragraphs | 1,890 | OSU-NLP-Group/HippoRAG | CC BY 4.0 (MuSiQue) |',
    '| chinese/cmrc2018_dev.squad.json | CMRC 2018 dev | 848 | ymcui/cmrc2018 | CC BY-SA 4.0 |',
  ].join('\n');

  function writeRecords(lines: string[]): void {
    writeFileSync(path.join(dir, 'records.jsonl'), `${lines.join('\n')}\n`);
    writeFileSync(path.join(dir, 'README.md'), README);
  }

  test('malformed lines are skipped and reported with their line numbers; a repeated record keeps the later one', async () => {
    writeRecords([
      JSON.stringify(RECORDS[0]),
      '{"dataset": "hotpotqa-8000", truncated',
      JSON.stringify({ ...RECORDS[1], strategy: 'no-such-strategy' }),
      '',
      JSON.stringify({ ...RECORDS[0], f1: 0.125 }),
    ]);
    const { records, warnings } = await readEvalRecords(path.join(dir, 'records.jsonl'));
    expect(records).toHaveLength(1);
    expect(records[0].f1).toBe(0.125);
    expect(warnings.map((w) => w.line)).toEqual([2, 3, 5]);
    expect(warnings[0].message).toMatch(/invalid JSON/);
    expect(warnings[1].message).toMatch(/strategy/);
    expect(warnings[2].message).toMatch(/repeats the record of line 1/);
  });

  test('buildReport writes report.json, a Markdown report with the tables and labelled modeled figures, and PNG charts', async () => {
    writeRecords([...RECORDS.map((r) => JSON.stringify(r)), 'not json']);
    const result = await buildReport(dir, { prices: PRICES, dataReadme: path.join(dir, 'README.md'), now: new Date('2026-02-03T04:05:06Z') });

    const json = JSON.parse(readFileSync(result.jsonPath, 'utf8')) as Report;
    expect(json.records).toBe(4);
    expect(json.rows).toHaveLength(3);
    expect(json.warnings).toHaveLength(1);
    expect(json.dataSources['hotpotqa-8000'].map((s) => s.license)).toEqual(['CC BY-SA 4.0 (HotpotQA)', 'CC BY 4.0 (MuSiQue)']);

    const md = readFileSync(result.markdownPath, 'utf8');
    expect(md).toContain('| strategy | target length | examples | mean input tokens | EM | F1 | evidence recall | errors |');
    expect(md).toContain('| extagents | 8k | 2 | 7,900 | 50.0 | 75.0 | 75.0 (n=2) | 0 |');
    expect(md).toContain('| direct | 8k | 1 | 7,900 | 0.0 | 25.0 | – | 0 |');
    expect(md).toMatch(/\| extagents \| 8k \| 3\.0 \| 3,000 \| 200 \| 1\.5 \| 750 \| 30 \| 0\.0115 \|/);
    expect(md).toContain('MODELED latency, mean (s)');
    expect(md).toContain('## Latency model (modeled)');
    expect(md).toContain('noahshinn/reflexion');
    expect(md).toContain('CC BY 4.0 (MuSiQue)');
    expect(md).toMatch(/records\.jsonl:5: invalid JSON/);
    expect(md).toContain('test prices');

    expect(result.charts.map((c) => path.basename(c)).sort()).toEqual([
      'f1-vs-length.hotpotqa-8000.png',
      'latency-vs-length.hotpotqa-8000.png',
      'recall-vs-length.hotpotqa-8000.png',
      'tokens-vs-length.hotpotqa-8000.png',
    ]);
    // 95% bootstrap intervals per cell and paired tests against extagents.
    expect(md).toContain('### Intervals and paired tests');
    expect(result.report.uncertainty.length).toBeGreaterThan(0);
    for (const u of result.report.uncertainty) {
      expect(u.f1.low).toBeLessThanOrEqual(u.f1.mean);
      expect(u.f1.high).toBeGreaterThanOrEqual(u.f1.mean);
      if (u.strategy !== 'extagents' && u.f1VsExtAgents) expect(u.f1VsExtAgents.p).toBeGreaterThanOrEqual(0);
    }
    for (const chart of result.charts) {
      const png = readFileSync(chart);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      expect(statSync(chart).size).toBeGreaterThan(10_000);
      expect(md).toContain(`](${path.basename(chart)})`);
    }
  }, 60_000);

  test('sources are cited per dataset from the README table', () => {
    const table = parseDataReadme(README);
    expect(table).toHaveLength(3);
    expect(dataSourcesFor('cmrc2018-haystack', table).map((s) => s.source)).toEqual(['ymcui/cmrc2018']);
    expect(dataSourcesFor('sotu', table)[0].license).toMatch(/public domain/);
    expect(dataSourcesFor('something-else', table)).toEqual([]);
  });
});
