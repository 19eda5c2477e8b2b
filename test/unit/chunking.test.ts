import { chunkCorpus, SEGMENT_SEPARATOR } from '../../shared/chunking';
import { InvalidInputError } from '../../shared/errors';
import { decodeDocument } from '../../shared/decode';
import { countTokens } from '../../shared/tokenizer';
import type { Chunk, SourceDocument } from '../../shared/types';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Assert every guarantee of chunkCorpus on real output: limit, exact tokens/chars, indices, text =
 * segments joined by the separator, chunkStart offsets, no broken code point, and each document
 * covered by its segments contiguously from 0 to its length, in chunk order.
 */
function expectValidChunks(docs: SourceDocument[], chunks: Chunk[], limit: number): void {
  const byId = new Map(docs.map((d) => [d.id, d]));
  const covered = new Map<string, number>(docs.map((d) => [d.id, 0]));
  const docOrder = docs.map((d) => d.id);
  let lastDoc = 0;
  chunks.forEach((chunk, i) => {
    expect(chunk.index).toBe(i);
    expect(countTokens(chunk.text)).toBeLessThanOrEqual(limit);
    expect(chunk.tokens).toBe(countTokens(chunk.text));
    expect(chunk.chars).toBe(chunk.text.length);
    expect(chunk.text).not.toMatch(LONE_SURROGATE);
    expect(chunk.segments.length).toBeGreaterThan(0);
    const parts: string[] = [];
    let offset = 0;
    for (const segment of chunk.segments) {
      const doc = byId.get(segment.documentId) as SourceDocument;
      expect(segment.start).toBe(covered.get(doc.id)); // contiguous with the previous segment
      expect(segment.end).toBeGreaterThan(segment.start);
      expect(segment.chunkStart).toBe(offset);
      const slice = doc.text.slice(segment.start, segment.end);
      expect(chunk.text.slice(segment.chunkStart, segment.chunkStart + slice.length)).toBe(slice);
      parts.push(slice);
      offset += slice.length + SEGMENT_SEPARATOR.length;
      covered.set(doc.id, segment.end);
      const position = docOrder.indexOf(doc.id);
      expect(position).toBeGreaterThanOrEqual(lastDoc); // corpus order
      lastDoc = position;
    }
    expect(chunk.text).toBe(parts.join(SEGMENT_SEPARATOR));
  });
  for (const doc of docs) expect(covered.get(doc.id)).toBe(doc.text.length);
}

/** The text of one document rebuilt from the chunks' segments, in chunk order. */
function rebuild(chunks: Chunk[], documentId: string): string {
  return chunks
    .flatMap((c) => c.segments.filter((s) => s.documentId === documentId).map((s) => c.text.slice(s.chunkStart, s.chunkStart + s.end - s.start)))
    .join('');
}

