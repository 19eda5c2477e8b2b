/**
 * `ExtractiveSurveyModel`: the survey roles of the offline extractive reader. It is NOT an LLM: the
 * outline is built from salient phrases shared by several sources, and each section is a selection
 * of corpus sentences, verbatim, ordered and cited `[id]`. The survey metadata says `extractive: true`.
 *
 * Outline (knowledge-accumulating reasoning applied to the outline):
 * - candidate facets are phrases of one to three consecutive content words of the messages' extracts
 *   (`candidateFacets`) with at least one specific word (neither a topic word nor a generic noun such
 *   as "task", shared/survey/focus.ts), at most one topic word and no filler word ("propose",
 *   "using"); a facet's support is the number of distinct sources whose extracts mention it;
 * - facets are chosen greedily by support x rarity (background IDF; phrases count double). One that
 *   shares a specific word or most of its sources with a chosen facet is merged into it; one whose
 *   name does not read as a name (`readsAsName`: "symbolic", "long-horizon") is passed over. A facet
 *   with fewer than `minFacetSources` sources is thin and never a section, even when the outline is
 *   forced (fewer, substantial sections rather than one-source ones); only when no facet has that
 *   many sources does the forced outline lower the bar;
 * - a section's heading is the most supported phrase of two or three words containing its facet's
 *   phrase and reading as a name (with `minNameShare` of the facet's sources and at least
 *   `minFacetSources`), else the facet's own phrase, title-cased ("Robot Task Planning"), never only
 *   topic words; its scope is a sentence, "How work on <topic> addresses <heading phrase>, <related>
 *   and <related>.", the related phrases being phrases co-mentioned by the section's sources and
 *   nearer to it than to any other section: a phrase too thin to be a section is folded into the
 *   section closest to it;
 * - the knowledge "covers the topic" when `maxSections` facets each have at least `minFacetSources`
 *   sources; otherwise the reply is "not yet covered" and KAR doubles k.
 */
import { termOccurrences, splitSentences, contentTerms, termOf } from '../extractive/text';
import { backgroundWeight } from '../extractive/weights';
import { countTokens } from '../tokenizer';
import type { Message, RoleUsage } from '../types';
import { lexicalSupport } from './citations';
import { focusQuery, GENERIC_TERMS } from './focus';
import type { OutlineRequest, OutlineResult, SectionDraft, SectionRequest, SurveyModel } from './ports';
import type { OutlineSection } from './types';

/** Tuning of the extractive survey roles. */
export interface ExtractiveSurveyOptions {
  /** A facet needs this many distinct sources for the knowledge to cover it (fewer: thin, not a section). */
  minFacetSources: number;
  /** Two facets whose source sets overlap more than this share (of the smaller) are one facet. */
  maxFacetOverlap: number;
  /** A longer phrase names a facet's section when it has at least this share of the facet's sources. */
  minNameShare: number;
  /** At most this many related phrases in a section's scope besides its heading phrase. */
  scopePhrases: number;
  /** Sentences shorter than this many words are not used (fragments, headings). */
  minSentenceWords: number;
  /** Sentences longer than this many words are not used (run-on extraction noise). */
  maxSentenceWords: number;
  /** At most this many sentences of one source per section. */
  maxSentencesPerSource: number;
  /** A sentence must cover at least this share (IDF-weighted) of the section query. */
  minSentenceRelevance: number;
  /** Sentences per paragraph. */
  paragraphSentences: number;
}

export const DEFAULT_EXTRACTIVE_SURVEY_OPTIONS: ExtractiveSurveyOptions = {
  minFacetSources: 3,
  maxFacetOverlap: 0.6,
  minNameShare: 0.3,
  scopePhrases: 2,
  minSentenceWords: 6,
  maxSentenceWords: 70,
  maxSentencesPerSource: 2,
  minSentenceRelevance: 0.15,
  paragraphSentences: 4,
};

