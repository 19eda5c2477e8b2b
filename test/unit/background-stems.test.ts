/**
 * shared/extractive/background-stems.json, the extractive reader's background counts per stem: the
 * committed file is a fresh aggregation of SUBTLEX-US (regenerate with
 * `npx tsx local/generate/generate-background-weights.ts`), so the reader's weights are the ones it had when
 * it stemmed the word list at run time.
 */
import { readFileSync } from 'node:fs';
import { renderBackgroundStems } from '../../local/generate/generate-background-weights';
import { BACKGROUND_STEMS_PATH, backgroundWeight } from '../../shared/extractive/weights';
import { termOf } from '../../shared/extractive/text';

describe('the generated background stem counts', () => {
  it('are the committed file', () => {
    expect(readFileSync(BACKGROUND_STEMS_PATH, 'utf8')).toBe(renderBackgroundStems());
  });

  it('weigh common words low, rare ones high and unseen ones at the maximum', () => {
    const weight = (word: string): number => backgroundWeight(termOf(word) as string);
    expect(weight('people')).toBeLessThan(weight('cathedral'));
    expect(weight('cathedral')).toBeLessThan(weight('qwzxvbnm'));
    expect(weight('qwzxvbnm')).toBeCloseTo(Math.log(JSON.parse(readFileSync(BACKGROUND_STEMS_PATH, 'utf8')).total + 1) - 4, 10);
  });
});
