/**
 * The survey use case (docs/SURVEY.md): seeking agents read the corpus for the topic, the reasoning
 * agent drafts the outline by knowledge-accumulating reasoning (k doubling while it says the
 * knowledge does not yet cover the topic), each section re-ranks the pool for its scope (one
 * synchronized seeking round, with the outline as shared context, where evidence is thin), the
 * writer drafts it citing `[id]`, the citation check removes failing citations, and the survey is
 * rendered as Markdown with JSON metadata.
 *
 * The steps are exported separately (`seekRound`, `draftOutline`, `sectionEvidence`,
 * `writeSections`, `assembleSurvey`) so that a workflow can run them as separate tasks; `runSurvey`
 * runs them in-process (the local CLI and the benchmark).
 */
import { DEFAULT_RANKING, type RankingMode } from '../ranking';
import pLimit from 'p-limit';
import type { AgentModel } from '../ports';
import { compareMessages, fitToBudget } from '../pool';
import { MESSAGE_OVERHEAD_TOKENS, buildMessage } from '../method';
import { nextK } from '../kar';
import { countTokens } from '../tokenizer';
import type { Chunk, Message, RoleUsage } from '../types';
import { splitSentences } from '../extractive/text';
import { InvalidInputError } from '../errors';
import { checkCitations, countWords, lexicalSupport } from './citations';
import { chunkSources } from './chunking';
import { NoEvidenceError } from './errors';
import { focusQuery } from './focus';
import { parseSurveyOptions } from './options';
import type { SurveyModel } from './ports';
import type {
  CitationCounts,
  Outline,
  OutlineStep,
  RemovedCitation,
  SectionResult,
  SurveyMetadata,
  SurveyOptions,
  SurveyResult,
  SurveyRole,
  SurveySource,
  SurveyUsage,
} from './types';

/** Tokens of synchronized messages (the outline first) each seeking agent reads in a section's round 2. */
export const SECTION_SYNC_BUDGET_TOKENS = 4000;

/** A message is relevant to a section when it covers at least this share (IDF-weighted) of the section's own terms. */
export const SECTION_RELEVANCE = 0.3;

/** Progress of a survey, for the CLI's progress output. */
export interface SurveyProgress {
  phase: 'seek' | 'outline' | 'section' | 'write' | 'assemble';
  /** Units done and in all (chunks for seek, KAR steps for outline, sections for section / write). */
  done: number;
  total: number;
  detail?: string;
}

/** Ports and callbacks of a survey run. */
export interface SurveyDeps {
  /** The seeking agents (`AgentModel.seek`; the query is the topic or a section's scope). */
  seeker: AgentModel;
  /** The reasoning agent's survey roles (outline, writer). */
  model: SurveyModel;
  /** Clock of the metadata; tests pass a fixed one. */
  now?: () => Date;
  onProgress?: (progress: SurveyProgress) => void;
}

/** Input of one survey. */
export interface SurveyInput {
  topic: string;
  sources: SurveySource[];
  /** Options (validated with `parseSurveyOptions`). */
  options?: unknown;
  /** Records of the corpus that were skipped (counted in the metadata). */
  skipped?: number;
}

const emptyUsage = (): SurveyUsage => ({
  seeker: { calls: 0, inputTokens: 0, outputTokens: 0 },
  outliner: { calls: 0, inputTokens: 0, outputTokens: 0 },
  writer: { calls: 0, inputTokens: 0, outputTokens: 0 },
});

function addUsage(total: SurveyUsage, role: SurveyRole, usage: RoleUsage): void {
  total[role].calls += usage.calls;
  total[role].inputTokens += usage.inputTokens;
  total[role].outputTokens += usage.outputTokens;
}

/** Messages of one seeking round, with usage and warnings. */
export interface SeekRoundResult {
  messages: Message[];
  usage: RoleUsage;
  warnings: string[];
}

/**
 * One seeking round over all chunks: each chunk's seeking agent reads the query (and the
 * synchronized messages in round 2) and may return a message; its `sources` are the ids of the
 * sources its quotes lie in (the chunk's sources when it has no quotes).
 * @param idPrefix prefix of the message ids (`<prefix>c<chunk>`), unique per round and section;
 *   `ranking` how the messages' pool scores are made (default `DEFAULT_RANKING`).
 * @throws the seeker's typed errors unchanged.
 */
