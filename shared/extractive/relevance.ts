/**
 * Lexical relevance of sentences to a weighted query: BM25 ranking of a chunk's sentences
 * (BM25+, scored from the analysis), and the query coverage that calibrates a relevance score across chunks.
 */
import type { QueryTerm, WeightedQuery } from './query';
import { boundedSentences, isNameOrNumber, type Sentence, termOccurrences } from './text';

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
 * Split a text into sentences of at most `MAX_SENTENCE_CHARS` (`boundedSentences`: a longer sentence
 * is read as windows, so an answer or a message's evidence is never a whole page) and attach each
 * sentence's content terms. Offsets are into `text`. Linear in the text length; never throws.
 */
export function analyzeText(text: string): AnalyzedSentence[] {
  const sentences = boundedSentences(text);
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
export const ANALYSIS_VERSION = 3;

/**
 * The analysis of a text as compact JSON: per sentence `[start, end, terms, names]` (terms and names
 * joined by spaces; stems hold none).
 */
export function serializeAnalysis(sentences: readonly AnalyzedSentence[]): string {
  return JSON.stringify(sentences.map((s) => [s.start, s.end, [...s.terms].join(' '), [...s.names].join(' ')]));
}

/**
 * An analysis of `text` read back from `serializeAnalysis`: equal to `analyzeText(text)`; undefined
 * when `json` is not the analysis of a text of that length (not JSON, another shape, offsets outside
 * the text or out of order: a corrupt or foreign entry, which the caller makes again). Never throws.
 */
export function parseAnalysis(text: string, json: string): AnalyzedSentence[] | undefined {
  let rows: unknown;
  try {
    rows = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows)) return undefined;
  const sentences: AnalyzedSentence[] = [];
  let previousEnd = 0;
  for (let position = 0; position < rows.length; position++) {
    const row: unknown = rows[position];
    if (!Array.isArray(row) || row.length !== 4) return undefined;
    const [start, end, terms, names] = row as unknown[];
    if (!Number.isInteger(start) || !Number.isInteger(end) || typeof terms !== 'string' || typeof names !== 'string') return undefined;
    if ((start as number) < previousEnd || (end as number) < (start as number) || (end as number) > text.length) return undefined;
    previousEnd = end as number;
    sentences.push(new StoredSentence(start as number, end as number, text.slice(start as number, end as number), position, terms as string, names as string));
  }
  return sentences;
}

const splitTerms = (joined: string): Set<string> => new Set(joined === '' ? [] : joined.split(' '));

/**
 * A sentence of a stored analysis (`parseAnalysis`), equal as an `AnalyzedSentence` to what
 * `analyzeText` makes. Its term and name sets are made on first use: ranking scans every sentence of
 * a chunk only for the query's few terms, which it finds in the stored string (`spacedTerms`), so
 * only the candidates' sets are ever made. Making every sentence's sets took about 100 ms of a warm
 * SOTU run's 1.2 s of CPU (issue 27; 271 chunks, 80,000 sentences).
 */
export class StoredSentence implements AnalyzedSentence {
  /** The distinct terms as stored, with a space before, between and after each: " a b c " (terms hold no space). */
  readonly spacedTerms: string;
  /** The number of distinct terms (BM25's sentence length). */
  readonly termCount: number;
  private termSet: Set<string> | undefined;
  private nameSet: Set<string> | undefined;

  constructor(
    readonly start: number,
    readonly end: number,
    readonly text: string,
    readonly position: number,
    joinedTerms: string,
    private readonly joinedNames: string,
  ) {
    this.spacedTerms = ` ${joinedTerms} `;
    let count = joinedTerms === '' ? 0 : 1;
    for (let i = joinedTerms.indexOf(' '); i !== -1; i = joinedTerms.indexOf(' ', i + 1)) count++;
    this.termCount = count;
  }

  get terms(): ReadonlySet<string> {
    this.termSet ??= splitTerms(this.spacedTerms.slice(1, -1));
    return this.termSet;
  }

  get names(): ReadonlySet<string> {
    this.nameSet ??= splitTerms(this.joinedNames);
    return this.nameSet;
  }
}

/** The number of a sentence's distinct terms, without making a stored sentence's set. */
function termCountOf(sentence: AnalyzedSentence): number {
  return sentence instanceof StoredSentence ? sentence.termCount : sentence.terms.size;
}

/** A sentence's BM25 score against a query (higher = more relevant; only comparable within a chunk). */
export interface RankedSentence {
  sentence: AnalyzedSentence;
  bm25: number;
}

/** BM25+ parameters: MiniSearch's defaults (`SearchOptions.bm25`), which the reader was tuned with. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/**
 * BM25+ ranking of one text's sentences (k1 = 1.2, b = 0.7, delta = 0.5), searched with several
 * weighted queries (the alternatives of a comparison question, the expanded query of round 2).
 *
 * It needs no index of its own: the analysis (each sentence's distinct terms, read from the chunk
 * cache on a warm run) already holds every statistic BM25 uses (a term occurs at most once in a
 * sentence's terms, a sentence's length is its number of distinct terms, a term's document frequency
 * is the number of sentences holding it), so a query is scored by one pass over the sentences, with
 * no index built per chunk. The scores are MiniSearch's (the reader used a MiniSearch index of the
 * sentences' terms until it was rebuilt for every seek, 1.4 s of a warm SOTU run), to the last bit:
 * the same expression in the same order of operations, the average sentence length as MiniSearch's
 * running average, each query term's boost (its weight) times its score summed in query order, and
 * the sum times the number of distinct query terms matched. test/unit/extractive-bm25.test.ts holds
 * it to MiniSearch's ranking on the SOTU corpus and on random texts.
 * Source: MiniSearch 7.2 `termResults`, `calcBM25Score`, `addFieldLength`, `search`
 * (https://lucaong.github.io/minisearch/).
 */
export class SentenceIndex {
  /** The mean number of distinct terms of a sentence, computed as MiniSearch's running average; on first use. */
  private averageLength: number | undefined;

  constructor(readonly sentences: readonly AnalyzedSentence[]) {}

  private average(): number {
    if (this.averageLength === undefined) {
      let average = 0;
      for (let i = 0; i < this.sentences.length; i++) average = (average * i + termCountOf(this.sentences[i])) / (i + 1);
      this.averageLength = average;
    }
    return this.averageLength;
  }

  /**
   * The best `limit` sentences for `query` by BM25+ (each query term boosted by its weight), best
   * first, ties by sentence position; sentences without any query term, and those `exclude`
   * rejects, are not returned. Deterministic; never throws.
   */
  rank(query: WeightedQuery, limit: number, exclude?: (sentence: AnalyzedSentence) => boolean): RankedSentence[] {
    if (query.terms.length === 0 || this.sentences.length === 0) return [];
    const weights = new Map<string, number>(query.terms.map((t: QueryTerm) => [t.term, t.weight]));
    // The query's terms as a search string splits them (a term repeated is scored again).
    const terms = query.terms
      .map((t) => t.term)
      .join(' ')
      .split(' ')
      .filter((term) => term !== '');
    const distinct = [...new Set(terms)];
    // Which sentences hold each distinct query term (its document frequency is their number).
    const holding = new Map<string, AnalyzedSentence[]>(distinct.map((term) => [term, []]));
    const needles = distinct.map((term) => ` ${term} `);
    for (const sentence of this.sentences) {
      // A stored sentence is searched in its stored terms (its set is made only if asked for).
      const stored = sentence instanceof StoredSentence ? sentence.spacedTerms : undefined;
      for (let i = 0; i < distinct.length; i++) {
        if (stored !== undefined ? stored.includes(needles[i]) : sentence.terms.has(distinct[i])) holding.get(distinct[i])?.push(sentence);
      }
    }
    const count = this.sentences.length;
    const average = this.average();
    const { k, b, d } = BM25;
    const termFrequency = 1;
    const scores = new Map<number, { sentence: AnalyzedSentence; score: number; matched: number }>();
    const seen = new Set<string>();
    for (const term of terms) {
      const sentences = holding.get(term) ?? [];
      if (sentences.length === 0) continue;
      const boost = weights.get(term) ?? 1;
      const first = !seen.has(term);
      seen.add(term);
      const inverse = Math.log(1 + (count - sentences.length + 0.5) / (sentences.length + 0.5));
      for (const sentence of sentences) {
        const length = termCountOf(sentence);
        const raw = inverse * (d + (termFrequency * (k + 1)) / (termFrequency + k * (1 - b + (b * length) / average)));
        const weighted = boost * raw;
        const entry = scores.get(sentence.position);
        if (entry === undefined) scores.set(sentence.position, { sentence, score: weighted, matched: 1 });
        else {
          entry.score += weighted;
          if (first) entry.matched += 1;
        }
      }
    }
    const ranked: RankedSentence[] = [];
    for (const { sentence, score, matched } of scores.values()) {
      if (exclude !== undefined && exclude(sentence)) continue;
      ranked.push({ sentence, bm25: score * matched });
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
