/**
 * The survey as a state machine (infra/survey.ts, docs/SURVEY.md "On AWS"): the use-case steps of
 * shared/survey/survey.ts cut into tasks whose state is small and fixed-size (ids, keys, counts;
 * never sources, evidence or prose). Each step reads what it needs from the bucket (`BlobStore`) and
 * the message pool (`MessageStore`), and writes its output under `runs/<surveyId>/survey/`.
 *
 *   SurveyPrepare   corpus -> sources.json, chunks, manifest, survey.json, queries/round-1.json
 *   (SeekSources: the Seek Lambda per chunk, round 1, `task: "survey"`: messages into the pool)
 *   Outline         one outline KAR step (top-k from the pool); the state machine loops, k doubling
 *   PlanSections    re-ranks the round-1 pool per section; a thin section (`needsSectionRound`: fewer
 *                   than `minSectionMessages` relevant messages or too few words in them for its share
 *                   of `targetWords`; `rounds` = 2) gets its own round
 *                   r = 2 + section with a query record, a synchronized context (sync/round-<r>.json)
 *                   and items in the sync manifest (`[{chunk, round}]`)
 *   (SeekSections: the Seek Lambda per item of the sync manifest: all thin sections' rounds at once)
 *   SectionEvidence final re-ranking per section (pool + its round's messages) -> evidence.json
 *   WriteSection    in outline order (told the sentences already written), citation check -> section.json
 *   SurveyAssemble  Markdown + metadata -> surveys/<topic-slug>/<date>/survey.md and survey.json
 *
 * Differences from the in-process `runSurvey`: the synchronized rounds of all thin sections run in
 * one Distributed Map (in-process: one seekRound per section, `sectionConcurrency` at once), and a
 * few seeking agents may fail (`SURVEY_TOLERATED_FAILURE_PERCENTAGE`) instead of failing the survey.
 */
import { batchRoundKey, type BatchRoundRecord } from '../pipeline/seek-batch';
import pLimit from 'p-limit';
import { z } from 'zod';
import { parseRunOptions } from '../config';
import { SEEK_MODES } from '../seek-mode';
import { CORPORA_PREFIX, CorpusRefSchema, resolveCorpusRef } from '../corpus';
import { estimateRun, priceEstimate, type ModelPricing } from '../cost';
import type { RunEstimate } from '../types';
import type { SeekMode } from '../seek-mode';
import { EmptyCorpusError, InvalidInputError } from '../errors';
import { nextK } from '../kar';
import { IO_CONCURRENCY } from '../pipeline/ingest';
import { chunkKey, manifestKey, runPrefix, seekQueryKey, surveyRecordKey, syncKey } from '../pipeline/layout';
import type { SeekQuery } from '../pipeline/run-record';
import { KAR_LOOP_FIELDS, ROUND_STATE_FIELDS, RunIdSchema } from '../pipeline/state';
import { enforceQuota, planRunConcurrency } from '../quota';
import type { Message, ModelQuota, RoleUsage } from '../types';
import type { BlobStore, MessageStore } from '../ports';
import { chunkSources } from './chunking';
import { RECORD_FILE, parseSurveyCorpus, type CorpusFileText } from './corpus';
import { readDocument } from '../readers';
import { parseSurveyOptions } from './options';
import type { SurveyModel } from './ports';
import {
  assembleSurvey,
  countRelevant,
  needsSectionRound,
  noEvidenceError,
  noOutlineError,
  outlineStep,
  rerankForSection,
  sectionQuery,
  sectionSyncContext,
  wordsPerSection,
  writeSection,
  type WrittenSection,
} from './survey';
import type { CitationCounts, Outline, OutlineStep, SurveyOptions, SurveySeekingEstimate, SurveySource, SurveyUsage } from './types';

/** Share of seeking agents (chunks) that may fail before a survey's seeking Map Run fails, percent. */
export const SURVEY_TOLERATED_FAILURE_PERCENTAGE = 5;

