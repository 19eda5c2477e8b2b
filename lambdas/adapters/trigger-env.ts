/**
 * Environment of the upload-trigger Lambdas (ingest, job planning and results), validated once at
 * cold start with a message naming each bad variable. Separate from env.ts: these functions use
 * neither the run table nor a model.
 */
import { z } from 'zod';
import { ConfigurationError } from '../../shared/errors';
import { issuesText } from '../../shared/validation';

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
  STATE_MACHINE_ARN: z.string().regex(/^arn:[^:]+:states:[^:]+:\d{12}:stateMachine:[^:]+$/, 'must be a state machine ARN'),
});

export type IngestEnv = z.infer<typeof IngestEnvSchema>;
export type JobsEnv = z.infer<typeof JobsEnvSchema>;

function load<T>(schema: z.ZodType<T>, source: NodeJS.ProcessEnv): T {
  const result = schema.safeParse(source);
  if (!result.success) {
    const detail = issuesText(result.error);
    throw new ConfigurationError(`Invalid Lambda environment: ${detail}`);
  }
  return result.data;
}

/** @throws ConfigurationError naming each missing or invalid variable. */
export const loadIngestEnv = (source: NodeJS.ProcessEnv = process.env): IngestEnv => load(IngestEnvSchema, source);
/** @throws ConfigurationError naming each missing or invalid variable. */
export const loadJobsEnv = (source: NodeJS.ProcessEnv = process.env): JobsEnv => load(JobsEnvSchema, source);
