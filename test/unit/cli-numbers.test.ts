/**
 * Numbers of the CLI: token counts (shared/token-count.ts), one parser for the eval's `--lengths` and every token
 * option of every command (k = 1,000, M = 1,000,000); one range per meaning of concurrency.
 */
import { parseLengths } from '../../eval/runner';
import { parseTokenCount } from '../../shared/token-count';
import { schemaFlag, schemaRange } from '../../local/cli/cli-numbers';
import { RunOptionsSchema } from '../../shared/config';
import { SurveyOptionsSchema } from '../../shared/survey/options';

describe('parseTokenCount', () => {
  it.each([
    ['8000', 8000],
    ['8k', 8000],
    ['8K', 8000],
    ['1.5k', 1500],
    ['1.5M', 1_500_000],
    ['1m', 1_000_000],
    ['0.25k', 250],
  ])('reads %s as %d', (text, tokens) => {
    expect(parseTokenCount(text)).toBe(tokens);
  });

  it.each(['0x40', '1e3', '64.0', ' 64', '', '8kb', '8 k', '1.0005k', '-8k', '8ki', '.5k'])('refuses %j', (text) => {
    expect(parseTokenCount(text)).toBeUndefined();
  });
});

describe('one parser for --lengths and the token options', () => {
  it('reads the same text as the same number in eval --lengths and in --chunk-tokens of ask, ingest, eval and survey', () => {
    const runFlag = schemaFlag('--chunk-tokens', RunOptionsSchema, 'chunkTokens');
    const surveyFlag = schemaFlag('--chunk-tokens', SurveyOptionsSchema, 'chunkTokens');

    for (const text of ['8k', '1.5k', '32000', '128K']) {
      const [length] = parseLengths(text);
      expect([text, runFlag(text), surveyFlag(text)]).toEqual([text, length, length]);
    }
  });

  it('takes suffixes on every token budget of the run options, and none on counts that are not tokens', () => {
    expect(schemaFlag('--reasoner-budget', RunOptionsSchema, 'reasonerBudgetTokens')('16k')).toBe(16_000);
    expect(schemaFlag('--sync-budget', RunOptionsSchema, 'syncBudgetTokens')('4k')).toBe(4000);
    expect(() => schemaFlag('--rounds', RunOptionsSchema, 'rounds')('1k')).toThrow(/decimal digits only/);
    expect(() => schemaFlag('--target-words', SurveyOptionsSchema, 'targetWords')('3k')).toThrow(/decimal digits only/);
  });
});

describe('one range per meaning of concurrency', () => {
  it("gives the survey the run option's seeking agents at once: same range and default", () => {
    expect(schemaRange(SurveyOptionsSchema, 'concurrency')).toEqual(schemaRange(RunOptionsSchema, 'concurrency'));
    expect(SurveyOptionsSchema.parse({}).concurrency).toBe(RunOptionsSchema.parse({}).concurrency);
    expect(SurveyOptionsSchema.safeParse({ concurrency: 5000 }).success).toBe(true);
  });
});