/** Prefix of survey outputs and of the schedule (`surveys/schedule.json`, `surveys/index.json`). */
export const SURVEYS_PREFIX = 'surveys/';

/** A topic as a path segment: lower case, letters and digits, hyphen-separated, at most 60 characters. */
export function topicSlug(topic: string): string {
  const slug = topic
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug === '' ? 'survey' : slug;
}

/** Where one survey's outputs go: `surveys/<topic-slug>/<date>/` (date `YYYY-MM-DD`). */
export const surveyOutputPrefix = (topic: string, date: string): string => `${SURVEYS_PREFIX}${topicSlug(topic)}/${date}/`;

// ---------------------------------------------------------------------------------------------
// Layout of a survey run (under runs/<surveyId>/, so it expires with run data)
// ---------------------------------------------------------------------------------------------

const surveyPrefix = (runId: string): string => `${runPrefix(runId)}survey/`;
/** `SurveyRecord`: topic, validated options, corpus, skipped records, output prefix (shared/pipeline/layout.ts). */
export { surveyRecordKey };
/** Every source of the corpus (`SurveySource[]`): the writer's titles and the citation check. */
export const surveySourcesKey = (runId: string): string => `${surveyPrefix(runId)}sources.json`;
/** One outline KAR step (`StoredOutlineStep`), `seq` 0, 1, … */
export const outlineStepKey = (runId: string, seq: number): string => `${surveyPrefix(runId)}outline/step-${String(seq).padStart(4, '0')}.json`;
/** The outline (`Outline`). */
export const outlineKey = (runId: string): string => `${surveyPrefix(runId)}outline.json`;
/** What PlanSections decided per section (`SectionPlan`). */
export const sectionPlanKey = (runId: string): string => `${surveyPrefix(runId)}sections.json`;
/** The one round of SeekSources, whose pool the outline and the section plan read. */
export const SOURCES_ROUND = 1;

/** ItemReader object of SeekSections: `[{chunk, round}]` for every thin section's round and chunk. */
export const syncManifestKey = (runId: string): string => `${surveyPrefix(runId)}sync-manifest.json`;
const sectionPrefix = (runId: string, section: number): string => `${surveyPrefix(runId)}sections/${String(section).padStart(2, '0')}/`;
/** One section's final evidence (`StoredSectionEvidence`). */
export const sectionEvidenceKey = (runId: string, section: number): string => `${sectionPrefix(runId, section)}evidence.json`;
/** One written section (`WrittenSection`). */
export const writtenSectionKey = (runId: string, section: number): string => `${sectionPrefix(runId, section)}section.json`;

// ---------------------------------------------------------------------------------------------
// Execution input, state and events
// ---------------------------------------------------------------------------------------------

/** A date `YYYY-MM-DD` (UTC). */
export const DateSchema = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be YYYY-MM-DD');

/**
 * A survey corpus in the bucket: the API's corpus reference (`{id}`, `{prefix}` or `{keys}`, a
 * string = a corpus id), restricted to `corpora/` (the survey functions may read nothing else).
 */
export const SurveyCorpusSchema = z
  .union([
    z
      .string()
      .min(1)
      .transform((id) => ({ id })),
    CorpusRefSchema,
  ])
  .pipe(CorpusRefSchema)
  .transform((ref) => resolveCorpusRef(ref))
  .refine(
    (c) => (c.prefix !== undefined ? c.prefix.startsWith(CORPORA_PREFIX) : (c.keys ?? []).every((k) => k.startsWith(CORPORA_PREFIX))),
    `a survey corpus must lie under ${CORPORA_PREFIX} (a corpus id, or a prefix or keys under ${CORPORA_PREFIX})`,
  );

/** A survey's topic: trimmed, 1 to 500 characters (every entry: the CLI, the schedule, SurveyPrepare). */
export const TopicSchema = z.string().trim().min(1, 'topic must not be empty').max(500, 'topic must be at most 500 characters');

