/**
 * The workflow's state and the events of its Lambda tasks (docs/ARCHITECTURE.md, "Workflow").
 * The state is small and fixed-size whatever the corpus size: ids, keys and counts only, never chunk
 * text or evidence (Step Functions limits a state payload to 256 KiB).
 * Shapes are validated with zod at the handler boundary; a bad event is an InvalidInputError.
 */
import { z } from 'zod';
import { InvalidInputError } from '../errors';
import { issuesText } from '../validation';
import { CorpusSelectionSchema } from '../corpus';
import { SEEK_MODES } from '../seek-mode';

/** Run ids become S3 key parts, DynamoDB keys and execution names: a safe, bounded alphabet. */
/**
 * Error of a Distributed Map whose failed items exceed its tolerated failure percentage (no
 * constant for it in CDK's `sfn.Errors`): what the workflows catch, and what the local engine maps
 * to the run's seeking failure.
 * Source: https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html
 */
export const EXCEED_TOLERATED_FAILURE_THRESHOLD = 'States.ExceedToleratedFailureThreshold';

export const RunIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/, 'runId must be 1-80 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)');

/** The per-run settings the state machine itself reads (Choice rules, Distributed Map paths). */
export const WorkflowConfigSchema = z
  .object({
    rounds: z.number().int().min(1),
    concurrency: z.number().int().min(1),
    toleratedFailurePercentage: z.number().min(0).max(100),
    bestEffort: z.boolean(),
    /** Run option `pipelineRounds`: seek round r+1 speculatively while KAR of round r runs. */
    pipelineRounds: z.boolean(),
    /**
     * The most chunks a round covers (shared/coverage.ts): the chunk count for `coverage: 'full'`,
     * min(`coverageMaxChunks`, chunks) for `grow`. `covered < coverageCap` after a refusal at every k
     * grows the coverage (GrowCoverage).
     */
    coverageCap: z.number().int().min(0),
    /** Run option `karFirstK`: k of each round's (and each grown tranche's) first KAR step; 1 for states written before it. */
    karFirstK: z.number().int().min(1).default(1),
    /** Run option `seekMode` (the SeekMode? Choice before each round's seeking); on demand for states written before it. */
    seekMode: z.enum(SEEK_MODES).default('on-demand'),
  })
  .strict();

/**
 * The fields the run's and the survey's state share: the run, the seeking Map's items, and the KAR
 * loop (shared/kar.ts `nextK`) over the pool. One definition, spread into `WorkflowStateSchema` and
 * the survey's `SurveyStateSchema` (shared/survey/workflow.ts).
 */
export const ROUND_STATE_FIELDS = {
  runId: RunIdSchema,
  /** Key of the Distributed Map's ItemReader object (a JSON array of `{chunk}` items). */
  manifestKey: z.string().min(1),
  /** Number of chunks. */
  chunks: z.number().int().min(0),
};

/** The KAR loop's fields of a state (see {@link ROUND_STATE_FIELDS}). */
export const KAR_LOOP_FIELDS = {
  /** Current round, 1-based. */
  round: z.number().int().min(1),
  /** k of the next KAR step (1, 2, 4, …). */
  k: z.number().int().min(1),
  /** Number of KAR steps recorded so far (all rounds). */
  seq: z.number().int().min(0),
  /** Messages in the pool at the last KAR step (0 before the first step of a round). */
  poolSize: z.number().int().min(0),
};

/** The state carried between the workflow's states. */
export const WorkflowStateSchema = z
  .object({
    ...ROUND_STATE_FIELDS,
    /**
     * Chunks each round seeks so far: the first `covered` chunks of the coverage order (all of them,
     * `chunks`, for `coverage: 'full'`). Every read of the pool is bounded by it (resume).
     */
    covered: z.number().int().min(0),
    ...KAR_LOOP_FIELDS,
    /** Outcome of the last KAR step, null before the first step of a round. */
    outcome: z.enum(['answered', 'refused', 'filtered']).nullable(),
    /** True when the last KAR step already covered the whole pool (or all the budget allows). */
    exhausted: z.boolean(),
    config: WorkflowConfigSchema,
  })
  .strict();

export type WorkflowState = z.infer<typeof WorkflowStateSchema>;

/** Longest question, characters. */
export const MAX_QUESTION_CHARS = 8000;

/**
 * A pattern matching any character that is not ECMAScript white space or a line terminator (the
 * characters `String.prototype.trim` removes, ECMA-262 sections 12.2 and 12.3), spelled out because
 * `\S` differs between regex engines (Python's, which API testers use, keeps U+FEFF).
 */
const NOT_ONLY_WHITESPACE = '[^\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]';

/**
 * A question (of a run, a job file's question, an API request): trimmed, 1 to
 * {@link MAX_QUESTION_CHARS} characters. Its JSON Schema states the trim as a `pattern`: at least one
 * character that `String.prototype.trim` keeps.
 */
export const QuestionSchema = z
  .string()
  .trim()
  .min(1, 'question must not be empty')
  .max(MAX_QUESTION_CHARS, `question must be at most ${MAX_QUESTION_CHARS} characters`)
  .meta({ pattern: NOT_ONLY_WHITESPACE });

/** Input of the Prepare task (and of the state machine execution). */
export const PrepareEventSchema = z
  .object({
    runId: RunIdSchema,
    question: QuestionSchema,
    corpus: CorpusSelectionSchema,
    options: z.unknown().optional(),
  })
  .strict();