export async function seekRound(
  chunks: Chunk[],
  request: { query: string; round: number; synchronized: Message[]; followUp?: string; idPrefix: string; concurrency: number; ranking?: RankingMode },
  seeker: AgentModel,
  onChunk?: () => void,
): Promise<SeekRoundResult> {
  const limit = pLimit(request.concurrency);
  const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const warnings: string[] = [];
  const results = await Promise.all(
    chunks.map((chunk) =>
      limit(async (): Promise<Message | null> => {
        const result = await seeker.seek({
          question: request.query,
          chunk,
          round: request.round,
          synchronized: request.synchronized,
          ...(request.followUp !== undefined && { followUp: request.followUp }),
        });
        usage.calls += result.usage.calls;
        usage.inputTokens += result.usage.inputTokens;
        usage.outputTokens += result.usage.outputTokens;
        const { message, warnings: cuts } = buildMessage(chunk, request.round, `${request.idPrefix}c${chunk.index}`, result, {
          question: request.query,
          followUp: request.followUp,
          mode: request.ranking ?? DEFAULT_RANKING,
        });
        warnings.push(...[...result.warnings, ...cuts].map((w) => `chunk ${chunk.index}: ${w}`));
        onChunk?.();
        return message;
      }),
    ),
  );
  return { messages: results.filter((m): m is Message => m !== null).sort(compareMessages), usage, warnings };
}

/** The survey's error when round 1 found nothing relevant to the topic (in-process and state machine alike). */
export const noEvidenceError = (topic: string): NoEvidenceError => new NoEvidenceError(`No seeking agent found anything relevant to "${topic}" in the corpus`);

/** The survey's error when even the forced outline step drafted no outline. */
export const noOutlineError = (topic: string, poolSize: number): NoEvidenceError =>
  new NoEvidenceError(`The reasoning agent drafted no outline for "${topic}" even from the whole pool (${poolSize} messages)`);

/** The outline and its KAR trace. */
export interface OutlineDraft {
  outline: Outline;
  trace: OutlineStep[];
  usage: RoleUsage;
  warnings: string[];
}

/**
 * Knowledge-accumulating reasoning applied to the outline: k = 1, 2, 4, … (each step's top-k fitted
 * to `budgetTokens`); the first step the reasoning agent says covers the topic gives the outline;
 * after the whole pool (or all the budget allows) it is forced.
 * @param pool messages in pool order (best first).
 * @throws NoEvidenceError for an empty pool or when even the forced step yields no outline.
 */
export async function draftOutline(
  topic: string,
  pool: Message[],
  options: Pick<SurveyOptions, 'maxSections' | 'outlineBudgetTokens'>,
  model: SurveyModel,
  onStep?: (step: OutlineStep) => void,
): Promise<OutlineDraft> {
  if (pool.length === 0) throw noEvidenceError(topic);
  const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const warnings: string[] = [];
  const trace: OutlineStep[] = [];
  let k = 1;
  for (;;) {
    const result = await outlineStep(topic, pool.slice(0, k), { k, poolSize: pool.length }, options, model);
    usage.calls += result.usage.calls;
    usage.inputTokens += result.usage.inputTokens;
    usage.outputTokens += result.usage.outputTokens;
    warnings.push(...result.warnings);
    trace.push(result.step);
    onStep?.(result.step);
    if (result.outline !== null) return { outline: result.outline, trace, usage, warnings };
    if (result.step.forced) throw noOutlineError(topic, pool.length);
    k = nextK(k, pool.length).k;
  }
}

/** One knowledge-accumulating reasoning step of the outline (see {@link outlineStep}). */
export interface OutlineStepResult {
  step: OutlineStep;
  /** The outline (cut to `maxSections`) when the step covered the topic, else null (KAR doubles k). */
  outline: Outline | null;
  usage: RoleUsage;
  warnings: string[];
}

/**
 * One outline KAR step: the top-k messages fitted to `outlineBudgetTokens` (MESSAGE_OVERHEAD_TOKENS
 * per message); forced once k reads the whole pool or the budget cut the step short (a larger k
 * reads no more). Used by `draftOutline` (in-process loop) and by the survey state machine's
 * `Outline` task (one step per invocation, the Choice loop doubling k).
 * @param topK the pool's best `k` messages (fewer when the pool is smaller), best first.
 * @param at.k requested k (1, 2, 4, …); `at.poolSize` messages in the whole pool (>= 1).
 * @throws the model's typed errors unchanged.
 */
