import { parseRunOptions } from '../../shared/config';
import { chunkDocumentIndexes, promisingChunks } from '../../shared/reseek';

// Six chunks over four documents: a (chunks 0-2, one long document), b and c packed in chunk 3, d (chunks 4-5).
const documentIds = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
const chunkDocuments = [[0], [0], [0], [1, 2], [3], [3]];
const every = [0, 1, 2, 3, 4, 5];

describe('the chunks a promising round seeks (reseek promising)', () => {
  it('keeps the chunks that found something in the round before', () => {
    // Act
    const chunks = promisingChunks({ covered: every, found: [5, 1], synchronized: [], chunkDocuments, documentIds });

    // Assert: ascending, nothing else
    expect(chunks).toEqual([1, 5]);
  });

  it("adds every chunk of a synchronized message's source documents, and the message's own chunk", () => {
    // Act: a message of chunk 1 from document a; one of chunk 3 citing c only
    const chunks = promisingChunks({
      covered: every,
      found: [],
      synchronized: [
        { chunkIndex: 1, sources: ['a.txt'] },
        { chunkIndex: 3, sources: ['c.txt'] },
      ],
      chunkDocuments,
      documentIds,
    });

    // Assert: the whole of document a (0-2) and the chunk that holds c; not d
    expect(chunks).toEqual([0, 1, 2, 3]);
  });

  it('keeps a synchronized message of a chunk whose sources name no known document (its own chunk still counts)', () => {
    expect(promisingChunks({ covered: every, found: [], synchronized: [{ chunkIndex: 4, sources: [] }], chunkDocuments, documentIds })).toEqual([4]);
  });

  it("chooses only among the chunks covered (a grow run's coverage), whatever the order they come in", () => {
    // Act: coverage 5, 0, 3 (a BM25 order); document a is synchronized, chunk 4 found something
    const chunks = promisingChunks({ covered: [5, 0, 3], found: [4], synchronized: [{ chunkIndex: 0, sources: ['a.txt'] }], chunkDocuments, documentIds });

    // Assert: chunk 0 only of document a's chunks, and not chunk 4 (not covered)
    expect(chunks).toEqual([0]);
  });

  it('is empty when nothing was found and nothing synchronized (the round is skipped)', () => {
    expect(promisingChunks({ covered: every, found: [], synchronized: [], chunkDocuments, documentIds })).toEqual([]);
  });

  it('is deterministic: the same input gives the same list, without duplicates', () => {
    const input = { covered: [...every, 1], found: [2, 2, 0], synchronized: [{ chunkIndex: 4, sources: ['d.txt', 'd.txt'] }], chunkDocuments, documentIds };
    expect(promisingChunks(input)).toEqual([0, 2, 4, 5]);
    expect(promisingChunks(input)).toEqual(promisingChunks(input));
  });

  it("refuses a chunk map that does not cover the run's chunks", () => {
    expect(() => promisingChunks({ covered: [0, 9], found: [], synchronized: [], chunkDocuments, documentIds })).toThrow(/chunk 9 has no documents/);
  });

  it("maps each chunk's segment documents to document indexes, once each", () => {
    expect(chunkDocumentIndexes([['a.txt', 'a.txt'], ['b.txt', 'c.txt'], []], documentIds)).toEqual([[0], [1, 2], []]);
    expect(() => chunkDocumentIndexes([['z.txt']], documentIds)).toThrow(/document z.txt, which is not among/);
  });
});

describe('the run option reseek', () => {
  it('defaults to all (the paper) and accepts promising', () => {
    expect(parseRunOptions({}).reseek).toBe('all');
    expect(parseRunOptions({ reseek: 'promising', coverage: 'grow' })).toMatchObject({ reseek: 'promising', coverage: 'grow' });
  });

  it('refuses another value, naming the field and the values it takes', () => {
    expect(() => parseRunOptions({ reseek: 'some' })).toThrow('Invalid run options: reseek: Invalid option: expected one of "all"|"promising"');
    expect(() => parseRunOptions({ reseek: 'some' })).toThrow(expect.objectContaining({ name: 'InvalidRunOptionsError' }));
  });
});