/** A candidate facet: a phrase key (stems), its surface forms and the sources mentioning it. */
interface Facet {
  key: string;
  terms: string[];
  /** Terms that are neither topic words nor generic nouns (at least one). */
  specific: string[];
  surfaces: Map<string, number>;
  sources: Set<string>;
  /** Mean background weight of the specific terms. */
  weight: number;
  /** Occurrences in the extracts. */
  occurrences: number;
  /** Per content term right after an occurrence (white space or a hyphen between): how often. */
  next: Map<string, number>;
  /** Per content term right before an occurrence (white space or a hyphen between): how often. */
  previous: Map<string, number>;
}

/** A chosen facet and the phrase naming its section. */
interface Chosen {
  facet: Facet;
  name: Facet;
}

/** A phrase most of whose occurrences run on into another content word, whichever ("long-term planning", "long-term memory"). */
function runsOn(f: Facet): boolean {
  let continued = 0;
  for (const n of f.next.values()) continued += n;
  return continued > f.occurrences / 2;
}

/**
 * A phrase reads as a name (a heading, or a phrase of a scope) when no one word precedes more than
 * half of its occurrences (else it is the tail of a longer name: "horizon tasks" in "long-horizon
 * tasks", "language models" in "large language models"), and its last word has a noun ending
 * ("planning", "heuristics", "translation"), or has no telling ending ("robot", "search", "PDDL") and
 * no one word follows more than half of its occurrences (else it is the modifier of a longer name:
 * "long-horizon" in "long-horizon tasks"). An adjective or verb ending ("symbolic", "automated",
 * "translate") never reads as a name.
 */
function readsAsName(f: Facet): boolean {
  const mostly = (counts: ReadonlyMap<string, number>): boolean => Math.max(0, ...counts.values()) > f.occurrences / 2;
  if (mostly(f.previous)) return false;
  const head = nounLikeness(headOf(surfaceOfFacet(f)));
  return head === 2 || (head === 1 && !mostly(f.next));
}

/** Offline survey roles (deterministic, no model calls). */
export class ExtractiveSurveyModel implements SurveyModel {
  readonly description = 'extractive (offline BM25 sentence reader, not an LLM): an extractive survey of selected, ordered, cited corpus sentences';
  readonly extractive = true;
  private readonly options: ExtractiveSurveyOptions;

  constructor(options: Partial<ExtractiveSurveyOptions> = {}) {
    this.options = { ...DEFAULT_EXTRACTIVE_SURVEY_OPTIONS, ...options };
  }

  /**
   * Outline from the top-k messages (see the file comment). With `force`, the facets found so far
   * with at least `minFacetSources` sources (the best supported ones when none has that many), or a
   * single overview section when there is no facet at all.
   * Usage: one call; input = the messages' tokens, output = the outline's tokens. Never throws.
   */
  async outline(request: OutlineRequest): Promise<OutlineResult> {
    const usage: RoleUsage = { calls: 1, inputTokens: request.messages.reduce((s, m) => s + m.tokens, 0) + countTokens(request.topic), outputTokens: 0 };
    const topicTerms = topicLike(new Set(contentTerms(request.topic)), request.topic);
    const facets = candidateFacets(request.messages, topicTerms);
    let chosen = this.chooseFacets(facets, request.maxSections, this.options.minFacetSources);
    const covered = chosen.length >= request.maxSections;
    if (!covered && !request.force) {
      return { covered: false, outline: null, usage, warnings: [] };
    }
    // Forced: thin facets are not sections, unless no facet has enough sources.
    for (let min = this.options.minFacetSources - 1; chosen.length === 0 && min >= 1; min--) chosen = this.chooseFacets(facets, request.maxSections, min);
    const sections: OutlineSection[] =
      chosen.length > 0
        ? chosen.map(({ name }, i) => {
            const phrase = surfaceOfFacet(name);
            return { heading: titleCase(phrase), scope: scopeSentence(request.topic, [phrase, ...this.relatedPhrases(i, chosen, facets)]) };
          })
        : [{ heading: 'Overview', scope: `An overview of work on ${inSentence(request.topic)}.` }];
    const outline = { title: `${titleCase(request.topic)}: An Extractive Survey`, sections };
    usage.outputTokens = countTokens(JSON.stringify(outline));
    const warnings = covered ? [] : [`outline forced after the whole pool: ${chosen.length} of ${request.maxSections} sections have enough sources`];
    return { covered: true, outline, usage, warnings };
  }