export async function outlineStep(
  topic: string,
  topK: Message[],
  at: { k: number; poolSize: number },
  options: Pick<SurveyOptions, 'maxSections' | 'outlineBudgetTokens'>,
  model: SurveyModel,
): Promise<OutlineStepResult> {
  const fitted = fitToBudget(topK.slice(0, at.k), options.outlineBudgetTokens, { overheadTokensPerMessage: MESSAGE_OVERHEAD_TOKENS });
  const force = at.k >= at.poolSize || fitted.messages.length < at.k;
  const result = await model.outline({ topic, messages: fitted.messages, maxSections: options.maxSections, force });
  const step: OutlineStep = { k: at.k, messagesUsed: fitted.messages.length, covered: result.covered && result.outline !== null, forced: force };
  const outline = step.covered && result.outline !== null ? { ...result.outline, sections: result.outline.sections.slice(0, options.maxSections) } : null;
  return { step, outline, usage: result.usage, warnings: result.warnings };
}

/** The query of one section: its heading and scope. */
export function sectionQuery(outline: Outline, section: number): string {
  const s = outline.sections[section];
  return `${s.heading}. ${s.scope}`;
}

/**
 * Re-rank messages for a section: relevance = IDF-weighted share of the section's focus terms
 * (`focusTerms`, shared/survey/focus.ts: its query minus the topic's terms, the scope's frame words
 * and generic nouns such as "task"; less filtered when nothing is left) present in the evidence,
 * ranked by relevance + a quarter of the relevance score. Ties: pool order.
 * @returns messages with their relevance, best first.
 */
export function rerankForSection(messages: readonly Message[], query: string, topic: string): Array<{ message: Message; relevance: number }> {
  const focused = focusQuery(query, topic);
  // lexicalSupport stems the words again; stems are fixed points of the stemmer for our purposes.
  return messages
    .map((message) => ({ message, relevance: lexicalSupport(focused, message.evidence) }))
    .sort((a, b) => b.relevance + b.message.score / 400 - (a.relevance + a.message.score / 400) || compareMessages(a.message, b.message));
}

/** The evidence of one section: its re-ranked messages and whether it got a synchronized round. */
export interface SectionEvidence {
  messages: Message[];
  relevant: number;
  synchronized: boolean;
  usage: RoleUsage;
  warnings: string[];
}

/** The outline as a pseudo-message: the shared context of a section's synchronized seeking round. */
export function outlineMessage(outline: Outline): Message {
  const evidence = [outline.title, ...outline.sections.map((s) => `${s.heading}: ${s.scope}`)].join('\n');
  return { id: 'outline', round: 1, chunkIndex: 0, score: 100, evidence, tokens: countTokens(evidence), quotes: [], sources: [] };
}

/**
 * Gather one section's evidence: re-rank the pool for its scope; when the evidence is thin
 * (`needsSectionRound`: fewer than `minSectionMessages` relevant messages, or too few words in them
 * for the section's share of `targetWords`) and `rounds` >= 2, one synchronized seeking round over
 * every chunk with the section query, the outline and the section's best messages as the shared
 * context; then re-rank again.
 * @throws the seeker's typed errors unchanged.
 */
export async function sectionEvidence(
  topic: string,
  outline: Outline,
  section: number,
  pool: Message[],
  chunks: Chunk[],
  options: Pick<SurveyOptions, 'minSectionMessages' | 'rounds' | 'concurrency'> & Partial<Pick<SurveyOptions, 'targetWords'>>,
  seeker: AgentModel,
): Promise<SectionEvidence> {
  const query = sectionQuery(outline, section);
  let ranked = rerankForSection(pool, query, topic);
  let relevant = countRelevant(ranked);
  const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const warnings: string[] = [];
  let synchronized = false;
  if (needsSectionRound(ranked, options, outline.sections.length)) {
    synchronized = true;
    const context = sectionSyncContext(outline, ranked);
    const round = await seekRound(
      chunks,
      { query, round: 2, synchronized: context, idPrefix: `s${section + 1}-r2-`, concurrency: options.concurrency },
      seeker,
    );
    usage.calls += round.usage.calls;
    usage.inputTokens += round.usage.inputTokens;
    usage.outputTokens += round.usage.outputTokens;
    warnings.push(...round.warnings);
    ranked = rerankForSection([...pool, ...round.messages], query, topic);
    relevant = countRelevant(ranked);
  }
  return { messages: ranked.map((r) => r.message), relevant, synchronized, usage, warnings };
}

