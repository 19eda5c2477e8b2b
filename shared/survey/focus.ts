/**
 * The focus of a section: the terms of its query (heading + scope) that set it apart from the other
 * sections. The topic's terms are left out (every message of the pool matches them), and so are
 * generic nouns of scholarly prose ("task", "model", "system": a message mentioning only "task" is
 * not about "robot task planning") and the words that frame a scope sentence ("How work on … addresses
 * …"). Used by the section re-ranking (shared/survey/survey.ts) and the extractive writer.
 */
import { contentTerms, termOf } from '../extractive/text';

/**
 * Generic nouns (hand-written list): they may be part of an informative phrase ("robot task
 * planning", "world model") but never make a section distinct on their own.
 */
export const GENERIC_NOUNS = [
  'task',
  'tasks',
  'problem',
  'problems',
  'model',
  'models',
  'system',
  'systems',
  'domain',
  'domains',
  'knowledge',
  'method',
  'methods',
  'approach',
  'approaches',
  'framework',
  'frameworks',
  'capability',
  'capabilities',
  'ability',
  'abilities',
  'performance',
  'result',
  'results',
  'work',
  'works',
  'study',
  'studies',
  'paper',
  'papers',
  'state',
  'setting',
  'settings',
  'application',
  'applications',
  'field',
  'area',
  'areas',
];

/** Words of the scope sentences the extractive outliner writes ("How work on <topic> addresses …"). */
export const SCOPE_FRAME_WORDS = ['how', 'work', 'addresses', 'address', 'overview'];

const stems = (words: readonly string[]): Set<string> => new Set(words.map((w) => termOf(w)).filter((t): t is string => t !== null));

export const GENERIC_TERMS: ReadonlySet<string> = stems(GENERIC_NOUNS);
const FRAME_TERMS: ReadonlySet<string> = stems(SCOPE_FRAME_WORDS);

/**
 * The focus terms of a section query, distinct, in query order: its content terms without the
 * topic's, the frame words and the generic nouns; without the generic nouns' removal when nothing
 * else is left; the query's own terms without the topic's when still nothing is left; all its terms
 * as a last resort.
 */
export function focusTerms(query: string, topic: string): string[] {
  const topicTerms = new Set(contentTerms(topic));
  const all = [...new Set(contentTerms(query))];
  const own = all.filter((t) => !topicTerms.has(t));
  const unframed = own.filter((t) => !FRAME_TERMS.has(t));
  const specific = unframed.filter((t) => !GENERIC_TERMS.has(t));
  for (const candidate of [specific, unframed, own]) if (candidate.length > 0) return candidate;
  return all;
}

/** The focus of a section query as a query string (for `lexicalSupport`, which stems again; stems are its fixed points). */
export const focusQuery = (query: string, topic: string): string => {
  const terms = focusTerms(query, topic);
  return terms.length > 0 ? terms.join(' ') : query;
};
