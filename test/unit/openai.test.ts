import { loadModels } from '../../models';
import {
  isLoopbackUrl,
  mapOpenAiFetchError,
  mapOpenAiHttpError,
  OpenAiChatModel,
  openAiOptionsFromEnv,
  OPENAI_DEFAULT_BASE_URL,
  parseRetryAfter,
  retryAfterSecondsOf,
} from '../../models/openai/openai';
import { outputTokenBudget, SEEK_REPLY } from '../../shared/llm/schemas';
import {
  ConfigurationError,
  ContextOverflowError,
  ModelConfigurationError,
  ModelError,
  ModelThrottledError,
  ModelTimeoutError,
  ModelUnavailableError,
} from '../../shared/errors';
import { LlmAgents } from '../../shared/llm/agents';
import { parseModelSpec } from '../../models/spec';
import type { ChatRequest } from '../../shared/ports';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useScriptedOpenAiServer, type ScriptedReply } from '../support/scripted-openai-server';

/** A small OpenAI-compatible server on 127.0.0.1: answers each request with the next scripted reply. */
const fake = useScriptedOpenAiServer();
type Reply = ScriptedReply;

const request: ChatRequest = {
  role: 'seeker',
  system: 'You are a seeking agent.',
  messages: [
    { role: 'user', text: 'Read the chunk.' },
    { role: 'assistant', text: '{"evidence": "x"}' },
    { role: 'user', text: 'Score?' },
  ],
  maxTokens: 256,
  temperature: 0,
};

/** A chat.completion body; `usage` null leaves the usage object out. */
function completion(content: unknown, finishReason = 'stop', usage: object | null = { prompt_tokens: 812, completion_tokens: 64, total_tokens: 876 }): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'llama3.1:8b',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  });
}