  /**
   * Facets with at least `minSources` sources, greedily by support x rarity (phrases count double),
   * each with the phrase naming it (`nameOf`). A facet sharing a specific term or most of its sources
   * with a chosen one is merged into it; one whose name does not read as a name (`readsAsName`: an
   * adjective such as "symbolic", a modifier such as "long-term") is passed over for the next candidate.
   */
  private chooseFacets(facets: Facet[], max: number, minSources: number): Chosen[] {
    const ranked = facets
      .filter((f) => f.sources.size >= minSources)
      .map((f) => ({ f, value: f.sources.size * f.weight * (f.terms.length > 1 ? 2 : 1) }))
      .sort((a, b) => b.value - a.value || (a.f.key < b.f.key ? -1 : 1));
    const chosen: Chosen[] = [];
    for (const { f } of ranked) {
      if (chosen.length >= max) break;
      const taken = chosen.flatMap((c) => [...c.facet.specific, ...c.name.specific]);
      if (sharesTerm(taken, f.specific) || chosen.some((c) => overlap(c.facet.sources, f.sources) > this.options.maxFacetOverlap)) continue;
      const name = this.nameOf(f, facets, taken, minSources);
      if (readsAsName(name)) chosen.push({ facet: f, name });
    }
    return chosen;
  }

  /**
   * The phrase naming a facet: the most supported longer phrase (two or three words) containing the
   * facet's phrase and reading as a name, with at least `minSources` sources and `minNameShare` of
   * the facet's, naming no term of another chosen section (`taken`); else the facet's own phrase.
   */
  private nameOf(facet: Facet, facets: Facet[], taken: readonly string[], minSources: number): Facet {
    const needed = Math.max(minSources, Math.ceil(this.options.minNameShare * facet.sources.size));
    const longer = facets
      .filter(
        (f) =>
          f.terms.length > facet.terms.length &&
          f.sources.size >= needed &&
          containsPhrase(f.terms, facet.terms) &&
          readsAsName(f) &&
          !sharesTerm(f.specific, taken),
      )
      .sort((a, b) => b.sources.size - a.sources.size || b.terms.length - a.terms.length || b.weight - a.weight || (a.key < b.key ? -1 : 1));
    return longer[0] ?? facet;
  }

  /**
   * Up to `scopePhrases` phrases of two or three words related to section `index`, reading as names
   * and not running on into another word (`runsOn`): mentioned by at least two of the section's
   * sources (those of every candidate sharing a specific term with its facet or name), and by more
   * of them than of any other section's (ties: the earlier section), so a phrase too thin to be a
   * section is folded into its nearest one; none has a specific term of a heading (its own: no
   * repetition; another's: no overlap). Best first by shared sources x rarity.
   */
  private relatedPhrases(index: number, chosen: Chosen[], facets: Facet[]): string[] {
    const taken = chosen.flatMap((c) => [...c.facet.specific, ...c.name.specific]);
    // A section's sources: those of every candidate sharing a specific term with its facet or name
    // (the facets merged into it: "robot" into "robot task planning").
    const sources = chosen.map((c) => {
      const own = [...c.facet.specific, ...c.name.specific];
      return new Set(facets.filter((f) => sharesTerm(f.specific, own)).flatMap((f) => [...f.sources]));
    });
    const shares = (f: Facet, i: number): number => sharedCount(f.sources, sources[i]);
    const candidates = facets
      .filter((f) => f.terms.length > 1 && readsAsName(f) && !runsOn(f) && !sharesTerm(f.specific, taken))
      .map((f) => ({ f, shared: shares(f, index) }))
      .filter(({ f, shared }) => shared >= 2 && chosen.every((_, i) => i === index || shares(f, i) < shared || (shares(f, i) === shared && i > index)))
      .sort((a, b) => b.shared * b.f.weight - a.shared * a.f.weight || (a.f.key < b.f.key ? -1 : 1));
    const picked: Facet[] = [];
    for (const { f } of candidates) {
      if (picked.length >= this.options.scopePhrases) break;
      if (picked.some((p) => sharesTerm(p.specific, f.specific))) continue;
      picked.push(f);
    }
    return picked.map(surfaceOfFacet);
  }

