import {
  AccessDeniedException,
  BedrockRuntimeClient,
  ConverseCommand,
  InternalServerException,
  ModelErrorException,
  ModelNotReadyException,
  ModelTimeoutException,
  ResourceNotFoundException,
  ServiceQuotaExceededException,
  ServiceUnavailableException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { gateFor, resetGates } from '../../models/adaptive-gate';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import {
  BedrockChatModel,
  bedrockRuntimeClient,
  createBedrockClient,
  mapBedrockError,
  supportsForcedToolChoice,
  TransientRetryStrategy,
} from '../../models/bedrock/bedrock';
import { SEEK_REPLY } from '../../shared/llm/schemas';
import {
  ConfigurationError,
  ContextOverflowError,
  ModelConfigurationError,
  ModelError,
  ModelThrottledError,
  ModelTimeoutError,
  ModelUnavailableError,
  RETRYABLE_ERRORS,
} from '../../shared/errors';
import { foundationModelIdOf, isInferenceProfileId } from '../../models/bedrock/traits';
import { parseModelSpec } from '../../models/spec';
import type { ChatRequest } from '../../shared/ports';

const MODEL_ID = 'us.meta.llama3-1-8b-instruct-v1:0';
const bedrockMock = mockClient(BedrockRuntimeClient);

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

function converseReply(text: string, stopReason = 'end_turn', usage = { inputTokens: 812, outputTokens: 64, totalTokens: 876 }) {
  return {
    output: { message: { role: 'assistant' as const, content: [{ text }] } },
    stopReason: stopReason as 'end_turn',
    usage,
    metrics: { latencyMs: 10 },
    $metadata: {},
  };
}

beforeEach(() => {
  bedrockMock.reset();
});

describe('BedrockChatModel.complete', () => {
  it('sends system, alternating turns and the inference config as one Converse request', async () => {
    // Arrange
    bedrockMock.on(ConverseCommand).resolves(converseReply('{"score": 80}'));
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);

    // Act
    await model.complete(request);

    // Assert
    expect(bedrockMock).toHaveReceivedCommandTimes(ConverseCommand, 1);
    expect(bedrockMock).toHaveReceivedCommandWith(ConverseCommand, {
      modelId: MODEL_ID,
      system: [{ text: 'You are a seeking agent.' }],
      messages: [
        { role: 'user', content: [{ text: 'Read the chunk.' }] },
        { role: 'assistant', content: [{ text: '{"evidence": "x"}' }] },
        { role: 'user', content: [{ text: 'Score?' }] },
      ],
      inferenceConfig: { maxTokens: 256, temperature: 0 },
    });
  });

  it('omits an empty system prompt and an unset temperature', async () => {
    bedrockMock.on(ConverseCommand).resolves(converseReply('ok'));
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);

    await model.complete({ role: 'reasoner', system: '  ', messages: [{ role: 'user', text: 'hi' }], maxTokens: 10 });

    const input = bedrockMock.commandCalls(ConverseCommand)[0].args[0].input;
    expect(input.system).toBeUndefined();
    expect(input.inferenceConfig).toEqual({ maxTokens: 10 });
  });

  it('returns the reply text, the stop reason and the token usage reported by Bedrock', async () => {
    bedrockMock.on(ConverseCommand).resolves({
      ...converseReply('', 'max_tokens', { inputTokens: 5000, outputTokens: 256, totalTokens: 5256 }),
      output: { message: { role: 'assistant', content: [{ text: '{"evidence": "The bridge' }, { text: ' opened"' }] } },
    });
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);

    const response = await model.complete(request);

    expect(response).toEqual({ text: '{"evidence": "The bridge opened"', stopReason: 'max_tokens', inputTokens: 5000, outputTokens: 256 });
  });

  it('reports zero usage and empty text when Bedrock omits them', async () => {
    bedrockMock.on(ConverseCommand).resolves({ stopReason: 'end_turn', $metadata: {} } as never);
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);

    const response = await model.complete(request);

    expect(response).toEqual({ text: '', stopReason: 'end_turn', inputTokens: 0, outputTokens: 0 });
  });

  it('raises ContextOverflowError when Bedrock stops because the context window is exceeded', async () => {
    bedrockMock.on(ConverseCommand).resolves(converseReply('partial', 'model_context_window_exceeded'));
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);

    await expect(model.complete(request)).rejects.toBeInstanceOf(ContextOverflowError);
  });

  it('maps a rejected Converse call to the typed error, keeping the SDK exception as cause', async () => {
    const sdkError = new ThrottlingException({ $metadata: { httpStatusCode: 429 }, message: 'Too many requests' });
    bedrockMock.on(ConverseCommand).rejects(sdkError);
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);

    const error = await model.complete(request).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ModelThrottledError);
    expect((error as ModelThrottledError).name).toBe('ModelThrottledError');
    expect((error as ModelThrottledError).cause).toBe(sdkError);
    expect((error as ModelThrottledError).message).toContain(MODEL_ID);
  });

  it('lowers how many calls of the model may be in flight after a throttle and raises it with each answer (one AIMD gate per model)', async () => {
    resetGates();
    bedrockMock
      .on(ConverseCommand)
      .rejectsOnce(new ThrottlingException({ $metadata: { httpStatusCode: 429 }, message: 'Too many requests' }))
      .resolves(converseReply('ok'));
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID);
    const gate = gateFor(`bedrock:${MODEL_ID}`);

    await expect(model.complete(request)).rejects.toBeInstanceOf(ModelThrottledError);
    expect(gate.limit).toBe(1);
    let inFlight = 0;
    let most = 0;
    bedrockMock.on(ConverseCommand).callsFake(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return converseReply('ok');
    });
    await Promise.all([1, 2, 3, 4].map(() => model.complete(request)));

    expect(most).toBeLessThan(4);
    expect(gate.limit).toBe(5);
    resetGates();
  });

  it('refuses an empty model id', () => {
    expect(() => new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), ' ')).toThrow(ConfigurationError);
  });
});

