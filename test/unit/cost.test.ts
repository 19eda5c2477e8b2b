/**
 * Cost before spending (shared/cost.ts): the estimate is an upper bound of the method's calls and
 * tokens, priced from the dated table (each provider's pricing: models/index.ts modelPricing); an unknown or local model has no price (never a guess), and
 * a cost limit refuses what it cannot check.
 */
import { costLimitProblem, enforceCostLimit, estimateRun, priceEstimate } from '../../shared/cost';
import { parseRunOptions } from '../../shared/config';
import { CostLimitExceededError } from '../../shared/errors';
import { karSchedule } from '../../shared/kar';
import { CHECK_MAX_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS, FOLLOW_UP_MAX_TOKENS } from '../../shared/llm/agents';
import { modelPricing } from '../../models';
import { chunkCorpus } from '../../shared/chunking';
import { coverageSchedule } from '../../shared/coverage';
import { buildSeekPrompt } from '../../shared/llm/prompts';
import { countTokens } from '../../shared/tokenizer';

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

  it("counts a sufficiency check per KAR step with karStop 'checked', and a follow-up question per round but the last", () => {
    const plain = estimateRun(input);
    const checked = estimateRun({ ...input, options: parseRunOptions({ rounds: 2, karStop: 'checked' }) });
    const followUp = estimateRun({ ...input, options: parseRunOptions({ rounds: 3, synchronization: 'follow-up' }) });
    const threePlain = estimateRun({ ...input, options: parseRunOptions({ rounds: 3 }) });
    const pipelined = estimateRun({ ...input, options: parseRunOptions({ rounds: 3, synchronization: 'follow-up', pipelineRounds: true }) });

    expect(checked.reasoner.calls).toBe(2 * plain.reasoner.calls);
    expect(checked.reasoner.inputTokens).toBeGreaterThan(2 * plain.reasoner.inputTokens);
    expect(checked.reasoner.outputTokens).toBe(plain.reasoner.outputTokens + plain.reasoner.calls * CHECK_MAX_TOKENS);
    expect(followUp.reasoner.calls).toBe(threePlain.reasoner.calls + 2);
    expect(followUp.reasoner.outputTokens).toBe(threePlain.reasoner.outputTokens + 2 * FOLLOW_UP_MAX_TOKENS);
    expect(pipelined.reasoner.calls).toBe(threePlain.reasoner.calls); // a pipelined run asks no follow-up
  });
});

describe("estimateRun's at most, for every text and option (issue 37 #6)", () => {
  // Round-1 seeking prompts as LlmAgents sends them (buildSeekPrompt numbers the chunk), summed.
  const seekPromptTokens = (text: string, chunkTokens: number, question: string) => {
    const chunks = chunkCorpus([{ id: 'list.txt', text }], { chunkTokens });
    const sent = chunks.reduce((sum, chunk) => {
      const prompt = buildSeekPrompt({ question, chunk, round: 1, synchronized: [] });
      return sum + countTokens(prompt.system) + countTokens(prompt.user);
    }, 0);
    return { chunks, sent };
  };

  it.each([
    ['one-word sentences', Array.from({ length: 6000 }, (_, i) => `Item${i}.`).join(' ')],
    ['short lines', Array.from({ length: 4000 }, (_, i) => `row ${i} ok`).join('\n')],
    [
      'prose',
      Array.from({ length: 300 }, (_, i) => `The committee met on day ${i} and agreed that the northern road should be repaired before the winter rains.`).join(
        ' ',
      ),
    ],
    ['Chinese', Array.from({ length: 800 }, (_, i) => `第${i}号。`).join('')],
  ])('bounds the seeking prompts that are really sent over %s, at 8k and 500-token chunks', (_name, text) => {
    const question = 'Which item is the last one?';
    for (const chunkTokens of [8000, 500]) {
      const { chunks, sent } = seekPromptTokens(text, chunkTokens, question);
      const e = estimateRun({
        chunks: chunks.length,
        chunkTokensTotal: chunks.reduce((sum, c) => sum + c.tokens, 0),
        question,
        options: parseRunOptions({ rounds: 1, chunkTokens }),
      });

      expect(sent).toBeLessThanOrEqual(e.seeker.inputTokens);
    }
  });

  it('counts the KAR steps of every coverage a grow run passes through (first 4 of 100 chunks: 4, 8, …, 64, then 100)', () => {
    const grow = parseRunOptions({ rounds: 1, coverage: 'grow', coverageFirstChunks: 4 });
    const full = parseRunOptions({ rounds: 1 });
    const at = (options: typeof grow) => estimateRun({ chunks: 100, chunkTokensTotal: 6400, question: 'Which roads?', options });

    const passes = coverageSchedule(4, 100).reduce((sum, covered) => sum + karSchedule(covered).length, 0);

    expect(coverageSchedule(4, 100)).toEqual([4, 8, 16, 32, 64, 100]);
    expect(at(full).reasoner.calls).toBe(karSchedule(100).length);
    expect(at(grow).reasoner.calls).toBe(passes);
    expect(at(grow).seeker.calls).toBe(at(full).seeker.calls);
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
