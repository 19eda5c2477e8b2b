/**
 * `ExtractiveSurveyModel`: the survey roles of the offline extractive reader. It is NOT an LLM: the
 * outline is built from salient phrases shared by several sources, and each section is a selection
 * of corpus sentences, verbatim, ordered and cited `[id]`. The survey metadata says `extractive: true`.
 *
 * Outline (knowledge-accumulating reasoning applied to the outline): candidate facets are phrases
 * (one or two consecutive content words) of the messages' evidence that are not topic words; a
 * facet's support is the number of distinct sources whose extracts mention it. Facets are chosen
 * greedily by support x rarity (background IDF), skipping ones that share a word or most of their
 * sources with a chosen facet. The knowledge "covers the topic" when `maxSections` facets each have
 * at least `minFacetSources` sources; otherwise the reply is "not yet covered" and KAR doubles k.
 */
import { termOccurrences, splitSentences, contentTerms, termOf } from '../extractive/text';
import { backgroundWeight } from '../extractive/weights';
import { countTokens } from '../tokenizer';
import type { Message, RoleUsage } from '../types';
import { lexicalSupport } from './citations';
import type { OutlineRequest, OutlineResult, SectionDraft, SectionRequest, SurveyModel } from './ports';
import type { OutlineSection } from './types';

/** Tuning of the extractive survey roles. */
export interface ExtractiveSurveyOptions {
  /** A facet needs this many distinct sources for the knowledge to cover it. */
  minFacetSources: number;
  /** Two facets whose source sets overlap more than this share (of the smaller) are one facet. */
  maxFacetOverlap: number;
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
  surfaces: Map<string, number>;
  sources: Set<string>;
  weight: number;
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
   * (at least one source each), or a single section on the topic itself when there are none.
   * Usage: one call; input = the messages' tokens, output = the outline's tokens. Never throws.
   */
  async outline(request: OutlineRequest): Promise<OutlineResult> {
    const usage: RoleUsage = { calls: 1, inputTokens: request.messages.reduce((s, m) => s + m.tokens, 0) + countTokens(request.topic), outputTokens: 0 };
    const topicTerms = topicLike(new Set(contentTerms(request.topic)), request.topic);
    const facets = candidateFacets(request.messages, topicTerms);
    const chosen = this.chooseFacets(facets, request.maxSections, request.force ? 1 : this.options.minFacetSources);
    const covered = chosen.length >= request.maxSections;
    if (!covered && !request.force) {
      return { covered: false, outline: null, usage, warnings: [] };
    }
    const sections: OutlineSection[] =
      chosen.length > 0
        ? chosen.map((facet) => this.sectionOf(facet, chosen, facets, request))
        : [{ heading: titleCase(request.topic), scope: request.topic }];
    const outline = { title: `${titleCase(request.topic)}: An Extractive Survey`, sections };
    usage.outputTokens = countTokens(JSON.stringify(outline));
    const warnings = covered ? [] : [`outline forced after the whole pool: ${chosen.length} of ${request.maxSections} sections have enough sources`];
    return { covered: true, outline, usage, warnings };
  }

  private chooseFacets(facets: Facet[], max: number, minSources: number): Facet[] {
    const ranked = facets
      .filter((f) => f.sources.size >= minSources)
      .map((f) => ({ f, value: f.sources.size * f.weight * (f.terms.length > 1 ? 2 : 1) }))
      .sort((a, b) => b.value - a.value || (a.f.key < b.f.key ? -1 : 1));
    const chosen: Facet[] = [];
    for (const { f } of ranked) {
      if (chosen.length >= max) break;
      const clash = chosen.some((c) => c.terms.some((t) => f.terms.includes(t)) || overlap(c.sources, f.sources) > this.options.maxFacetOverlap);
      if (!clash) chosen.push(f);
    }
    return chosen;
  }

  /** Heading = the facet's most frequent surface form; scope = the facet with its two most co-mentioned phrases and the topic. */
  private sectionOf(facet: Facet, chosen: Facet[], all: Facet[], request: OutlineRequest): OutlineSection {
    const heading = titleCase(mostFrequent(facet.surfaces));
    const related = all
      .filter((f) => f !== facet && !chosen.includes(f) && !f.terms.some((t) => facet.terms.includes(t)) && f.terms.length > 1)
      .map((f) => ({ f, shared: [...f.sources].filter((s) => facet.sources.has(s)).length }))
      .filter((x) => x.shared >= 2)
      .sort((a, b) => b.shared * b.f.weight - a.shared * a.f.weight || (a.f.key < b.f.key ? -1 : 1))
      .slice(0, 2)
      .map((x) => mostFrequent(x.f.surfaces).toLowerCase());
    const scope = `${mostFrequent(facet.surfaces)}${related.length > 0 ? `, ${related.join(' and ')}` : ''} in ${request.topic}`;
    return { heading, scope };
  }

