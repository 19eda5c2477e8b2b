/**
 * Issue 40, part 4 "Prices": the price table's batch rate beside the on-demand one (shared/prices.json,
 * validated at load by shared/prices.ts), the estimate in both seeking modes (shared/cost.ts: with
 * batch seeking the seeker's tokens at the batch rate, the reasoner's on demand), the cost limit at
 * the mode a run uses, and `ask --estimate`'s text (local/cli/format.ts) showing both modes and the
 * batch wait. A model without a batch rate has no batch price, never a guess.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BATCH_WAIT, costLimitProblem, enforceCostLimit, estimateRun, priceEstimate } from '../../shared/cost';
import { parseRunOptions } from '../../shared/config';
import { CostLimitExceededError } from '../../shared/errors';
import { loadPriceTable, priceOf, type PriceTable } from '../../shared/prices';
import { formatEstimate } from '../../local/cli/format';
import { modelPricing } from '../../models';

const PAGE = 'https://docs.aws.amazon.com/bedrock/latest/userguide/capacity-limits-cost-optimization.html';
const estimate = estimateRun({ chunks: 10, chunkTokensTotal: 50_000, question: 'Who lit the lamp?', options: parseRunOptions({ rounds: 2 }) });
const LLAMA_8B = 'bedrock:us.meta.llama3-1-8b-instruct-v1:0';

describe('the shipped price table', () => {
  const table = loadPriceTable();

  it.each(['meta.llama3-1-8b-instruct-v1:0', 'meta.llama3-3-70b-instruct-v1:0'])(
    'gives %s a batch rate of half its on-demand rate, dated, from the Bedrock guide, unverified as its on-demand figure',
    (id) => {
      const price = table.models[id];

      expect(price.batch).toMatchObject({
        inputUsdPerMTok: price.inputUsdPerMTok * 0.5,
        outputUsdPerMTok: price.outputUsdPerMTok * 0.5,
        asOf: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        source: PAGE,
        verified: false,
      });
      expect(price.verified).toBe(false);
    },
  );

  it('has no batch rate for a model it does not list', () => {
    expect(priceOf(table, 'bedrock:anthropic.claude-3-haiku-20240307-v1:0')).toBeUndefined();
  });
});

describe('a price table with a malformed batch entry', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-prices-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (batch: unknown): string => {
    const file = path.join(dir, 'prices.json');
    const models = {
      'meta.llama3-1-8b-instruct-v1:0': { inputUsdPerMTok: 0.22, outputUsdPerMTok: 0.22, asOf: '2026-11-30', source: 'x', verified: false, batch },
    };
    writeFileSync(file, JSON.stringify({ currency: 'USD', unit: 'x', writtenOn: '2026-11-30', warning: 'w', models }));
    return file;
  };

  it('is rejected at load with the file, the model and the field named', () => {
    const file = write({ inputUsdPerMTok: -1, outputUsdPerMTok: 0.11, asOf: '2026-12-06', source: PAGE, verified: false });

    expect(() => loadPriceTable(file)).toThrow(`${file}: not a price table (model meta.llama3-1-8b-instruct-v1:0, batch.inputUsdPerMTok: `);
  });

  it('is rejected without its date or source, the problems named', () => {
    const file = write({ inputUsdPerMTok: 0.11, outputUsdPerMTok: 0.11, asOf: '6 Dec 2026', verified: false });

    expect(() => loadPriceTable(file)).toThrow(
      /model meta\.llama3-1-8b-instruct-v1:0, batch\.asOf: expected an ISO date \(yyyy-mm-dd\); model meta\.llama3-1-8b-instruct-v1:0, batch\.source: /,
    );
  });

  it('loads a well-formed one', () => {
    const file = write({ inputUsdPerMTok: 0.11, outputUsdPerMTok: 0.11, asOf: '2026-12-06', source: PAGE, verified: false });

    expect(loadPriceTable(file).models['meta.llama3-1-8b-instruct-v1:0'].batch?.outputUsdPerMTok).toBe(0.11);
  });
});

describe('priceEstimate in both seeking modes', () => {
  const table = loadPriceTable();
  const rate = table.models['meta.llama3-1-8b-instruct-v1:0'];

  it("prices the seeker's tokens at the batch rate (half the on-demand share) and the reasoner's on demand", () => {
    const priced = priceEstimate(estimate, modelPricing(LLAMA_8B));
    const onDemand = priced.modes['on-demand'];
    const batch = priced.modes.batch;
    const seekerAt = (usdPerMTok: number) => ((estimate.seeker.inputTokens + estimate.seeker.outputTokens) * usdPerMTok) / 1e6;

    expect(priced.mode).toBe('on-demand');
    expect(priced.totalUsd).toBe(onDemand.totalUsd);
    expect(onDemand.prices.seeker).toMatchObject({ priced: true, rate: 'on-demand', usd: expect.closeTo(seekerAt(rate.inputUsdPerMTok), 12) });
    expect(batch.prices.seeker).toMatchObject({ priced: true, rate: 'batch', inputUsdPerMTok: 0.11, source: PAGE, verified: false });
    expect((batch.prices.seeker as { usd: number }).usd).toBeCloseTo(0.5 * (onDemand.prices.seeker as { usd: number }).usd, 12);
    expect(batch.prices.reasoner).toEqual(onDemand.prices.reasoner);
    expect(batch.totalUsd).toBeCloseTo(onDemand.totalUsd! - 0.5 * (onDemand.prices.seeker as { usd: number }).usd, 12);
    expect(priced.batchWait).toEqual(BATCH_WAIT);
  });

  it('puts prices and totalUsd at the mode the run uses', () => {
    const priced = priceEstimate(estimate, modelPricing(LLAMA_8B), table, 'batch');

    expect(priced.mode).toBe('batch');
    expect(priced.totalUsd).toBe(priced.modes.batch.totalUsd);
    expect(priced.prices).toEqual(priced.modes.batch.prices);
  });

  it('says "no price" in batch mode for a model the table lists without a batch rate, and for an unknown model', () => {
    const noBatch: PriceTable = { ...table, models: { 'meta.llama3-1-8b-instruct-v1:0': { ...rate, batch: undefined } } };
    const priced = priceEstimate(estimate, modelPricing(LLAMA_8B), noBatch);

    expect(priced.modes['on-demand'].totalUsd).toBeGreaterThan(0);
    expect(priced.modes.batch.totalUsd).toBeUndefined();
    expect(priced.modes.batch.prices.seeker).toEqual({
      model: LLAMA_8B,
      priced: false,
      reason: `no batch price for ${LLAMA_8B} in the price table (shared/prices.json, written ${table.writtenOn})`,
    });
    expect(priced.modes.batch.prices.reasoner).toMatchObject({ priced: true, rate: 'on-demand' });
    const unknown = priceEstimate(estimate, modelPricing('openai:my-model'));
    expect(unknown.modes.batch.prices.seeker).toMatchObject({ priced: false, reason: expect.stringContaining('no price for openai:my-model') });
    expect(unknown.modes.batch.totalUsd).toBeUndefined();
  });

  it('costs the offline reader nothing in either mode, and leaves a local model unpriced in both', () => {
    const extractive = priceEstimate(estimate, modelPricing('extractive'));
    const local = priceEstimate(estimate, modelPricing('llama:model.gguf'));

    expect([extractive.modes['on-demand'].totalUsd, extractive.modes.batch.totalUsd]).toEqual([0, 0]);
    expect([local.modes['on-demand'].totalUsd, local.modes.batch.totalUsd]).toEqual([undefined, undefined]);
  });
});

describe('the cost limit at the mode a run uses', () => {
  const priced = priceEstimate(estimate, modelPricing(LLAMA_8B));
  const onDemand = priced.modes['on-demand'].totalUsd!;
  const batch = priced.modes.batch.totalUsd!;
  const between = (onDemand + batch) / 2;

  it('refuses on demand what it passes with batch seeking, and says which mode', () => {
    expect(costLimitProblem(priced, between)).toMatch(/^the run would cost at most \$[\d.]+ \(seeker 20 calls/);
    expect(costLimitProblem(priced, between, 'batch')).toBeUndefined();
    expect(costLimitProblem(priced, batch / 2, 'batch')).toMatch(/^the run would cost at most \$[\d.]+ with batch seeking \(/);
    expect(costLimitProblem(priceEstimate(estimate, modelPricing(LLAMA_8B), undefined, 'batch'), between)).toBeUndefined();
  });

  it("throws with the mode's total in the error's estimate", () => {
    expect(() => enforceCostLimit(priced, between, 'batch')).not.toThrow();
    expect(() => enforceCostLimit(priced, batch / 2, 'batch')).toThrow(CostLimitExceededError);
    try {
      enforceCostLimit(priced, batch / 2, 'batch');
    } catch (error) {
      expect((error as CostLimitExceededError).estimate).toMatchObject({ totalUsd: batch, maxCostUsd: batch / 2 });
    }
  });

  it('cannot check a batch run whose model has no batch rate, and refuses it', () => {
    const table = loadPriceTable();
    const noBatch: PriceTable = {
      ...table,
      models: { 'meta.llama3-1-8b-instruct-v1:0': { ...table.models['meta.llama3-1-8b-instruct-v1:0'], batch: undefined } },
    };
    const unpriced = priceEstimate(estimate, modelPricing(LLAMA_8B), noBatch);

    expect(costLimitProblem(unpriced, 1000)).toBeUndefined();
    expect(costLimitProblem(unpriced, 1000, 'batch')).toMatch(
      /^maxCostUsd 1000 cannot be checked with batch seeking: bedrock:us\.meta\.llama3-1-8b-instruct-v1:0 \(no batch price/,
    );
  });
});

describe("ask --estimate's text", () => {
  const corpus = { chunks: 10, tokens: 50_000, rounds: 2 };

  it('shows the seeker at both rates, the reasoner on demand, a total per mode and the batch wait with its source', () => {
    const priced = priceEstimate(estimate, modelPricing(LLAMA_8B));
    const text = formatEstimate(priced, corpus);
    const usd = (x: number | undefined) => `$${x! >= 1 ? x!.toFixed(2) : x!.toPrecision(2)}`;
    const seeker = (mode: 'on-demand' | 'batch') => (priced.modes[mode].prices.seeker as { usd: number }).usd;

    expect(text).toContain(
      `  seeker: at most 20 calls, ${estimate.seeker.inputTokens.toLocaleString('en-US')} input / ${estimate.seeker.outputTokens.toLocaleString('en-US')} output tokens; ` +
        `on demand ${usd(seeker('on-demand'))} (${LLAMA_8B}, $0.22 / $0.22 per 1M tokens, 2026-11-30, unverified); batch ${usd(seeker('batch'))} ($0.11 / $0.11 per 1M tokens, 2026-12-06, unverified)`,
    );
    expect(text).toMatch(/\n {2}reasoner: at most \d+ calls, .*\$0\.22 \/ \$0\.22 per 1M tokens, 2026-11-30, unverified\), on demand in either seeking mode\n/);
    expect(text).toContain(`  total, seeking on demand (the run's seekMode): at most ${usd(priced.modes['on-demand'].totalUsd)}\n`);
    expect(text).toContain(`  total, seeking as batch jobs: at most ${usd(priced.modes.batch.totalUsd)}\n`);
    expect(text).toContain(`    expected wait: each round's seeking waits for its batch job, up to 24 h (often minutes to hours): `);
    expect(text).toContain(PAGE);
  });

  it("marks the run's mode, and says batch has no price for a model without a batch rate", () => {
    const table = loadPriceTable();
    const noBatch: PriceTable = {
      ...table,
      models: { 'meta.llama3-1-8b-instruct-v1:0': { ...table.models['meta.llama3-1-8b-instruct-v1:0'], batch: undefined } },
    };
    const text = formatEstimate(priceEstimate(estimate, modelPricing(LLAMA_8B), noBatch, 'batch'), corpus);

    expect(text).toContain(`; batch no price: no batch price for ${LLAMA_8B} in the price table`);
    expect(text).toContain("  total, seeking as batch jobs (the run's seekMode): no price (a role has none)\n");
    expect(text).toMatch(/\n {2}total, seeking on demand: at most \$/);
  });

  it('prints one total for the offline reader, free in either mode', () => {
    const text = formatEstimate(priceEstimate(estimate, modelPricing('extractive')), corpus);

    expect(text).toContain('  total: at most $0 (either seeking mode)');
    expect(text).not.toContain('batch');
  });
});
