/**
 * Environment of the workflow's Lambdas, validated once at cold start (lambdas/adapters/lambda-env.ts).
 */
import { z } from 'zod';
import { parseModelSpec, type ModelSpec } from '../../shared/llm/model-spec';
import { SEEK_QUOTA_ENV, loadLambdaEnv } from './lambda-env';

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
    /** The deployment's quota of the seeking model (lambda-env.ts `SEEK_QUOTA_ENV`). */
    ...SEEK_QUOTA_ENV,
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
  return loadLambdaEnv(EnvSchema, source);
}
