/**
 * Local surveys (docs/SURVEY.md "Locally"): put a corpus from disk into the local bucket under
 * `corpora/<surveyId>/`, run the synthesized survey state machine on the local stack (local/engine/stack.ts:
 * the same definition and handlers as on AWS), and copy the Markdown and its JSON metadata it wrote
 * under `surveys/<topic-slug>/<date>/` to the requested path; run a schedule of surveys (each one an
 * execution of the survey state machine, as the bulk machine starts them) and write an index. Nothing
 * here talks to AWS unless the model spec names Bedrock.
 */
import { readFileSync } from 'node:fs';
import { batchRoundKey, type BatchRoundRecord } from '../../shared/pipeline/seek-batch';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { SurveyProgress } from '../../shared/survey/survey';
import type { SurveyMetadata } from '../../shared/survey/types';
import { scheduledSurveyOptions, type BucketIndexEntry } from '../../shared/survey/schedule';
import type { SurveyOutput, SurveyState } from '../../shared/survey/workflow';
import type { SeekBatchEvent, SeekBatchOutcome } from '../../shared/pipeline/state';
import { FsBlobStore } from './fs-blob-store';
import type { BlobStore } from '../../shared/ports';
import { corpusPrefix } from '../../shared/corpus';
import { putCorpusFile, resolveCorpus, type CorpusFile } from './corpus';
// The public stack types (what the library's callers have), so the package's declarations stay off the engine's.
import type { ExecutionCallbacks, LocalStack } from './stack-api';
import { topicSlug } from '../../shared/survey/workflow';
import { parseJsonText } from '../../shared/pipeline/state';

/**
 * Progress of a local survey, from the survey execution's callbacks: `prepare` (chunks written),
 * `seek` (a seeking Distributed Map's items: `detail` = the Map state, SeekSources or SeekSections;
 * `failed` items so far), `outline` (one KAR step), `section` / `write` (one section's evidence or
 * text), `assemble`.
 */
export interface LocalSurveyProgress {
  phase: SurveyProgress['phase'] | 'prepare';
  /** Units done and in all (chunks or items for seek, KAR steps for outline, sections for section / write). */
  done: number;
  total: number;
  /** Failed items of the seeking Map Run so far (seek only). */
  failed?: number;
  detail?: string;
}

/** One local survey. */
export interface LocalSurveyRequest {
  /**
   * Corpus arguments as for `extagents ask` (files, directories, corpus ids of the stack's state
   * directory, globs: local/engine/corpus.ts), or files already resolved (`resolveCorpus`).
   */
  corpus: readonly string[] | readonly CorpusFile[];
  topic: string;
  /** `SurveyOptionsSchema` fields (shared/survey/options.ts), validated by SurveyPrepare. */
  options?: Record<string, unknown>;
  /** Markdown output path; the metadata goes next to it with the extension `.json`. */
  output: string;
  /** Directory corpus arguments are relative to. */
  cwd?: string;
  /** Survey id (the execution's run id, keys under `runs/` and `corpora/`). Default {@link newSurveyId}. */
  surveyId?: string;
  /** Date of the bucket's output folder `surveys/<slug>/<date>/` (YYYY-MM-DD). Default: today (UTC). */
  date?: string;
  onProgress?: (progress: LocalSurveyProgress) => void;
  signal?: AbortSignal;
}

/** What a local survey wrote. */
export interface LocalSurveyOutput {
  markdownPath: string;
  metadataPath: string;
  markdown: string;
  metadata: SurveyMetadata;
  /** The survey execution's output (keys in the local bucket, words, citations). */
  execution: SurveyOutput;
}

/** A fresh survey id: `survey-<UTC yyyymmddThhmmss>-<6 hex>`. */
export function newSurveyId(now: Date = new Date()): string {
  return `survey-${now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}-${randomBytes(3).toString('hex')}`;
}

/**
 * Read the corpus files into the local bucket (`corpora/<surveyId>/<file id>`: the source ids are the
 * file ids, as `ask` names documents), run one execution of the survey state machine, copy its
 * `survey.md` to `output` and its `survey.json` to `<output without .md>.json`.
 * @param stack a started local stack (local/engine/stack.ts); not stopped here.
 * @throws InvalidInputError for a corpus argument that matches nothing or an invalid survey id / topic;
 *   ConfigurationError for bad options; EmptyCorpusError for a corpus without usable sources;
 *   NoEvidenceError when nothing is relevant; ExecutionFailedError when too many seeking agents
 *   failed; model errors (after the state machine's retries).
 */