describe('mapBedrockError', () => {
  const meta = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });

  it.each([
    ['ThrottlingException', new ThrottlingException({ ...meta(429), message: 'Too many requests, please wait before trying again.' }), ModelThrottledError],
    ['ServiceQuotaExceededException', new ServiceQuotaExceededException({ ...meta(400), message: 'quota exceeded' }), ModelThrottledError],
    ['ServiceUnavailableException', new ServiceUnavailableException({ ...meta(503), message: 'unavailable' }), ModelUnavailableError],
    ['InternalServerException', new InternalServerException({ ...meta(500), message: 'internal' }), ModelUnavailableError],
    ['ModelNotReadyException', new ModelNotReadyException({ ...meta(429), message: 'model not ready' }), ModelUnavailableError],
    ['ModelTimeoutException', new ModelTimeoutException({ ...meta(408), message: 'model timed out' }), ModelTimeoutError],
    ['AccessDeniedException', new AccessDeniedException({ ...meta(403), message: "You don't have access to the model" }), ModelConfigurationError],
    ['ResourceNotFoundException', new ResourceNotFoundException({ ...meta(404), message: 'Model not found' }), ModelConfigurationError],
    ['ModelErrorException', new ModelErrorException({ ...meta(424), message: 'model error' }), ModelError],
  ])('maps %s', (_name, sdkError, expected) => {
    // Act
    const mapped = mapBedrockError(sdkError, MODEL_ID);

    // Assert
    expect(mapped).toBeInstanceOf(expected);
    expect(mapped.name).toBe(expected.name);
    expect(mapped.cause).toBe(sdkError);
  });

  it.each([
    // Bedrock spells "isn’t" with a typographic apostrophe.
    'Invocation of model ID meta.llama3-1-8b-instruct-v1:0 with on-demand throughput isn’t supported. Retry your request with the ID or ARN of an inference profile that contains this model.',
    "The provided model doesn't support on-demand throughput.",
  ])('maps the on-demand throughput ValidationException to a configuration error naming an inference profile id: %s', (message) => {
    const sdkError = new ValidationException({ ...meta(400), message });

    const mapped = mapBedrockError(sdkError, 'meta.llama3-1-8b-instruct-v1:0');

    expect(mapped).toBeInstanceOf(ModelConfigurationError);
    expect(mapped.message).toContain('us.meta.llama3-1-8b-instruct-v1:0');
    expect(mapped.message).toMatch(/inference profile/);
    expect(RETRYABLE_ERRORS).not.toContain(mapped.name);
  });

  it.each([
    'Input is too long for requested model.',
    'The model returned the following errors: prompt is too long: 200049 tokens > 200000 maximum',
    "This model's maximum context length is 128000 tokens. Please reduce the length of the prompt.",
  ])('maps a context-length ValidationException to ContextOverflowError: %s', (message) => {
    const mapped = mapBedrockError(new ValidationException({ ...meta(400), message }), MODEL_ID);

    expect(mapped).toBeInstanceOf(ContextOverflowError);
  });

  it('maps an invalid model identifier to a configuration error and other validation errors to ModelError', () => {
    const invalidId = new ValidationException({ ...meta(400), message: 'The provided model identifier is invalid.' });
    const other = new ValidationException({ ...meta(400), message: 'A conversation must start with a user message.' });

    expect(mapBedrockError(invalidId, 'meta.nope')).toBeInstanceOf(ModelConfigurationError);
    expect(mapBedrockError(other, MODEL_ID)).toBeInstanceOf(ModelError);
    expect(mapBedrockError(other, MODEL_ID)).not.toBeInstanceOf(ModelConfigurationError);
  });

  it('maps SDK socket timeouts, network errors and unknown 5xx or 429 responses by their shape', () => {
    const timeout = Object.assign(new Error('socket timed out after 120000 ms'), { name: 'TimeoutError' });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const gateway = Object.assign(new Error('bad gateway'), { name: 'UnknownError', $metadata: { httpStatusCode: 502 } });
    const tooMany = Object.assign(new Error('slow down'), { name: 'UnknownError', $metadata: { httpStatusCode: 429 } });

    expect(mapBedrockError(timeout, MODEL_ID)).toBeInstanceOf(ModelTimeoutError);
    expect(mapBedrockError(reset, MODEL_ID)).toBeInstanceOf(ModelUnavailableError);
    expect(mapBedrockError(gateway, MODEL_ID)).toBeInstanceOf(ModelUnavailableError);
    expect(mapBedrockError(tooMany, MODEL_ID)).toBeInstanceOf(ModelThrottledError);
  });

  it('maps anything else to ModelError with the original as cause', () => {
    const odd = new Error('something odd');

    const mapped = mapBedrockError(odd, MODEL_ID);

    expect(mapped).toBeInstanceOf(ModelError);
    expect(mapped.cause).toBe(odd);
  });
});