  /**
   * Section: corpus sentences of the messages' extracts (quotes, each attributed to its source),
   * ranked by weighted coverage of the section query (heading + scope) plus a share of the message's
   * relevance score, chosen greedily up to about `targetWords` (the last one only when it ends closer
   * to the target than stopping short; at most `maxSentencesPerSource` per source, no sentence of
   * `avoid`, no near-duplicate), then ordered by source (first choice first) and by
   * position within the source, each followed by `[id]`. Usage: one call. Never throws.
   */
  async writeSection(request: SectionRequest): Promise<SectionDraft> {
    const o = this.options;
    const section = request.outline.sections[request.section];
    // Relevance to what sets the section apart: its focus terms (shared/survey/focus.ts: not the
    // topic's, which every message of the pool matches, nor generic nouns or the scope's frame words).
    const query = focusQuery(`${section.heading}. ${section.scope}`, request.topic);
    const usage: RoleUsage = { calls: 1, inputTokens: request.messages.reduce((s, m) => s + m.tokens, 0) + countTokens(query), outputTokens: 0 };
    // A paper's title is not a sentence of the survey (its text starts with it).
    const avoid = new Set([...request.avoid, ...request.sources.flatMap((s) => [s.title, `${s.title}.`])].map(normalize));
    const seen = new Set<string>();
    const candidates: Array<{ sourceId: string; text: string; start: number; value: number; terms: Set<string> }> = [];
    for (const message of request.messages) {
      for (const extract of extractsOf(message)) {
        for (const sentence of splitSentences(extract.text)) {
          const text = sentence.text.replace(/\s+/g, ' ');
          const words = text.split(' ').length;
          const key = normalize(text);
          if (words < o.minSentenceWords || words > o.maxSentenceWords || avoid.has(key) || seen.has(key)) continue;
          seen.add(key);
          const relevance = lexicalSupportOfQuery(query, text);
          if (relevance < o.minSentenceRelevance) continue;
          candidates.push({
            sourceId: extract.sourceId,
            text,
            start: extract.start + sentence.start,
            value: relevance + 0.25 * (message.score / 100),
            terms: new Set(contentTerms(text)),
          });
        }
      }
    }
    candidates.sort((a, b) => b.value - a.value || (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : a.start - b.start));
    const chosen: typeof candidates = [];
    const perSource = new Map<string, number>();
    let words = 0;
    for (const c of candidates) {
      if (words >= request.targetWords) break;
      if ((perSource.get(c.sourceId) ?? 0) >= o.maxSentencesPerSource) continue;
      if (chosen.some((x) => jaccard(x.terms, c.terms) > 0.7)) continue;
      const length = c.text.split(' ').length;
      // The last sentence only when it brings the section closer to its target than stopping short.
      if (words + length > request.targetWords && words + length - request.targetWords > request.targetWords - words) break;
      chosen.push(c);
      perSource.set(c.sourceId, (perSource.get(c.sourceId) ?? 0) + 1);
      words += length;
    }
    // Order: sources in the order they were first chosen; a source's sentences in text order.
    const sourceOrder = [...new Set(chosen.map((c) => c.sourceId))];
    const ordered = [...chosen].sort((a, b) => sourceOrder.indexOf(a.sourceId) - sourceOrder.indexOf(b.sourceId) || a.start - b.start);
    const paragraphs: string[] = [];
    for (let i = 0; i < ordered.length; i += o.paragraphSentences) {
      paragraphs.push(
        ordered
          .slice(i, i + o.paragraphSentences)
          .map((c) => `${c.text} [${c.sourceId}]`)
          .join(' '),
      );
    }
    const text = paragraphs.join('\n\n');
    usage.outputTokens = countTokens(text);
    const warnings = chosen.length === 0 ? [`section "${section.heading}": no sentence of the given messages matches its scope`] : [];
    return { text, usage, warnings };
  }
}

