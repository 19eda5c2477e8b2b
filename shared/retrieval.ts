/**
 * The cheap local retriever of the project: BM25 (minisearch) of chunk texts against a question,
 * over the terms of shared/extractive/text.ts `retrievalTerms` (stemmed content terms, stop words
 * removed; Chinese, Japanese and Korean as character bigrams). No model call.
 * Used by the `rag` baseline of the eval (eval/strategies/baselines.ts) and by the run option
 * `coverage: 'grow'` (Prepare orders the chunks by it; shared/coverage.ts).
 */
import MiniSearch from 'minisearch';
import { retrievalTerms } from './extractive/text';

/** What the retriever reads of a chunk: its index and its text. */
export interface RetrievableChunk {
  index: number;
  text: string;
}

/**
 * An index of chunks for one question. Only the question's terms are kept in the index (every
 * other term is dropped by `processTerm`), while minisearch counts a field's length from all its
 * tokens before that: the BM25 scores are those of an index of every term, and memory grows with
 * the chunk count, not the corpus size, so Prepare can feed a large corpus one chunk at a time.
 */
export class ChunkRetriever {
  private readonly terms: string[];
  private readonly index: MiniSearch<{ id: number; terms: string }>;

  /** @param question the run's question (its content terms are the query). */
  constructor(question: string) {
    this.terms = [...new Set(retrievalTerms(question))];
    const keep = new Set(this.terms);
    this.index = new MiniSearch<{ id: number; terms: string }>({
      fields: ['terms'],
      idField: 'id',
      tokenize: (text) => (text.length === 0 ? [] : text.split(' ')),
      processTerm: (term) => (keep.has(term) ? term : null),
    });
  }

  /** Add one chunk (each index at most once). */
  add(chunk: RetrievableChunk): void {
    this.index.add({ id: chunk.index, terms: retrievalTerms(chunk.text).join(' ') });
  }

  /**
   * Chunk indices by BM25 score against the question, highest first; ties, and chunks with no
   * question term (score 0), in corpus order. Every added chunk appears exactly once.
   * @param indices the added chunks' indices (the order of the chunks without a score).
   */
  order(indices: readonly number[]): number[] {
    const scores = new Map<number, number>();
    if (this.terms.length > 0) for (const r of this.index.search(this.terms.join(' '), { combineWith: 'OR' })) scores.set(r.id as number, r.score);
    return [...indices].sort((a, b) => (scores.get(b) ?? 0) - (scores.get(a) ?? 0) || a - b);
  }
}

/**
 * Chunks by BM25 score against the question (ties and unmatched chunks in corpus order).
 * @returns the same chunk objects, reordered.
 */
export function rankChunks<C extends RetrievableChunk>(question: string, chunks: readonly C[]): C[] {
  const retriever = new ChunkRetriever(question);
  for (const chunk of chunks) retriever.add(chunk);
  const byIndex = new Map(chunks.map((c) => [c.index, c]));
  return retriever.order(chunks.map((c) => c.index)).map((i) => byIndex.get(i) as C);
}