describe('Bedrock client factory', () => {
  it('bounds SDK retries: 2 sends by default, transient failures only', async () => {
    const client = createBedrockClient({ region: 'us-east-1' });

    expect(await client.config.maxAttempts()).toBe(2);
    const strategy = await client.config.retryStrategy();
    expect(strategy).toBeInstanceOf(TransientRetryStrategy);
    expect((strategy as TransientRetryStrategy).maxAttempts).toBe(2);
  });

  it('reuses one module-scope client', () => {
    expect(bedrockRuntimeClient()).toBe(bedrockRuntimeClient());
  });
});

describe('model specs', () => {
  it('parses the extractive reader and one or two Bedrock model ids', () => {
    expect(parseModelSpec(' extractive ')).toEqual({ kind: 'extractive' });
    expect(parseModelSpec('bedrock:us.meta.llama3-1-8b-instruct-v1:0')).toEqual({
      kind: 'bedrock',
      seekerModelId: 'us.meta.llama3-1-8b-instruct-v1:0',
      reasonerModelId: 'us.meta.llama3-1-8b-instruct-v1:0',
    });
    expect(parseModelSpec('bedrock:us.meta.llama3-1-8b-instruct-v1:0, us.meta.llama3-3-70b-instruct-v1:0')).toEqual({
      kind: 'bedrock',
      seekerModelId: 'us.meta.llama3-1-8b-instruct-v1:0',
      reasonerModelId: 'us.meta.llama3-3-70b-instruct-v1:0',
    });
  });

  it.each([
    ['an unknown scheme', 'azure:gpt-4o', /expected "extractive", "bedrock:.*"llama:/],
    ['no model id', 'bedrock:', /one or two comma-separated/],
    ['an empty reasoner id', 'bedrock:meta.llama3-1-8b-instruct-v1:0,', /one or two comma-separated/],
    ['three ids', 'bedrock:a.b,c.d,e.f', /one or two comma-separated/],
    ['an ARN', 'bedrock:arn:aws:bedrock:us-east-1::foundation-model/meta.llama3-1-8b-instruct-v1:0', /is an ARN/],
    ['a malformed id', 'bedrock:Llama 3', /is not a Bedrock model id/],
    ['a profile prefix without a model', 'bedrock:us.meta', /is not a Bedrock model id/],
  ])('rejects %s with a ConfigurationError', (_label, spec, message) => {
    expect(() => parseModelSpec(spec)).toThrow(ConfigurationError);
    expect(() => parseModelSpec(spec)).toThrow(message);
  });

  it('recognises cross-region inference profile ids and strips their prefix', () => {
    for (const prefix of ['us', 'us-gov', 'eu', 'apac', 'jp', 'au', 'ca', 'global']) {
      expect(isInferenceProfileId(`${prefix}.anthropic.claude-3-5-sonnet-20241022-v2:0`)).toBe(true);
    }
    expect(isInferenceProfileId('meta.llama3-1-8b-instruct-v1:0')).toBe(false);
    expect(isInferenceProfileId('xx.meta.llama3-1-8b-instruct-v1:0')).toBe(false);
    expect(foundationModelIdOf('eu.amazon.nova-pro-v1:0')).toBe('amazon.nova-pro-v1:0');
    expect(foundationModelIdOf('amazon.nova-pro-v1:0')).toBe('amazon.nova-pro-v1:0');
  });
});

