/**
 * The `openai:` provider's dependencies in a Lambda container (`ModelProvider.lambdaDeps`): the
 * server's base URL from OPENAI_BASE_URL (required with an `openai:` spec: `lambdaEnvIssues`) and
 * its API key from Secrets Manager (OPENAI_API_KEY_SECRET; absent for a server without a key). Only
 * the model-calling functions have the secret's variable (and the grant to read it). The read
 * starts at cold start and its result is kept for the container's life (models/openai/openai-key.ts);
 * a failed read is logged without detail beyond the error and retried on first use, where its typed
 * error surfaces.
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { LambdaEnvironment, LambdaHost } from '../port';
import { openAiApiKeyProvider } from './openai-key';
import type { OpenAiDeps } from './options';
import { OPENAI_SERVER } from './traits';

/**
 * Build the provider's Lambda dependencies from the function's environment.
 * @param env the validated environment (lambdas/adapters/env.ts).
 * @param host the container's logger (a failed cold-start read is a warning).
 */
export function openAiLambdaDeps(env: LambdaEnvironment, host: LambdaHost): OpenAiDeps {
  const baseUrl = env[OPENAI_SERVER.baseUrl.env];
  const secret = env[OPENAI_SERVER.apiKeySecret.env];
  const apiKey = typeof secret === 'string' ? openAiApiKeyProvider(new SecretsManagerClient({}), secret) : undefined;
  apiKey?.().catch((error: unknown) => {
    host.warn('Reading the OpenAI API key secret at cold start failed; retrying on first model call', {
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  });
  return { options: typeof baseUrl === 'string' ? { baseUrl } : {}, ...(apiKey !== undefined && { apiKey }) };
}
