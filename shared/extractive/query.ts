/**
 * Weighted queries of the extractive reader: the question's content terms with their background
 * weights (shared/extractive/weights.ts), and, in rounds >= 2, expansion terms taken from the
 * synchronized messages (global knowledge synchronization, paper section 2B).
 */
import type { Message } from '../types';
import { contentTerms, isNameOrNumber, splitSentences, termOccurrences } from './text';
import { backgroundWeight } from './weights';

/** One query term and its weight (background IDF in nats; expansion terms are discounted). */
export interface QueryTerm {
  term: string;
  weight: number;
  /** 'question' for terms of the question, 'expansion' for terms learnt from synchronized messages. */
  origin: 'question' | 'expansion';
}

/** A weighted query: the question's terms first (in question order), then expansion terms. */
export interface WeightedQuery {
  terms: QueryTerm[];
  /** Sum of the weights of the question's terms (the denominator of question coverage). */
  questionWeight: number;
}

/** Tuning of query expansion in rounds >= 2. */
export interface ExpansionOptions {
  /** At most this many expansion terms (the most salient ones). */
  maxTerms: number;
  /** Only terms whose background weight is at least this (nats) are salient enough. */
  minBackgroundWeight: number;
  /** Expansion weight = background weight x this discount. */
  discount: number;
}

/**
 * Default expansion: up to 8 names, each at least as rare as ~1 in 20,000 words of general English
 * (weight 6), counted at half their weight.
 */
export const DEFAULT_EXPANSION: ExpansionOptions = { maxTerms: 8, minBackgroundWeight: 6, discount: 0.5 };

/**
 * The weighted query of a question: its distinct content terms, each weighted by its background
 * weight. Never throws; a question without content terms yields an empty query.
 */
export function questionQuery(question: string): WeightedQuery {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  for (const term of contentTerms(question)) {
    if (seen.has(term)) continue;
    seen.add(term);
    terms.push({ term, weight: backgroundWeight(term), origin: 'question' });
  }
  return { terms, questionWeight: terms.reduce((sum, t) => sum + t.weight, 0) };
}

/**
 * Expand a question's query with the salient names of the synchronized messages (the global top-K
 * of the previous round): words written as names or numbers (see `isNameOrNumber`) that are not in
 * the question and have a background weight of at least `minBackgroundWeight`, ranked by their
 * occurrences in the synchronized evidence weighted by each message's relevance score, then by
 * background weight, then alphabetically. These are the bridge entities of a multi-hop question: a
 * second-hop sentence that names an entity found in round 1 (the person the first hop identified)
 * can now be found. Never throws.
 */