/** Deterministic pseudo-random numbers (mulberry32), so generated corpora are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['the', 'union', 'congress', 'treaty', 'revenue', 'of', 'and', 'a', 'commerce', 'Senate', '1790', 'florins'];
function englishParagraph(random: () => number, sentences: number): string {
  const out: string[] = [];
  for (let s = 0; s < sentences; s++) {
    const n = 5 + Math.floor(random() * 15);
    const words = Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)] as string);
    out.push(`${words.join(' ').replace(/^./, (c) => c.toUpperCase())}.`);
  }
  return out.join(' ');
}

describe('chunkCorpus', () => {
  test('keeps every chunk within the token limit and every document exactly recoverable', () => {
    // Arrange: prose with paragraphs, Chinese, emoji, code, CRLF-free text as decodeDocument gives it.
    const random = prng(7);
    const docs: SourceDocument[] = [
      { id: 'speech.txt', text: Array.from({ length: 30 }, () => englishParagraph(random, 8)).join('\n\n') + '\n' },
      { id: 'novel.txt', text: '话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。\n'.repeat(60) },
      { id: 'emoji.txt', text: 'Launch 🚀 day! 👩‍👩‍👧 family 🇫🇷 flag. '.repeat(40) },
      { id: 'code.ts', text: 'function f(x: number): number {\n  return x * 2; // 😀\n}\n\n'.repeat(30) },
    ];
    for (const limit of [16, 64, 200, 1000]) {
      // Act
      const chunks = chunkCorpus(docs, { chunkTokens: limit });
      // Assert
      expectValidChunks(docs, chunks, limit);
      for (const doc of docs) expect(rebuild(chunks, doc.id)).toBe(doc.text);
    }
  });

  test('packs small documents into one chunk joined by blank lines', () => {
    const docs = ['alpha one.', 'beta two.', 'gamma three.'].map((text, i) => ({ id: `d${i}`, text }));
    const chunks = chunkCorpus(docs, { chunkTokens: 100 });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.text).toBe('alpha one.\n\nbeta two.\n\ngamma three.');
    expect(chunks[0]?.segments).toEqual([
      { documentId: 'd0', start: 0, end: 10, chunkStart: 0 },
      { documentId: 'd1', start: 0, end: 9, chunkStart: 12 },
      { documentId: 'd2', start: 0, end: 12, chunkStart: 23 },
    ]);
  });

  test('starts the next document in the last chunk of a long one when there is room', () => {
    const random = prng(3);
    const long = { id: 'long', text: englishParagraph(random, 60) };
    const short = { id: 'short', text: 'A short note.' };
    const chunks = chunkCorpus([long, short], { chunkTokens: 300 });
    expectValidChunks([long, short], chunks, 300);
    expect(chunks.length).toBeGreaterThan(1);
    const last = chunks.at(-1) as Chunk;
    expect(last.segments.map((s) => s.documentId)).toEqual(['long', 'short']);
  });

  test('starts a document in a new chunk when the chunk is already three quarters full', () => {
    // Arrange: two one-paragraph documents of 12-token sentences; A's last chunk holds 13 sentences.
    const sentence = (i: number): string => `Sentence number ${i} reports on the revenue of the union.`;
    const a = { id: 'A', text: Array.from({ length: 28 }, (_, i) => sentence(i)).join(' ') };
    const b = { id: 'B', text: Array.from({ length: 30 }, (_, i) => sentence(100 + i)).join(' ') };
    const limit = 200;
    // Act
    const chunks = chunkCorpus([a, b], { chunkTokens: limit });
    // Assert
    expectValidChunks([a, b], chunks, limit);
    const lastOfA = chunks.find((c) => c.segments.some((s) => s.documentId === 'A' && s.end === a.text.length)) as Chunk;
    expect(lastOfA.tokens).toBeGreaterThanOrEqual(0.75 * limit);
    // B's first sentence would still have fitted: ending at the document boundary was a choice.
    expect(countTokens(`${lastOfA.text}${SEGMENT_SEPARATOR}${sentence(100)} `)).toBeLessThanOrEqual(limit);
    expect(lastOfA.segments.map((s) => s.documentId)).toEqual(['A']);
  });

  test('splits a paragraph longer than the limit at sentence ends, dropping nothing', () => {
    // Arrange: one paragraph of 50 sentences, far more than 120 tokens.
    const random = prng(11);
    const doc = { id: 'p', text: englishParagraph(random, 50) };
    expect(countTokens(doc.text)).toBeGreaterThan(600);
    // Act
    const chunks = chunkCorpus([doc], { chunkTokens: 120 });
    // Assert
    expectValidChunks([doc], chunks, 120);
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) expect(chunk.text).toMatch(/\.\s*$/);
  });

  test('closes chunks at paragraph ends when paragraphs fit', () => {
    const random = prng(5);
    const paragraphs = Array.from({ length: 20 }, () => englishParagraph(random, 2));
    const doc = { id: 'p', text: paragraphs.join('\n\n') };
    const chunks = chunkCorpus([doc], { chunkTokens: 150 });
    expectValidChunks([doc], chunks, 150);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.text.endsWith('\n\n')).toBe(true);
  });

  test('splits a long sentence at word boundaries and a long word at token boundaries', () => {
    const sentence = { id: 'sentence', text: `${'very '.repeat(400)}long.` };
    const word = { id: 'word', text: 'x7Gq'.repeat(600) };
    const chunks = chunkCorpus([sentence, word], { chunkTokens: 64 });
    expectValidChunks([sentence, word], chunks, 64);
    const sentenceChunks = chunks.filter((c) => c.segments.every((s) => s.documentId === 'sentence'));
    for (const chunk of sentenceChunks) expect(chunk.text).toMatch(/^(very )+$/);
  });

  test('puts every character of 750 Chinese characters with only commas in exactly one chunk, in order', () => {
    // Arrange: no sentence end, no spaces, no line break: only words and commas are boundaries.
    const clause = '范围内产生的二氧化碳排放量，';
    const text = clause.repeat(Math.ceil(750 / clause.length)).slice(0, 750);
    const doc = { id: 'zh', text };
    // Act
    const chunks = chunkCorpus([doc], { chunkTokens: 200 });
    // Assert
    expectValidChunks([doc], chunks, 200);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text).join('')).toBe(text);
  });

  test('never cuts inside a Chinese character with a very small limit', () => {
    const text = '范围内产生的二氧化碳排放量'.repeat(40);
    const doc = { id: 'zh', text };
    const chunks = chunkCorpus([doc], { chunkTokens: 5 });
    expectValidChunks([doc], chunks, 5);
    expect(chunks.some((c) => c.text.includes('\uFFFD'))).toBe(false);
    expect(chunks.map((c) => c.text).join('')).toBe(text);
  });

  test('keeps an emoji whole when a chunk boundary falls on it', () => {
    // Arrange: emoji only (no word-like segment), so cuts come from tokens and code points.
    const text = '😀🚀👩‍👩‍👧🇫🇷'.repeat(30);
    const doc = { id: 'emoji', text };
    for (const limit of [4, 5, 7]) {
      // Act
      const chunks = chunkCorpus([doc], { chunkTokens: limit });
      // Assert
      expectValidChunks([doc], chunks, limit);
      expect(chunks.map((c) => c.text).join('')).toBe(text);
      expect(chunks.some((c) => /\p{Extended_Pictographic}$/u.test(c.text))).toBe(true); // a boundary right after an emoji
    }
  });

  test('cuts only between grapheme clusters: no chunk starts with an orphan joiner or combining mark', () => {
    // Arrange: ZWJ sequences, combining marks, flags, CRLF and jamo, with limits that force cuts
    const text = [
      '👩‍👩‍👧 family',
      'e\u0301e\u0301e\u0301 cafe\u0301',
      '🇫🇷🇩🇪🇮🇹',
      'line\r\nline',
      '\u1100\u1161\u11A8 jamo',
      'क्षत्रिय',
      ' \u0301 mark after space',
    ]
      .join(' ')
      .repeat(12);
    const doc = { id: 'clusters', text };
    const clusters = [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(text)];
    const largest = Math.max(...clusters.map((c) => countTokens(c.segment)));
    const starts = new Set(clusters.map((s) => s.index));
    for (const limit of [largest, largest + 3, 16, 40]) {
      // Act
      const chunks = chunkCorpus([doc], { chunkTokens: limit });

      // Assert: every cluster fits the limit, so none may be cut
      expectValidChunks([doc], chunks, limit);
      const cuts = chunks.flatMap((c) => c.segments.map((s) => s.start)).filter((start) => start > 0);
      expect(cuts.filter((cut) => !starts.has(cut))).toEqual([]);
      // oxlint-disable-next-line no-misleading-character-class -- the class lists combining marks on purpose: a chunk must never start with one.
      expect(chunks.filter((c) => /^[\u200d\u0300-\u036f\uFE0F\n]/.test(c.text) && c.index > 0).map((c) => c.text.slice(0, 3))).toEqual([]);
    }
  });

  test('cuts a single grapheme cluster longer than a chunk at code points, and only then', () => {
    const text = `ok ${'e' + '\u0301'.repeat(400)} ok`;
    const doc = { id: 'zalgo', text };

    const chunks = chunkCorpus([doc], { chunkTokens: 16 });

    expectValidChunks([doc], chunks, 16);
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.map((c) => c.text).join('')).toBe(text);
  });

  test('chunks a document decoded from bytes with a BOM and CRLF line ends', () => {
    const bytes = Uint8Array.from([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('First paragraph.\r\n\r\nSecond one.\r\n')]);
    const decoded = decodeDocument('crlf.txt', bytes);
    if (!('doc' in decoded)) throw new Error(decoded.skipped.reason);
    const chunks = chunkCorpus([decoded.doc], { chunkTokens: 64 });
    expect(chunks.map((c) => c.text)).toEqual(['First paragraph.\n\nSecond one.\n']);
  });

  test('handles a single paragraph longer than the segmentation window', () => {
    const random = prng(13);
    const doc = { id: 'huge', text: englishParagraph(random, 3000) };
    expect(doc.text.length).toBeGreaterThan(100_000);
    const chunks = chunkCorpus([doc], { chunkTokens: 2000 });
    expectValidChunks([doc], chunks, 2000);
    for (const chunk of chunks) expect(chunk.text).toMatch(/\.\s*$/);
  });

  describe('a paragraph longer than 16,384 characters (chunking version 3)', () => {
    /** Offsets where Intl.Segmenter, over the whole text, starts a sentence. */
    function sentenceStarts(text: string): Set<number> {
      return new Set(Array.from(new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text), (s) => s.index));
    }

    test.each([500, 2000, 8000])('at L = %i: every cut at a sentence end of the whole text, every chunk but the last at least 70%% full', (limit) => {
      // Arrange: one paragraph of 3,000 sentences (over 100,000 characters)
      const doc = { id: 'huge', text: englishParagraph(prng(13), 3000) };
      const starts = sentenceStarts(doc.text);
      // Act
      const chunks = chunkCorpus([doc], { chunkTokens: limit });
      // Assert
      expectValidChunks([doc], chunks, limit);
      for (const chunk of chunks.slice(0, -1)) {
        expect(starts.has(chunk.segments[0].end)).toBe(true);
        expect(chunk.tokens).toBeGreaterThanOrEqual(0.7 * limit);
      }
    });

    test('is segmented into sentences only where a chunk can close, not whole', () => {
      // Arrange: count the characters given to Intl.Segmenter at sentence granularity
      const doc = { id: 'huge', text: englishParagraph(prng(17), 3000) };
      const segment = jest.spyOn(Intl.Segmenter.prototype, 'segment');
      try {
        // Act
        chunkCorpus([doc], { chunkTokens: 2000 });
        // Assert: the whole text would be 100%; the windows are under half of it
        const sentenceCalls = segment.mock.contexts.flatMap((segmenter, i) =>
          (segmenter as Intl.Segmenter).resolvedOptions().granularity === 'sentence' ? [String(segment.mock.calls[i]?.[0]).length] : [],
        );
        const segmented = sentenceCalls.reduce((sum, n) => sum + n, 0);
        expect(segmented).toBeGreaterThan(0);
        expect(segmented).toBeLessThan(0.5 * doc.text.length);
      } finally {
        segment.mockRestore();
      }
    });

    test('keeps its guarantees on long random mixed-script paragraphs, and on one without a sentence end', () => {
      const random = prng(2026);
      const alphabet = ['a', 'b', 'é', ' ', ' ', ' ', '\n', '.', '。', '，', '中', '国', '😀', '🇫🇷', '\t', '1', 'e\u0301', '<|endoftext|>'];
      for (let round = 0; round < 4; round++) {
        const docs = Array.from({ length: 1 + Math.floor(random() * 2) }, (_, d) => ({
          id: `long${round}-${d}`,
          text: Array.from({ length: 17_000 + Math.floor(random() * 20_000) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
        }));
        const limit = 64 + Math.floor(random() * 3000);
        const chunks = chunkCorpus(docs, { chunkTokens: limit });
        expectValidChunks(docs, chunks, limit);
      }
      // Over 65,536 characters without a sentence end the segmenter cuts by force: that is no sentence
      // end, and a cut there would split a word (found by fuzzing: chunks ended mid-word every 65,536).
      const random2 = prng(1);
      const common = ['the', 'of', 'and', 'to', 'in', 'a', 'is', 'that', 'for', 'it', 'as', 'was', 'with', 'which'];
      const unpunctuated = { id: 'unpunctuated', text: Array.from({ length: 100_000 }, () => common[Math.floor(random2() * common.length)]).join(' ') };
      expect(unpunctuated.text.length).toBeGreaterThan(300_000);
      const long = chunkCorpus([unpunctuated], { chunkTokens: 20_000 });
      expectValidChunks([unpunctuated], long, 20_000);
      expect(
        long
          .slice(0, -1)
          .filter((chunk) => !chunk.text.endsWith(' '))
          .map((chunk) => chunk.text.slice(-16)),
      ).toEqual([]);
      const words = { id: 'words', text: 'commerce and revenue '.repeat(1500).trim() };
      const chunks = chunkCorpus([words], { chunkTokens: 1000 });
      expectValidChunks([words], chunks, 1000);
      for (const chunk of chunks.slice(0, -1)) expect(chunk.text).toMatch(/ $/); // cut after a word and its space
    });
  });

  test('counts the final text, since the tokens of a concatenation can exceed the sum of its parts', () => {
    // Arrange: "😀" and ".b" are 1 token each but "😀.b" is 3. In this line of the novel (ideographic
    // spaces after a line break), packing by the sum of the pieces' counts gives a 6-token chunk at L=5.
    expect(countTokens('😀.b')).toBeGreaterThan(countTokens('😀') + countTokens('.b'));
    const doc = { id: 'sanguo', text: '是非成败转头空。\n　　青山依旧在，几度夕阳红。' };
    for (const limit of [4, 5, 6, 8]) {
      // Act
      const chunks = chunkCorpus([doc], { chunkTokens: limit });
      // Assert
      expectValidChunks([doc], chunks, limit);
    }
  });

  test('keeps its guarantees on random mixed-script text', () => {
    const random = prng(2024);
    const alphabet = ['a', 'b', 'é', ' ', ' ', '\n', '\n\n', '.', '。', '，', '中', '国', '😀', '🇫🇷', '\t', '1', '<|endoftext|>'];
    for (let round = 0; round < 12; round++) {
      const docs = Array.from({ length: 1 + Math.floor(random() * 4) }, (_, d) => ({
        id: `r${round}-${d}`,
        text: Array.from({ length: Math.floor(random() * 600) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
      }));
      const limit = 4 + Math.floor(random() * 120);
      const chunks = chunkCorpus(docs, { chunkTokens: limit });
      expectValidChunks(docs, chunks, limit);
    }
  });

  test('returns no chunk for no documents and no segment for an empty document', () => {
    expect(chunkCorpus([], { chunkTokens: 100 })).toEqual([]);
    const chunks = chunkCorpus(
      [
        { id: 'empty', text: '' },
        { id: 'x', text: 'text' },
      ],
      { chunkTokens: 100 },
    );
    expect(chunks.flatMap((c) => c.segments.map((s) => s.documentId))).toEqual(['x']);
  });

  test('rejects a limit below 4 tokens or not an integer, and duplicate document ids', () => {
    const docs = [{ id: 'a', text: 'text' }];
    expect(() => chunkCorpus(docs, { chunkTokens: 3 })).toThrow(InvalidInputError);
    expect(() => chunkCorpus(docs, { chunkTokens: 100.5 })).toThrow(InvalidInputError);
    expect(() => chunkCorpus([...docs, { id: 'a', text: 'again' }], { chunkTokens: 100 })).toThrow(InvalidInputError);
  });
});
