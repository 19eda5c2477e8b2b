/**
 * Cost before spending through the local workflow (local/engine/run.ts): Prepare estimates the run
 * before any model call, refuses it when the estimate is over `maxCostUsd` (no model call made), and
 * the result states the estimate beside the actual usage, which stays within it. `ask --estimate`
 * prints the same estimate without running.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../../local/cli/cli';
import { resolveCorpus } from '../../local/engine/corpus';
import { runLocal } from '../../local/engine/run';
import { CostLimitExceededError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import { ANSWER_SENTENCE, scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'extagents-cost-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A scripted model that counts its calls. */
function counting(): { model: AgentModel; calls: () => number } {
  const inner = scriptedModel({ everyChunk: true });
  let calls = 0;
  return {
    model: { ...inner, seek: (r) => (calls++, inner.seek(r)), reason: (r) => (calls++, inner.reason(r)) },
    calls: () => calls,
  };
}

const corpus = (): Record<string, string> => ({
  'a.txt': 'The harvest was abundant in the district. '.repeat(40),
  'b.txt': `The roads were repaired in the valley. ${ANSWER_SENTENCE}`,
});

describe('a cost limit on a run', () => {
  it('refuses a run over maxCostUsd in Prepare, before any model call', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const { model, calls } = counting();

    const failure = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, maxCostUsd: 0.000001 },
      model,
      modelSpec: 'bedrock:us.meta.llama3-3-70b-instruct-v1:0',
      stateDir: path.join(dir, 'state'),
    }).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(CostLimitExceededError);
    expect((failure as Error).message).toMatch(/^Refused before any model call: the run would cost at most \$[\d.]+ .*over maxCostUsd \$0\.000001/);
    expect(calls()).toBe(0);
  });

  it('runs within the limit, and the result states the estimate, which the actual calls stay within', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const { model } = counting();

    const result = await runLocal({
      files,
      question: 'What is the answer?',
      options: { chunkTokens: 64, maxCostUsd: 10 },
      model,
      modelSpec: 'bedrock:us.meta.llama3-3-70b-instruct-v1:0',
      stateDir: path.join(dir, 'state'),
    });

    expect(result.answer).toContain('saffron');
    expect(result.estimate).toBeDefined();
    expect(result.usage.seeker.calls).toBeLessThanOrEqual(result.estimate!.seeker.calls);
    expect(result.usage.reasoner.calls).toBeLessThanOrEqual(result.estimate!.reasoner.calls);
    expect(result.estimate!.seeker.calls).toBe(result.chunks * 2);
  });
});

