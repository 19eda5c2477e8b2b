/**
 * Environment of the upload-trigger Lambdas (ingest, job planning and results), validated once at
 * cold start (lambdas/adapters/lambda-env.ts). Separate from env.ts: these functions use neither
 * the run table nor a model.
 */
import { z } from 'zod';
import { StateMachineArnSchema, loadLambdaEnv } from './lambda-env';
import { SEEK_MODES } from '../../shared/seek-mode';

const IngestEnvSchema = z.object({
  /** The project bucket. */
  BUCKET_NAME: z.string().min(1),
  /** L of the chunks ingestion caches (tokens); runs with this `chunkTokens` reuse them. */
  INGEST_CHUNK_TOKENS: z.coerce.number().int().min(64).max(200_000),
});

const JobsEnvSchema = z.object({
  /** The project bucket. */
  BUCKET_NAME: z.string().min(1),
  /** ARN of the question-answering state machine (the questions' executions are looked up there). */
  STATE_MACHINE_ARN: StateMachineArnSchema,
  /** Run option `seekMode` of a job's questions whose options name none (`batch` with a bedrock: model; infra/ingest.ts). */
  JOB_SEEK_MODE: z.enum(SEEK_MODES).optional(),
});

export type IngestEnv = z.infer<typeof IngestEnvSchema>;
export type JobsEnv = z.infer<typeof JobsEnvSchema>;

/** @throws ConfigurationError naming each missing or invalid variable. */
export const loadIngestEnv = (source: NodeJS.ProcessEnv = process.env): IngestEnv => loadLambdaEnv(IngestEnvSchema, source);
/** @throws ConfigurationError naming each missing or invalid variable. */
export const loadJobsEnv = (source: NodeJS.ProcessEnv = process.env): JobsEnv => loadLambdaEnv(JobsEnvSchema, source);
