/**
 * Bulk surveys in the bucket (docs/SURVEY.md "Schedule"): `surveys/schedule.json`
 * (`{surveys: [{topic, corpus, options?}]}`, validated with zod) is planned into one execution of
 * the survey state machine per entry (PlanSurveys), the bulk state machine runs them
 * (`startExecution.sync:2`, bounded concurrency, one failure does not stop the rest) and
 * WriteSurveyIndex writes `surveys/index.json` with each survey's status and location.
 *
 * Exactly-once starts: an entry's execution name (its survey id) is derived from the date, the
 * entry's index and a hash of the entry, so a second delivery of the same scheduled run on the same
 * day starts nothing twice (`ExecutionAlreadyExists`), while an edited entry is a new survey.
 */
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { z } from 'zod';
import { InvalidInputError, errorFromFailure } from '../errors';
import { IO_CONCURRENCY } from '../pipeline/ingest';
import type { ExecutionLookup } from '../executions';
import type { BlobStore } from '../ports';
import { parseJsonText } from '../pipeline/state';
import type { SurveyMetadata } from './types';
import { DateSchema, SURVEYS_PREFIX, SurveyCorpusSchema, surveyOutputPrefix, TopicSchema, topicSlug, type SurveyExecutionInput } from './workflow';
import { SurveyOptionsSchema } from './options';
import { issuesText } from '../validation';

/** The schedule object the bulk state machine reads. */
export const SCHEDULE_KEY = `${SURVEYS_PREFIX}schedule.json`;
/** The index the bulk state machine writes. */
export const INDEX_KEY = `${SURVEYS_PREFIX}index.json`;
/** Most surveys one schedule may hold. */
export const MAX_SCHEDULED_SURVEYS = 100;

/** Folder of one bulk run's planning objects (under runs/, so they expire with run data). */
export const bulkStatePrefix = (bulkId: string): string => `runs/_surveys/${bulkId}/`;
/** The bulk state machine's ItemReader object: `SurveyItem[]`. */
export const bulkItemsKey = (bulkId: string): string => `${bulkStatePrefix(bulkId)}items.json`;

/** `surveys/schedule.json` in the bucket: corpus = a corpus id or `{id}|{prefix}|{keys}` under corpora/. */
export const BucketScheduleSchema = z
  .object({
    surveys: z
      .array(
        z
          .object({
            topic: TopicSchema,
            corpus: SurveyCorpusSchema,
            options: SurveyOptionsSchema.partial().optional(),
          })
          .strict(),
      )
      .min(1, 'a schedule needs at least one survey')
      .max(MAX_SCHEDULED_SURVEYS, `a schedule holds at most ${MAX_SCHEDULED_SURVEYS} surveys`),
  })
  .strict();

/** Input of the bulk state machine (the schedule's target input): the date of the outputs. */
export const BulkInputSchema = z.object({ date: DateSchema.optional() }).passthrough();

/** One planned survey: its execution name (= survey id), output location and execution input. */
export interface SurveyItem {
  index: number;
  topic: string;
  executionName: string;
  /** `surveys/<topic-slug>/<date>/`. */
  outputPrefix: string;
  input: SurveyExecutionInput;
}

/** What PlanSurveys returns (the bulk state). */
export interface BulkPlan {
  bulkId: string;
  date: string;
  itemsKey: string;
  surveys: number;
}

/**
 * Parse the schedule's text.
 * @throws InvalidInputError naming each invalid field (`surveys.1.corpus: …`).
 */
export function parseBucketSchedule(text: string, where: string): z.output<typeof BucketScheduleSchema> {
  return parseJsonText(BucketScheduleSchema, text, where, '(schedule)');
}

/**
 * PlanSurveys: read and validate `surveys/schedule.json`, write one item per survey.
 * @param event the bulk execution input (`{date?}`; default: today, UTC).
 * @throws InvalidInputError for an invalid schedule or input; NotFoundError when there is no schedule.
 */
