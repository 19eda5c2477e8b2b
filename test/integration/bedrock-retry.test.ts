/**
 * The SDK side of the retry policy (models/bedrock/bedrock.ts): the real Bedrock Runtime client,
 * its real middleware stack and HTTP/2 handler, against a local HTTP/2 server on 127.0.0.1 that
 * answers Converse requests with scripted statuses. Counts how many times one request is sent.
 * (The workflow side, MODEL_RETRY, is asserted in test/infra/retry-policy.test.ts.)
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { BEDROCK_SDK_MAX_ATTEMPTS, BedrockChatModel, createBedrockClient, TransientRetryStrategy } from '../../models/bedrock/bedrock';
import { ModelThrottledError, ModelTimeoutError, ModelUnavailableError } from '../../shared/errors';
import type { ChatRequest } from '../../shared/ports';

/** One scripted reply: HTTP status and, for errors, the Bedrock error type. */
type Reply = { status: 200 } | { status: number; errorType: string };

const OK_BODY = JSON.stringify({
  output: { message: { role: 'assistant', content: [{ text: '{"no_information": true}' }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  metrics: { latencyMs: 1 },
});

const request: ChatRequest = { role: 'seeker', system: 'sys', messages: [{ role: 'user', text: 'hi' }], maxTokens: 16 };

describe('the Bedrock client retry policy against a local HTTP/2 server', () => {
  let server: http2.Http2Server;
  let endpoint: string;
  let script: Reply[] = [];
  let sent = 0;
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    // Static credentials from the environment: the SDK signs requests and never looks further.
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_EC2_METADATA_DISABLED: 'true' });
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_BEARER_TOKEN_BEDROCK;
    delete process.env.AWS_PROFILE;
    server = http2.createServer();
    server.on('stream', (stream, headers) => {
      stream.resume();
      stream.on('end', () => {
        sent += 1;
        const reply = script.shift() ?? { status: 200 };
        expect(headers[':path']).toMatch(/^\/model\/.+\/converse$/);
        if (reply.status === 200) {
          stream.respond({ ':status': 200, 'content-type': 'application/json' });
          stream.end(OK_BODY);
        } else {
          const errorType = 'errorType' in reply ? reply.errorType : 'Error';
          stream.respond({ ':status': reply.status, 'content-type': 'application/json', 'x-amzn-errortype': errorType });
          stream.end(JSON.stringify({ message: `scripted ${errorType}` }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    process.env = savedEnv;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    sent = 0;
    script = [];
  });

  async function complete(replies: Reply[]): Promise<unknown> {
    script = [...replies];
    const client = createBedrockClient({ region: 'us-east-1', endpoint });
    try {
      return await new BedrockChatModel(client, 'us.meta.llama3-1-8b-instruct-v1:0').complete(request);
    } catch (error) {
      return error;
    } finally {
      client.destroy();
    }
  }

  it('sends a throttled request once and leaves the backoff to the workflow', async () => {
    const outcome = await complete([{ status: 429, errorType: 'ThrottlingException' }, { status: 200 }]);

    expect(outcome).toBeInstanceOf(ModelThrottledError);
    expect(sent).toBe(1);
  });

  it('retries a 503 once, quickly, and succeeds on the second send', async () => {
    const outcome = await complete([{ status: 503, errorType: 'ServiceUnavailableException' }, { status: 200 }]);

    expect(outcome).toMatchObject({ stopReason: 'end_turn', inputTokens: 10 });
    expect(sent).toBe(2);
  });

  it('sends a request that keeps failing with 5xx at most twice, then reports it for the workflow to retry', async () => {
    const outcome = await complete([
      { status: 500, errorType: 'InternalServerException' },
      { status: 503, errorType: 'ServiceUnavailableException' },
      { status: 200 },
    ]);

    expect(outcome).toBeInstanceOf(ModelUnavailableError);
    expect(sent).toBe(BEDROCK_SDK_MAX_ATTEMPTS);
  });

  it('does not retry a model timeout inside the SDK', async () => {
    const outcome = await complete([{ status: 408, errorType: 'ModelTimeoutException' }, { status: 200 }]);

    expect(outcome).toBeInstanceOf(ModelTimeoutError);
    expect(sent).toBe(1);
  });
});

describe('TransientRetryStrategy', () => {
  it('allows one retry of a transient failure with a fully jittered pause, and nothing else', async () => {
    // Arrange: random() = 0.999 gives the largest pause
    const strategy = new TransientRetryStrategy(2, 200, () => 0.999);
    const first = await strategy.acquireInitialRetryToken();
    const failure: NonNullable<Parameters<TransientRetryStrategy['refreshRetryTokenForRetry']>[1]['error']> = {
      name: 'ThrottlingException',
      message: 'slow down',
      $metadata: { httpStatusCode: 429 },
    };

    // Act
    const retry = await strategy.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' });
    const second = strategy.refreshRetryTokenForRetry(retry, { errorType: 'TRANSIENT' });
    const throttled = strategy.refreshRetryTokenForRetry(first, { errorType: 'THROTTLING', error: failure });

    // Assert
    expect(retry.getRetryCount()).toBe(1);
    expect(retry.getRetryDelay()).toBeGreaterThanOrEqual(0);
    expect(retry.getRetryDelay()).toBeLessThanOrEqual(200);
    await expect(second).rejects.toThrow();
    await expect(throttled).rejects.toBe(failure);
  });
});
