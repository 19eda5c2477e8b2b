/**
 * The citation check of a drafted section (docs/SURVEY.md, "Citation check"). A citation is `[id]`
 * or a group `[id1, id2]` / `[id1; id2]` right after the sentence it supports. A citation is kept
 * only when
 * 1. its id names a source of the corpus (else: `fabricated`), and
 * 2. the sentence's claim comes from a message extracted from that source: some message given to
 *    the writer lists the id among its sources, and the part of that message taken from the source
 *    (its quotes of that source, or its evidence when it has no quotes) covers at least
 *    `minSupport` of the sentence's content terms, weighted by background IDF (else: `unsupported`,
 *    e.g. a real id attached to another source's claim).
 * Failing citations are removed from the text and counted. Pure functions; deterministic.
 */
import { contentTerms } from '../extractive/text';
import { backgroundWeight } from '../extractive/weights';
import { splitSentences } from '../extractive/text';
import type { Message } from '../types';
import type { CitationCounts, RemovedCitation } from './types';

/** Default share (0-1, IDF-weighted) of a sentence's content terms its cited source's extract must contain. */
export const DEFAULT_MIN_SUPPORT = 0.5;

/** A citation group `[a]`, `[a, b]`, `[a; b]` not followed by `(` (a Markdown link). Ids: no spaces or brackets. */
const CITATION_GROUP = /\[([^[\]\s,;]+(?:\s*[,;]\s*[^[\]\s,;]+)*)\](?!\()/g;

/** Result of checking one section. */
export interface CheckedText {
  /** The text with failing citations removed. */
  text: string;
  counts: CitationCounts;
  removed: RemovedCitation[];
  /** Kept citations in text order: the source id and the sentence it supports. */
  kept: Array<{ sourceId: string; sentence: string }>;
}

/** Options of `checkCitations`. */
export interface CheckOptions {
  /** Ids of every source of the corpus. */
  corpusIds: ReadonlySet<string>;
  /** The messages the writer was given (the only admissible provenance of a claim). */
  messages: readonly Message[];
  /** Section number, for the removed-citation records. */
  section: number;
  /** Minimum weighted support 0-1; default `DEFAULT_MIN_SUPPORT`. */
  minSupport?: number;
}

/**
 * Weighted share (0-1) of the content terms of `claim` that occur in `text`, each term weighted by
 * its background weight (rare words count more than common ones). 1 for a claim without content terms.
 */
export function lexicalSupport(claim: string, text: string): number {
  const terms = [...new Set(contentTerms(claim))];
  if (terms.length === 0) return 1;
  const present = new Set(contentTerms(text));
  let total = 0;
  let covered = 0;
  for (const term of terms) {
    const weight = backgroundWeight(term);
    total += weight;
    if (present.has(term)) covered += weight;
  }
  return total === 0 ? 1 : covered / total;
}

/** The part of a message extracted from one source: its quotes of that source, or its evidence. */
export function extractOf(message: Message, sourceId: string): string | null {
  if (!message.sources.includes(sourceId)) return null;
  const quotes = message.quotes.filter((q) => q.documentId === sourceId);
  if (quotes.length > 0) return quotes.map((q) => q.text).join('\n');
  return message.quotes.length === 0 ? message.evidence : null;
}

/**
 * Check every citation of a section's text.
 * @param text Markdown prose with `[id]` citations.
 * @returns the cleaned text (a removed citation is cut with the white space before it; an emptied
 *   group disappears), counts, and the removed and kept citations.
 */
export function checkCitations(text: string, options: CheckOptions): CheckedText {
  const minSupport = options.minSupport ?? DEFAULT_MIN_SUPPORT;
  const counts: CitationCounts = { kept: 0, removed: 0, fabricated: 0, unsupported: 0 };
  const removed: RemovedCitation[] = [];
  const kept: CheckedText['kept'] = [];
  const supportCache = new Map<string, boolean>();
  const supported = (claim: string, id: string): boolean => {
    const key = `${id}\u0000${claim}`;
    let ok = supportCache.get(key);
    if (ok === undefined) {
      ok = options.messages.some((m) => {
        const extract = extractOf(m, id);
        return extract !== null && lexicalSupport(claim, extract) >= minSupport;
      });
      supportCache.set(key, ok);
    }
    return ok;
  };

  const paragraphs = text.split(/\n{2,}/);
  const out = paragraphs.map((paragraph) => {
    let result = '';
    let last = 0;
    let claim = '';
    for (const match of paragraph.matchAll(CITATION_GROUP)) {
      const before = paragraph.slice(last, match.index);
      const sentence = lastSentence(before);
      if (sentence !== '') claim = sentence;
      const ids = match[1].split(/\s*[,;]\s*/);
      const keep: string[] = [];
      for (const id of ids) {
        let reason: RemovedCitation['reason'] | null = null;
        if (!options.corpusIds.has(id)) reason = 'fabricated';
        else if (!supported(claim, id)) reason = 'unsupported';
        if (reason === null) {
          if (!keep.includes(id)) keep.push(id);
          counts.kept++;
          kept.push({ sourceId: id, sentence: claim });
        } else {
          counts.removed++;
          counts[reason]++;
          removed.push({ section: options.section, sourceId: id, reason, sentence: claim.slice(0, 300) });
        }
      }
      result += keep.length > 0 ? before + `[${keep.join(', ')}]` : before.replace(/[ \t]+$/, '');
      last = match.index + match[0].length;
    }
    return result + paragraph.slice(last);
  });
  return { text: out.join('\n\n'), counts, removed, kept };
}

/** The last sentence of a text run (trimmed), without Markdown emphasis markers; '' when none. */
function lastSentence(text: string): string {
  const sentences = splitSentences(text);
  const last = sentences[sentences.length - 1];
  return last === undefined ? '' : last.text.replace(/[*_`]/g, '').trim();
}

/** The ids cited in a text, in first-citation order (without checking them). */
export function citedIds(text: string): string[] {
  const ids: string[] = [];
  for (const match of text.matchAll(CITATION_GROUP)) {
    for (const id of match[1].split(/\s*[,;]\s*/)) if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** Prose words of a text: runs of non-space characters once citations and Markdown markers are removed. */
export function countWords(text: string): number {
  const prose = text.replace(CITATION_GROUP, ' ').replace(/[#*_>`|-]+/g, ' ');
  return prose.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}
