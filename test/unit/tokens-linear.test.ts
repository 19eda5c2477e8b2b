/**
 * Token counting and token boundaries of texts with very long pre-tokens (shared/tokenizer.ts,
 * `countTokens` and `tokenBoundaries`), which run their own O(n log n) byte-pair merge instead
 * of gpt-tokenizer's quadratic one: they must give exactly what the library gives.
 */
import o200kRanks from 'gpt-tokenizer/bpeRanks/o200k_base';
import { chunkCorpus } from '../../shared/chunking';
import { countLibraryTokens, countTokens, encodeTokens, tokenBoundaries, type TokenBoundary } from '../../shared/tokenizer';
import { pick, prng } from '../support/random';

/** Mixed text around one run of >= 65 characters of one kind: letters, symbols or white space. */
function textWithLongRun(random: () => number): string {
  const alphabet = [
    'a',
    'The',
    ' ',
    '  ',
    '\n',
    '\n\n',
    '\t',
    '.',
    '。',
    '，',
    '中',
    '😀',
    '🇫🇷',
    '1',
    '234',
    "'s",
    "'LL",
    '<|endoftext|>',
    'ж',
    'ภ',
    '=',
    '…',
    '\r\n',
    '\u3000',
    'İ',
    '\u0301',
    'é',
  ];
  const runKinds = [
    ['a', 'c', 'g', 't'],
    ['中', '国', '范', '围', '碳'],
    ['ภ', 'า', 'ษ', '\u0E34'],
    ['é', 'e', '\u0301', 'ß'],
    ['=', '-', '*', '😀', '…'],
    [' ', '\t', '\n', '\u3000'],
    ['ア', 'ー', 'ン', 'か'],
  ];
  const kind = pick(random, runKinds);
  const run = Array.from({ length: 65 + Math.floor(random() * 500) }, () => pick(random, kind)).join('');
  const before = Array.from({ length: Math.floor(random() * 60) }, () => pick(random, alphabet)).join('');
  const after = Array.from({ length: Math.floor(random() * 60) }, () => pick(random, alphabet)).join('');
  return before + run + after;
}

/** Token boundaries from the library's own encoding: token byte lengths from the rank table, ends on code points. */
function referenceBoundaries(text: string): TokenBoundary[] {
  const ends: number[] = [];
  let total = 0;
  for (const id of encodeTokens(text)) {
    const value = o200kRanks[id];
    total += typeof value === 'string' ? Buffer.byteLength(value) : value.length;
    ends.push(total);
  }
  const boundaries: TokenBoundary[] = [];
  let bytes = 0;
  let offset = 0;
  let e = 0;
  for (const codePoint of text) {
    const code = codePoint.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    offset += codePoint.length;
    while (e < ends.length && ends[e] < bytes) e++;
    if (ends[e] === bytes) boundaries.push({ offset, tokens: e + 1 });
  }
  return boundaries;
}

describe('token counting of texts with long runs', () => {
  it('counts exactly what gpt-tokenizer counts on random texts with long runs of letters, symbols or white space', () => {
    const random = prng(2024);
    for (let i = 0; i < 200; i++) {
      // Arrange
      const text = textWithLongRun(random);
      // Act / Assert
      expect([text, countTokens(text)]).toEqual([text, countLibraryTokens(text)]);
    }
  });

  it("gives the boundaries of the text's own encoding, on whole code points", () => {
    const random = prng(7);
    for (let i = 0; i < 100; i++) {
      const text = textWithLongRun(random);
      const boundaries = tokenBoundaries(text);
      expect([text, boundaries]).toEqual([text, referenceBoundaries(text)]);
      expect(boundaries.at(-1)).toEqual({ offset: text.length, tokens: countLibraryTokens(text) });
    }
  });

  it('counts texts without a long run through the library, unchanged', () => {
    const text = 'Fellow-Citizens of the Senate and House of Representatives: 范围内产生的二氧化碳排放量。😀';
    expect(countTokens(text)).toBe(countLibraryTokens(text));
    expect(countTokens('')).toBe(0);
  });
});

describe('chunking long runs', () => {
  it('chunks a 40,000-character run of Chinese without punctuation within the limit, dropping nothing', () => {
    // Arrange: one pre-token of 120,000 bytes for the tokenizer
    const random = prng(3);
    const han = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经';
    const text = Array.from({ length: 40_000 }, () => pick(random, [...han])).join('');

    // Act
    const chunks = chunkCorpus([{ id: 'zh', text }], { chunkTokens: 2000 });

    // Assert
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    for (const chunk of chunks) {
      expect(chunk.tokens).toBe(countTokens(chunk.text));
      expect(chunk.tokens).toBeLessThanOrEqual(2000);
    }
    expect(chunks.reduce((sum, c) => sum + c.tokens, 0)).toBeGreaterThanOrEqual(countTokens(text));
  });

  it('chunks a DNA sequence of 200,000 letters within the limit, dropping nothing', () => {
    const random = prng(5);
    const text = Array.from({ length: 200_000 }, () => pick(random, ['a', 'c', 'g', 't'])).join('');

    const chunks = chunkCorpus([{ id: 'dna.txt', text }], { chunkTokens: 4000 });

    expect(chunks.map((c) => c.text).join('')).toBe(text);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(4000);
    expect(chunks.filter((c) => c.tokens < 3000)).toHaveLength(1); // only the last is less than 3/4 full
  });
});