export function expandQuery(query: WeightedQuery, synchronized: readonly Message[], options: ExpansionOptions = DEFAULT_EXPANSION): WeightedQuery {
  if (synchronized.length === 0 || options.maxTerms <= 0) return query;
  const inQuestion = new Set(query.terms.map((t) => t.term));
  const salience = new Map<string, number>();
  for (const message of synchronized) {
    const seen = new Set<string>();
    for (const sentence of splitSentences(message.evidence)) {
      for (const o of termOccurrences(sentence.text)) {
        if (inQuestion.has(o.term) || seen.has(o.term) || !isNameOrNumber(sentence.text, o.start, o.end, 0)) continue;
        if (backgroundWeight(o.term) < options.minBackgroundWeight) continue;
        seen.add(o.term);
        salience.set(o.term, (salience.get(o.term) ?? 0) + Math.max(1, message.score) / 100);
      }
    }
  }
  const expansion = [...salience.entries()]
    .map(([term, s]) => ({ term, s, w: backgroundWeight(term) }))
    .sort((a, b) => b.s - a.s || b.w - a.w || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    .slice(0, options.maxTerms)
    .map(({ term, w }): QueryTerm => ({ term, weight: w * options.discount, origin: 'expansion' }));
  return { terms: [...query.terms, ...expansion], questionWeight: query.questionWeight };
}

/**
 * A question as the extractive reader understands it: its weighted query and, for a disjunctive
 * (comparison) question such as "Who was born first, A or B?" or "Which was earlier: A, or B?",
 * one query per alternative (the shared part plus that alternative) and the ordering it asks for.
 */
export interface QuestionAnalysis {
  query: WeightedQuery;
  /**
   * Empty unless the question ends with two or more alternatives joined by "or". `text` is the
   * alternative as written, `own` its terms alone, `query` the shared part's terms plus its own.
   */
  alternatives: Array<{ text: string; query: WeightedQuery; own: WeightedQuery }>;
  /**
   * 'first' when the question asks which alternative comes first (earlier, first, before, older,
   * sooner), 'last' for the opposite (later, last, after, more recent, newer); null otherwise.
   */
  order: 'first' | 'last' | null;
  /**
   * The question's sentences, each as a query, when it has two or more with content terms (a
   * multi-hop question often states its first hop in a sentence of its own); empty otherwise.
   */
  parts: WeightedQuery[];
}

const WH_WORD = /\b(?:which|who|whom|whose|what)\b/i;
/** An alternative longer than this (words) is a clause, not an alternative. */
const MAX_ALTERNATIVE_WORDS = 14;
const FIRST_WORDS = /\b(?:earlier|earliest|first|before|older|oldest|sooner|previous)\b/i;
const LAST_WORDS = /\b(?:later|latest|last|after|more recent|most recent|newer|newest)\b/i;

/**
 * Analyse a question: its weighted query, and its alternatives when it is disjunctive. The
 * alternatives are what follows the last colon (or, without a colon, the last comma before the
 * final "or"), split on "or" / ", or". The question is treated as disjunctive only when the shared
 * part asks which/who/what, the alternatives end the question within one clause, each has at most
 * 14 words and has content terms. Never throws.
 */
export function analyzeQuestion(question: string): QuestionAnalysis {
  const query = questionQuery(question);
  const sentenceQueries = splitSentences(question)
    .map((s) => questionQuery(s.text))
    .filter((q) => q.terms.length > 0);
  const withParts = (analysis: Omit<QuestionAnalysis, 'parts'>): QuestionAnalysis => ({
    ...analysis,
    parts: sentenceQueries.length >= 2 ? sentenceQueries : [],
  });
  const trimmed = question.trim().replace(/\?+$/, '');
  let stem: string | undefined;
  let tail: string | undefined;
  const colon = trimmed.lastIndexOf(':');
  if (colon >= 0) {
    stem = trimmed.slice(0, colon);
    tail = trimmed.slice(colon + 1);
  } else {
    const ors = [...trimmed.matchAll(/\s+or\s+/gi)];
    const lastOr = ors[ors.length - 1];
    if (lastOr !== undefined) {
      // "A, or B" (a serial comma before "or") is not the comma that ends the shared part.
      const before = trimmed.slice(0, lastOr.index).replace(/,\s*$/, '');
      const comma = before.lastIndexOf(',');
      if (comma >= 0) {
        stem = trimmed.slice(0, comma);
        tail = trimmed.slice(comma + 1);
      }
    }
  }
  const none = withParts({ query, alternatives: [], order: null });
  // Only a question asking which/who/what, whose alternatives close it within one clause.
  if (stem === undefined || tail === undefined || !WH_WORD.test(stem) || /;|[.!?]['"’”)]*\s+[A-Z]/.test(tail)) return none;
  const parts = tail
    .split(/\s*,?\s+or\s+/i)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length < 2 || parts.some((p) => p.split(/\s+/).length > MAX_ALTERNATIVE_WORDS)) return none;
  const stemQuery = questionQuery(stem);
  const alternatives = parts.map((text) => {
    const own = questionQuery(text);
    return { text, own, query: mergeQueries(stemQuery, own) };
  });
  if (alternatives.some((a) => a.own.terms.length === 0)) return none;
  const order = FIRST_WORDS.test(stem) ? 'first' : LAST_WORDS.test(stem) ? 'last' : null;
  return withParts({ query, alternatives, order });
}

/** Union of two question queries (terms of `a` first; a term in both keeps `a`'s weight). */
function mergeQueries(a: WeightedQuery, b: WeightedQuery): WeightedQuery {
  const seen = new Set(a.terms.map((t) => t.term));
  const terms = [...a.terms, ...b.terms.filter((t) => !seen.has(t.term))];
  return { terms, questionWeight: terms.filter((t) => t.origin === 'question').reduce((s, t) => s + t.weight, 0) };
}