export async function runLocalSurvey(request: LocalSurveyRequest, stack: LocalStack): Promise<LocalSurveyOutput> {
  const files = request.corpus.every((c): c is string => typeof c === 'string')
    ? await resolveCorpus([...request.corpus], request.cwd, { stateDir: stack.stateDir })
    : [...(request.corpus as readonly CorpusFile[])];
  const surveyId = request.surveyId ?? newSurveyId();
  const prefix = corpusPrefix(surveyId);
  await Promise.all(files.map((f) => putCorpusFile(stack.blobs, prefix + f.id, f)));
  const execution = await stack.executeSurvey(
    {
      surveyId,
      topic: request.topic,
      corpus: { prefix },
      ...(request.options !== undefined && { options: request.options }),
      ...(request.date !== undefined && { date: request.date }),
    },
    surveyCallbacks(request.onProgress, request.signal, stack.blobs),
  );
  const markdown = await stack.blobs.getText(execution.markdownKey);
  const metadataText = await stack.blobs.getText(execution.metadataKey);
  const markdownPath = path.resolve(request.output);
  const metadataPath = markdownPath.replace(/\.(md|markdown)$/i, '') + '.json';
  await fs.mkdir(path.dirname(markdownPath), { recursive: true });
  await fs.writeFile(markdownPath, markdown);
  await fs.writeFile(metadataPath, metadataText);
  return { markdownPath, metadataPath, markdown, metadata: JSON.parse(metadataText) as SurveyMetadata, execution };
}

/** The survey execution's callbacks as progress: Map Run items, and each survey task's result. */
function surveyCallbacks(
  onProgress: ((progress: LocalSurveyProgress) => void) | undefined,
  signal: AbortSignal | undefined,
  blobs: BlobStore,
): ExecutionCallbacks {
  if (!onProgress) return { signal };
  let seek = { detail: '', done: 0, failed: 0, total: 0 };
  let sections = 0;
  let evidence = 0;
  let written = 0;
  return {
    signal,
    onMapRunStarted: (event) => {
      seek = { detail: event.stateName, done: 0, failed: 0, total: event.totalItems };
      onProgress({ phase: 'seek', ...seek });
    },
    onItemDone: (_index, ok) => {
      seek.done += 1;
      if (!ok) seek.failed += 1;
      onProgress({ phase: 'seek', ...seek });
    },
    onTaskDone: (name, event, result) => {
      if (name === 'seek' && typeof event === 'object' && event !== null && 'seekBatch' in event) {
        // Batch seeking of the first round (seekMode 'batch'): what the job is doing.
        const outcome = result as SeekBatchOutcome;
        // A round its submit ended at once was sought on demand (too few chunks for a batch job): said, with why.
        const onDemand =
          outcome.status === 'done' && (event as SeekBatchEvent).seekBatch === 'submit' ? onDemandReason(blobs, event as SeekBatchEvent) : undefined;
        const detail =
          onDemand !== undefined
            ? `sought on demand: ${onDemand}`
            : outcome.status === 'done'
              ? `batch records read; ${outcome.remaining} chunk(s) left for on-demand seeking`
              : `batch job ${outcome.status}`;
        onProgress({ phase: 'seek', detail, done: 0, failed: 0, total: outcome.remaining });
      } else if (name === 'SurveyPrepare') {
        const state = result as SurveyState;
        onProgress({ phase: 'prepare', done: state.chunks, total: state.chunks, detail: `${state.chunks} chunks` });
      } else if (name === 'SurveyAssemble') {
        onProgress({ phase: 'assemble', done: 1, total: 1 });
      } else if (name === 'SurveySteps') {
        const step = (event as { step?: string; state?: SurveyState }).step;
        if (step === 'outline') {
          const before = (event as { state: SurveyState }).state;
          const after = result as SurveyState;
          sections = after.sections;
          onProgress({
            phase: 'outline',
            done: after.seq,
            total: after.seq,
            detail: `k=${before.k} (pool of ${after.poolSize}): ${after.outlineKey === null ? 'not yet covered' : `outline of ${after.sections} sections`}`,
          });
        } else if (step === 'sectionEvidence') {
          const r = result as { section: number; relevant?: number; synchronized?: boolean };
          onProgress({
            phase: 'section',
            done: ++evidence,
            total: sections,
            detail: `section ${r.section + 1}: ${r.relevant ?? 0} relevant messages${r.synchronized ? ', synchronized round' : ''}`,
          });
        } else if (step === 'writeSection') {
          const r = result as { section: number; words?: number };
          onProgress({ phase: 'write', done: ++written, total: sections, detail: `section ${r.section + 1}: ${r.words ?? 0} words` });
        }
      }
    },
  };
}