/** Input of the survey state machine (and of SurveyPrepare). */
export const SurveyExecutionInputSchema = z
  .object({
    /** Run id of the survey (keys under runs/, the pool's partition); also its execution name. */
    surveyId: RunIdSchema,
    topic: TopicSchema,
    corpus: SurveyCorpusSchema,
    /** `SurveyOptionsSchema` fields (shared/survey/options.ts). */
    options: z.record(z.string(), z.unknown()).optional(),
    /** Date of the output folder. @default the day SurveyPrepare runs (UTC) */
    date: DateSchema.optional(),
  })
  .strict();

export type SurveyExecutionInput = z.input<typeof SurveyExecutionInputSchema>;

/** The per-survey settings the state machine reads (Map concurrency, tolerated failures). */
export const SurveyConfigSchema = z
  .object({
    concurrency: z.number().int().min(1),
    sectionConcurrency: z.number().int().min(1),
    toleratedFailurePercentage: z.number().min(0).max(100),
    rounds: z.number().int().min(1),
    /** Survey option `seekMode` (the SurveySeekMode? Choice before SeekSources); on demand for states written before it. */
    seekMode: z.enum(SEEK_MODES).default('on-demand'),
  })
  .strict();

/** The state carried between the survey's states (a few hundred bytes whatever the corpus). */
export const SurveyStateSchema = z
  .object({
    // runId, manifestKey (ItemReader object of SeekSources), chunks; round (of SeekSources, always 1),
    // k, seq and poolSize of the outline's KAR steps: the run's own fields (shared/pipeline/state.ts).
    ...ROUND_STATE_FIELDS,
    ...KAR_LOOP_FIELDS,
    /** Set once the outline is drafted: ends the outline loop. */
    outlineKey: z.string().nullable(),
    /** Sections of the outline (0 before it is drafted). */
    sections: z.number().int().min(0),
    /** `[{section: 0}, …]`: the items of the Sections and WriteSections Maps (at most 20). */
    sectionItems: z.array(z.object({ section: z.number().int().min(0) }).strict()).max(20),
    /** Items of SeekSections (thin sections x chunks); 0 = no synchronized round. */
    syncItems: z.number().int().min(0),
    syncManifestKey: z.string().nullable(),
    /** `surveys/<topic-slug>/<date>/`. */
    outputPrefix: z.string().min(1),
    config: SurveyConfigSchema,
  })
  .strict();

export type SurveyState = z.infer<typeof SurveyStateSchema>;

/** Event of a per-section task (SectionEvidence, WriteSection): the state and the section index. */
export const SectionEventSchema = z.object({ state: SurveyStateSchema, section: z.number().int().min(0) }).strict();
export type SectionEvent = z.infer<typeof SectionEventSchema>;

/** `runs/<surveyId>/survey/survey.json`. */
export interface SurveyRecord {
  surveyId: string;
  topic: string;
  options: SurveyOptions;
  corpus: { keys?: string[]; prefix?: string };
  sources: number;
  skipped: Array<{ where: string; reason: string }>;
  chunks: number;
  createdAt: string;
  outputPrefix: string;
  /** The first seeking round priced before any model call (with the model's pricing). */
  seekingEstimate?: SurveySeekingEstimate;
}

/** One outline step as stored. */
export interface StoredOutlineStep {
  step: OutlineStep;
  usage: RoleUsage;
  warnings: string[];
}

/** `runs/<surveyId>/survey/sections.json`: per section, its relevant messages and its round (null = none). */
export interface SectionPlan {
  sections: Array<{ relevant: number; round: number | null }>;
}

/** One section's evidence as stored: the re-ranked messages (all of them), and the counts. */
export interface StoredSectionEvidence {
  messages: Message[];
  relevant: number;
  synchronized: boolean;
  /** Messages of the section's own synchronized round (counted in the metadata's `messages`). */
  roundMessages: number;
}

