/**
 * Lexical relevance of sentences to a weighted query: BM25 ranking of a chunk's sentences
 * (MiniSearch, BM25+), and the query coverage that calibrates a relevance score across chunks.
 */
import MiniSearch from 'minisearch';
import type { QueryTerm, WeightedQuery } from './query';
import { isNameOrNumber, type Sentence, splitSentences, termOccurrences } from './text';

/** A sentence with its distinct content terms. */
export interface AnalyzedSentence extends Sentence {
  /** Position of the sentence in its text (0-based). */
  position: number;
  terms: ReadonlySet<string>;
  /**
   * Terms written as names or numbers: capitalised words other than the sentence's first word, and
   * words with digits. A name or number absent from the question is a candidate answer.
   */
  names: ReadonlySet<string>;
}

/**
 * Split a text into sentences and attach each sentence's content terms. Offsets are into `text`.
 * Linear in the text length; never throws.
 */
export function analyzeText(text: string): AnalyzedSentence[] {
  const sentences = splitSentences(text);
  const occurrences = termOccurrences(text);
  const analyzed: AnalyzedSentence[] = [];
  let o = 0;
  for (let position = 0; position < sentences.length; position++) {
    const sentence = sentences[position];
    const terms = new Set<string>();
    const names = new Set<string>();
    while (o < occurrences.length && occurrences[o].start < sentence.start) o++;
    while (o < occurrences.length && occurrences[o].end <= sentence.end) {
      const occurrence = occurrences[o];
      terms.add(occurrence.term);
      if (isNameOrNumber(text, occurrence.start, occurrence.end, sentence.start)) names.add(occurrence.term);
      o++;
    }
    analyzed.push({ ...sentence, position, terms, names });
  }
  return analyzed;
}

/**
 * Version of `analyzeText`'s output, part of the key under which an analysis is stored
 * (shared/extractive/reader.ts): bump it whenever `analyzeText`, `splitSentences` or the terms change.
 */
export const ANALYSIS_VERSION = 2;

/**
 * The analysis of a text as compact JSON: per sentence `[start, end, terms, names]` (terms and names
 * joined by spaces; stems hold none).
 */
export function serializeAnalysis(sentences: readonly AnalyzedSentence[]): string {
  return JSON.stringify(sentences.map((s) => [s.start, s.end, [...s.terms].join(' '), [...s.names].join(' ')]));
}

/**
 * An analysis of `text` read back from `serializeAnalysis`: equal to `analyzeText(text)`.
 * @throws SyntaxError for text that is not JSON.
 */
export function parseAnalysis(text: string, json: string): AnalyzedSentence[] {
  const split = (joined: string): Set<string> => new Set(joined === '' ? [] : joined.split(' '));
  return (JSON.parse(json) as Array<[number, number, string, string]>).map(([start, end, terms, names], position) => ({
    start,
    end,
    text: text.slice(start, end),
    position,
    terms: split(terms),
    names: split(names),
  }));
}

/** A sentence's BM25 score against a query (higher = more relevant; only comparable within a chunk). */
export interface RankedSentence {
  sentence: AnalyzedSentence;
  bm25: number;
}

interface IndexedSentence {
  id: number;
  terms: string;
}

/**
 * A BM25 index of one text's sentences (MiniSearch with its default BM25+ parameters k1 = 1.2,
 * b = 0.7, delta = 0.5), built once and searched with several weighted queries (the alternatives of
 * a comparison question, the expanded query of round 2).
 * Source: MiniSearch `SearchOptions.bm25` / `boostTerm` (https://lucaong.github.io/minisearch/).
 */
export class SentenceIndex {
  private readonly index: MiniSearch<IndexedSentence>;
  private readonly byPosition: Map<number, AnalyzedSentence>;

  constructor(readonly sentences: readonly AnalyzedSentence[]) {
    this.index = new MiniSearch<IndexedSentence>({
      fields: ['terms'],
      idField: 'id',
      // The terms are already stems (shared/extractive/text.ts): split on the space that joins them
      // and keep them as they are.
      tokenize: (text) => (text.length === 0 ? [] : text.split(' ')),
      processTerm: (term) => term,
    });
    this.index.addAll(sentences.map((s) => ({ id: s.position, terms: [...s.terms].join(' ') })));
    this.byPosition = new Map(sentences.map((s) => [s.position, s]));
  }

  /**
   * The best `limit` sentences for `query` by BM25+ (each query term boosted by its weight), best
   * first, ties by sentence position; sentences without any query term, and those `exclude`
   * rejects, are not returned. Deterministic; never throws.
   */
  rank(query: WeightedQuery, limit: number, exclude?: (sentence: AnalyzedSentence) => boolean): RankedSentence[] {
    if (query.terms.length === 0 || this.sentences.length === 0) return [];
    const weights = new Map<string, number>(query.terms.map((t: QueryTerm) => [t.term, t.weight]));
    const results = this.index.search(query.terms.map((t) => t.term).join(' '), {
      combineWith: 'OR',
      boostTerm: (term) => weights.get(term) ?? 1,
    });
    const ranked: RankedSentence[] = [];
    for (const r of results) {
      const sentence = this.byPosition.get(r.id as number);
      if (sentence === undefined || (exclude !== undefined && exclude(sentence))) continue;
      ranked.push({ sentence, bm25: r.score });
    }
    return ranked.sort((a, b) => b.bm25 - a.bm25 || a.sentence.position - b.sentence.position).slice(0, limit);
  }
}

/**
 * Weighted share of the question's terms that `terms` cover: the sum of the weights of the
 * question terms present, divided by the sum of all question-term weights (0-1).
 * Expansion terms are counted in `expansion` (same denominator), not in `question`.
 */
export function coverage(terms: ReadonlySet<string>, query: WeightedQuery): { question: number; expansion: number } {
  if (query.questionWeight <= 0) return { question: 0, expansion: 0 };
  let question = 0;
  let expansion = 0;
  for (const t of query.terms) {
    if (!terms.has(t.term)) continue;
    if (t.origin === 'question') question += t.weight;
    else expansion += t.weight;
  }
  return { question: question / query.questionWeight, expansion: expansion / query.questionWeight };
}

/** Union of term sets. */
export function unionTerms(sets: ReadonlyArray<ReadonlySet<string>>): Set<string> {
  const out = new Set<string>();
  for (const set of sets) for (const term of set) out.add(term);
  return out;
}

/**
 * True when the sentence names something the query does not: a name or number (see
 * `AnalyzedSentence.names`) that is not one of the query's terms. Used to prefer, among equally
 * relevant sentences, one that can answer "which city / who / how many".
 */
export function hasAnswerCandidate(sentence: AnalyzedSentence, query: WeightedQuery): boolean {
  for (const name of sentence.names) {
    if (!query.terms.some((t) => t.term === name)) return true;
  }
  return false;
}