export async function planSurveys(event: unknown, deps: { blobs: BlobStore; now?: () => Date }): Promise<BulkPlan> {
  const input = BulkInputSchema.safeParse(event ?? {});
  if (!input.success) throw new InvalidInputError(`Invalid bulk survey input: ${issuesText(input.error, '(input)')}`);
  const text = await deps.blobs.getText(SCHEDULE_KEY);
  const schedule = parseBucketSchedule(text, SCHEDULE_KEY);
  const date = input.data.date ?? (deps.now ?? (() => new Date()))().toISOString().slice(0, 10);
  const bulkId = `${date}-${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
  const items: SurveyItem[] = schedule.surveys.map((entry, index) => {
    const hash = createHash('sha256').update(JSON.stringify(entry)).digest('hex').slice(0, 8);
    // At most 80 characters: 10 (date) + 1 + 2 (index) + 1 + 8 (hash) + 1 + 40 (slug).
    const executionName = `${date}-${String(index).padStart(2, '0')}-${hash}-${topicSlug(entry.topic).slice(0, 40).replace(/-+$/, '')}`;
    const corpus = entry.corpus.prefix !== undefined ? { prefix: entry.corpus.prefix } : { keys: entry.corpus.keys ?? [] };
    return {
      index,
      topic: entry.topic,
      executionName,
      outputPrefix: surveyOutputPrefix(entry.topic, date),
      input: { surveyId: executionName, topic: entry.topic, corpus, options: scheduledSurveyOptions(entry.options), date },
    };
  });
  await deps.blobs.put(bulkItemsKey(bulkId), `${JSON.stringify(items)}\n`, 'application/json');
  return { bulkId, date, itemsKey: bulkItemsKey(bulkId), surveys: items.length };
}

/** One entry of `surveys/index.json` (the local schedule runner's index has the same entries without `surveyId`). */
export interface BucketIndexEntry {
  topic: string;
  surveyId: string;
  status: 'succeeded' | 'failed';
  /** Markdown and metadata keys in the bucket (succeeded). */
  markdown?: string;
  metadata?: string;
  words?: number;
  citations?: number;
  /** Error name and message (failed). */
  error?: { name: string; message: string };
}

/** `surveys/index.json`. */
export interface BucketIndex {
  createdAt: string;
  date: string;
  surveys: BucketIndexEntry[];
}

/**
 * WriteSurveyIndex: each planned survey's status (succeeded when its metadata object exists,
 * otherwise failed with the error of its execution) written to `surveys/index.json`.
 */
export async function writeSurveyIndex(
  plan: BulkPlan,
  deps: { blobs: BlobStore; executions: ExecutionLookup; now?: () => Date },
): Promise<{ indexKey: string; succeeded: number; failed: number }> {
  const { blobs } = deps;
  const items = JSON.parse(await blobs.getText(plan.itemsKey)) as SurveyItem[];
  const limit = pLimit(IO_CONCURRENCY);
  const entries = await Promise.all(
    items.map((item) =>
      limit(async (): Promise<BucketIndexEntry> => {
        const markdown = `${item.outputPrefix}survey.md`;
        const metadata = `${item.outputPrefix}survey.json`;
        const base = { topic: item.topic, surveyId: item.executionName };
        if (await blobs.exists(metadata)) {
          const m = JSON.parse(await blobs.getText(metadata)) as SurveyMetadata;
          return { ...base, status: 'succeeded', markdown, metadata, words: m.words, citations: m.citations.kept };
        }
        const execution = await deps.executions.describe(item.executionName);
        if (execution === undefined)
          return {
            ...base,
            status: 'failed',
            error: { name: 'ExecutionNotStarted', message: `The survey execution was never started, so it wrote no ${metadata}` },
          };
        const error =
          execution.error !== undefined
            ? (errorFromFailure(execution.error, execution.cause ?? '') ?? { name: execution.error, message: execution.cause ?? '' })
            : undefined;
        return {
          ...base,
          status: 'failed',
          error: error
            ? { name: error.name, message: error.message }
            : { name: execution.status, message: `The survey execution ended ${execution.status} without writing ${metadata}` },
        };
      }),
    ),
  );
  const index: BucketIndex = { createdAt: (deps.now ?? (() => new Date()))().toISOString(), date: plan.date, surveys: entries };
  await blobs.put(INDEX_KEY, `${JSON.stringify(index, null, 2)}\n`, 'application/json');
  return {
    indexKey: INDEX_KEY,
    succeeded: entries.filter((e) => e.status === 'succeeded').length,
    failed: entries.filter((e) => e.status === 'failed').length,
  };
}

/**
 * A scheduled survey's options: its entry's, with `seekMode: 'batch'` unless the entry says otherwise
 * (work nobody waits for: the first seeking round as batch jobs, about half the price; a corpus below
 * the model's minimum record count is sought on demand and the survey says so). The bucket's schedule
 * and a local `survey --schedule` alike.
 */
export function scheduledSurveyOptions<T extends Record<string, unknown>>(options: T | undefined): T & { seekMode: unknown } {
  return { seekMode: SCHEDULED_SURVEY_SEEK_MODE, ...(options ?? ({} as T)) } as T & { seekMode: unknown };
}

/** The seeking mode of a scheduled survey whose entry names none. */
export const SCHEDULED_SURVEY_SEEK_MODE = 'batch' as const;