  /**
   * Section: corpus sentences of the messages' extracts (quotes, each attributed to its source),
   * ranked by weighted coverage of the section query (heading + scope) plus a share of the message's
   * relevance score, chosen greedily up to `targetWords` (at most `maxSentencesPerSource` per source,
   * no sentence of `avoid`, no near-duplicate), then ordered by source (first choice first) and by
   * position within the source, each followed by `[id]`. Usage: one call. Never throws.
   */
  async writeSection(request: SectionRequest): Promise<SectionDraft> {
    const o = this.options;
    const section = request.outline.sections[request.section];
    // Relevance to what sets the section apart: its own terms, without the topic's (which every
    // message of the pool matches); the whole query when nothing else is left.
    const topicTerms = new Set(contentTerms(request.topic));
    const own = [...new Set(contentTerms(`${section.heading}. ${section.scope}`))].filter((t) => !topicTerms.has(t));
    const query = own.length > 0 ? own.join(' ') : `${section.heading}. ${section.scope}`;
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
          candidates.push({ sourceId: extract.sourceId, text, start: extract.start + sentence.start, value: relevance + 0.25 * (message.score / 100), terms: new Set(contentTerms(text)) });
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
      chosen.push(c);
      perSource.set(c.sourceId, (perSource.get(c.sourceId) ?? 0) + 1);
      words += c.text.split(' ').length;
    }
    // Order: sources in the order they were first chosen; a source's sentences in text order.
    const sourceOrder = [...new Set(chosen.map((c) => c.sourceId))];
    const ordered = [...chosen].sort((a, b) => sourceOrder.indexOf(a.sourceId) - sourceOrder.indexOf(b.sourceId) || a.start - b.start);
    const paragraphs: string[] = [];
    for (let i = 0; i < ordered.length; i += o.paragraphSentences) {
      paragraphs.push(ordered.slice(i, i + o.paragraphSentences).map((c) => `${c.text} [${c.sourceId}]`).join(' '));
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
 * that shows improved results"); a facet made of one of them would be a heading without content.
 */
const FILLER_WORDS = [
  'use', 'using', 'used', 'propose', 'proposed', 'approach', 'approaches', 'method', 'methods', 'paper', 'result', 'results', 'show', 'shows',
  'work', 'works', 'study', 'studies', 'performance', 'perform', 'present', 'demonstrate', 'ability', 'abilities', 'capability', 'capabilities',
  'framework', 'novel', 'new', 'based', 'existing', 'significant', 'significantly', 'improve', 'improved', 'improvement', 'evaluate', 'evaluation',
  'experiment', 'experiments', 'achieve', 'problem', 'problems', 'task', 'tasks', 'recent', 'recently', 'current', 'various', 'different',
  'however', 'well', 'also', 'including', 'make', 'made', 'effective', 'effectively', 'state', 'art', 'remarkable', 'promising', 'strong',
  'potential', 'key', 'challenge', 'challenges', 'challenging', 'introduce', 'domain', 'domains', 'knowledge', 'model', 'models', 'system',
  'systems', 'set', 'number', 'range', 'wide', 'way', 'ways', 'first', 'provide', 'large', 'general', 'generally', 'success', 'successful',
  'despite', 'often', 'many', 'several', 'whether', 'further', 'thus', 'common', 'like', 'help', 'able', 'enable', 'enables', 'given',
  'increasingly', 'rather', 'instead', 'yet', 'still', 'across', 'within', 'without', 'via', 'toward', 'towards', 'widely', 'highly',
  'particularly', 'especially', 'typically', 'largely', 'directly', 'simply', 'even', 'much', 'less', 'such', 'remain', 'remains',
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
      const acronym = words.slice(i, j).map((w) => w.charAt(0).toLowerCase()).join('');
      out.add(acronym);
      out.add(`${acronym}s`);
    }
  }
  return out;
}

/** Candidate facets of the messages: one- and two-word phrases of non-topic content words, per source. */
function candidateFacets(messages: readonly Message[], topicTerms: ReadonlySet<string>): Facet[] {
  const facets = new Map<string, Facet>();
  const note = (terms: string[], surface: string, sourceId: string): void => {
    const key = terms.join(' ');
    let facet = facets.get(key);
    if (facet === undefined) {
      facet = { key, terms, surfaces: new Map(), sources: new Set(), weight: terms.reduce((s, t) => s + backgroundWeight(t), 0) / terms.length };
      facets.set(key, facet);
    }
    facet.sources.add(sourceId);
    facet.surfaces.set(surface, (facet.surfaces.get(surface) ?? 0) + 1);
  };
  for (const message of messages) {
    for (const extract of extractsOf(message)) {
      const text = extract.text;
      const occurrences = termOccurrences(text).filter((o) => !/^\d/.test(o.term));
      for (let i = 0; i < occurrences.length; i++) {
        const a = occurrences[i];
        const surfaceA = text.slice(a.start, a.end);
        const aTopic = topicTerms.has(a.term);
        if (FILLER.has(a.term)) continue;
        if (!aTopic && a.term.length > 2) note([a.term], surfaceA.toLowerCase() === surfaceA || /^[A-Z][a-z]/.test(surfaceA) ? surfaceA.toLowerCase() : surfaceA, extract.sourceId);
        const b = occurrences[i + 1];
        if (b === undefined || !/^[\s-]+$/.test(text.slice(a.end, b.start)) || a.term === b.term || FILLER.has(b.term)) continue;
        if (aTopic && topicTerms.has(b.term)) continue;
        const surface = text.slice(a.start, b.end);
        note([a.term, b.term], /^[A-Z][a-z]+[\s-][a-z]/.test(surface) ? surface.charAt(0).toLowerCase() + surface.slice(1) : surface, extract.sourceId);
      }
    }
  }
  return [...facets.values()];
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

function mostFrequent(counts: ReadonlyMap<string, number>): string {
  let best = '';
  let bestCount = -1;
  for (const [surface, count] of counts) if (count > bestCount || (count === bestCount && surface < best)) [best, bestCount] = [surface, count];
  return best;
}

/** Capitalise each word that is all lower case ("classical planners" -> "Classical Planners"; "PDDL" stays). */
export function titleCase(text: string): string {
  return text.replace(/\S+/g, (w) => (w === w.toLowerCase() && !/^(and|or|of|in|for|to|the|a|an|with|on)$/.test(w) ? w.charAt(0).toUpperCase() + w.slice(1) : w)).replace(/^\S/, (c) => c.toUpperCase());
}