/** A schedule of surveys (`surveys/schedule.json` in the bucket; a file locally). */
export const ScheduleSchema = z
  .object({
    surveys: z
      .array(
        z
          .object({
            topic: z.string().trim().min(1).max(500),
            /** A path or a list of paths (files, directories, globs), relative to the schedule file. */
            corpus: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
            options: z.record(z.string(), z.unknown()).optional(),
          })
          .strict(),
      )
      .min(1)
      .max(1000),
  })
  .strict();

export type Schedule = z.infer<typeof ScheduleSchema>;

/**
 * One entry of the index a local schedule run writes: an entry of `surveys/index.json` without the
 * survey id, its `markdown` and `metadata` paths relative to the output directory.
 */
export type ScheduleIndexEntry = Omit<BucketIndexEntry, 'surveyId'>;

/** The index of a schedule run (`surveys/index.json`). */
export interface ScheduleIndex {
  createdAt: string;
  surveys: ScheduleIndexEntry[];
}

/** A topic as a path segment (one implementation with the survey state machine's output keys). */
export { topicSlug } from '../../shared/survey/workflow';

/**
 * Parse a schedule file's text.
 * @throws InvalidInputError naming each invalid field.
 */
export function parseSchedule(text: string, where: string): Schedule {
  return parseJsonText(ScheduleSchema, text, where, '(schedule)');
}

/**
 * Run every survey of a schedule, one at a time (a failure is recorded and the rest go on), each an
 * execution of the survey state machine on `stack` (the bulk state machine, whose RunSurvey task is
 * `startExecution.sync`, is emulated here), writing `<outDir>/surveys/<topic-slug>/<date>/survey.md`
 * (+ `survey.json`) and `<outDir>/surveys/index.json`.
 * @param stack a started local stack; not stopped here.
 * @param hooks `onSurvey` is called before each survey (index, total, topic); `now` gives the date.
 * @returns the index.
 * @throws InvalidInputError for an invalid schedule file.
 */
export async function runLocalSchedule(
  schedulePath: string,
  outDir: string,
  stack: LocalStack,
  hooks: { onSurvey?: (index: number, total: number, topic: string) => void; onProgress?: (progress: LocalSurveyProgress) => void; now?: () => Date } = {},
): Promise<{ index: ScheduleIndex; indexPath: string }> {
  const schedule = parseSchedule(await fs.readFile(schedulePath, 'utf8'), schedulePath);
  const now = hooks.now ?? (() => new Date());
  const date = now().toISOString().slice(0, 10);
  const entries: ScheduleIndexEntry[] = [];
  for (const [i, entry] of schedule.surveys.entries()) {
    hooks.onSurvey?.(i + 1, schedule.surveys.length, entry.topic);
    const relative = `surveys/${topicSlug(entry.topic)}/${date}/survey.md`;
    try {
      const { metadata } = await runLocalSurvey(
        {
          corpus: typeof entry.corpus === 'string' ? [entry.corpus] : entry.corpus,
          topic: entry.topic,
          options: scheduledSurveyOptions(entry.options),
          output: path.join(outDir, relative),
          cwd: path.dirname(path.resolve(schedulePath)),
          date,
          onProgress: hooks.onProgress,
        },
        stack,
      );
      entries.push({
        topic: entry.topic,
        status: 'succeeded',
        markdown: relative,
        metadata: relative.replace(/\.md$/, '.json'),
        words: metadata.words,
        citations: metadata.citations.kept,
      });
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      entries.push({ topic: entry.topic, status: 'failed', error: { name: e.name, message: e.message } });
    }
  }
  const index: ScheduleIndex = { createdAt: now().toISOString(), surveys: entries };
  const indexPath = path.join(outDir, 'surveys', 'index.json');
  await fs.mkdir(path.dirname(indexPath), { recursive: true });
  await fs.writeFile(indexPath, `${JSON.stringify(index, null, 2)}\n`);
  return { index, indexPath };
}

/** Why a round was sought on demand, from its batch round record (read at once: the callback is synchronous), or undefined. */
function onDemandReason(blobs: BlobStore, event: SeekBatchEvent): string | undefined {
  if (!(blobs instanceof FsBlobStore)) return undefined;
  try {
    const round = JSON.parse(readFileSync(blobs.pathOf(batchRoundKey(event.runId, event.round)), 'utf8')) as BatchRoundRecord;
    return round.mode === 'on-demand' ? (round.reason ?? 'no batch job') : undefined;
  } catch {
    return undefined;
  }
}