/** Messages of a re-ranked pool relevant to the section (relevance >= {@link SECTION_RELEVANCE}). */
export function countRelevant(ranked: ReadonlyArray<{ relevance: number }>): number {
  return ranked.filter((r) => r.relevance >= SECTION_RELEVANCE).length;
}

/**
 * Relevant messages must hold at least this many times a section's share of the target words
 * (`wordsPerSection`) for the section to be written without a synchronized round: the writer keeps
 * only the sentences on the section's focus, at most two per source, none already written.
 */
export const SECTION_EVIDENCE_WORDS_FACTOR = 2;

/**
 * Thin evidence, and a second round allowed (`rounds` >= 2): fewer than `minSectionMessages` relevant
 * messages, or relevant messages holding fewer than {@link SECTION_EVIDENCE_WORDS_FACTOR} x the
 * section's words (`targetWords` shared by `sections`): a topic round's message is often a sentence
 * or two, so enough messages may still make a thin section. Without `targetWords`, messages only.
 * @param ranked the section's re-ranked messages (`rerankForSection`).
 */
export function needsSectionRound(
  ranked: ReadonlyArray<{ message: Message; relevance: number }>,
  options: Pick<SurveyOptions, 'minSectionMessages' | 'rounds'> & Partial<Pick<SurveyOptions, 'targetWords'>>,
  sections: number,
): boolean {
  if (options.rounds < 2) return false;
  const relevant = ranked.filter((r) => r.relevance >= SECTION_RELEVANCE);
  if (relevant.length < options.minSectionMessages) return true;
  if (options.targetWords === undefined) return false;
  const words = relevant.reduce((n, r) => n + countWords(r.message.evidence), 0);
  return words < SECTION_EVIDENCE_WORDS_FACTOR * wordsPerSection(options.targetWords, sections);
}

/**
 * The shared context of a section's synchronized seeking round: the outline (as a pseudo-message)
 * and the section's 16 best messages, fitted to {@link SECTION_SYNC_BUDGET_TOKENS}.
 */
export function sectionSyncContext(outline: Outline, ranked: ReadonlyArray<{ message: Message }>): Message[] {
  return fitToBudget([outlineMessage(outline), ...ranked.slice(0, 16).map((r) => r.message)], SECTION_SYNC_BUDGET_TOKENS).messages;
}

/** Sections after writing and the citation check. */
export interface WrittenSections {
  sections: SectionResult[];
  citations: CitationCounts;
  removed: RemovedCitation[];
  usage: RoleUsage;
  warnings: string[];
}

/**
 * Write the sections in outline order (each writer is told the sentences already written, so
 * sections do not repeat each other), each from its top messages fitted to `writerBudgetTokens`,
 * and check every citation (shared/survey/citations.ts).
 */
export async function writeSections(
  topic: string,
  outline: Outline,
  evidence: SectionEvidence[],
  sources: SurveySource[],
  options: Pick<SurveyOptions, 'targetWords' | 'writerBudgetTokens'>,
  model: SurveyModel,
  onSection?: (done: number) => void,
): Promise<WrittenSections> {
  const byId = new Map(sources.map((s) => [s.id, s]));
  const usage: RoleUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const warnings: string[] = [];
  const citations: CitationCounts = { kept: 0, removed: 0, fabricated: 0, unsupported: 0 };
  const removed: RemovedCitation[] = [];
  const sections: SectionResult[] = [];
  const avoid: string[] = [];
  const perSection = wordsPerSection(options.targetWords, outline.sections.length);
  for (const i of outline.sections.keys()) {
    const written = await writeSection(topic, outline, i, evidence[i], byId, perSection, avoid, options, model);
    usage.calls += written.usage.calls;
    usage.inputTokens += written.usage.inputTokens;
    usage.outputTokens += written.usage.outputTokens;
    warnings.push(...written.warnings);
    for (const key of ['kept', 'removed', 'fabricated', 'unsupported'] as const) citations[key] += written.citations[key];
    removed.push(...written.removed);
    avoid.push(...written.sentences);
    sections.push(written.section);
    onSection?.(i + 1);
  }
  return { sections, citations, removed, usage, warnings };
}

/** Words per section: `targetWords` shared by the sections, at least 50. */
export function wordsPerSection(targetWords: number, sections: number): number {
  return Math.max(50, Math.round(targetWords / Math.max(1, sections)));
}

