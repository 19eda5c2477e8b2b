/**
 * Coverage that grows only when needed (shared/coverage.ts, shared/retrieval.ts, the run options of
 * shared/config.ts): the tranche schedule, its doubling and cap, the BM25 order, the options' rules.
 */
import MiniSearch from 'minisearch';
import { parseRunOptions } from '../../shared/config';
import { coverageItems, coverageSchedule, nextCoverage } from '../../shared/coverage';
import { cjkBigramOccurrences, contentTerms, retrievalTerms } from '../../shared/extractive/text';
import { ChunkRetriever, rankChunks } from '../../shared/retrieval';

describe('the coverage schedule', () => {
  it('doubles the chunks covered after each refusal, as KAR doubles k, and ends at the cap', () => {
    expect(coverageSchedule(4, 10)).toEqual([4, 8, 10]);
    expect(coverageSchedule(1, 7)).toEqual([1, 2, 4, 7]);
    expect(coverageSchedule(3, 24)).toEqual([3, 6, 12, 24]);
    expect(nextCoverage(4, 10)).toBe(8);
    expect(nextCoverage(8, 10)).toBe(10);
  });

  it('never covers more than the cap: a first tranche over it is the cap, and a full coverage does not grow', () => {
    expect(coverageSchedule(16, 5)).toEqual([5]);
    expect(nextCoverage(5, 5)).toBe(5);
  });

  it('seeks each chunk of the cap once over the whole schedule: the worst case is the full read', () => {
    for (const [first, cap] of [
      [1, 1],
      [1, 100],
      [3, 17],
      [4, 4096],
      [7, 12_500],
    ]) {
      const schedule = coverageSchedule(first, cap);
      const tranches = schedule.map((covered, i) => covered - (i === 0 ? 0 : schedule[i - 1]));
      expect(tranches.every((t) => t > 0)).toBe(true);
      expect(tranches.reduce((a, b) => a + b, 0)).toBe(cap);
    }
  });

  it('refuses counts that are not positive integers', () => {
    expect(() => coverageSchedule(0, 4)).toThrow(/first must be an integer >= 1/);
    expect(() => nextCoverage(2, 1.5)).toThrow(/cap must be an integer >= 1/);
  });

  it('lists a tranche as the Distributed Map items of its positions in the order', () => {
    expect(coverageItems([5, 2, 9, 0, 1], 1, 3)).toEqual([{ chunk: 2 }, { chunk: 9 }]);
  });
});

describe('the BM25 coverage order (shared/retrieval.ts)', () => {
  const chunks = [
    { index: 0, text: 'The harvest was abundant and the roads were repaired.' },
    { index: 1, text: 'The capital of Freedonia is Fredville, a town of bridges.' },
    { index: 2, text: 'Ada Quill was born in Freedonia, where she learned to sail.' },
    { index: 3, text: 'Nothing of note happened in the valley that year.' },
    { index: 4, text: 'Ada Quill sailed around the capital twice; Quill wrote of Freedonia and of Ada.' },
  ];
  const question = 'What is the capital of the country where Ada Quill was born?';

  it('ranks chunks by BM25 against the question, unmatched chunks after, in corpus order', () => {
    const order = rankChunks(question, chunks).map((c) => c.index);
    expect(order.slice(3)).toEqual([0, 3]);
    expect(new Set(order.slice(0, 3))).toEqual(new Set([1, 2, 4]));
  });

  it('scores as an index of every term does, while it keeps only the question terms', () => {
    // Arrange: the rag baseline's index before the retriever kept only the question's terms
    const full = new MiniSearch<{ id: number; terms: string }>({
      fields: ['terms'],
      idField: 'id',
      tokenize: (t) => (t.length === 0 ? [] : t.split(' ')),
      processTerm: (t) => t,
    });
    full.addAll(chunks.map((c) => ({ id: c.index, terms: contentTerms(c.text).join(' ') })));
    const scores = new Map(full.search([...new Set(contentTerms(question))].join(' '), { combineWith: 'OR' }).map((r) => [r.id as number, r.score]));
    const expected = chunks.map((c) => c.index).sort((a, b) => (scores.get(b) ?? 0) - (scores.get(a) ?? 0) || a - b);

    // Act
    const retriever = new ChunkRetriever(question);
    for (const c of chunks) retriever.add(c);

    // Assert
    expect(retriever.order(chunks.map((c) => c.index))).toEqual(expected);
  });

  it('keeps corpus order for a question without content terms', () => {
    expect(rankChunks('Is it?', chunks).map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
  });

  it('reads Chinese by character bigrams: a question matches the passage that shares its words, not only whole clauses', () => {
    // Arrange: a run of Chinese characters up to punctuation is one content term; without bigrams no chunk matched
    const zh = [
      { index: 0, text: '本作以三大故事为主轴，讲述了战国时代的人物。' },
      { index: 1, text: '《战国无双3》是由光荣和ω-force开发的战国无双系列的正统第三续作。' },
      { index: 2, text: '天气很好。' },
    ];
    expect(contentTerms('战国无双3是由哪两家公司开发的')).toHaveLength(1);

    // Act / Assert
    expect(rankChunks('战国无双3是由哪两家公司开发的？', zh).map((c) => c.index)).toEqual([1, 0, 2]);
    expect(retrievalTerms('光荣和ω-force')).toEqual(['forc', '光荣', '荣和']);
    expect(cjkBigramOccurrences('天气 天气好')).toEqual(['天气', '天气', '气好']);
  });
});

describe('the coverage run options', () => {
  it('default to the full read; grow takes a first tranche of 4 chunks and no cap', () => {
    expect(parseRunOptions({}).coverage).toBe('full');
    expect(parseRunOptions({ coverage: 'grow' })).toMatchObject({ coverage: 'grow', coverageFirstChunks: 4 });
    expect(parseRunOptions({ coverage: 'grow' }).coverageMaxChunks).toBeUndefined();
  });

  it('refuse an unknown mode, a tranche of no chunk, a cap without grow and a cap below the first tranche, naming each', () => {
    expect(() => parseRunOptions({ coverage: 'some' })).toThrow(/coverage: Invalid option/);
    expect(() => parseRunOptions({ coverage: 'grow', coverageFirstChunks: 0 })).toThrow(/coverageFirstChunks/);
    expect(() => parseRunOptions({ coverageMaxChunks: 8 })).toThrow(/coverageMaxChunks: only with coverage 'grow'/);
    expect(() => parseRunOptions({ coverage: 'grow', coverageFirstChunks: 8, coverageMaxChunks: 4 })).toThrow(
      /coverageMaxChunks: must be at least coverageFirstChunks \(8\)/,
    );
  });
});
