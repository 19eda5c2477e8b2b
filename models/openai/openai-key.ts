/**
 * The API key of the OpenAI-compatible server, read from AWS Secrets Manager (the secret named by
 * OPENAI_API_KEY_SECRET, set by the stack from CDK context `openaiApiKeySecretName`) once per Lambda
 * container. The key never appears in a log line or an error message: errors name the secret and
 * the SDK error, nothing of the value.
 *
 * The secret's value is the key itself (plain text), or a JSON object with an `apiKey` or
 * `OPENAI_API_KEY` string field (the console's key/value form).
 * Source: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
import {
  GetSecretValueCommand,
  InternalServiceError,
  type SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { ConfigurationError, ModelUnavailableError } from '../../shared/errors';
import type { ApiKeyProvider } from '../port';

export type { ApiKeyProvider } from '../port';

/**
 * Read the key once: GetSecretValue on `secretId` (a secret name or ARN).
 * @throws ConfigurationError when the secret is missing, not readable by this function (access
 *   denied, KMS decryption refused), binary, empty, or JSON without an `apiKey`/`OPENAI_API_KEY` field.
 * @throws ModelUnavailableError when Secrets Manager failed transiently after the SDK's own retries
 *   (InternalServiceError, throttling, network): the model cannot be called yet, and the workflow
 *   retries that error name.
 */
export async function readOpenAiApiKey(client: SecretsManagerClient, secretId: string): Promise<string> {
  let secretString: string | undefined;
  try {
    ({ SecretString: secretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId })));
  } catch (error) {
    const name = error instanceof Error ? error.name : 'unknown error';
    if (isTransient(error)) {
      throw new ModelUnavailableError(`OpenAI-compatible model: could not read the API key secret "${secretId}" (OPENAI_API_KEY_SECRET) from Secrets Manager: ${name}`, { cause: error });
    }
    throw new ConfigurationError(
      `OpenAI-compatible model: cannot read the API key secret "${secretId}" (OPENAI_API_KEY_SECRET): ${name}. Check that the secret exists in this account and region and that the function may read it (CDK context openaiApiKeySecretName)`,
      { cause: error },
    );
  }
  const key = apiKeyOf(secretString);
  if (key === undefined) {
    throw new ConfigurationError(
      `OpenAI-compatible model: the secret "${secretId}" (OPENAI_API_KEY_SECRET) holds no API key: store the key as plain text, or as JSON with an "apiKey" or "OPENAI_API_KEY" string field`,
    );
  }
  return key;
}

/**
 * A provider that reads the key on first use and keeps it for the container's life. A failed read
 * is not kept: the next call (the workflow's retry, or the next invocation) reads again.
 */
export function openAiApiKeyProvider(client: SecretsManagerClient, secretId: string): ApiKeyProvider {
  let pending: Promise<string> | undefined;
  return () => {
    pending ??= readOpenAiApiKey(client, secretId).catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

/** Failures worth retrying later: Secrets Manager's own 5xx and throttling, and any non-service (network) error. */
function isTransient(error: unknown): boolean {
  if (error instanceof InternalServiceError) return true;
  if (error instanceof SecretsManagerServiceException) return error.name === 'ThrottlingException' || error.$fault === 'server';
  return true;
}

/** The key in a SecretString (plain text or a JSON object's `apiKey`/`OPENAI_API_KEY`), undefined when there is none. */
function apiKeyOf(secretString: string | undefined): string | undefined {
  const text = secretString?.trim() ?? '';
  if (text === '') return undefined;
  if (!text.startsWith('{')) return text;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const fields = parsed as { apiKey?: unknown; OPENAI_API_KEY?: unknown };
    const key = typeof fields.apiKey === 'string' ? fields.apiKey : fields.OPENAI_API_KEY;
    return typeof key === 'string' && key.trim() !== '' ? key.trim() : undefined;
  } catch {
    // Not JSON after all (a key that starts with "{"): use it as is.
    return text;
  }
}