describe('OpenAiChatModel.complete against a local server', () => {
  it('posts system, turns, max_tokens and temperature to {base}/chat/completions and reads text and usage', async () => {
    // Arrange
    fake.replies = [{ status: 200, body: completion('{"score": 80}') }];
    const model = new OpenAiChatModel('llama3.1:8b', { baseUrl: `${fake.baseUrl}/`, apiKey: 'sk-test' });

    // Act
    const response = await model.complete(request);

    // Assert
    expect(response).toEqual({ text: '{"score": 80}', stopReason: 'end_turn', inputTokens: 812, outputTokens: 64 });
    expect(fake.received).toHaveLength(1);
    expect(fake.received[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions', authorization: 'Bearer sk-test' });
    expect(fake.received[0].body).toEqual({
      model: 'llama3.1:8b',
      messages: [
        { role: 'system', content: 'You are a seeking agent.' },
        { role: 'user', content: 'Read the chunk.' },
        { role: 'assistant', content: '{"evidence": "x"}' },
        { role: 'user', content: 'Score?' },
      ],
      max_tokens: 256,
      temperature: 0,
      stream: false,
    });
  });

  it('maps finish_reason "length" to max_tokens, omits a blank system prompt and the key when none is set, and tolerates missing usage', async () => {
    fake.replies = [{ status: 200, body: completion('partial', 'length', null) }];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl, apiKey: '' });

    const response = await model.complete({ ...request, system: '  ', temperature: undefined });

    expect(response).toEqual({ text: 'partial', stopReason: 'max_tokens', inputTokens: 0, outputTokens: 0 });
    expect(fake.received[0].authorization).toBeUndefined();
    expect(fake.received[0].body).not.toHaveProperty('temperature');
    expect((fake.received[0].body.messages as unknown[])[0]).toEqual({ role: 'user', content: 'Read the chunk.' });
  });

  it('reads content as servers write it: null as no text, a list of parts as their texts joined (parts without text add nothing)', async () => {
    fake.replies = [
      { status: 200, body: completion(null) },
      { status: 200, body: completion([{ type: 'text', text: 'Joseph ' }, null, { type: 'image_url' }, { type: 'text', text: 'Strauss' }]) },
      { status: 200, body: completion(42) },
    ];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl, apiKey: '' });

    expect((await model.complete(request)).text).toBe('');
    expect((await model.complete(request)).text).toBe('Joseph Strauss');
    await expect(model.complete(request)).rejects.toThrow(/reply has no choices\[0\]\.message\.content/);
  });

  it('waits out a 429 as its Retry-After says and sends again, saying so in a warning', async () => {
    const throttle = { status: 429, headers: { 'retry-after': '1' }, body: '{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}' };
    fake.replies = [throttle, { status: 200, body: completion('Paris') }];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });

    const started = Date.now();
    const reply = await model.complete(request);

    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(reply.text).toBe('Paris');
    expect(fake.received).toHaveLength(2);
    expect(reply.warnings?.join('\n')).toMatch(/throttled this call 1 time\(s\) \(HTTP 429\); waited 1\.0 s/);
  });

  it('turns a 429 whose Retry-After is past its throttle budget into a retryable ModelThrottledError carrying the delay, at once', async () => {
    fake.replies = [{ status: 429, headers: { 'retry-after': '3600' }, body: '{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}' }];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });

    const error = await model.complete(request).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ModelThrottledError);
    expect((error as Error).name).toBe('ModelThrottledError');
    expect((error as Error).message).toMatch(/Retry-After: 3600 s.*HTTP 429 rate_limit_error: Rate limit reached/);
    expect(retryAfterSecondsOf(error)).toBe(3600);
    expect(fake.received).toHaveLength(1);
  });

  it('turns a 400 about the context length into ContextOverflowError and another 400 into ModelError', async () => {
    fake.replies = [
      {
        status: 400,
        body: JSON.stringify({
          object: 'error',
          message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8744 in the messages, 256 in the completion).",
          type: 'BadRequestError',
          code: 400,
        }),
      },
      { status: 400, body: '{"error":{"message":"temperature must be between 0 and 2","type":"invalid_request_error"}}' },
    ];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });

    await expect(model.complete(request)).rejects.toThrow(ContextOverflowError);
    const other = await model.complete(request).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(ModelError);
    expect((other as Error).name).toBe('ModelError');
    expect((other as Error).message).toMatch(/HTTP 400 invalid_request_error: temperature must be between 0 and 2/);
  });

  it('turns 5xx into ModelUnavailableError and 401/404 into ModelConfigurationError', async () => {
    fake.replies = [
      { status: 503, body: 'Service Unavailable' },
      { status: 401, body: '{"error":{"message":"Incorrect API key"}}' },
      { status: 404, body: '{"error":"model \\"nope\\" not found, try pulling it first"}' },
    ];
    const model = new OpenAiChatModel('nope', { baseUrl: fake.baseUrl });

    await expect(model.complete(request)).rejects.toThrow(ModelUnavailableError);
    await expect(model.complete(request)).rejects.toThrow(/not authorized .*Incorrect API key/);
    await expect(model.complete(request)).rejects.toThrow(ModelConfigurationError);
  });

  it('turns a slow server into ModelTimeoutError', async () => {
    fake.replies = [{ status: 200, body: completion('late'), delayMs: 2_000 }];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl, timeoutMs: 100 });

    await expect(model.complete(request)).rejects.toThrow(ModelTimeoutError);
  });

  it('fails at once, naming the URL, when nothing listens on this machine; a refused remote server stays retryable; a non-completion reply is a ModelError', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await new OpenAiChatModel('m', { baseUrl: `http://127.0.0.1:${port}/v1` }).complete(request).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ModelConfigurationError);
    expect((refused as Error).message).toContain(`no server listens at http://127.0.0.1:${port}/v1`);
    const remote = mapOpenAiFetchError(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), 'm', 'http://10.0.0.5:8000/v1', 1000);
    expect(remote).toBeInstanceOf(ModelUnavailableError);
    expect(isLoopbackUrl('http://localhost:8080/v1')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:8080/v1')).toBe(true);
    expect(isLoopbackUrl('http://127.1.2.3/v1')).toBe(true);
    expect(isLoopbackUrl('https://api.openai.com/v1')).toBe(false);

    fake.replies = [
      { status: 200, body: '{"choices": []}' },
      { status: 200, body: 'not json' },
    ];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });
    await expect(model.complete(request)).rejects.toThrow(/no choices\[0\]\.message\.content/);
    await expect(model.complete(request)).rejects.toThrow(ModelError);
  });
});

