import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FILLER_FILES } from '../../eval/datasets';
import { evidenceRecall } from '../../eval/evidence';
import type { EvalRecord } from '../../eval/records';
import { parseDatasetSpec, parseLengths, readRecords, recordsFile, runEval, type EvalProgress } from '../../eval/runner';
import { scoreAnswer } from '../../eval/score';
import { formatSummary, parseStrategies } from '../../local/cli/eval-command';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import { NO_ANSWER } from '../../shared/types';

/**
 * A model that "knows" the answers: a seeking agent returns the chunk's sentence containing
 * "capital" (score 90); the reasoning agent answers with the last word of that sentence.
 */
class CapitalModel implements AgentModel {
  readonly description = 'scripted capital reader';
  async seek(request: SeekRequest): Promise<SeekResult> {
    const usage = { calls: 1, inputTokens: request.chunk.tokens, outputTokens: 3 };
    const m = /[^.\n]*capital[^.\n]*\./.exec(request.chunk.text);
    if (!m) return { evidence: null, score: 0, spans: [], usage, warnings: [] };
    return { evidence: m[0], score: 90, spans: [{ start: m.index, end: m.index + m[0].length }], usage, warnings: [] };
  }
  async reason(request: ReasonRequest): Promise<ReasonResult> {
    const usage = { calls: 1, inputTokens: request.messages.reduce((s, m) => s + m.tokens, 0), outputTokens: 1 };
    const sentence = request.messages.map((m) => /[^.\n]*capital[^.\n]*\./.exec(m.evidence)?.[0]).find((s) => s !== undefined);
    if (sentence === undefined) return { answerable: false, answer: NO_ANSWER, citedMessageIds: [], usage, warnings: [] };
    const answer = sentence.replace(/\.$/, '').split(' ').at(-1) ?? '';
    return { answerable: true, answer, citedMessageIds: [request.messages[0].id], usage, warnings: [] };
  }
}

/** A tiny data root: two HotpotQA questions and four filler files of Wikipedia-like paragraphs. */
function dataRoot(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'eval-runner-'));
  mkdirSync(path.join(root, 'hotpotqa'));
  mkdirSync(path.join(root, 'filler'));
  const question = (id: string, country: string, capital: string, gold: string) => ({
    _id: id,
    question: `What is the capital of ${country}?`,
    answer: gold,
    type: 'bridge',
    level: 'easy',
    supporting_facts: [[country, 0]],
    context: [
      [country, [`${country} is a country.`, ` The capital of ${country} is ${capital}.`]],
      [`${country} river`, [`A river flows through ${country}.`]],
    ],
  });
  writeFileSync(path.join(root, 'hotpotqa', 'q.json'), JSON.stringify([question('q1', 'France', 'Paris', 'Paris'), question('q2', 'Peru', 'Lima', 'Cusco')]));
  FILLER_FILES.forEach((name, f) => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => ({
      title: `Filler ${f}-${i}`,
      text: `Paragraph ${f}-${i} tells of harvests, markets and songs in a village by the sea.`,
    }));
    writeFileSync(path.join(root, 'filler', name), JSON.stringify(paragraphs));
  });
  return root;
}