/** The extracts of a message, each with its source: its quotes, or its evidence when it has one source and no quotes. */
function extractsOf(message: Message): Array<{ sourceId: string; text: string; start: number }> {
  if (message.quotes.length > 0) return message.quotes.map((q) => ({ sourceId: q.documentId, text: q.text, start: q.start }));
  return message.sources.length === 1 ? [{ sourceId: message.sources[0], text: message.evidence, start: 0 }] : [];
}

/** Weighted share of the query's content terms present in `text` (0-1). */
function lexicalSupportOfQuery(query: string, text: string): number {
  return lexicalSupport(query, text);
}

/**
 * Words of scholarly prose that name no subject (hand-written list: "we propose a novel approach
 * that shows improved results"): no facet phrase contains one. Generic nouns ("task", "model") are
 * another list (shared/survey/focus.ts): they may be part of a phrase with a specific word.
 */
const FILLER_WORDS = [
  'use',
  'using',
  'used',
  'propose',
  'proposed',
  'proposes',
  'show',
  'shows',
  'shown',
  'perform',
  'performs',
  'present',
  'presents',
  'demonstrate',
  'demonstrates',
  'novel',
  'new',
  'based',
  'existing',
  'significant',
  'significantly',
  'improve',
  'improved',
  'improves',
  'improvement',
  'evaluate',
  'evaluated',
  'evaluation',
  'experiment',
  'experiments',
  'achieve',
  'achieves',
  'recent',
  'recently',
  'current',
  'currently',
  'various',
  'different',
  'however',
  'well',
  'also',
  'including',
  'make',
  'made',
  'effective',
  'effectively',
  'art',
  'remarkable',
  'promising',
  'strong',
  'potential',
  'key',
  'challenge',
  'challenges',
  'challenging',
  'introduce',
  'introduces',
  'set',
  'number',
  'range',
  'wide',
  'way',
  'ways',
  'first',
  'provide',
  'provides',
  'large',
  'general',
  'generally',
  'success',
  'successful',
  'despite',
  'often',
  'many',
  'several',
  'whether',
  'further',
  'thus',
  'common',
  'like',
  'help',
  'helps',
  'able',
  'enable',
  'enables',
  'given',
  'increasingly',
  'rather',
  'instead',
  'yet',
  'still',
  'across',
  'within',
  'without',
  'via',
  'toward',
  'towards',
  'widely',
  'highly',
  'particularly',
  'especially',
  'typically',
  'largely',
  'directly',
  'simply',
  'even',
  'much',
  'less',
  'such',
  'remain',
  'remains',
  'advance',
  'advances',
  'advancement',
  'advancements',
  'leverage',
  'leverages',
  'leveraging',
  'emerged',
  'emerging',
  'exhibit',
  'exhibits',
  'require',
  'requires',
  'allow',
  'allows',
  'address',
  'addresses',
  'explore',
  'explores',
  'investigate',
  'investigates',
  'develop',
  'developed',
  'aim',
  'aims',
  'focus',
  'focuses',
  'applied',
  'apply',
  'applying',
  'integrate',
  'integrating',
  'integrated',
  'generate',
  'generates',
  'generating',
  'conduct',
  'conducted',
  'extensive',
  'comprehensive',
  'specific',
  'specifically',
  'complex',
  'diverse',
  'crucial',
  'important',
  'overall',
  'respectively',
  'notably',
  'prior',
  'previous',
  'previously',
  'outperform',
  'outperforms',
  'superior',
  'better',
  'best',
  'high',
  'low',
  'lack',
  'limited',
  'limitation',
  'limitations',
  'need',
  'needs',
  'ensure',
  'consider',
  'considering',
  'order',
  'find',
  'found',
  'finding',
  'findings',
];
const FILLER = new Set(FILLER_WORDS.map((w) => termOf(w)).filter((t): t is string => t !== null));