/** One written and checked section (see {@link writeSection}). */
export interface WrittenSection {
  section: SectionResult;
  citations: CitationCounts;
  removed: RemovedCitation[];
  /** The section's sentences without citations: what later writers must not repeat. */
  sentences: string[];
  usage: RoleUsage;
  warnings: string[];
}

/**
 * Write one section from its evidence (the top messages fitted to `writerBudgetTokens`, 16 tokens
 * of overhead per message), told the sentences already written (`avoid`), and check its citations.
 * Used by `writeSections` (in outline order) and by the survey state machine's `WriteSection` task.
 * @param sourcesById every source of the corpus by id (the citation check refuses other ids).
 * @throws the model's typed errors unchanged.
 */
export async function writeSection(
  topic: string,
  outline: Outline,
  section: number,
  evidence: Pick<SectionEvidence, 'messages' | 'relevant' | 'synchronized'>,
  sourcesById: ReadonlyMap<string, SurveySource>,
  targetWords: number,
  avoid: readonly string[],
  options: Pick<SurveyOptions, 'writerBudgetTokens'>,
  model: SurveyModel,
): Promise<WrittenSection> {
  const messages = fitToBudget(evidence.messages, options.writerBudgetTokens, { overheadTokensPerMessage: 16 }).messages;
  const given = [...new Set(messages.flatMap((m) => m.sources))].map((id) => sourcesById.get(id)).filter((s): s is SurveySource => s !== undefined);
  const draft = await model.writeSection({ topic, outline, section, messages, sources: given, targetWords, avoid: [...avoid] });
  const checked = checkCitations(draft.text, { corpusIds: new Set(sourcesById.keys()), messages, section: section + 1 });
  const { heading, scope } = outline.sections[section];
  return {
    section: {
      heading,
      scope,
      text: checked.text,
      words: countWords(checked.text),
      relevantMessages: evidence.relevant,
      synchronized: evidence.synchronized,
      cited: [...new Set(checked.kept.map((k) => k.sourceId))],
    },
    citations: checked.counts,
    removed: checked.removed,
    sentences: splitSentences(checked.text.replace(/\s*\[[^\]]*\]/g, '')).map((s) => s.text),
    usage: draft.usage,
    warnings: draft.warnings,
  };
}

/**
 * Run one survey in-process.
 * @returns the Markdown survey, its metadata, the outline and the sections.
 * @throws ConfigurationError for invalid options; NoEvidenceError when nothing in the corpus is
 *   relevant to the topic; InvalidInputError for an empty topic or corpus; model errors unchanged.
 */
export async function runSurvey(input: SurveyInput, deps: SurveyDeps): Promise<SurveyResult> {
  const options = parseSurveyOptions(input.options);
  const topic = input.topic.trim();
  if (topic === '') throw new InvalidInputError('The survey topic must not be empty');
  if (input.sources.length === 0) throw new InvalidInputError('The survey corpus has no source');
  const progress = deps.onProgress ?? (() => undefined);
  const usage = emptyUsage();
  const warnings: string[] = [];

  const chunks = chunkSources(input.sources, options.chunkTokens);
  let seekDone = 0;
  const first = await seekRound(chunks, { query: topic, round: 1, synchronized: [], idPrefix: 'r1-', concurrency: options.concurrency }, deps.seeker, () =>
    progress({ phase: 'seek', done: ++seekDone, total: chunks.length }),
  );
  addUsage(usage, 'seeker', first.usage);
  warnings.push(...first.warnings);
  const pool = first.messages;

  const outlined = await draftOutline(topic, pool, options, deps.model, (step) =>
    progress({ phase: 'outline', done: 0, total: 0, detail: `k=${step.k} (${step.messagesUsed} messages): ${step.covered ? 'covered' : 'not yet covered'}` }),
  );
  addUsage(usage, 'outliner', outlined.usage);
  warnings.push(...outlined.warnings);
  const { outline } = outlined;

  const limit = pLimit(options.sectionConcurrency);
  let sectionsDone = 0;
  const evidence = await Promise.all(
    outline.sections.map((_, i) =>
      limit(async () => {
        const result = await sectionEvidence(topic, outline, i, pool, chunks, options, deps.seeker);
        progress({ phase: 'section', done: ++sectionsDone, total: outline.sections.length, detail: outline.sections[i].heading });
        return result;
      }),
    ),
  );
  for (const e of evidence) {
    addUsage(usage, 'seeker', e.usage);
    warnings.push(...e.warnings);
  }
  const written = await writeSections(topic, outline, evidence, input.sources, options, deps.model, (done) =>
    progress({ phase: 'write', done, total: outline.sections.length }),
  );
  addUsage(usage, 'writer', written.usage);
  warnings.push(...written.warnings);
  progress({ phase: 'assemble', done: 1, total: 1 });

  const messages = pool.length + evidence.reduce((n, e) => n + e.messages.length - pool.length, 0);
  return assembleSurvey({
    topic,
    outline,
    sections: written.sections,
    sources: input.sources,
    extractive: deps.model.extractive,
    model: deps.model.description,
    createdAt: (deps.now ?? (() => new Date()))().toISOString(),
    options,
    citations: written.citations,
    removed: written.removed,
    skipped: input.skipped ?? 0,
    chunks: chunks.length,
    messages,
    outlineTrace: outlined.trace,
    usage,
    warnings,
  });
}