describe('evaluation runner', () => {
  let root: string;
  let out: string;
  beforeEach(() => {
    root = dataRoot();
    out = mkdtempSync(path.join(os.tmpdir(), 'eval-out-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  });

  const run = (progress?: EvalProgress[]) =>
    runEval({
      dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
      dataRoot: root,
      strategies: ['extagents', 'official', 'direct'],
      lengths: [200, 400],
      model: new CapitalModel(),
      modelIds: { seeker: 'scripted-seeker', reasoner: 'scripted-reasoner' },
      chunkTokens: 64,
      outDir: out,
      onProgress: (p) => progress?.push(p),
    });

  test('writes one scored record per dataset, strategy, length and example', async () => {
    const progress: EvalProgress[] = [];
    const summary = await run(progress);
    expect(summary).toMatchObject({ written: 12, skipped: 0, failed: 0 });
    expect(progress[0]).toEqual({ done: 0, total: 12 });
    expect(progress.at(-1)?.done).toBe(12);
    const { records, warnings } = readRecords(recordsFile(out));
    expect(warnings).toEqual([]);
    expect(records).toHaveLength(12);
    const q1 = records.find((r) => r.exampleId === 'q1' && r.strategy === 'extagents' && r.targetTokens === 400) as EvalRecord;
    expect(q1).toMatchObject({ dataset: 'hotpotqa', prediction: 'Paris', answerable: true, gold: ['Paris'], em: 1, f1: 1, evidenceRecall: 1 });
    expect(q1.models).toEqual({ seeker: 'scripted-seeker', reasoner: 'scripted-reasoner' });
    expect(q1.inputTokens).toBeGreaterThan(300);
    expect(q1.inputTokens).toBeLessThanOrEqual(400);
    expect(q1.calls.filter((c) => c.stage === 0).every((c) => c.role === 'seeker')).toBe(true);
    // q2's gold answer is not what the corpus says: scored 0 by the official rule.
    const q2 = records.find((r) => r.exampleId === 'q2' && r.strategy === 'direct') as EvalRecord;
    expect(q2).toMatchObject({ prediction: 'Lima', em: 0, f1: 0, evidenceRecall: 1 });
    expect(q2.calls).toEqual([{ stage: 0, role: 'reasoner', inputTokens: expect.any(Number), outputTokens: 1 }]);
    // official costs two seeking calls per chunk per round.
    const official = records.find((r) => r.exampleId === 'q1' && r.strategy === 'official' && r.targetTokens === 400) as EvalRecord;
    const chunks = official.calls.filter((c) => c.stage === 0).length;
    expect(official.calls.filter((c) => c.stage === 1)).toHaveLength(chunks);
    expect(readFileSync(path.join(out, 'runs.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  test('--reuse-calls: the same records as without, with the repeated requests answered from memory and counted', async () => {
    const strategies = ['extagents', 'extagents-no-sync', 'extagents-no-kar', 'extagents-rank-score'] as const;
    const counting = (): CapitalModel & { sent: number } => {
      const model = Object.assign(new CapitalModel(), { sent: 0 });
      const seek = model.seek.bind(model);
      const reason = model.reason.bind(model);
      model.seek = (r) => ((model.sent += 1), seek(r));
      model.reason = (r) => ((model.sent += 1), reason(r));
      return model;
    };
    const go = async (dir: string, reuseCalls: boolean, model: CapitalModel) => {
      await runEval({
        dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
        dataRoot: root,
        strategies,
        lengths: [400],
        model,
        modelIds: { seeker: 's', reasoner: 'r' },
        chunkTokens: 64,
        outDir: dir,
        reuseCalls,
      });
      return readRecords(recordsFile(dir)).records;
    };
    const plainModel = counting();
    const reusedModel = counting();
    const plain = await go(out, false, plainModel);
    const other = mkdtempSync(path.join(os.tmpdir(), 'eval-out-'));
    try {
      const reused = await go(other, true, reusedModel);
      const strip = (rs: EvalRecord[]) =>
        rs.map(({ wallMs: _w, reusedCalls: _r, ...rest }) => rest).sort((a, b) => `${a.strategy}${a.exampleId}`.localeCompare(`${b.strategy}${b.exampleId}`));
      expect(strip(reused)).toEqual(strip(plain));
      expect(plain.every((r) => r.reusedCalls === undefined)).toBe(true);
      // The first strategy of each example sends everything; the round-1 seeks of the others are reused.
      const firsts = reused.filter((r) => r.strategy === 'extagents');
      expect(firsts.every((r) => r.reusedCalls === 0)).toBe(true);
      const later = reused.filter((r) => r.strategy !== 'extagents');
      expect(later.every((r) => (r.reusedCalls ?? 0) > 0)).toBe(true);
      const reusedTotal = reused.reduce((n, r) => n + (r.reusedCalls ?? 0), 0);
      expect(reusedModel.sent).toBe(plainModel.sent - reusedTotal);
      expect(JSON.parse(readFileSync(path.join(other, 'runs.jsonl'), 'utf8').trim())).toMatchObject({ reuseCalls: true });
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  test('a second run appends nothing; a torn last line is ignored and the rest resumed', async () => {
    await run();
    const before = readFileSync(recordsFile(out), 'utf8');
    const again = await run();
    expect(again).toMatchObject({ written: 0, skipped: 12 });
    expect(readFileSync(recordsFile(out), 'utf8')).toBe(before);

    // Keep 5 records and half of the 6th, as a killed run would.
    const lines = before.trim().split('\n');
    writeFileSync(recordsFile(out), `${lines.slice(0, 5).join('\n')}\n${lines[5].slice(0, 40)}`);
    const resumed = await run();
    expect(resumed).toMatchObject({ written: 7, skipped: 5 });
    expect(resumed.warnings.join('\n')).toMatch(/records\.jsonl:6: invalid JSON/);
    const { records } = readRecords(recordsFile(out));
    expect(records).toHaveLength(12);
    expect(new Set(records.map((r) => `${r.strategy}/${r.targetTokens}/${r.exampleId}`)).size).toBe(12);
  });

  test('refuses to resume into an output directory made with other settings, naming them, and writes nothing', async () => {
    await run();
    const before = readFileSync(recordsFile(out), 'utf8');
    const base = {
      dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
      dataRoot: root,
      strategies: ['extagents' as const],
      lengths: [200],
      model: new CapitalModel(),
      modelIds: { seeker: 'scripted-seeker', reasoner: 'scripted-reasoner' },
      chunkTokens: 64,
      outDir: out,
    };

    const otherChunks = runEval({ ...base, chunkTokens: 128 });
    const otherModel = runEval({ ...base, modelIds: { seeker: 'other', reasoner: 'other' } });
    const otherSeed = runEval({ ...base, seed: '7' });
    const refusing = runEval({ ...base, strategyOptions: { bestEffort: false } });

    await expect(otherChunks).rejects.toThrow(/already holds hotpotqa records made with other settings: chunkTokens 64 \(now 128\).*another --out/);
    await expect(otherModel).rejects.toThrow(
      /modelIds \{"reasoner":"scripted-reasoner","seeker":"scripted-seeker"\} \(now \{"reasoner":"other","seeker":"other"\}\)/,
    );
    await expect(otherSeed).rejects.toThrow(/seed "0" \(now "7"\)/);
    // A strategy option by its name, not as two whole objects.
    await expect(refusing).rejects.toThrow(/other settings: bestEffort true \(now false\)\. .*another --out-dir/);
    expect(readFileSync(recordsFile(out), 'utf8')).toBe(before);
    await expect(runEval(base)).resolves.toMatchObject({ written: 0, skipped: 2 });

    // A run made before an option existed (its runs.jsonl lacks karRounds) resumes: the option's
    // default is what the method was then. Set to another value, it is refused.
    const runs = path.join(out, 'runs.jsonl');
    const older = readFileSync(runs, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const run = JSON.parse(line) as { strategyOptions: Record<string, unknown> };
        delete run.strategyOptions.karRounds;
        return JSON.stringify(run);
      });
    writeFileSync(runs, `${older.join('\n')}\n`);
    await expect(runEval(base)).resolves.toMatchObject({ written: 0, skipped: 2 });
    await expect(runEval({ ...base, strategyOptions: { karRounds: 'last' } })).rejects.toThrow(/other settings: karRounds "each" \(now "last"\)/);
  });

  test('refuses to resume after a killed run (no runs.jsonl) whose records name other models', async () => {
    await run();
    rmSync(path.join(out, 'runs.jsonl'));

    const resumed = runEval({
      dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
      dataRoot: root,
      strategies: ['extagents'],
      lengths: [200],
      model: new CapitalModel(),
      modelIds: { seeker: 'bedrock-a', reasoner: 'bedrock-b' },
      chunkTokens: 64,
      outDir: out,
    });

    await expect(resumed).rejects.toThrow(/modelIds .*"seeker":"scripted-seeker".*\(now .*"seeker":"bedrock-a"/);
  });

  test('the construction is seeded: the same seed gives the same contexts', async () => {
    await run();
    const first = readRecords(recordsFile(out)).records.map((r) => [r.exampleId, r.targetTokens, r.inputTokens]);
    rmSync(out, { recursive: true, force: true });
    await run();
    const second = readRecords(recordsFile(out)).records.map((r) => [r.exampleId, r.targetTokens, r.inputTokens]);
    expect(second.sort()).toEqual(first.sort());
  });

  test('a failing strategy is recorded with its error and zero scores', async () => {
    const failing: AgentModel = {
      description: 'failing',
      seek: async () => {
        throw new Error('model down');
      },
      reason: async () => {
        throw new Error('model down');
      },
    };
    const summary = await runEval({
      dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
      dataRoot: root,
      strategies: ['extagents'],
      lengths: [200],
      limit: 1,
      model: failing,
      modelIds: { seeker: 'x', reasoner: 'x' },
      outDir: out,
    });
    expect(summary).toMatchObject({ written: 1, failed: 1 });
    expect(readRecords(recordsFile(out)).records[0]).toMatchObject({ error: 'Error: model down', em: 0, f1: 0, evidenceRecall: 0, calls: [] });
  });

  test('a strategy that fails midway keeps the calls it made, and a rerun runs it again, its new record superseding the failed one (issue 51, item 9)', async () => {
    // Arrange: the reasoning agent is down (HTTP 400 on one question), the seeking agents answer.
    let down = true;
    const flaky: AgentModel = {
      description: 'flaky',
      seek: async () => ({ evidence: 'Some evidence.', score: 50, spans: [], usage: { calls: 1, inputTokens: 100, outputTokens: 10 }, warnings: [] }),
      reason: async () => {
        if (down) throw new Error('HTTP 400');
        return { answerable: true, answer: 'Chicago', citedMessageIds: [], usage: { calls: 1, inputTokens: 50, outputTokens: 2 }, warnings: [] };
      },
    };
    const evaluate = () =>
      runEval({
        dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
        dataRoot: root,
        strategies: ['rag', 'extagents'],
        lengths: [200],
        limit: 1,
        model: flaky,
        modelIds: { seeker: 'x', reasoner: 'x' },
        outDir: out,
      });

    // Act
    const first = await evaluate();
    const failed = readRecords(recordsFile(out)).records.find((r) => r.strategy === 'extagents');
    down = false;
    const second = await evaluate();

    // Assert: the failed record counted its seeks; the rerun ran only the failed strategies.
    expect(first).toMatchObject({ written: 2, failed: 2 });
    expect(failed?.calls.filter((c) => c.role === 'seeker').length).toBeGreaterThan(0);
    expect(failed?.calls.reduce((s, c) => s + c.inputTokens, 0)).toBeGreaterThan(0);
    expect(second).toMatchObject({ written: 2, skipped: 0, failed: 0 });
    const records = readRecords(recordsFile(out)).records;
    expect(records.map((r) => [r.strategy, r.error])).toEqual([
      ['rag', undefined],
      ['extagents', undefined],
    ]);
  });

  test('a strategy that calls the model in memory retries a server error as the workflow does, and fails at once on any other error (issue 51, item 9)', async () => {
    const { ModelUnavailableError } = await import('../../shared/errors');
    let failures = 2;
    const flaky: AgentModel = {
      description: 'flaky',
      seek: async () => ({ evidence: null, score: 0, spans: [], usage: { calls: 1, inputTokens: 1, outputTokens: 1 }, warnings: [] }),
      reason: async () => {
        if (failures > 0) {
          failures -= 1;
          throw new ModelUnavailableError('HTTP 500 from the server');
        }
        return { answerable: true, answer: 'Chicago', citedMessageIds: [], usage: { calls: 1, inputTokens: 50, outputTokens: 2 }, warnings: [] };
      },
    };
    const summary = await runEval({
      dataset: parseDatasetSpec('hotpotqa:' + path.join(root, 'hotpotqa', 'q.json'), root),
      dataRoot: root,
      strategies: ['direct'],
      lengths: [200],
      limit: 1,
      model: flaky,
      modelIds: { seeker: 'x', reasoner: 'x' },
      outDir: out,
      retryFirstWaitMs: 1,
    });
    expect(summary).toMatchObject({ written: 1, failed: 0 });
    expect(failures).toBe(0);
    expect(readRecords(recordsFile(out)).records[0]).toMatchObject({ strategy: 'direct', prediction: 'Chicago' });
  });

  test('the summary table has one row per dataset, length and strategy', async () => {
    await run();
    const table = formatSummary(readRecords(recordsFile(out)).records);
    const rows = table.split('\n').slice(2);
    expect(rows).toHaveLength(6);
    expect(rows[0]).toMatch(/^hotpotqa\s+200\s+extagents\s+2\s+50\.0\s+50\.0\s+100\.0/);
  });
});

describe('evaluation options and scores', () => {
  test('lengths: 8k, 128k, 1M, plain numbers and full', () => {
    expect(parseLengths('8k,128k,1M,32000,full')).toEqual([8000, 128000, 1000000, 32000, 'full']);
    expect(() => parseLengths('8q')).toThrow(/Bad length/);
  });

  test('datasets and strategies are checked', () => {
    expect(parseDatasetSpec('infinitebench:/x/en.jsonl')).toEqual({ kind: 'infinitebench', file: '/x/en.jsonl' });
    expect(() => parseDatasetSpec('infinitebench')).toThrow(/needs a file/);
    expect(() => parseDatasetSpec('squad')).toThrow(/Unknown dataset/);
    expect(parseStrategies('all')).toHaveLength(9);
    expect(parseStrategies('rag, direct')).toEqual(['rag', 'direct']);
    expect(() => parseStrategies('extagent')).toThrow(/unknown strategy/);
  });

  test('scores by the data set official rules', () => {
    expect(scoreAnswer('hotpotqa', 'The Paris', true, ['paris'])).toEqual({ em: 1, f1: 1 });
    expect(scoreAnswer('sotu', NO_ANSWER, false, [NO_ANSWER])).toEqual({ em: 1, f1: 1 });
    expect(scoreAnswer('sotu', 'Lincoln', true, [NO_ANSWER])).toEqual({ em: 0, f1: 0 });
    expect(scoreAnswer('en', 'in Paris', true, ['Lyon', 'Paris']).f1).toBeCloseTo(2 / 3);
    expect(scoreAnswer('zh', '北京', true, ['北京市']).f1).toBeCloseTo(0.8);
    expect(scoreAnswer('cmrc', '北京', true, ['北京']).em).toBe(1);
  });

  test('evidence recall counts each gold paragraph once, by overlap, quote or title', () => {
    const message = (quotes: Array<{ documentId: string; start: number; end: number; text: string }>, evidence = '') => ({
      id: 'm',
      round: 1,
      chunkIndex: 0,
      score: 1,
      evidence,
      tokens: 1,
      quotes,
      sources: [],
    });
    const gold = [
      { documentId: 'd', title: 'A', sentence: 0, start: 0, end: 10 },
      { documentId: 'd', title: 'A', sentence: 1, start: 0, end: 10 },
      { documentId: 'd', title: 'B', sentence: 0, start: 20, end: 30 },
    ];
    expect(evidenceRecall(gold, [message([{ documentId: 'd', start: 5, end: 8, text: 'x' }])])).toBe(0.5);
    expect(evidenceRecall(gold, [message([{ documentId: 'e', start: 5, end: 8, text: 'x' }])])).toBe(0);
    expect(evidenceRecall([{ quote: 'the  Union' }], [message([], 'State of the Union is strong')])).toBe(1);
    expect(evidenceRecall([{ title: 'Paris' }], [message([], 'It is in paris.')])).toBe(1);
    expect(evidenceRecall([], [])).toBeNull();
  });
});
