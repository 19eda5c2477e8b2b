/**
 * Environment of the workflow's Lambdas, validated once at cold start (lambdas/adapters/lambda-env.ts).
 */
import { z } from 'zod';
import { lambdaEnvIssues } from '../../models';
import { SEEK_QUOTA_ENV, loadLambdaEnv } from './lambda-env';

// A loose object: the model provider's own variables (e.g. OPENAI_BASE_URL of an `openai:` spec)
// pass through, validated by the provider (`lambdaEnvIssues`) and read by it (`lambdaDeps`).
const EnvSchema = z
  .looseObject({
    /** DynamoDB table of messages and runs. */
    TABLE_NAME: z.string().min(1),
    /** The project bucket (corpora, runs). */
    BUCKET_NAME: z.string().min(1),
    /** The model spec (models/spec.ts), e.g. `bedrock:<seekerModelId>[,<reasonerModelId>]`; its provider validates its own variables. */
    MODEL_SPEC: z.string().min(1),
    /** Days run data is kept (DynamoDB TTL). */
    RUN_RETENTION_DAYS: z.coerce.number().positive().default(30),
    /** The deployment's quota of the seeking model (lambda-env.ts `SEEK_QUOTA_ENV`). */
    ...SEEK_QUOTA_ENV,
    /**
     * ARN of the Bedrock batch service role (infra/batch-inference.ts), set only on the Seek function
     * of a `bedrock:` spec: batch seeking (run option `seekMode: 'batch'`) submits its jobs with it.
     * Absent = no batch service: such runs seek on demand and say so.
     */
    BATCH_ROLE_ARN: z
      .string()
      .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/, 'must be an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)')
      .optional(),
  })
  .superRefine((env, ctx) => {
    let issues;
    try {
      issues = lambdaEnvIssues(env.MODEL_SPEC, env);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['MODEL_SPEC'], message: error instanceof Error ? error.message : String(error) });
      return;
    }
    for (const issue of issues) ctx.addIssue({ code: 'custom', path: [issue.variable], message: issue.message });
  });

export type LambdaEnv = z.infer<typeof EnvSchema>;

/**
 * Read and validate the environment.
 * @throws ConfigurationError naming each missing or invalid variable, or for an invalid MODEL_SPEC.
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): LambdaEnv {
  return loadLambdaEnv(EnvSchema, source);
}