/** Output of SurveyAssemble (the execution output). */
export interface SurveyOutput {
  surveyId: string;
  markdownKey: string;
  metadataKey: string;
  words: number;
  citations: number;
}

/** Ports of the survey steps. */
export interface SurveyStepDeps {
  blobs: BlobStore;
  store: MessageStore;
  /** The outline and writer roles, loaded on first use (only the steps that call a model ask for it). */
  model?: () => Promise<SurveyModel>;
  now?: () => Date;
}

const json = (value: unknown): string => `${JSON.stringify(value)}\n`;
const readJson = async <T>(blobs: BlobStore, key: string): Promise<T> => JSON.parse(await blobs.getText(key)) as T;
const emptyRoleUsage = (): RoleUsage => ({ calls: 0, inputTokens: 0, outputTokens: 0 });

async function modelOf(deps: SurveyStepDeps): Promise<SurveyModel> {
  if (!deps.model) throw new InvalidInputError('This survey step needs a survey model');
  return await deps.model();
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

/**
 * SurveyPrepare: read the corpus (every object under the prefix, or the keys), parse it into sources
 * (shared/survey/corpus.ts), pack them into chunks that never split a paper across chunks unless it
 * alone exceeds L (shared/survey/chunking.ts), write the chunks, the manifest, the sources, the
 * survey record and round 1's query (the topic). The seeking Maps' MaxConcurrency (`config.concurrency`)
 * is the survey's `concurrency` or, with a stated quota (the options', else `deps.quota`, the
 * deployment's), what the quota carries (shared/quota.ts, as the QA run's Prepare).
 * @throws ConfigurationError for invalid options; InvalidInputError for a missing key or an empty
 *   prefix; EmptyCorpusError when no record is usable; QuotaExceededError when the stated quota
 *   cannot carry the seeks (nothing written); NotFoundError for an object gone since listed.
 */
export async function prepareSurvey(
  input: z.output<typeof SurveyExecutionInputSchema>,
  deps: Pick<SurveyStepDeps, 'blobs' | 'now'> & { quota?: ModelQuota; pricing?: ModelPricing },
): Promise<SurveyState> {
  const { blobs } = deps;
  const options = parseSurveyOptions(input.options);
  const runId = input.surveyId;
  const prefix = input.corpus.prefix ?? '';
  const keys = input.corpus.keys ?? (await blobs.list(prefix)).map((o) => o.key);
  if (keys.length === 0) throw new InvalidInputError(`No corpus object under prefix "${prefix}"`);
  if (input.corpus.keys) {
    const missing: string[] = [];
    for (const key of keys) if (!(await blobs.exists(key))) missing.push(key);
    if (missing.length > 0) throw new InvalidInputError(`Corpus object(s) not found: ${missing.slice(0, 5).join(', ')}`);
  }
  const limit = pLimit(IO_CONCURRENCY);
  // Paper records are JSON text; every other file is read as `ask` reads it (shared/readers/: HTML,
  // Markdown, PDF, DOCX, plain text), so markup and page chrome never become a source's text.
  const unreadable: Array<{ where: string; reason: string }> = [];
  const read = await Promise.all(
    keys.map((key) =>
      limit(async (): Promise<CorpusFileText | undefined> => {
        const id = key.slice(prefix.length) || key;
        if (RECORD_FILE.test(id)) return { id, text: await blobs.getText(key) };
        const result = await readDocument(id, await blobs.get(key));
        if (!('doc' in result)) {
          unreadable.push({ where: id, reason: result.skipped.reason });
          return undefined;
        }
        const title = result.doc.title ?? (result.doc.format !== undefined ? result.doc.locations?.[0]?.label.split(' › ')[0] : undefined);
        return { id, text: result.doc.text, ...(title !== undefined && { title }) };
      }),
    ),
  );
  const parsed = parseSurveyCorpus(read.filter((f): f is CorpusFileText => f !== undefined));
  const corpus = { ...parsed, skipped: [...unreadable, ...parsed.skipped] };
  if (corpus.sources.length === 0) {
    throw new EmptyCorpusError(
      `The survey corpus has no usable source (${corpus.skipped
        .slice(0, 5)
        .map((s) => `${s.where}: ${s.reason}`)
        .join('; ')})`,
    );
  }
  const chunks = chunkSources(corpus.sources, options.chunkTokens);
  // The seeking Maps' MaxConcurrency under the model's quota, as the QA run's Prepare derives it
  // (shared/quota.ts; a seek's tokens from the cost estimate of one round over these chunks, the
  // topic as the query), and refused here, before anything is written, when the quota cannot carry
  // the seeks at all.
  const estimate = estimateRun({
    chunks: chunks.length,
    chunkTokensTotal: chunks.reduce((sum, c) => sum + c.tokens, 0),
    question: input.topic,
    options: parseRunOptions({ rounds: 1, chunkTokens: options.chunkTokens }),
  });
  const plan = enforceQuota(planRunConcurrency(estimate, { ...options, rounds: 1 }, deps.quota));
  await Promise.all(chunks.map((chunk) => limit(() => blobs.put(chunkKey(runId, chunk.index), json(chunk), 'application/json'))));
  await blobs.put(manifestKey(runId), json(chunks.map((c) => ({ chunk: c.index }))), 'application/json');
  await blobs.put(surveySourcesKey(runId), json(corpus.sources), 'application/json');
  const now = (deps.now ?? (() => new Date()))();
  const outputPrefix = surveyOutputPrefix(input.topic, input.date ?? now.toISOString().slice(0, 10));
  const record: SurveyRecord = {
    surveyId: runId,
    topic: input.topic,
    options,
    corpus: input.corpus,
    sources: corpus.sources.length,
    skipped: corpus.skipped,
    chunks: chunks.length,
    createdAt: now.toISOString(),
    outputPrefix,
    ...(deps.pricing && { seekingEstimate: seekingEstimateOf(estimate, deps.pricing, options.seekMode) }),
  };
  await blobs.put(surveyRecordKey(runId), json(record), 'application/json');
  const query: SeekQuery = { query: input.topic, chunkTokens: options.chunkTokens };
  await blobs.put(seekQueryKey(runId, SOURCES_ROUND), json(query), 'application/json');
  return {
    runId,
    manifestKey: manifestKey(runId),
    chunks: chunks.length,
    round: SOURCES_ROUND,
    k: 1,
    seq: 0,
    poolSize: 0,
    outlineKey: null,
    sections: 0,
    sectionItems: [],
    syncItems: 0,
    syncManifestKey: null,
    outputPrefix,
    config: {
      concurrency: plan.concurrency,
      sectionConcurrency: options.sectionConcurrency,
      toleratedFailurePercentage: SURVEY_TOLERATED_FAILURE_PERCENTAGE,
      rounds: options.rounds,
      seekMode: options.seekMode,
    },
  };
}

/**
 * Outline: one knowledge-accumulating reasoning step over the pool's top-k (`outlineStep`). Covered:
 * the outline is written and `outlineKey`, `sections`, `sectionItems` are set; not covered: k doubles.
 * @throws NoEvidenceError for an empty pool, or when the forced step (whole pool) drafts no outline;
 *   the model's typed errors unchanged (ModelThrottledError, … are retried by the state machine).
 */
export async function outlineSurveyStep(state: SurveyState, deps: SurveyStepDeps): Promise<SurveyState> {
  const { blobs, store } = deps;
  const record = await readJson<SurveyRecord>(blobs, surveyRecordKey(state.runId));
  const poolSize = await store.poolSize(state.runId, SOURCES_ROUND);
  if (poolSize === 0) throw noEvidenceError(record.topic);
  const k = Math.min(state.k, poolSize);
  const result = await outlineStep(record.topic, await store.topK(state.runId, k, SOURCES_ROUND), { k, poolSize }, record.options, await modelOf(deps));
  const stored: StoredOutlineStep = { step: result.step, usage: result.usage, warnings: result.warnings };
  await blobs.put(outlineStepKey(state.runId, state.seq), json(stored), 'application/json');
  const next = { ...state, seq: state.seq + 1, poolSize };
  if (result.outline !== null) {
    await blobs.put(outlineKey(state.runId), json(result.outline), 'application/json');
    const sections = result.outline.sections.length;
    return { ...next, outlineKey: outlineKey(state.runId), sections, sectionItems: Array.from({ length: sections }, (_, section) => ({ section })) };
  }
  if (result.step.forced) throw noOutlineError(record.topic, poolSize);
  return { ...next, k: nextK(k, poolSize).k };
}

/** Every message of one round, in pool order (paged through `listMessages`). */
export async function roundMessages(store: MessageStore, runId: string, round: number): Promise<Message[]> {
  const messages: Message[] = [];
  let after: string | undefined;
  do {
    const page = await store.listMessages(runId, { round, limit: 1000, ...(after !== undefined && { after }) });
    messages.push(...page.messages);
    after = page.next;
  } while (after !== undefined);
  return messages;
}

/** The synchronized round of section `section` (0-based): round 2 + section. */
export const sectionRound = (section: number): number => 2 + section;

/**
 * PlanSections: re-rank the round-1 pool for each section's query; a section with thin evidence
 * (`needsSectionRound`) gets its round (2 + section): a query record, the synchronized context
 * (`sectionSyncContext`: outline + its best messages) and one sync-manifest item per chunk.
 * @returns the state with `syncItems` (0 = no synchronized round) and `syncManifestKey`.
 */
export async function planSurveySections(state: SurveyState, deps: SurveyStepDeps): Promise<SurveyState> {
  const { blobs, store } = deps;
  const runId = state.runId;
  const record = await readJson<SurveyRecord>(blobs, surveyRecordKey(runId));
  const outline = await readJson<Outline>(blobs, outlineKey(runId));
  const pool = await roundMessages(store, runId, SOURCES_ROUND);
  const plan: SectionPlan = { sections: [] };
  const items: Array<{ chunk: number; round: number }> = [];
  for (const i of outline.sections.keys()) {
    const query = sectionQuery(outline, i);
    const ranked = rerankForSection(pool, query, record.topic);
    const relevant = countRelevant(ranked);
    if (!needsSectionRound(ranked, record.options, outline.sections.length)) {
      plan.sections.push({ relevant, round: null });
      continue;
    }
    const round = sectionRound(i);
    const seekQuery: SeekQuery = { query, chunkTokens: record.options.chunkTokens };
    await blobs.put(seekQueryKey(runId, round), json(seekQuery), 'application/json');
    await blobs.put(syncKey(runId, round), json(sectionSyncContext(outline, ranked)), 'application/json');
    plan.sections.push({ relevant, round });
    for (let chunk = 0; chunk < state.chunks; chunk++) items.push({ chunk, round });
  }
  await blobs.put(sectionPlanKey(runId), json(plan), 'application/json');
  await blobs.put(syncManifestKey(runId), json(items), 'application/json');
  return { ...state, syncItems: items.length, syncManifestKey: syncManifestKey(runId) };
}

/**
 * SectionEvidence: the section's final evidence, re-ranked over the round-1 pool and the messages of
 * its own synchronized round (when it had one), written to `evidence.json`.
 * @returns `{section, relevant, synchronized}` (small; the Sections Map discards it).
 */
export async function surveySectionEvidence(event: SectionEvent, deps: SurveyStepDeps): Promise<{ section: number; relevant: number; synchronized: boolean }> {
  const { blobs, store } = deps;
  const { state, section } = event;
  const record = await readJson<SurveyRecord>(blobs, surveyRecordKey(state.runId));
  const outline = await readJson<Outline>(blobs, outlineKey(state.runId));
  const plan = await readJson<SectionPlan>(blobs, sectionPlanKey(state.runId));
  if (section >= outline.sections.length) throw new InvalidInputError(`Section ${section} is not in the outline (${outline.sections.length} sections)`);
  const round = plan.sections[section].round;
  const pool = await roundMessages(store, state.runId, SOURCES_ROUND);
  const own = round === null ? [] : await roundMessages(store, state.runId, round);
  const ranked = rerankForSection([...pool, ...own], sectionQuery(outline, section), record.topic);
  const stored: StoredSectionEvidence = {
    messages: ranked.map((r) => r.message),
    relevant: countRelevant(ranked),
    synchronized: round !== null,
    roundMessages: own.length,
  };
  await blobs.put(sectionEvidenceKey(state.runId, section), json(stored), 'application/json');
  return { section, relevant: stored.relevant, synchronized: stored.synchronized };
}

/**
 * WriteSection: write one section from its evidence, told the sentences of the sections before it
 * (the WriteSections Map runs one section at a time, in outline order), check its citations, and
 * write `section.json`.
 * @throws NotFoundError when an earlier section was not written; the model's typed errors unchanged.
 */
export async function writeSurveySection(event: SectionEvent, deps: SurveyStepDeps): Promise<{ section: number; words: number }> {
  const { blobs } = deps;
  const { state, section } = event;
  const record = await readJson<SurveyRecord>(blobs, surveyRecordKey(state.runId));
  const outline = await readJson<Outline>(blobs, outlineKey(state.runId));
  const sources = await readJson<SurveySource[]>(blobs, surveySourcesKey(state.runId));
  const evidence = await readJson<StoredSectionEvidence>(blobs, sectionEvidenceKey(state.runId, section));
  const avoid: string[] = [];
  for (let earlier = 0; earlier < section; earlier++) avoid.push(...(await readJson<WrittenSection>(blobs, writtenSectionKey(state.runId, earlier))).sentences);
  const written = await writeSection(
    record.topic,
    outline,
    section,
    evidence,
    new Map(sources.map((s) => [s.id, s])),
    wordsPerSection(record.options.targetWords, outline.sections.length),
    avoid,
    record.options,
    await modelOf(deps),
  );
  await blobs.put(writtenSectionKey(state.runId, section), json(written), 'application/json');
  return { section, words: written.section.words };
}

/**
 * SurveyAssemble: gather the outline trace, the written sections (citations already checked per
 * section), the seeking agents' usage and warnings (the run counters), render the survey
 * (`assembleSurvey`) and write `<outputPrefix>survey.md` and `survey.json`.
 */
export async function assembleSurveyRun(state: SurveyState, deps: SurveyStepDeps & { modelDescription: string; extractive: boolean }): Promise<SurveyOutput> {
  const { blobs, store } = deps;
  const runId = state.runId;
  const record = await readJson<SurveyRecord>(blobs, surveyRecordKey(runId));
  const outline = await readJson<Outline>(blobs, outlineKey(runId));
  const sources = await readJson<SurveySource[]>(blobs, surveySourcesKey(runId));
  const steps: StoredOutlineStep[] = [];
  for (let seq = 0; seq < state.seq; seq++) steps.push(await readJson<StoredOutlineStep>(blobs, outlineStepKey(runId, seq)));
  const written: WrittenSection[] = [];
  let extraMessages = 0;
  for (const i of outline.sections.keys()) {
    written.push(await readJson<WrittenSection>(blobs, writtenSectionKey(runId, i)));
    extraMessages += (await readJson<StoredSectionEvidence>(blobs, sectionEvidenceKey(runId, i))).roundMessages;
  }
  const counters = await store.getCounters(runId);
  const usage: SurveyUsage = { seeker: { ...counters.usage.seeker }, outliner: emptyRoleUsage(), writer: emptyRoleUsage() };
  const add = (role: keyof SurveyUsage, u: RoleUsage): void => {
    usage[role].calls += u.calls;
    usage[role].inputTokens += u.inputTokens;
    usage[role].outputTokens += u.outputTokens;
  };
  steps.forEach((s) => add('outliner', s.usage));
  written.forEach((w) => add('writer', w.usage));
  const citations: CitationCounts = { kept: 0, removed: 0, fabricated: 0, unsupported: 0 };
  for (const w of written) for (const key of ['kept', 'removed', 'fabricated', 'unsupported'] as const) citations[key] += w.citations[key];
  const warnings = [...counters.warnings, ...steps.flatMap((s) => s.warnings), ...written.flatMap((w) => w.warnings)];
  if (record.skipped.length > 0)
    warnings.unshift(
      `${record.skipped.length} corpus record(s) skipped, e.g. ${record.skipped
        .slice(0, 3)
        .map((s) => `${s.where}: ${s.reason}`)
        .join('; ')}`,
    );
  const result = assembleSurvey({
    topic: record.topic,
    outline,
    sections: written.map((w) => w.section),
    sources,
    extractive: deps.extractive,
    model: deps.modelDescription,
    createdAt: (deps.now ?? (() => new Date()))().toISOString(),
    options: record.options,
    citations,
    removed: written.flatMap((w) => w.removed),
    skipped: record.skipped.length,
    chunks: record.chunks,
    messages: state.poolSize + extraMessages,
    outlineTrace: steps.map((s) => s.step),
    usage,
    warnings,
  });
  if (record.seekingEstimate) {
    // What the first round's seeking was in fact (shared/pipeline/seek-batch.ts records it per round).
    const round = record.seekingEstimate.mode === 'batch' ? await readJson<BatchRoundRecord>(blobs, batchRoundKey(runId, 1)).catch(() => undefined) : undefined;
    result.metadata.seekingEstimate = {
      ...record.seekingEstimate,
      ...(round !== undefined && { sought: { mode: round.mode, ...(round.reason !== undefined && { reason: round.reason }) } }),
    };
  }
  const markdownKey = `${record.outputPrefix}survey.md`;
  const metadataKey = `${record.outputPrefix}survey.json`;
  await blobs.put(markdownKey, result.markdown, 'text/markdown; charset=utf-8');
  await blobs.put(metadataKey, `${JSON.stringify(result.metadata, null, 2)}\n`, 'application/json');
  return { surveyId: runId, markdownKey, metadataKey, words: result.metadata.words, citations: result.metadata.citations.kept };
}

/**
 * The first seeking round's price in both modes: the seeking agents' share of the round's estimate
 * (one call per chunk), at the on-demand and the batch rate (shared/cost.ts `priceEstimate`).
 */
function seekingEstimateOf(estimate: RunEstimate, pricing: ModelPricing, mode: SeekMode): SurveySeekingEstimate {
  const priced = priceEstimate(estimate, pricing, undefined, mode);
  const onDemand = priced.modes['on-demand'].prices.seeker;
  const batch = priced.modes.batch.prices.seeker;
  const unpriced = !onDemand.priced ? onDemand.reason : !batch.priced ? batch.reason : undefined;
  const dated = onDemand.priced ? onDemand : batch.priced ? batch : undefined;
  return {
    mode,
    calls: estimate.seeker.calls,
    inputTokens: estimate.seeker.inputTokens,
    outputTokens: estimate.seeker.outputTokens,
    ...(onDemand.priced && { onDemandUsd: onDemand.usd }),
    ...(batch.priced && { batchUsd: batch.usd }),
    ...(unpriced !== undefined && { unpriced }),
    ...(dated && { priceNote: `prices of ${dated.asOf}, ${dated.verified ? 'verified' : 'unverified'}` }),
  };
}
