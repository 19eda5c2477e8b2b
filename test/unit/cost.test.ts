/**
 * Cost before spending (shared/cost.ts): the estimate is an upper bound of the method's calls and
 * tokens, priced from the dated table (each provider's pricing: models/index.ts modelPricing); an unknown or local model has no price (never a guess), and
 * a cost limit refuses what it cannot check.
 */
import { costLimitProblem, enforceCostLimit, estimateRun, priceEstimate } from '../../shared/cost';
import { parseRunOptions } from '../../shared/config';
import { CostLimitExceededError } from '../../shared/errors';
import { karSchedule } from '../../shared/kar';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../shared/llm/agents';
import { modelPricing } from '../../models';

const options = parseRunOptions({ rounds: 2 });
const input = { chunks: 10, chunkTokensTotal: 50_000, question: 'Who lit the lamp?', options };

describe('estimateRun', () => {
  it('counts every seek of every round and every KAR step of every round, at the output limits', () => {
    const e = estimateRun(input);

    expect(e.seeker.calls).toBe(20);
    expect(e.seeker.outputTokens).toBe(20 * DEFAULT_MAX_OUTPUT_TOKENS.seek);
    expect(e.seeker.inputTokens).toBeGreaterThan(2 * 50_000);
    expect(e.reasoner.calls).toBe(karSchedule(10).length + karSchedule(20).length);
    expect(e.reasoner.outputTokens).toBe(e.reasoner.calls * DEFAULT_MAX_OUTPUT_TOKENS.reason);
  });

  it('grows with rounds, and best effort adds one reasoning call', () => {
    const one = estimateRun({ ...input, options: parseRunOptions({ rounds: 1 }) });
    const forced = estimateRun({ ...input, options: parseRunOptions({ rounds: 1, bestEffort: true }) });

    expect(one.seeker.calls).toBe(10);
    expect(forced.reasoner.calls).toBe(one.reasoner.calls + 1);
    expect(estimateRun(input).seeker.inputTokens).toBeGreaterThan(2 * one.seeker.inputTokens);
  });
});

describe('priceEstimate', () => {
  const e = estimateRun(input);

  it("prices a Bedrock model from the table (an inference profile at its base model's price)", () => {
    const priced = priceEstimate(e, modelPricing('bedrock:us.meta.llama3-1-8b-instruct-v1:0'));

    expect(priced.prices.seeker).toMatchObject({ priced: true, priceKey: 'meta.llama3-1-8b-instruct-v1:0', asOf: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) });
    const usd = ((e.seeker.inputTokens + e.seeker.outputTokens + e.reasoner.inputTokens + e.reasoner.outputTokens) * 0.22) / 1e6;
    expect(priced.totalUsd).toBeCloseTo(usd, 10);
  });

  it('costs the offline reader nothing, and says "no price" for an unknown or a local model', () => {
    expect(priceEstimate(e, modelPricing('extractive')).totalUsd).toBe(0);
    const unknown = priceEstimate(e, modelPricing('openai:my-model'));
    expect(unknown.totalUsd).toBeUndefined();
    expect(unknown.prices.seeker).toMatchObject({ priced: false, reason: expect.stringContaining('no price for openai:my-model') });
    expect(priceEstimate(e, modelPricing('llama:model.gguf')).prices.reasoner).toMatchObject({ priced: false, reason: expect.stringContaining('local model') });
  });
});

describe('the cost limit', () => {
  const e = estimateRun(input);
  const priced = priceEstimate(e, modelPricing('bedrock:meta.llama3-3-70b-instruct-v1:0'));

  it('passes a run within it and refuses one over it, with the estimate', () => {
    expect(costLimitProblem(priced, 100)).toBeUndefined();
    expect(() => enforceCostLimit(priced, 0.000001)).toThrow(CostLimitExceededError);
    try {
      enforceCostLimit(priced, 0.000001);
    } catch (error) {
      expect((error as CostLimitExceededError).message).toMatch(/^Refused before any model call: the run would cost at most \$/);
      expect((error as CostLimitExceededError).estimate).toMatchObject({
        seeker: e.seeker,
        reasoner: e.reasoner,
        maxCostUsd: 0.000001,
        totalUsd: priced.totalUsd,
      });
    }
  });

  it('refuses a run whose model has no price rather than ignoring the limit', () => {
    expect(costLimitProblem(priceEstimate(e, modelPricing('openai:my-model')), 100)).toMatch(/cannot be checked: openai:my-model/);
  });
});
