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
 * The lexical prior ({@link lexicalPrior}) is the share of the question's content terms, weighted by
 * their background rarity (shared/extractive/weights.ts: inverse frequency in general English, in
 * nats), that occur in the message's cited text: 100 when every term of the question is there, 0
 * when none is. It needs no corpus statistics, so priors of messages from different chunks,
 * computed by different seeking agents at different times, compare directly (a BM25 score would need
 * the whole corpus's document frequencies at every seek), and it costs no model call. Chinese,
 * Japanese and Korean text, which has no spaces between words, is compared by character bigrams.
 */
import { questionQuery } from './extractive/query';
import { contentTerms } from './extractive/text';

/** The ranking modes of the run option `ranking` (see the file comment). */
export const RANKING_MODES = ['score', 'hybrid', 'retrieval'] as const;
/** One ranking mode. */
export type RankingMode = (typeof RANKING_MODES)[number];
/** The default ranking mode (chosen by measurement: docs/EVAL.md, "Fidelity"). */
export const DEFAULT_RANKING: RankingMode = 'hybrid';

/** Weight of one CJK character bigram of a question (nats; about that of a rare English word). */
const CJK_BIGRAM_WEIGHT = 8;
/** A run of CJK ideographs, kana or hangul. */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;

/** The CJK character bigrams of a text (a run of one character is its own term). */
function cjkBigrams(text: string): Set<string> {
  const grams = new Set<string>();
  for (const run of text.match(CJK_RUN) ?? []) {
    const chars = Array.from(run);
    if (chars.length === 1) grams.add(chars[0]);
    for (let i = 0; i + 1 < chars.length; i++) grams.add(chars[i] + chars[i + 1]);
  }
  return grams;
}

/** The weighted terms of a question: English-like content terms (stemmed) and CJK bigrams. */
function questionTerms(question: string): Array<{ term: string; weight: number; cjk: boolean }> {
  const latin = question.replace(CJK_RUN, ' ');
  return [
    ...questionQuery(latin).terms.map((t) => ({ term: t.term, weight: t.weight, cjk: false })),
    ...[...cjkBigrams(question)].map((term) => ({ term, weight: CJK_BIGRAM_WEIGHT, cjk: true })),
  ];
}

/**
 * The lexical prior of a text for a question (see the file comment).
 * @param question the query; @param text the message's cited text (its evidence).
 * @returns an integer 0-100; 0 when the question has no content term.
 */
export function lexicalPrior(question: string, text: string): number {
  const terms = questionTerms(question);
  const total = terms.reduce((sum, t) => sum + t.weight, 0);
  if (total <= 0) return 0;
  const latin = new Set(contentTerms(text.replace(CJK_RUN, ' ')));
  const grams = terms.some((t) => t.cjk) ? cjkBigrams(text) : new Set<string>();
  const found = terms.reduce((sum, t) => sum + ((t.cjk ? grams.has(t.term) : latin.has(t.term)) ? t.weight : 0), 0);
  return Math.round((100 * found) / total);
}

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