export type PrepareEvent = z.infer<typeof PrepareEventSchema>;

/**
 * Input of one Seek task (one Distributed Map item after ItemSelector). `task` (absent = `qa`) says
 * where the seeking agent's query comes from: `qa` the run record's question (`runs/<runId>/run.json`,
 * written by Prepare), `survey` the round's query record (`runs/<runId>/queries/round-<r>.json`,
 * written by the survey state machine: the topic in round 1, a section's heading and scope in its
 * synchronized round; infra/survey.ts).
 */
export const SeekEventSchema = z
  .object({
    runId: RunIdSchema,
    round: z.number().int().min(1),
    chunk: z.number().int().min(0),
    task: z.enum(['qa', 'survey']).optional(),
    /**
     * True for the seeking agents of a speculative round (`pipelineRounds`: round r+1 sought while
     * KAR of round r runs). Informational (logs, traces): a seek's usage is in its record either way,
     * and Finalize reports the rounds sought after the run's last one as `RunResult.usage.speculative`.
     */
    speculative: z.boolean().optional(),
    /**
     * The run's coverage when this chunk is sought (the state's `covered`; absent for survey runs):
     * recorded with the chunk's message, so that the pool's reads at a smaller coverage (a resumed
     * grow run replaying an earlier tranche) leave it out.
     */
    covered: z.number().int().min(1).optional(),
  })
  .strict();

/**
 * Event of the batch seeking tasks (SubmitSeekBatch, CheckSeekBatch: the Seek function; run option
 * `seekMode: 'batch'`, shared/pipeline/seek-batch.ts): the round to seek and where its chunks are
 * listed (the seeking Map's ItemReader object).
 */
export const SeekBatchEventSchema = z
  .object({
    seekBatch: z.enum(['submit', 'check']),
    runId: RunIdSchema,
    round: z.number().int().min(1),
    manifestKey: z.string().min(1),
    task: z.enum(['qa', 'survey']).optional(),
    /** As `SeekEventSchema.covered`. */
    covered: z.number().int().min(1).optional(),
  })
  .strict();

export type SeekBatchEvent = z.infer<typeof SeekBatchEventSchema>;

/**
 * What SubmitSeekBatch and CheckSeekBatch return (to `$.seekBatch` of the state, removed before the
 * next task): `waiting` (a job still runs: wait `waitSeconds`, then check again), `collecting` (the
 * jobs ended and their records are being read, a page per task: check again at once) or `done`
 * (`remaining` chunks of the round are still unsought: the seeking Map seeks them on demand; 0 skips it).
 */
export const SeekBatchOutcomeSchema = z
  .object({
    status: z.enum(['waiting', 'collecting', 'done']),
    waitSeconds: z.number().int().min(0),
    remaining: z.number().int().min(0),
  })
  .strict();

export type SeekBatchOutcome = z.infer<typeof SeekBatchOutcomeSchema>;

export type SeekEvent = z.infer<typeof SeekEventSchema>;

/** Output of one Seek task: tiny, so that Map results never approach payload limits. */
export interface SeekOutcome {
  chunk: number;
  outcome: 'message' | 'none' | 'already-done';
}

/** Input of the Reason task: the state, and whether this is the forced best-effort answer. */
export const ReasonEventSchema = z
  .object({
    state: WorkflowStateSchema,
    force: z.boolean(),
  })
  .strict();

export type ReasonEvent = z.infer<typeof ReasonEventSchema>;

/**
 * Input of the GrowCoverage task (the Synchronize function, infra/extagents-workflow.ts): the state
 * after a refusal at every k with `covered < config.coverageCap`.
 */
export const GrowCoverageEventSchema = z
  .object({
    growCoverage: WorkflowStateSchema,
  })
  .strict();

/** Input of the Synchronize function: the state (the Synchronize task), or a GrowCoverage event. */
export const SynchronizeEventSchema = z.union([GrowCoverageEventSchema, WorkflowStateSchema]);

export type SynchronizeEvent = z.infer<typeof SynchronizeEventSchema>;

/** Output of Finalize (the execution output). */
export interface FinalizeOutput {
  runId: string;
  answerable: boolean;
  resultKey: string;
}

/**
 * Validate an event against a schema.
 * @throws InvalidInputError naming every invalid field.
 */
export function parseEvent<T>(schema: z.ZodType<T>, event: unknown, what: string): T {
  const result = schema.safeParse(event);
  if (!result.success) {
    const detail = result.error.issues.map((issue) => `${issue.path.join('.') || '(event)'}: ${issue.message}`).join('; ');
    throw new InvalidInputError(`Invalid ${what} event: ${detail}`);
  }
  return result.data;
}

/**
 * Parse JSON text and validate it against a schema (schedule files, job files, …).
 * @param where names the text in messages (a file name or key).
 * @throws InvalidInputError `<where>: not valid JSON (…)`, or `<where>: <path>: <issue>; …` naming
 *   every invalid field (`fallbackPath` stands for the root).
 */
export function parseJsonText<T>(schema: z.ZodType<T>, text: string, where: string, fallbackPath: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`${where}: not valid JSON (${(error as Error).message})`, { cause: error });
  }
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new InvalidInputError(`${where}: ${issuesText(result.error, fallbackPath)}`);
  }
  return result.data;
}
