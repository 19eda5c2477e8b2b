import { InvalidInputError } from '../../shared/errors';
import { compareMessages, fitToBudget, messageId, relevanceSortKey } from '../../shared/pool';
import { countTokens } from '../../shared/tokenizer';
import type { Message } from '../../shared/types';

function message(round: number, chunkIndex: number, score: number, evidence = `evidence of chunk ${chunkIndex}`): Message {
  return {
    id: messageId(round, chunkIndex),
    round,
    chunkIndex,
    score,
    evidence,
    tokens: countTokens(evidence),
    quotes: [],
    sources: [`doc-${chunkIndex}.txt`],
  };
}

describe('messageId', () => {
  test('names a message by its round and chunk', () => {
    expect(messageId(2, 17)).toBe('r2-c17');
    expect(messageId(1, 0)).toBe('r1-c0');
  });

  test('rejects a round below 1, a negative chunk and non-integers', () => {
    expect(() => messageId(0, 1)).toThrow(InvalidInputError);
    expect(() => messageId(1, -1)).toThrow(InvalidInputError);
    expect(() => messageId(1.5, 1)).toThrow(InvalidInputError);
  });
});

describe('pool order', () => {
  // Arrange: ties on score (broken by chunk) and on score and chunk (broken by round).
  const pool = [message(1, 5, 40), message(2, 3, 90), message(1, 3, 90), message(1, 0, 10), message(2, 1, 90), message(1, 9_999_999, 100), message(99, 0, 0)];
  const expected = ['r1-c9999999', 'r2-c1', 'r1-c3', 'r2-c3', 'r1-c5', 'r1-c0', 'r99-c0'];

  test('compareMessages sorts by score descending, then chunk ascending, then round ascending', () => {
    const sorted = [...pool].sort(compareMessages);
    expect(sorted.map((m) => m.id)).toEqual(expected);
  });

  test('a descending string sort of the relevance sort keys gives the same order', () => {
    // Act: what a DynamoDB Query with ScanIndexForward=false returns.
    const byKey = [...pool].sort((a, b) => {
      const ka = relevanceSortKey(a.score, a.chunkIndex, a.round);
      const kb = relevanceSortKey(b.score, b.chunkIndex, b.round);
      return ka < kb ? 1 : ka > kb ? -1 : 0;
    });
    // Assert
    expect(byKey.map((m) => m.id)).toEqual(expected);
  });

  test('the sort key has the fixed-width layout of the architecture', () => {
    expect(relevanceSortKey(87, 12, 1)).toBe('087#9999987#98');
    expect(relevanceSortKey(100, 0, 99)).toBe('100#9999999#00');
    expect(relevanceSortKey(0, 9_999_999, 1)).toBe('000#0000000#98');
  });

  test('the sort key rejects values outside its ranges', () => {
    expect(() => relevanceSortKey(101, 0, 1)).toThrow(InvalidInputError);
    expect(() => relevanceSortKey(-1, 0, 1)).toThrow(InvalidInputError);
    expect(() => relevanceSortKey(50.5, 0, 1)).toThrow(InvalidInputError);
    expect(() => relevanceSortKey(50, 10_000_000, 1)).toThrow(InvalidInputError);
    expect(() => relevanceSortKey(50, 0, 0)).toThrow(InvalidInputError);
    expect(() => relevanceSortKey(50, 0, 100)).toThrow(InvalidInputError);
  });
});

describe('fitToBudget', () => {
  test('keeps the longest prefix that fits and counts evidence plus overhead', () => {
    // Arrange
    const messages = [message(1, 0, 90), message(1, 1, 80), message(1, 2, 70)];
    const [first, second] = messages.map((m) => m.tokens) as [number, number];
    const budget = first + second + 2 * 5; // room for two messages with 5 tokens of overhead each
    // Act
    const fitted = fitToBudget(messages, budget, { overheadTokensPerMessage: 5 });
    // Assert
    expect(fitted.messages.map((m) => m.id)).toEqual(['r1-c0', 'r1-c1']);
    expect(fitted.tokens).toBe(first + second + 10);
    expect(fitted.truncated).toBe(true);
  });

  test('stops at the first message that does not fit even if a later one would', () => {
    const messages = [message(1, 0, 90, 'short'), message(1, 1, 80, 'a much longer piece of evidence '.repeat(10)), message(1, 2, 70, 'tiny')];
    const budget = (messages[0] as Message).tokens + (messages[2] as Message).tokens;
    const fitted = fitToBudget(messages, budget);
    expect(fitted.messages.map((m) => m.id)).toEqual(['r1-c0']);
  });

  test('gives everything, untruncated, when all messages fit', () => {
    const messages = [message(1, 0, 90), message(2, 0, 80)];
    const total = messages.reduce((sum, m) => sum + m.tokens, 0);
    const fitted = fitToBudget(messages, total);
    expect(fitted).toEqual({ messages, tokens: total, truncated: false });
  });

  test('trims the first message at a token boundary when even it does not fit', () => {
    // Arrange: Chinese and emoji evidence, where tokens often hold part of a character.
    const evidence = '范围内产生的二氧化碳排放量😀𠀀'.repeat(20);
    const messages = [message(1, 4, 95, evidence), message(1, 5, 90)];
    const overhead = 3;
    for (const budget of [overhead + 1, overhead + 7, overhead + 50]) {
      // Act
      const fitted = fitToBudget(messages, budget, { overheadTokensPerMessage: overhead });
      // Assert
      expect(fitted.messages).toHaveLength(1);
      const kept = fitted.messages[0] as Message;
      expect(kept.id).toBe('r1-c4');
      expect(kept.evidence.length).toBeGreaterThan(0);
      expect(evidence.startsWith(kept.evidence)).toBe(true);
      expect(kept.evidence).not.toMatch(/\uFFFD|[\uD800-\uDBFF]$/);
      expect(kept.tokens).toBe(countTokens(kept.evidence));
      expect(kept.tokens + overhead).toBeLessThanOrEqual(budget);
      expect(fitted.tokens).toBe(kept.tokens + overhead);
      expect(fitted.truncated).toBe(true);
    }
  });

  test('gives nothing when the budget does not cover one message overhead', () => {
    const fitted = fitToBudget([message(1, 0, 90)], 4, { overheadTokensPerMessage: 4 });
    expect(fitted).toEqual({ messages: [], tokens: 0, truncated: true });
  });

  test('gives nothing, untruncated, for no messages', () => {
    expect(fitToBudget([], 100)).toEqual({ messages: [], tokens: 0, truncated: false });
  });

  test('rejects a negative or non-finite budget or overhead', () => {
    expect(() => fitToBudget([], -1)).toThrow(InvalidInputError);
    expect(() => fitToBudget([], Number.NaN)).toThrow(InvalidInputError);
    expect(() => fitToBudget([], 10, { overheadTokensPerMessage: -2 })).toThrow(InvalidInputError);
  });
});