/**
 * Terms a facet must not consist of: the topic's terms and their acronyms ("large language models"
 * -> "llm", "llms").
 */
function topicLike(topic: ReadonlySet<string>, topicText: string): Set<string> {
  const out = new Set(topic);
  const words = topicText.split(/\s+/).filter((w) => termOf(w) !== null);
  for (let i = 0; i < words.length; i++) {
    for (let j = i + 2; j <= words.length; j++) {
      const acronym = words
        .slice(i, j)
        .map((w) => w.charAt(0).toLowerCase())
        .join('');
      out.add(acronym);
      out.add(`${acronym}s`);
    }
  }
  return out;
}

/** Longest facet phrase, in words. */
const MAX_PHRASE_WORDS = 3;

/**
 * Candidate facets of the messages, per source: phrases of one to three consecutive content words
 * (separated only by white space or hyphens, no number, no filler word, no word twice) with at least
 * one specific term (longer than two letters, neither a topic term nor a generic noun) and at most
 * one topic term. Surfaces are lower case but for acronyms ("PDDL", "LLMs").
 */
function candidateFacets(messages: readonly Message[], topicTerms: ReadonlySet<string>): Facet[] {
  const facets = new Map<string, Facet>();
  const isSpecific = (t: string): boolean => t.length > 2 && !topicTerms.has(t) && !GENERIC_TERMS.has(t);
  for (const message of messages) {
    for (const extract of extractsOf(message)) {
      const text = extract.text;
      const occurrences = termOccurrences(text);
      for (let i = 0; i < occurrences.length; i++) {
        for (let n = 1; n <= MAX_PHRASE_WORDS && i + n <= occurrences.length; n++) {
          const last = occurrences[i + n - 1];
          if (/^\d/.test(last.term) || FILLER.has(last.term)) break;
          if (n > 1 && !/^[\s-]+$/.test(text.slice(occurrences[i + n - 2].end, last.start))) break;
          const terms = occurrences.slice(i, i + n).map((o) => o.term);
          if (new Set(terms).size < n) break;
          const specific = terms.filter(isSpecific);
          if (specific.length === 0 || terms.filter((t) => topicTerms.has(t)).length > 1) continue;
          const key = terms.join(' ');
          let facet = facets.get(key);
          if (facet === undefined) {
            facet = {
              key,
              terms,
              specific,
              surfaces: new Map(),
              sources: new Set(),
              weight: specific.reduce((s, t) => s + backgroundWeight(t), 0) / specific.length,
              occurrences: 0,
              next: new Map(),
              previous: new Map(),
            };
            facets.set(key, facet);
          }
          facet.sources.add(extract.sourceId);
          facet.occurrences++;
          const next = occurrences[i + n];
          if (next !== undefined && /^[\s-]+$/.test(text.slice(last.end, next.start))) facet.next.set(next.term, (facet.next.get(next.term) ?? 0) + 1);
          const previous = occurrences[i - 1];
          if (previous !== undefined && /^[\s-]+$/.test(text.slice(previous.end, occurrences[i].start)))
            facet.previous.set(previous.term, (facet.previous.get(previous.term) ?? 0) + 1);
          const surface = surfaceOf(text.slice(occurrences[i].start, last.end));
          facet.surfaces.set(surface, (facet.surfaces.get(surface) ?? 0) + 1);
        }
      }
    }
  }
  return [...facets.values()];
}

