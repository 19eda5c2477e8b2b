/**
 * The lexical prior of a message for a question: the share of the question's content terms,
 * weighted by their background rarity, that occur in the message's cited text (0-100). One input
 * of the pool score under the run option `ranking` (shared/ranking.ts says how each mode uses it).
 *
 * Terms: the extractive reader's question query (shared/extractive/query.ts: stemmed content terms,
 * weighted by inverse frequency in general English, in nats) and, for Chinese, Japanese and Korean
 * text, which has no spaces between words, character bigrams.
 */
import { questionQuery } from './query';
import { CJK_RUN, cjkBigramOccurrences, contentTerms } from './text';

/** Weight of one CJK character bigram of a question (nats; about that of a rare English word). */
const CJK_BIGRAM_WEIGHT = 8;

/** The CJK character bigrams of a text, once each. */
const cjkBigrams = (text: string): Set<string> => new Set(cjkBigramOccurrences(text));

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
