/**
 * Unit tests of the OpenAI API key read from Secrets Manager (models/openai/openai-key.ts) and of
 * the OpenAI-compatible chat model that waits for it (models/openai/keyed.ts).
 */
import {
  GetSecretValueCommand,
  InternalServiceError,
  ResourceNotFoundException,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { ConfigurationError, ModelUnavailableError } from '../../shared/errors';
import { loadEnv } from '../../lambdas/adapters/env';
import { createOpenAiChatModel, KeyedOpenAiChatModel } from '../../models/openai/keyed';
import { OPENAI_API_KEY_MAX_AGE_SECONDS, openAiApiKeyProvider, readOpenAiApiKey } from '../../models/openai/openai-key';

const SECRET_ID = 'extagents/openai-api-key';
const KEY = 'sk-test-0123456789';
const secrets = mockClient(SecretsManagerClient);

beforeEach(() => {
  secrets.reset();
});
afterEach(() => {
  jest.useRealTimers();
});

describe('reading the OpenAI API key from Secrets Manager', () => {
  it('reads a plain-text secret by the configured name', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand, { SecretId: SECRET_ID }).resolves({ SecretString: `${KEY}\n` });
    // Act
    const key = await readOpenAiApiKey(new SecretsManagerClient({}), SECRET_ID);
    // Assert
    expect(key).toBe(KEY);
  });

  it('reads the apiKey or OPENAI_API_KEY field of a JSON secret', async () => {
    // Arrange
    secrets
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: JSON.stringify({ apiKey: KEY }) })
      .resolvesOnce({ SecretString: JSON.stringify({ OPENAI_API_KEY: KEY }) });
    const client = new SecretsManagerClient({});
    // Act and Assert
    await expect(readOpenAiApiKey(client, SECRET_ID)).resolves.toBe(KEY);
    await expect(readOpenAiApiKey(client, SECRET_ID)).resolves.toBe(KEY);
  });

  it('refuses a secret without a key, naming the secret but never its value', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ token: KEY }) });
    // Act
    const read = readOpenAiApiKey(new SecretsManagerClient({}), SECRET_ID);
    // Assert
    await expect(read).rejects.toThrow(ConfigurationError);
    await expect(read).rejects.toThrow(/"extagents\/openai-api-key" \(OPENAI_API_KEY_SECRET\) holds no API key/);
    await expect(read).rejects.not.toThrow(KEY);
  });

  it('turns a missing secret into a ConfigurationError (never retried)', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).rejects(new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} }));
    // Act
    const read = readOpenAiApiKey(new SecretsManagerClient({}), SECRET_ID);
    // Assert
    await expect(read).rejects.toThrow(ConfigurationError);
    await expect(read).rejects.toThrow(/ResourceNotFoundException/);
  });

  it('refuses a binary secret, naming the secret', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).resolves({ SecretBinary: new TextEncoder().encode(KEY) });
    // Act
    const read = readOpenAiApiKey(new SecretsManagerClient({}), SECRET_ID);
    // Assert
    await expect(read).rejects.toThrow(ConfigurationError);
    await expect(read).rejects.toThrow(/"extagents\/openai-api-key" \(OPENAI_API_KEY_SECRET\) holds no API key/);
  });

  it('turns throttling into a ModelUnavailableError naming the SDK error, with the SDK error as its cause', async () => {
    // Arrange
    const throttled = new SecretsManagerServiceException({ name: 'ThrottlingException', $fault: 'client', message: 'Rate exceeded', $metadata: {} });
    secrets.on(GetSecretValueCommand).rejects(throttled);
    // Act
    const error = await readOpenAiApiKey(new SecretsManagerClient({}), SECRET_ID).catch((e: unknown) => e);
    // Assert
    expect(error).toBeInstanceOf(ModelUnavailableError);
    expect((error as Error).message).toBe(
      'OpenAI-compatible model: could not read the API key secret "extagents/openai-api-key" (OPENAI_API_KEY_SECRET) from Secrets Manager: ThrottlingException',
    );
    expect((error as Error).cause).toBe(throttled);
  });

  it('turns a Secrets Manager failure into a ModelUnavailableError (retried by the workflow)', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).rejects(new InternalServiceError({ message: 'internal', $metadata: {} }));
    // Act and Assert
    await expect(readOpenAiApiKey(new SecretsManagerClient({}), SECRET_ID)).rejects.toThrow(ModelUnavailableError);
  });
});