/** A phrase as written in a sentence: white space collapsed, lower case but for acronyms and words with digits ("LLMs", "GPT-4"). */
function surfaceOf(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[\p{L}\p{N}']+/gu, (w) => (/\p{Lu}.*\p{Lu}|\p{N}/u.test(w) ? w : w.toLowerCase()));
}

/** The topic inside a sentence: its first word lower-cased unless it is an acronym or a name with inner capitals. */
function inSentence(topic: string): string {
  return topic.trim().replace(/^\p{Lu}[\p{Ll}'-]*(?=\s|$)/u, (w) => w.toLowerCase());
}

/** "a", "a and b", "a, b and c". */
function listOf(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The scope of a section as a sentence: "How work on <topic> addresses <phrases>." */
export function scopeSentence(topic: string, phrases: readonly string[]): string {
  return `How work on ${inSentence(topic)} addresses ${listOf(phrases)}.`;
}

const sharesTerm = (a: readonly string[], b: readonly string[]): boolean => a.some((t) => b.includes(t));

/** True when `phrase` occurs in `terms` as consecutive terms. */
function containsPhrase(terms: readonly string[], phrase: readonly string[]): boolean {
  for (let i = 0; i + phrase.length <= terms.length; i++) if (phrase.every((t, j) => terms[i + j] === t)) return true;
  return false;
}

function sharedCount(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared;
}

const normalize = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / Math.max(1, Math.min(a.size, b.size));
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / Math.max(1, a.size + b.size - shared);
}

/**
 * How a word reads as the head of a name: 2 for noun endings ("planning", "heuristics", "translation"),
 * 0 for adjective or verb endings ("symbolic", "automated", "translate"), 1 otherwise.
 */
function nounLikeness(word: string): number {
  const w = word.toLowerCase();
  if (/(ates|izes|ises|ifies)$/.test(w)) return 0;
  if (/(ion|ions|ing|ment|ments|ness|ity|ics|ers|ors|ism|ure|ures|ies|[^s]s)$/.test(w)) return 2;
  if (/(ed|al|ic|ive|ous|ful|able|ible|ly|ate|ize|ise|ify)$/.test(w)) return 0;
  return 1;
}

/** The last word of a phrase. */
const headOf = (phrase: string): string => phrase.split(/[\s-]+/).at(-1) ?? phrase;

/**
 * The surface naming a facet: the most frequent one whose last word has no adjective or verb ending
 * ("heuristics" rather than "heuristic", "text" rather than "texts"; the most frequent one when all
 * have), the most noun-like among equally frequent ones ("adaptation" rather than "adapt").
 */
function surfaceOfFacet(facet: Facet): string {
  let best = '';
  let bestKey = [-1, -1, -1];
  for (const [surface, count] of facet.surfaces) {
    const noun = nounLikeness(headOf(surface));
    // Not an adjective or verb form first, then the most frequent, then the most noun-like, then alphabetical.
    const key = [noun > 0 ? 1 : 0, count, noun];
    const order = key.map((x, i) => x - bestKey[i]).find((d) => d !== 0) ?? (surface < best ? 1 : -1);
    if (order > 0) [best, bestKey] = [surface, key];
  }
  return best;
}

/** Words kept lower case inside a title (not first). */
const MINOR_WORDS = /^(a|an|and|as|at|by|for|from|in|into|of|on|or|the|to|vs|via|with)$/;

/**
 * Title case: each all-lower-case word, and each all-lower-case part of a hyphenated word, capitalised
 * ("long-horizon tasks" -> "Long-Horizon Tasks"); minor words stay lower case but first; words with
 * capitals ("PDDL", "LLMs") stay as they are.
 */
export function titleCase(text: string): string {
  return text
    .trim()
    .split(/\s+/)
    .map((word, i) =>
      i > 0 && MINOR_WORDS.test(word)
        ? word
        : word.replace(/[^-]+/g, (part) => (part === part.toLowerCase() ? part.charAt(0).toUpperCase() + part.slice(1) : part)),
    )
    .join(' ');
}
