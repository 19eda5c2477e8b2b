/**
 * Lambda environment, validated once at cold start with a message naming each bad variable
 * (no placeholder defaults that would hide a missing value).
 */
import { z } from 'zod';
import { ConfigurationError } from '../../shared/errors';
import { parseModelSpec, type ModelSpec } from '../../shared/llm/model-spec';
import { issuesText } from '../../shared/validation';

const EnvSchema = z
  .object({
    /** DynamoDB table of messages and runs. */
    TABLE_NAME: z.string().min(1),
    /** The project bucket (corpora, runs). */
    BUCKET_NAME: z.string().min(1),
    /** `extractive`, `bedrock:<seekerModelId>[,<reasonerModelId>]` or `openai:<model>[,<reasonerModel>]`. */
    MODEL_SPEC: z.string().min(1),
    /** Days run data is kept (DynamoDB TTL). */
    RUN_RETENTION_DAYS: z.coerce.number().positive().default(30),
    /** API root of the OpenAI-compatible server (required with an `openai:` spec; CDK context openaiBaseUrl). */
    OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * Name (or ARN) of the Secrets Manager secret holding the server's API key (CDK context
     * openaiApiKeySecretName); set only on the functions that call the model and may read it.
     */
    OPENAI_API_KEY_SECRET: z.string().min(1).optional(),
  })
  .superRefine((env, ctx) => {
    let kind: ModelSpec['kind'];
    try {
      kind = parseModelSpec(env.MODEL_SPEC).kind;
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['MODEL_SPEC'], message: error instanceof Error ? error.message : String(error) });
      return;
    }
    if (kind === 'llama') {
      ctx.addIssue({ code: 'custom', path: ['MODEL_SPEC'], message: 'llama: models run only in local commands, not in Lambda' });
    }
    if (kind === 'openai' && env.OPENAI_BASE_URL === undefined) {
      ctx.addIssue({ code: 'custom', path: ['OPENAI_BASE_URL'], message: 'required with an openai: MODEL_SPEC (CDK context openaiBaseUrl)' });
    }
  });

export type LambdaEnv = z.infer<typeof EnvSchema>;

/**
 * Read and validate the environment.
 * @throws ConfigurationError naming each missing or invalid variable, or for an invalid MODEL_SPEC.
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): LambdaEnv {
  const result = EnvSchema.safeParse(source);
  if (!result.success) {
    const detail = issuesText(result.error);
    throw new ConfigurationError(`Invalid Lambda environment: ${detail}`);
  }
  return result.data;
}