describe('the key provider of a container', () => {
  it('reads the secret once, however often the key is asked for', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).resolves({ SecretString: KEY });
    const provider = openAiApiKeyProvider(new SecretsManagerClient({}), SECRET_ID);
    // Act
    const keys = await Promise.all([provider(), provider(), provider()]);
    // Assert
    expect(keys).toEqual([KEY, KEY, KEY]);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('keeps the key for the max age, then reads the secret again (a rotated key is used)', async () => {
    // Arrange
    const rotated = 'sk-test-rotated';
    secrets.on(GetSecretValueCommand).resolvesOnce({ SecretString: KEY }).resolves({ SecretString: rotated });
    // Only the clock is faked (Powertools' cache compares Date times); timers and ticks run as usual.
    jest.useFakeTimers({
      now: Date.parse('2025-01-01T00:00:00Z'),
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
    });
    const provider = openAiApiKeyProvider(new SecretsManagerClient({}), SECRET_ID);
    // Act
    const first = await provider();
    jest.setSystemTime(Date.now() + (OPENAI_API_KEY_MAX_AGE_SECONDS - 1) * 1000);
    const cached = await provider();
    jest.setSystemTime(Date.now() + 2000);
    const refreshed = await provider();
    // Assert
    expect([first, cached, refreshed]).toEqual([KEY, KEY, rotated]);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('reads again after a failed read instead of keeping the failure', async () => {
    // Arrange
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(new InternalServiceError({ message: 'internal', $metadata: {} }))
      .resolves({ SecretString: KEY });
    const provider = openAiApiKeyProvider(new SecretsManagerClient({}), SECRET_ID);
    // Act and Assert
    await expect(provider()).rejects.toThrow(ModelUnavailableError);
    await expect(provider()).resolves.toBe(KEY);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });
});

describe('an OpenAI-compatible chat model with a key from Secrets Manager', () => {
  it('sends the secret key as the bearer token, reading the secret once', async () => {
    // Arrange
    secrets.on(GetSecretValueCommand).resolves({ SecretString: KEY });
    const authorizations: Array<string | null> = [];
    const fetchStub: typeof fetch = async (_input, init) => {
      authorizations.push(new Headers(init?.headers).get('authorization'));
      return new Response(
        JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } }),
        {
          status: 200,
          headers: { 'content-type': 'application/json' },
        },
      );
    };
    const provider = openAiApiKeyProvider(new SecretsManagerClient({}), SECRET_ID);
    const model = createOpenAiChatModel('llama3', { baseUrl: 'https://llm.example.com/v1', fetch: fetchStub }, provider);
    // Act
    await model.complete({ role: 'seeker', system: 'be brief', messages: [{ role: 'user', text: 'hi' }], maxTokens: 8 });
    await model.complete({ role: 'seeker', system: 'be brief', messages: [{ role: 'user', text: 'again' }], maxTokens: 8 });
    // Assert
    expect(model).toBeInstanceOf(KeyedOpenAiChatModel);
    expect(authorizations).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('checks the base URL at construction, before any secret is read', () => {
    // Arrange
    const provider = openAiApiKeyProvider(new SecretsManagerClient({}), SECRET_ID);
    // Act and Assert
    expect(() => createOpenAiChatModel('llama3', { baseUrl: 'ftp://llm.example.com' }, provider)).toThrow(ConfigurationError);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });
});

describe('the Lambda environment of an openai: model spec', () => {
  const base = { TABLE_NAME: 'table', BUCKET_NAME: 'bucket', MODEL_SPEC: 'openai:llama3' };

  it('requires OPENAI_BASE_URL, naming the variable and the CDK context that sets it', () => {
    expect(() => loadEnv(base)).toThrow(ConfigurationError);
    expect(() => loadEnv(base)).toThrow(/OPENAI_BASE_URL: required with an openai: MODEL_SPEC \(CDK context openaiBaseUrl\)/);
  });

  it('accepts the base URL and the key secret name the stack sets', () => {
    const env = loadEnv({ ...base, OPENAI_BASE_URL: 'https://llm.example.com/v1', OPENAI_API_KEY_SECRET: SECRET_ID });
    expect(env).toEqual(expect.objectContaining({ OPENAI_BASE_URL: 'https://llm.example.com/v1', OPENAI_API_KEY_SECRET: SECRET_ID }));
  });

  it('refuses an invalid model spec at load', () => {
    expect(() => loadEnv({ ...base, MODEL_SPEC: 'azure:gpt-4' })).toThrow(/MODEL_SPEC: .*azure:gpt-4/);
  });
});
