/**
 * How the message pool is ranked (the run option `ranking`): the order of the global top-k that
 * knowledge-accumulating reasoning reads and that global knowledge synchronization shares (paper 2B).
 *
 * The paper ranks by the seeking agents' own relevance scores and names their reliability as its
 * main limitation; a small model rates most chunks 0 or 90 whether or not they hold the answer. So a
 * message's pool score (`Message.score`, the key of the pool order, shared/pool.ts) is, by mode:
 *
 * - `score`: the seeking agent's score alone (the paper's ranking);
 * - `hybrid` (default): the mean of the seeking agent's score and the lexical prior, both 0-100;
 * - `retrieval`: the lexical prior alone, the model's score ignored — a retriever's order, as the
 *   official ExtAgents code uses on HotpotQA (its top-k there are the first 2^(k-1) chunks in
 *   retrieval order), for replicating the paper.
 *
 * The lexical prior (`lexicalPrior`, shared/extractive/prior.ts) is the share of the question's content terms, weighted by
 * their background rarity (shared/extractive/weights.ts: inverse frequency in general English, in
 * nats), that occur in the message's cited text: 100 when every term of the question is there, 0
 * when none is. It needs no corpus statistics, so priors of messages from different chunks,
 * computed by different seeking agents at different times, compare directly (a BM25 score would need
 * the whole corpus's document frequencies at every seek), and it costs no model call. Chinese,
 * Japanese and Korean text, which has no spaces between words, is compared by character bigrams.
 */
/** The ranking modes of the run option `ranking` (see the file comment). */
export const RANKING_MODES = ['score', 'hybrid', 'retrieval'] as const;
/** One ranking mode. */
export type RankingMode = (typeof RANKING_MODES)[number];
/** The default ranking mode (chosen by measurement: docs/EVAL.md, "Fidelity"). */
export const DEFAULT_RANKING: RankingMode = 'hybrid';

/**
 * A message's pool score under a ranking mode (see the file comment).
 * @param mode the run's `ranking`; @param modelScore the seeking agent's score, integer 0-100;
 * @param prior the lexical prior, integer 0-100.
 * @returns an integer 0-100 (`Message.score`).
 */
export function poolScore(mode: RankingMode, modelScore: number, prior: number): number {
  switch (mode) {
    case 'score':
      return modelScore;
    case 'retrieval':
      return prior;
    case 'hybrid':
      return Math.round((modelScore + prior) / 2);
  }
}