describe('BedrockChatModel structured replies (toolConfig with a forced toolChoice)', () => {
  const structured: ChatRequest = { ...request, schema: SEEK_REPLY };
  const toolReply = (input: Record<string, unknown>) => ({
    output: { message: { role: 'assistant' as const, content: [{ toolUse: { toolUseId: 't1', name: 'seek_reply', input } }] } },
    stopReason: 'tool_use' as const,
    usage: { inputTokens: 900, outputTokens: 40, totalTokens: 940 },
    metrics: { latencyMs: 10 },
    $metadata: {},
  });

  it.each([
    'us.anthropic.claude-3-5-haiku-20241022-v1:0',
    'anthropic.claude-sonnet-4-20250514-v1:0',
    'us.amazon.nova-lite-v1:0',
    'mistral.mistral-large-2407-v1:0',
  ])('sends one tool whose inputSchema is the reply schema, forced by toolChoice, and reads the reply from toolUse (%s)', async (modelId) => {
    bedrockMock.on(ConverseCommand).resolves(toolReply({ sentences: [1, 3], note: '', score: 75 }) as never);
    const model = new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), modelId);

    const response = await model.complete(structured);

    expect(bedrockMock).toHaveReceivedCommandWith(ConverseCommand, {
      toolConfig: {
        tools: [{ toolSpec: { name: 'seek_reply', description: SEEK_REPLY.description, inputSchema: { json: SEEK_REPLY.schema } } }],
        toolChoice: { tool: { name: 'seek_reply' } },
      },
    } as never);
    expect(response).toEqual({
      text: '{"sentences":[1,3],"note":"","score":75}',
      stopReason: 'end_turn',
      structured: 'schema',
      inputTokens: 900,
      outputTokens: 40,
    });
  });

  it('keeps prose prompting (no toolConfig) for models without forced tool choice, e.g. Llama', async () => {
    bedrockMock.on(ConverseCommand).resolves(converseReply('{"sentences": [2], "note": "", "score": 25}'));
    const response = await new BedrockChatModel(new BedrockRuntimeClient({ region: 'us-east-1' }), MODEL_ID).complete(structured);
    const input = bedrockMock.commandCalls(ConverseCommand)[0].args[0].input;
    expect(input.toolConfig).toBeUndefined();
    expect(response.structured).toBe('prose');
  });

  it('names the families with forced tool choice', () => {
    expect(supportsForcedToolChoice('us.anthropic.claude-3-haiku-20240307-v1:0')).toBe(true);
    expect(supportsForcedToolChoice('anthropic.claude-v2:1')).toBe(false);
    expect(supportsForcedToolChoice('anthropic.claude-instant-v1')).toBe(false);
    expect(supportsForcedToolChoice('us.meta.llama3-3-70b-instruct-v1:0')).toBe(false);
    expect(supportsForcedToolChoice('amazon.titan-text-express-v1')).toBe(false);
  });
});