describe('OpenAI configuration and error mapping', () => {
  it('reads OPENAI_BASE_URL and OPENAI_API_KEY, options winning', () => {
    const env = { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1/', OPENAI_API_KEY: 'k' };
    expect(openAiOptionsFromEnv({}, env)).toMatchObject({ baseUrl: 'http://127.0.0.1:11434/v1', apiKey: 'k', timeoutMs: 120_000 });
    expect(openAiOptionsFromEnv({ baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'x' }, env)).toMatchObject({ baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'x' });
  });

  it("defaults to OpenAI's API when no base URL is set, as the OpenAI SDK does, and then needs a key", () => {
    expect(openAiOptionsFromEnv({}, { OPENAI_API_KEY: 'sk-test' })).toMatchObject({ baseUrl: OPENAI_DEFAULT_BASE_URL, apiKey: 'sk-test' });
    expect(OPENAI_DEFAULT_BASE_URL).toBe('https://api.openai.com/v1');
    expect(() => openAiOptionsFromEnv({}, {})).toThrow(ConfigurationError);
    expect(() => openAiOptionsFromEnv({}, { OPENAI_BASE_URL: ' ' })).toThrow(
      /no OPENAI_API_KEY\. Without OPENAI_BASE_URL the model is OpenAI's API \(https:\/\/api\.openai\.com\/v1\)/,
    );
    // A server of your own needs no key.
    expect(openAiOptionsFromEnv({}, { OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' })).not.toHaveProperty('apiKey');
  });

  it('refuses a non-http base URL with a message naming OPENAI_BASE_URL', () => {
    expect(() => openAiOptionsFromEnv({ baseUrl: 'ftp://host/v1' }, {})).toThrow(/http:\/\/ or https:\/\//);
    expect(() => openAiOptionsFromEnv({}, { OPENAI_BASE_URL: 'not a url' })).toThrow(/OPENAI_BASE_URL "not a url" is not a URL/);
    expect(() => new OpenAiChatModel(' ', { baseUrl: 'http://127.0.0.1/v1' })).toThrow(ConfigurationError);
  });

  it('parses Retry-After seconds and HTTP dates', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('7')).toBe(7);
    expect(parseRetryAfter('1.5')).toBe(1.5);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it('maps llama.cpp context-size errors, 408, and OpenAI insufficient_quota', () => {
    const llamaCpp = '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}';
    expect(mapOpenAiHttpError(400, llamaCpp, null, 'm', 'b')).toBeInstanceOf(ContextOverflowError);
    expect(mapOpenAiHttpError(408, '', null, 'm', 'b')).toBeInstanceOf(ModelTimeoutError);
    const quota = mapOpenAiHttpError(429, '{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}', null, 'm', 'b');
    expect(quota).toBeInstanceOf(ModelConfigurationError);
    const throttled = mapOpenAiHttpError(429, '{}', null, 'm', 'b');
    expect(throttled).toBeInstanceOf(ModelThrottledError);
    expect(retryAfterSecondsOf(throttled)).toBeUndefined();
  });
});

describe('openai: model specs', () => {
  it('parses one or two model names, keeping colons and slashes', () => {
    expect(parseModelSpec('openai:llama3.1:8b')).toEqual({ kind: 'openai', seekerModelId: 'llama3.1:8b', reasonerModelId: 'llama3.1:8b' });
    expect(parseModelSpec(' openai:meta-llama/Llama-3.1-8B-Instruct, meta-llama/Llama-3.3-70B-Instruct ')).toEqual({
      kind: 'openai',
      seekerModelId: 'meta-llama/Llama-3.1-8B-Instruct',
      reasonerModelId: 'meta-llama/Llama-3.3-70B-Instruct',
    });
  });

  it.each([
    ['no model', 'openai:', /one or two comma-separated model names/],
    ['three models', 'openai:a,b,c', /one or two comma-separated model names/],
    ['a name with spaces', 'openai:llama 3', /is not a model name/],
  ])('rejects %s', (_label, spec, message) => {
    expect(() => parseModelSpec(spec)).toThrow(ConfigurationError);
    expect(() => parseModelSpec(spec)).toThrow(message);
  });

  it('builds LLM agents over the local server without touching Bedrock', async () => {
    const bedrock = jest.fn();
    const model = (await loadModels('openai:small,large')).agents({ bedrock: { client: bedrock }, openai: { options: { baseUrl: fake.baseUrl } } });
    expect(model).toBeInstanceOf(LlmAgents);
    expect(bedrock).not.toHaveBeenCalled();
    fake.replies = [{ status: 200, body: completion('{"answerable": true, "answer": "Paris", "cited": ["r1-c0"]}') }];
    const message = { id: 'r1-c0', round: 1, chunkIndex: 0, score: 90, evidence: 'Paris is the capital of France.', tokens: 7, quotes: [], sources: ['d'] };
    const result = await model.reason({ question: 'Capital of France?', messages: [message], force: false });
    // The reasoning agent's calls go to the reasoner model of the spec.
    expect(fake.received.length).toBeGreaterThanOrEqual(1);
    expect(fake.received.every((r) => r.body.model === 'large')).toBe(true);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });
});

describe('OpenAiChatModel structured output (response_format)', () => {
  const structuredRequest: ChatRequest = { ...request, schema: SEEK_REPLY, maxTokens: outputTokenBudget(SEEK_REPLY) };
  const good = '{"sentences": [1], "note": "", "score": 75}';

  it('sends the reply schema as response_format json_schema (strict) and reports the reply as schema-constrained', async () => {
    fake.replies = [{ status: 200, body: completion(good) }];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });

    const response = await model.complete(structuredRequest);

    expect(fake.received[0].body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'seek_reply', strict: true, schema: SEEK_REPLY.schema },
    });
    expect(fake.received[0].body.max_tokens).toBe(outputTokenBudget(SEEK_REPLY));
    expect(response).toMatchObject({ text: good, stopReason: 'end_turn', structured: 'schema' });
    expect(response.warnings).toBeUndefined();
  });

  it('sends no response_format for a request without a schema', async () => {
    fake.replies = [{ status: 200, body: completion('hello') }];
    await new OpenAiChatModel('m', { baseUrl: fake.baseUrl }).complete(request);
    expect(fake.received[0].body).not.toHaveProperty('response_format');
  });

  it('falls back to json_object, then to prose, when the server rejects response_format, once per process, with one warning for the fallback', async () => {
    const rejection = (what: string): Reply => ({ status: 400, body: JSON.stringify({ error: { message: `Unsupported response_format type: ${what}` } }) });
    fake.replies = [rejection('json_schema'), rejection('json_object'), { status: 200, body: completion(good) }, { status: 200, body: completion(good) }];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });

    const first = await model.complete(structuredRequest);
    const second = await model.complete(structuredRequest);

    expect(fake.received.map((r) => (r.body.response_format as { type?: string } | undefined)?.type ?? 'none')).toEqual([
      'json_schema',
      'json_object',
      'none',
      'none',
    ]);
    expect(first.text).toBe(good);
    expect(first.structured).toBe('prose');
    // One warning for the one detection, naming both rejections.
    expect(first.warnings).toEqual([
      expect.stringMatching(/rejected response_format json_schema \(HTTP 400\) and json_object \(HTTP 400\); prose replies from now on/),
    ]);
    // Detected once: the next call goes straight to prose, with no warning.
    expect(second.warnings).toBeUndefined();
  });

  it('calls in flight share one detection: one probe, the others wait for its outcome; one warning in all', async () => {
    // A server that rejects any response_format, slowly, as 7 seeking agents in parallel meet it.
    const sent: string[] = [];
    const slowFetch: typeof fetch = async (_url, init) => {
      const body = JSON.parse(String(init?.body)) as { response_format?: { type: string } };
      sent.push(body.response_format?.type ?? 'none');
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (body.response_format)
        return new Response(JSON.stringify({ error: { message: `response_format ${body.response_format.type} is not supported` } }), { status: 400 });
      return new Response(completion(good), { status: 200 });
    };
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl, fetch: slowFetch });

    const replies7 = await Promise.all(Array.from({ length: 7 }, () => model.complete(structuredRequest)));

    // The probe walks json_schema -> json_object -> prose once; the 6 others go straight to prose.
    expect(sent).toEqual(['json_schema', 'json_object', ...Array.from({ length: 7 }, () => 'none')]);
    expect(replies7.every((r) => r.text === good && r.structured === 'prose')).toBe(true);
    expect(replies7.flatMap((r) => r.warnings ?? [])).toHaveLength(1);
  });

  it('a probe that fails for another reason settles nothing: the next call probes again from the first mode not yet rejected', async () => {
    fake.replies = [
      { status: 400, body: '{"error":{"message":"json_schema response_format unsupported"}}' },
      { status: 503, body: '{"error":{"message":"overloaded"}}' },
      { status: 200, body: completion(good) },
    ];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });
    await expect(model.complete(structuredRequest)).rejects.toBeInstanceOf(ModelUnavailableError);
    const second = await model.complete(structuredRequest);
    expect(fake.received.map((r) => (r.body.response_format as { type?: string } | undefined)?.type ?? 'none')).toEqual([
      'json_schema',
      'json_object',
      'json_object',
    ]);
    expect(second.structured).toBe('json');
    expect(second.warnings).toEqual([expect.stringMatching(/rejected response_format json_schema \(HTTP 400\); json_object replies from now on/)]);
  });

  it('keeps the detected mode per loaded model set: its seeking and reasoning models share one probe, another set probes again', async () => {
    const rejection = (what: string): Reply => ({ status: 400, body: JSON.stringify({ error: { message: `Unsupported response_format type: ${what}` } }) });
    const ok: Reply = { status: 200, body: completion(good) };
    fake.replies = [rejection('json_schema'), rejection('json_object'), ok, ok, rejection('json_schema'), rejection('json_object'), ok];
    const first = await loadModels('openai:m');
    const second = await loadModels('openai:m');

    const probed = await first.chat('seeker', { openai: { options: { baseUrl: fake.baseUrl } } })!.complete(structuredRequest);
    const settled = await first.chat('reasoner', { openai: { options: { baseUrl: fake.baseUrl } } })!.complete(structuredRequest);
    const probedAgain = await second.chat('seeker', { openai: { options: { baseUrl: fake.baseUrl } } })!.complete(structuredRequest);

    expect(fake.received.map((r) => (r.body.response_format as { type?: string } | undefined)?.type ?? 'none')).toEqual([
      'json_schema',
      'json_object',
      'none',
      'none',
      'json_schema',
      'json_object',
      'none',
    ]);
    expect(probed.warnings).toHaveLength(1);
    expect(settled.warnings).toBeUndefined();
    expect(probedAgain.warnings).toHaveLength(1);
  });

  it('falls back to prose once when the server accepts response_format but ignores it (a complete reply that is not JSON)', async () => {
    fake.replies = [
      { status: 200, body: completion('Evidence: opened in 1937. Score: 90') },
      { status: 200, body: completion('Evidence: x. Score: 10') },
    ];
    const model = new OpenAiChatModel('m', { baseUrl: fake.baseUrl });

    const first = await model.complete(structuredRequest);
    await model.complete(structuredRequest);

    expect(first.warnings).toEqual([expect.stringMatching(/ignored response_format/)]);
    expect(fake.received[1].body).not.toHaveProperty('response_format');
  });

  it('a forced mode never falls back: structured "schema" surfaces the rejection as a ModelError, "json" sends json_object, "off" sends none', async () => {
    fake.replies = [{ status: 400, body: '{"error":{"message":"response_format not supported"}}' }];
    await expect(new OpenAiChatModel('m', { baseUrl: fake.baseUrl, structured: 'schema' }).complete(structuredRequest)).rejects.toBeInstanceOf(ModelError);
    fake.replies = [
      { status: 200, body: completion(good) },
      { status: 200, body: completion(good) },
    ];
    await new OpenAiChatModel('m', { baseUrl: fake.baseUrl, structured: 'json' }).complete(structuredRequest);
    await new OpenAiChatModel('m', { baseUrl: fake.baseUrl, structured: 'off' }).complete(structuredRequest);
    expect(fake.received.slice(1).map((r) => (r.body.response_format as { type?: string } | undefined)?.type ?? 'none')).toEqual(['json_object', 'none']);
  });

  it('reads OPENAI_STRUCTURED and rejects an unknown mode at load', () => {
    expect(openAiOptionsFromEnv({}, { OPENAI_BASE_URL: fake.baseUrl, OPENAI_STRUCTURED: 'json' }).structured).toBe('json');
    expect(openAiOptionsFromEnv({}, { OPENAI_BASE_URL: fake.baseUrl }).structured).toBe('auto');
    expect(() => openAiOptionsFromEnv({}, { OPENAI_BASE_URL: fake.baseUrl, OPENAI_STRUCTURED: 'grammar' })).toThrow(/must be one of auto, schema, json, off/);
  });

  it('a 400 about the prompt (not response_format) is not a fallback: it is mapped as before', async () => {
    fake.replies = [{ status: 400, body: '{"error":{"message":"This model\'s maximum context length is 8192 tokens"}}' }];
    await expect(new OpenAiChatModel('m', { baseUrl: fake.baseUrl }).complete(structuredRequest)).rejects.toBeInstanceOf(ContextOverflowError);
    expect(fake.received).toHaveLength(1);
  });
});
