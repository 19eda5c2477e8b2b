/**
 * Each provider's own dependencies in a Lambda container (models/index.ts `lambdaProviderDeps`,
 * `ModelProvider.lambdaDeps`): built from the function's environment with what the host lends,
 * under the spec's kind only.
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { GetSecretValueCommand, InternalServiceError, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { lambdaEnvIssues, lambdaProviderDeps, type LambdaHost } from '../../models';
import { loadEnv } from '../../lambdas/adapters/env';

const secrets = mockClient(SecretsManagerClient);

/** A host that records what the provider asked of it. */
function recordingHost(): LambdaHost & { traced: unknown[]; warnings: Array<{ message: string; detail: Record<string, unknown> }> } {
  const traced: unknown[] = [];
  const warnings: Array<{ message: string; detail: Record<string, unknown> }> = [];
  return {
    traced,
    warnings,
    trace: (client) => {
      traced.push(client);
      return client;
    },
    warn: (message, detail) => warnings.push({ message, detail }),
  };
}

beforeEach(() => secrets.reset());

describe('lambdaProviderDeps', () => {
  it('gives a bedrock: spec a client factory whose clients are traced, and nothing under another kind', () => {
    const host = recordingHost();
    const deps = lambdaProviderDeps('bedrock:meta.llama3-1-8b-instruct-v1:0', { AWS_REGION: 'us-east-1' }, host);

    expect(Object.keys(deps)).toEqual(['bedrock']);
    const client = deps.bedrock?.client?.();
    expect(client).toBeInstanceOf(BedrockRuntimeClient);
    expect(host.traced).toEqual([client]);
    client?.destroy();
  });

  it('gives an openai: spec the base URL and a key reader started at cold start, read once', async () => {
    secrets.on(GetSecretValueCommand, { SecretId: 'extagents/key' }).resolves({ SecretString: 'sk-1' });
    const host = recordingHost();

    const deps = lambdaProviderDeps('openai:m', { OPENAI_BASE_URL: 'https://llm.example.com/v1', OPENAI_API_KEY_SECRET: 'extagents/key' }, host);

    expect(Object.keys(deps)).toEqual(['openai']);
    expect(deps.openai?.options).toEqual({ baseUrl: 'https://llm.example.com/v1' });
    await expect(deps.openai?.apiKey?.()).resolves.toBe('sk-1');
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    expect(host.warnings).toEqual([]);
  });

  it('logs a failed cold-start read as a warning naming the error, and reads again on use', async () => {
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(new InternalServiceError({ $metadata: {}, message: 'try later' }))
      .resolves({ SecretString: 'sk-2' });
    const host = recordingHost();

    const deps = lambdaProviderDeps('openai:m', { OPENAI_BASE_URL: 'https://llm.example.com/v1', OPENAI_API_KEY_SECRET: 'extagents/key' }, host);
    await new Promise((resolve) => setTimeout(resolve, 50));

    expect(host.warnings).toEqual([
      {
        message: 'Reading the OpenAI API key secret at cold start failed; retrying on first model call',
        detail: { error: expect.stringMatching(/^ModelUnavailableError: .*extagents\/key.*InternalServiceError/) },
      },
    ]);
    await expect(deps.openai?.apiKey?.()).resolves.toBe('sk-2');
  });

  it('gives an openai: server without a key secret no key reader, and the extractive reader nothing', () => {
    const host = recordingHost();
    expect(lambdaProviderDeps('openai:m', { OPENAI_BASE_URL: 'https://llm.example.com/v1' }, host)).toEqual({
      openai: { options: { baseUrl: 'https://llm.example.com/v1' } },
    });
    expect(lambdaProviderDeps('extractive', {}, host)).toEqual({});
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });
});

describe("an openai: spec's Lambda environment (lambdaEnvIssues, the names of its traits)", () => {
  it('needs the base URL as an http(s) URL, and a key secret name that is not blank when set', () => {
    expect(lambdaEnvIssues('openai:m', {})).toEqual([{ variable: 'OPENAI_BASE_URL', message: expect.stringMatching(/required with an openai: MODEL_SPEC/) }]);
    expect(lambdaEnvIssues('openai:m', { OPENAI_BASE_URL: 'ftp://x' })).toEqual([
      { variable: 'OPENAI_BASE_URL', message: expect.stringMatching(/http\(s\) URL/) },
    ]);
    expect(lambdaEnvIssues('openai:m', { OPENAI_BASE_URL: 'https://llm.example.com/v1', OPENAI_API_KEY_SECRET: ' ' })).toEqual([
      { variable: 'OPENAI_API_KEY_SECRET', message: expect.stringMatching(/must name the key secret/) },
    ]);
    expect(lambdaEnvIssues('openai:m', { OPENAI_BASE_URL: 'https://llm.example.com/v1', OPENAI_API_KEY_SECRET: 'extagents/key' })).toEqual([]);
    expect(lambdaEnvIssues('bedrock:meta.llama3-1-8b-instruct-v1:0', { OPENAI_BASE_URL: 'ftp://x' })).toEqual([]);
  });

  it('is what the Lambda environment check reports, at cold start, with the variable named', () => {
    const base = { TABLE_NAME: 't', BUCKET_NAME: 'b', MODEL_SPEC: 'openai:m' };
    expect(() => loadEnv(base)).toThrow(/OPENAI_BASE_URL.*required with an openai: MODEL_SPEC/);
    expect(loadEnv({ ...base, OPENAI_BASE_URL: 'https://llm.example.com/v1' }).OPENAI_BASE_URL).toBe('https://llm.example.com/v1');
  });
});
