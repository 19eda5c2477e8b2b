/**
 * Local surveys (docs/SURVEY.md): read a corpus from disk, run the survey use case in-process
 * (shared/survey/survey.ts) and write the Markdown and its JSON metadata; run a schedule of surveys
 * and write an index. Nothing here talks to AWS unless the model spec names Bedrock.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { InvalidInputError } from '../shared/errors';
import { parseSurveyCorpus } from '../shared/survey/corpus';
import type { SurveyModel } from '../shared/survey/ports';
import { runSurvey, type SurveyProgress } from '../shared/survey/survey';
import type { SurveyResult } from '../shared/survey/types';
import type { AgentModel } from '../shared/ports';
import { resolveCorpus } from './corpus';
import { topicSlug } from '../shared/survey/workflow';

/** The models of a local survey. */
export interface LocalSurveyModels {
  seeker: AgentModel;
  model: SurveyModel;
}

/** One local survey. */
export interface LocalSurveyRequest {
  /** Corpus arguments (files, directories, globs) as for `extagents ask`. */
  corpus: string[];
  topic: string;
  options?: unknown;
  /** Markdown output path; the metadata goes next to it with the extension `.json`. */
  output: string;
  /** Directory corpus arguments are relative to. */
  cwd?: string;
  onProgress?: (progress: SurveyProgress) => void;
  now?: () => Date;
}

/** Paths written by a local survey. */
export interface LocalSurveyOutput {
  markdownPath: string;
  metadataPath: string;
  result: SurveyResult;
}

/**
 * Read the corpus, run the survey, write `output` (Markdown) and `<output without .md>.json`.
 * @throws InvalidInputError for a corpus argument that matches nothing or a corpus without sources;
 *   ConfigurationError for bad options; NoEvidenceError when nothing is relevant; model errors.
 */
export async function runLocalSurvey(request: LocalSurveyRequest, models: LocalSurveyModels): Promise<LocalSurveyOutput> {
  const files = await resolveCorpus(request.corpus, request.cwd);
  const texts = await Promise.all(files.map(async (f) => ({ id: f.id, text: await fs.readFile(f.path, 'utf8') })));
  const corpus = parseSurveyCorpus(texts);
  if (corpus.sources.length === 0) {
    throw new InvalidInputError(`The survey corpus has no usable source (${corpus.skipped.slice(0, 5).map((s) => `${s.where}: ${s.reason}`).join('; ')})`);
  }
  const result = await runSurvey(
    { topic: request.topic, sources: corpus.sources, options: request.options, skipped: corpus.skipped.length },
    { seeker: models.seeker, model: models.model, onProgress: request.onProgress, now: request.now },
  );
  if (corpus.skipped.length > 0) result.metadata.warnings.unshift(`${corpus.skipped.length} corpus record(s) skipped, e.g. ${corpus.skipped.slice(0, 3).map((s) => `${s.where}: ${s.reason}`).join('; ')}`);
  const markdownPath = path.resolve(request.output);
  const metadataPath = markdownPath.replace(/\.(md|markdown)$/i, '') + '.json';
  await fs.mkdir(path.dirname(markdownPath), { recursive: true });
  await fs.writeFile(markdownPath, result.markdown);
  await fs.writeFile(metadataPath, `${JSON.stringify(result.metadata, null, 2)}\n`);
  return { markdownPath, metadataPath, result };
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

/** One entry of the index a schedule run writes. */
export interface ScheduleIndexEntry {
  topic: string;
  status: 'succeeded' | 'failed';
  /** Markdown and metadata paths (succeeded), relative to the output directory. */
  markdown?: string;
  metadata?: string;
  words?: number;
  citations?: number;
  /** Error name and message (failed). */
  error?: { name: string; message: string };
}

/** The index of a schedule run (`surveys/index.json`). */
export interface ScheduleIndex {
  createdAt: string;
  surveys: ScheduleIndexEntry[];
}

/** A topic as a path segment (one implementation with the survey state machine's output keys). */
export { topicSlug } from '../shared/survey/workflow';

/**
 * Parse a schedule file's text.
 * @throws InvalidInputError naming each invalid field.
 */
export function parseSchedule(text: string, where: string): Schedule {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`${where}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
  const result = ScheduleSchema.safeParse(value);
  if (!result.success) throw new InvalidInputError(`${where}: ${result.error.issues.map((i) => `${i.path.join('.') || '(schedule)'}: ${i.message}`).join('; ')}`);
  return result.data;
}

/**
 * Run every survey of a schedule, one at a time (a failure is recorded and the rest go on), writing
 * `<outDir>/surveys/<topic-slug>/<date>/survey.md` (+ `survey.json`) and `<outDir>/surveys/index.json`.
 * @param onSurvey called before each survey (index, total, topic).
 * @returns the index.
 * @throws InvalidInputError for an invalid schedule file.
 */
export async function runLocalSchedule(
  schedulePath: string,
  outDir: string,
  models: LocalSurveyModels,
  hooks: { onSurvey?: (index: number, total: number, topic: string) => void; onProgress?: (progress: SurveyProgress) => void; now?: () => Date } = {},
): Promise<{ index: ScheduleIndex; indexPath: string }> {
  const schedule = parseSchedule(await fs.readFile(schedulePath, 'utf8'), schedulePath);
  const now = hooks.now ?? (() => new Date());
  const date = now().toISOString().slice(0, 10);
  const entries: ScheduleIndexEntry[] = [];
  for (const [i, entry] of schedule.surveys.entries()) {
    hooks.onSurvey?.(i + 1, schedule.surveys.length, entry.topic);
    const relative = `surveys/${topicSlug(entry.topic)}/${date}/survey.md`;
    try {
      const { result } = await runLocalSurvey(
        {
          corpus: typeof entry.corpus === 'string' ? [entry.corpus] : entry.corpus,
          topic: entry.topic,
          options: entry.options,
          output: path.join(outDir, relative),
          cwd: path.dirname(path.resolve(schedulePath)),
          onProgress: hooks.onProgress,
          now,
        },
        models,
      );
      entries.push({ topic: entry.topic, status: 'succeeded', markdown: relative, metadata: relative.replace(/\.md$/, '.json'), words: result.metadata.words, citations: result.metadata.citations.kept });
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
