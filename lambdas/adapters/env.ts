/**
 * Lambda environment, validated once at cold start with a message naming each bad variable
 * (no placeholder defaults that would hide a missing value).
 */
import { z } from 'zod';
import { ConfigurationError } from '../../shared/errors';

const EnvSchema = z.object({
  /** DynamoDB table of messages and runs. */
  TABLE_NAME: z.string().min(1),
  /** The project bucket (corpora, runs). */
  BUCKET_NAME: z.string().min(1),
  /** `extractive` or `bedrock:<seekerModelId>[,<reasonerModelId>]`. */
  MODEL_SPEC: z.string().min(1),
  /** Days run data is kept (DynamoDB TTL). */
  RUN_RETENTION_DAYS: z.coerce.number().positive().default(30),
});

export type LambdaEnv = z.infer<typeof EnvSchema>;

/**
 * Read and validate the environment.
 * @throws ConfigurationError naming each missing or invalid variable.
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): LambdaEnv {
  const result = EnvSchema.safeParse(source);
  if (!result.success) {
    const detail = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigurationError(`Invalid Lambda environment: ${detail}`);
  }
  return result.data;
}
