/**
 * The extractive reader's BM25+ ranking (shared/extractive/relevance.ts `SentenceIndex`) scores from
 * the cached analysis without building an index; it must rank as the MiniSearch index it replaced
 * did (MiniSearch 7, BM25+ with its defaults, one field of space-joined terms, each query term
 * boosted by its weight), to the last bit of every score: on whole State of the Union addresses with
 * the terms of their own sentences as queries, and on random texts and queries.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import type { WeightedQuery } from '../../shared/extractive/query';
import { type AnalyzedSentence, analyzeText, parseAnalysis, SentenceIndex, serializeAnalysis, StoredSentence } from '../../shared/extractive/relevance';

/** The ranking as the reader made it with MiniSearch (its code before the change, verbatim but for the names). */
function miniSearchRank(sentences: readonly AnalyzedSentence[], query: WeightedQuery, limit: number): Array<[number, number]> {
  if (query.terms.length === 0 || sentences.length === 0) return [];
  const index = new MiniSearch<{ id: number; terms: string }>({
    fields: ['terms'],
    idField: 'id',
    tokenize: (text) => (text.length === 0 ? [] : text.split(' ')),
    processTerm: (term) => term,
  });
  index.addAll(sentences.map((s) => ({ id: s.position, terms: [...s.terms].join(' ') })));
  const weights = new Map<string, number>(query.terms.map((t) => [t.term, t.weight]));
  return index
    .search(query.terms.map((t) => t.term).join(' '), { combineWith: 'OR', boostTerm: (term) => weights.get(term) ?? 1 })
    .map((r): [number, number] => [r.id as number, r.score])
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, limit);
}

const rank = (sentences: readonly AnalyzedSentence[], query: WeightedQuery, limit: number): Array<[number, number]> =>
  new SentenceIndex(sentences).rank(query, limit).map((r): [number, number] => [r.sentence.position, r.bm25]);

const query = (terms: Array<[string, number]>): WeightedQuery => ({
  terms: terms.map(([term, weight]) => ({ term, weight, origin: 'question' as const })),
  questionWeight: terms.reduce((sum, [, weight]) => sum + weight, 0),
});

const SOTU = path.join(__dirname, '..', '..', 'node_modules', '@stdlib', 'datasets-sotu', 'data');

it('ranks whole addresses exactly as the MiniSearch index did', () => {
  const files = readdirSync(SOTU)
    .filter((f) => f.endsWith('.txt'))
    .sort();
  // Four addresses of different times and lengths; queries: terms of a few of their own sentences
  // (a term repeated, weights of several sizes), and a term no sentence holds.
  for (const file of [files[0], files[40], files[120], files.at(-1) ?? files[1]]) {
    const text = readFileSync(path.join(SOTU, file), 'utf8');
    const sentences = analyzeText(text);
    // And as a warm seek reads them: the stored analysis, whose sentences are searched in their stored terms
    const stored = parseAnalysis(text, serializeAnalysis(sentences)) as AnalyzedSentence[];
    expect(stored[0]).toBeInstanceOf(StoredSentence);
    for (const at of [0, 7, Math.floor(sentences.length / 2)]) {
      const terms = [...(sentences[at]?.terms ?? [])].slice(0, 6);
      const weighted = terms.map((term, i): [string, number] => [term, 1 + i * 1.7]);
      for (const q of [query(weighted), query([...weighted, ...weighted.slice(0, 2)]), query([...weighted, ['zzzunseen', 9]])]) {
        expect(rank(sentences, q, 20)).toEqual(miniSearchRank(sentences, q, 20));
        expect(rank(stored, q, 20)).toEqual(miniSearchRank(sentences, q, 20));
      }
    }
  }
});

it('ranks random texts and queries exactly as the MiniSearch index did', () => {
  const words = ['river', 'rivers', 'city', 'war', 'peace', 'Congress', 'treaty', 'tax', 'gold', 'Baltimore', 'the', 'of', '1791', 'navy'];
  const sentence = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 12 }).map((w) => `${w.join(' ')}.`);
  fc.assert(
    fc.property(
      fc.array(sentence, { minLength: 1, maxLength: 30 }),
      fc.array(fc.tuple(fc.constantFrom(...words), fc.double({ min: 0.1, max: 12, noNaN: true })), { maxLength: 8 }),
      fc.integer({ min: 1, max: 25 }),
      (text, picked, limit) => {
        const sentences = analyzeText(text.join(' '));
        const stored = parseAnalysis(text.join(' '), serializeAnalysis(sentences)) as AnalyzedSentence[];
        const stems = picked.flatMap(([word, weight]): Array<[string, number]> => [...analyzeText(`${word}.`)[0].terms].map((t) => [t, weight]));
        const q = query(stems);
        expect(rank(sentences, q, limit)).toEqual(miniSearchRank(sentences, q, limit));
        expect(rank(stored, q, limit)).toEqual(miniSearchRank(sentences, q, limit));
      },
    ),
    { numRuns: 300 },
  );
});