/** Everything `assembleSurvey` renders. */
export interface AssembleInput {
  topic: string;
  outline: Outline;
  sections: SectionResult[];
  sources: SurveySource[];
  extractive: boolean;
  model: string;
  createdAt: string;
  options: SurveyOptions;
  citations: CitationCounts;
  removed: RemovedCitation[];
  skipped: number;
  chunks: number;
  messages: number;
  outlineTrace: OutlineStep[];
  usage: SurveyUsage;
  warnings: string[];
}

/**
 * Render the survey: Markdown (title, a note when extractive, abstract, numbered sections with
 * their scope, references of the cited sources with authors, year, title and link) and the metadata.
 */
export function assembleSurvey(input: AssembleInput): SurveyResult {
  const byId = new Map(input.sources.map((s) => [s.id, s]));
  const cited = [...new Set(input.sections.flatMap((s) => s.cited))];
  const words = input.sections.reduce((n, s) => n + s.words, 0);
  const lines: string[] = [`# ${input.outline.title}`, ''];
  if (input.extractive) {
    lines.push(
      '> **Extractive survey.** Written by the offline extractive reader, not a language model: every sentence is copied verbatim from the source it cites, selected and ordered by lexical relevance to its section.',
      '',
    );
  }
  lines.push(
    '## Abstract',
    '',
    `This survey of “${input.topic}” draws on ${cited.length} of the ${input.sources.length} sources of its corpus. ` +
      `It is organised in ${input.sections.length} section${input.sections.length === 1 ? '' : 's'}: ${input.sections.map((s) => s.heading).join('; ')}. ` +
      `Every citation was checked against the source it names: ${input.citations.kept} kept, ${input.citations.removed} removed.`,
    '',
  );
  input.sections.forEach((s, i) => {
    lines.push(
      `## ${i + 1}. ${s.heading}`,
      '',
      `*Scope: ${/[.!?]$/.test(s.scope.trim()) ? s.scope.trim() : `${s.scope.trim()}.`}*`,
      '',
      s.text.trim() === '' ? '_No evidence in the corpus matched this section._' : s.text,
      '',
    );
  });
  lines.push('## References', '');
  for (const id of [...cited].sort((a, b) => a.localeCompare(b))) {
    const s = byId.get(id);
    if (s === undefined) continue;
    const who = s.authors !== undefined ? `${s.authors}${s.year !== undefined ? ` (${s.year})` : ''}. ` : s.year !== undefined ? `(${s.year}). ` : '';
    lines.push(`- [${id}] ${who}*${s.title}*.${s.link !== undefined ? ` <${s.link}>` : ''}`);
  }
  const metadata: SurveyMetadata = {
    topic: input.topic,
    title: input.outline.title,
    extractive: input.extractive,
    model: input.model,
    createdAt: input.createdAt,
    options: input.options,
    sections: input.sections.map((s) => ({
      heading: s.heading,
      scope: s.scope,
      words: s.words,
      citations: s.cited.length,
      synchronized: s.synchronized,
      relevantMessages: s.relevantMessages,
    })),
    words,
    citations: input.citations,
    removedCitations: input.removed,
    sources: { available: input.sources.length, cited: cited.length, skipped: input.skipped },
    chunks: input.chunks,
    messages: input.messages,
    outlineTrace: input.outlineTrace,
    usage: input.usage,
    warnings: input.warnings,
  };
  return { markdown: `${lines.join('\n')}\n`, metadata, outline: input.outline, sections: input.sections };
}
