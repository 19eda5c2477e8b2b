/**
 * The API key of the OpenAI-compatible server, read from AWS Secrets Manager (the secret named by
 * OPENAI_API_KEY_SECRET, set by the stack from CDK context `openaiApiKeySecretName`) with Powertools
 * parameters' `SecretsProvider` (the provider behind `getSecret`, given the container's client): the
 * value is cached for {@link OPENAI_API_KEY_MAX_AGE_SECONDS} and then read again, so a rotated key
 * reaches a warm container within that time. The key never appears in a log line or an error
 * message: errors name the secret and the SDK error, nothing of the value.
 *
 * The secret's value is the key itself (plain text), or a JSON object with an `apiKey` or
 * `OPENAI_API_KEY` string field (the console's key/value form).
 * Sources: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html,
 * https://docs.aws.amazon.com/powertools/typescript/latest/features/parameters/
 */
import { InternalServiceError, type SecretsManagerClient, SecretsManagerServiceException } from '@aws-sdk/client-secrets-manager';
import { GetParameterError } from '@aws-lambda-powertools/parameters';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { ConfigurationError, ModelUnavailableError } from '../../shared/errors';
import type { ApiKeyProvider } from './options';

export type { ApiKeyProvider } from './options';

/**
 * Seconds a read key is kept before Secrets Manager is asked again (Powertools' `maxAge`; its
 * default is 5). Five minutes: a rotated key is used within five minutes, and a busy container
 * reads the secret at most 12 times an hour.
 */
export const OPENAI_API_KEY_MAX_AGE_SECONDS = 300;

/**
 * Read the key now, uncached: GetSecretValue on `secretId` (a secret name or ARN).
 * @throws ConfigurationError when the secret is missing, not readable by this function (access
 *   denied, KMS decryption refused), binary, empty, or JSON without an `apiKey`/`OPENAI_API_KEY` field.
 * @throws ModelUnavailableError when Secrets Manager failed transiently after the SDK's own retries
 *   (InternalServiceError, throttling, network): the model cannot be called yet, and the workflow
 *   retries that error name.
 */
export async function readOpenAiApiKey(client: SecretsManagerClient, secretId: string): Promise<string> {
  return readKey(new SecretsProvider({ awsSdkV3Client: client }), secretId, 0);
}

/**
 * A provider of the key for a container: reads it on first use, serves it from the cache for
 * `maxAgeSeconds`, then reads it again. Calls made while a read is under way share that read. A
 * failed read is not kept: the next call (the workflow's retry, or the next invocation) reads again.
 * @param options.maxAgeSeconds seconds a key is cached. @default {@link OPENAI_API_KEY_MAX_AGE_SECONDS}
 * Errors of a read: as {@link readOpenAiApiKey}.
 */
export function openAiApiKeyProvider(client: SecretsManagerClient, secretId: string, options: { maxAgeSeconds?: number } = {}): ApiKeyProvider {
  const secrets = new SecretsProvider({ awsSdkV3Client: client });
  const maxAge = options.maxAgeSeconds ?? OPENAI_API_KEY_MAX_AGE_SECONDS;
  let pending: Promise<string> | undefined;
  return () => {
    // Powertools caches a value once read, not a read under way: concurrent first calls share one.
    pending ??= readKey(secrets, secretId, maxAge).finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

/** One read through the provider's cache (maxAge 0: no cache), its failures as the project's errors. */
async function readKey(secrets: SecretsProvider, secretId: string, maxAge: number): Promise<string> {
  let value: string | Uint8Array | undefined;
  try {
    value = await secrets.get(secretId, { maxAge });
  } catch (error) {
    // Powertools wraps the SDK's exception in a GetParameterError whose cause is the exception.
    const sdkError = error instanceof GetParameterError && error.cause !== undefined ? error.cause : error;
    const name = sdkError instanceof Error ? sdkError.name : 'unknown error';
    if (isTransient(sdkError)) {
      throw new ModelUnavailableError(
        `OpenAI-compatible model: could not read the API key secret "${secretId}" (OPENAI_API_KEY_SECRET) from Secrets Manager: ${name}`,
        { cause: sdkError },
      );
    }
    throw new ConfigurationError(
      `OpenAI-compatible model: cannot read the API key secret "${secretId}" (OPENAI_API_KEY_SECRET): ${name}. Check that the secret exists in this account and region and that the function may read it (CDK context openaiApiKeySecretName)`,
      { cause: sdkError },
    );
  }
  const key = typeof value === 'string' ? apiKeyOf(value) : undefined;
  if (key === undefined) {
    throw new ConfigurationError(
      `OpenAI-compatible model: the secret "${secretId}" (OPENAI_API_KEY_SECRET) holds no API key: store the key as plain text, or as JSON with an "apiKey" or "OPENAI_API_KEY" string field`,
    );
  }
  return key;
}

/** Failures worth retrying later: Secrets Manager's own 5xx and throttling, and any non-service (network) error. */
function isTransient(error: unknown): boolean {
  if (error instanceof InternalServiceError) return true;
  if (error instanceof SecretsManagerServiceException) return error.name === 'ThrottlingException' || error.$fault === 'server';
  return true;
}

/** The key in a SecretString (plain text or a JSON object's `apiKey`/`OPENAI_API_KEY`), undefined when there is none. */
function apiKeyOf(secretString: string): string | undefined {
  const text = secretString.trim();
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
