/**
 * The model conformance suite (test/support/model-conformance.ts) for the `bedrock:` provider: the
 * real Converse client under aws-sdk-client-mock, replies and the SDK's own exceptions scripted.
 */
import { BedrockRuntimeClient, ConverseCommand, ServiceUnavailableException, ThrottlingException, ValidationException } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import { describeAgentConformance, describeChatModelConformance, type ConformanceHarness } from '../../support/model-conformance';

const bedrockMock = mockClient(BedrockRuntimeClient);
const bedrockClient = (): BedrockRuntimeClient => new BedrockRuntimeClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
const meta = (status: number) => ({ $metadata: { httpStatusCode: status } });

beforeEach(() => bedrockMock.reset());

const harness: ConformanceHarness = {
  kind: 'bedrock',
  // A model without forced tool choice: its schema replies are prose that the lenient parser reads.
  spec: 'bedrock:us.meta.llama3-1-8b-instruct-v1:0',
  deps: () => ({ bedrock: { client: bedrockClient } }),
  reply: (replies) => {
    let call = bedrockMock.on(ConverseCommand);
    for (const r of replies) {
      call = call.resolvesOnce({
        output: { message: { role: 'assistant', content: [{ text: r.text }] } },
        stopReason: r.cut ? 'max_tokens' : 'end_turn',
        usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens, totalTokens: r.inputTokens + r.outputTokens },
        metrics: { latencyMs: 1 },
        $metadata: {},
      } as never);
    }
  },
  filter: (times) => {
    let call = bedrockMock.on(ConverseCommand);
    for (let i = 0; i < times; i++) {
      call = call.resolvesOnce({
        output: { message: { role: 'assistant', content: [{ text: 'Sorry, the model cannot answer this question.' }] } },
        stopReason: 'guardrail_intervened',
        usage: { inputTokens: 30, outputTokens: 9, totalTokens: 39 },
        metrics: { latencyMs: 1 },
        $metadata: {},
      } as never);
    }
  },
  fail: {
    throttled: () =>
      void bedrockMock.on(ConverseCommand).rejects(new ThrottlingException({ ...meta(429), message: 'Too many requests, please wait before trying again.' })),
    contextOverflow: () =>
      void bedrockMock.on(ConverseCommand).rejects(new ValidationException({ ...meta(400), message: 'Input is too long for requested model.' })),
    unavailable: () => void bedrockMock.on(ConverseCommand).rejects(new ServiceUnavailableException({ ...meta(503), message: 'Service unavailable' })),
  },
  exactUsage: true,
};

describeChatModelConformance(harness);
describeAgentConformance(harness);