describe('extagents ask --estimate', () => {
  /** `extagents ask --estimate` over the test corpus with the Bedrock Llama 3.1 8B model, and `extra` flags. */
  const estimateArgv = (extra: string[]): string[] => [
    'node',
    'extagents',
    'ask',
    '-c',
    writeCorpus(dir, corpus()),
    '-q',
    'What is the answer?',
    '--chunk-tokens',
    '64',
    '--estimate',
    ...extra,
    '--state-dir',
    path.join(dir, 'state'),
    '--model',
    'bedrock:us.meta.llama3-1-8b-instruct-v1:0',
  ];

  it('prints the estimate per role with its price and runs nothing', async () => {
    const out: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
    try {
      process.exitCode = undefined;
      await main(estimateArgv(['--json']));
    } finally {
      jest.restoreAllMocks();
    }
    const estimate = JSON.parse(out.join('')) as {
      seeker: { calls: number };
      totalUsd: number;
      corpus: { chunks: number };
      prices: { seeker: { priced: boolean } };
      concurrency: { concurrency: number; seekLatencySeconds: number };
      time: { seekingSecondsPerRound: number[]; reasoningSeconds: number; totalSeconds: number; throttles: number };
    };

    expect(process.exitCode ?? 0).toBe(0);
    expect(estimate.seeker.calls).toBe(estimate.corpus.chunks * 2);
    expect(estimate.prices.seeker.priced).toBe(true);
    expect(estimate.totalUsd).toBeGreaterThan(0);
    // The expected time beside the cost (shared/capacity.ts): each round's chunks in waves of the
    // seeking concurrency, each wave a seek's latency at least; no quota stated, no throttles.
    const waves = Math.ceil(estimate.corpus.chunks / estimate.concurrency.concurrency);
    expect(estimate.time.seekingSecondsPerRound).toHaveLength(2);
    for (const seconds of estimate.time.seekingSecondsPerRound) expect(seconds).toBeGreaterThanOrEqual(waves * estimate.concurrency.seekLatencySeconds);
    expect(estimate.time.totalSeconds).toBeCloseTo(
      estimate.time.seekingSecondsPerRound[0] + estimate.time.seekingSecondsPerRound[1] + estimate.time.reasoningSeconds,
      0,
    );
    expect(estimate.time.throttles).toBe(0);
  });

  it('says when --max-cost would refuse the run, as Prepare would, and still runs nothing', async () => {
    const out: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
    const args = (json: boolean, maxCost: string) => estimateArgv([...(json ? ['--json'] : []), '--max-cost', maxCost]);
    try {
      process.exitCode = undefined;
      await main(args(true, '0'));
      const over = JSON.parse(out.join('')) as { totalUsd: number; costRefusal?: string };
      out.length = 0;
      await main(args(false, '0'));
      const text = out.join('');
      out.length = 0;
      await main(args(true, '1000'));
      const within = JSON.parse(out.join('')) as { costRefusal?: string };

      expect(process.exitCode ?? 0).toBe(0);
      expect(over.costRefusal).toMatch(/^the run would cost at most \$[\d.]+ .*over maxCostUsd \$0$/);
      expect(text).toContain(`  the run would be refused (CostLimitExceededError): ${over.costRefusal}`);
      expect(within.costRefusal).toBeUndefined();
    } finally {
      jest.restoreAllMocks();
    }
  });

  it('holds a batch run to its on-demand total, as Prepare does (issue 51, item 8)', async () => {
    const out: string[] = [];
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true));
    const estimate = async (maxCost: string) => {
      out.length = 0;
      await main(estimateArgv(['--seek-mode', 'batch', '--json', '--max-cost', maxCost]));
      return JSON.parse(out.join('')) as { modes: Record<'on-demand' | 'batch', { totalUsd: number }>; costRefusal?: string };
    };
    try {
      const totals = (await estimate('1000')).modes;
      // Between the batch total and the on-demand total: the run would be refused, so the estimate says so.
      const between = (totals.batch.totalUsd + totals['on-demand'].totalUsd) / 2;
      expect(totals.batch.totalUsd).toBeLessThan(totals['on-demand'].totalUsd);
      const refused = await estimate(between.toFixed(6));
      expect(refused.costRefusal).toMatch(/^the run would cost at most \$[\d.]+ \(seeker/);
    } finally {
      jest.restoreAllMocks();
    }
  });
});

describe('a run refused before it began', () => {
  it('leaves no run objects behind in the state directory (generated run id)', async () => {
    const files = await resolveCorpus([writeCorpus(dir, corpus())]);
    const stateDir = path.join(dir, 'state');

    await expect(
      runLocal({
        files,
        question: 'What is the answer?',
        options: { chunkTokens: 64, maxCostUsd: 0.000001 },
        model: counting().model,
        modelSpec: 'bedrock:us.meta.llama3-3-70b-instruct-v1:0',
        stateDir,
      }),
    ).rejects.toThrow(CostLimitExceededError);

    const left = (sub: string) =>
      existsSync(path.join(stateDir, 'bucket', sub)) ? readdirSync(path.join(stateDir, 'bucket', sub)).filter((n) => !n.startsWith('_')) : [];
    expect(left('runs')).toEqual([]);
    expect(left('corpora')).toEqual([]);
  });
});
