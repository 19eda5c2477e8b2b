/**
 * The model conformance suite (test/support/model-conformance.ts) for the `openai:` provider: an
 * OpenAI-compatible server on 127.0.0.1 answering scripted replies.
 */
import { useScriptedOpenAiServer } from '../../support/scripted-openai-server';
import { describeAgentConformance, describeChatModelConformance, type ConformanceHarness, type Scripted } from '../../support/model-conformance';

const fake = useScriptedOpenAiServer();

const completion = (r: Scripted) =>
  JSON.stringify({
    choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: r.cut ? 'length' : 'stop' }],
    usage: { prompt_tokens: r.inputTokens, completion_tokens: r.outputTokens, total_tokens: r.inputTokens + r.outputTokens },
  });
const openAiError = (status: number, message: string) => ({ status, body: JSON.stringify({ error: { message, type: 'invalid_request_error' } }) });

const harness: ConformanceHarness = {
  kind: 'openai',
  spec: 'openai:small-model',
  deps: () => ({ openai: { options: { baseUrl: fake.baseUrl, apiKey: 'test-key', structured: 'off' } } }),
  reply: (replies) => void fake.replies.push(...replies.map((r) => ({ status: 200, body: completion(r) }))),
  filter: (times) => {
    for (let i = 0; i < times; i++) {
      const body = JSON.stringify({
        choices: [{ index: 0, message: { role: 'assistant', content: 'I cannot help with that.' }, finish_reason: 'content_filter' }],
        usage: { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 },
      });
      fake.replies.push({ status: 200, body });
    }
  },
  fail: {
    // A Retry-After past the adapter's own throttle budget: the 429 comes back at once, typed.
    throttled: () => void fake.replies.push({ ...openAiError(429, 'Rate limit reached'), headers: { 'retry-after': '3600' } }),
    contextOverflow: () =>
      void fake.replies.push(openAiError(400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.")),
    unavailable: () => void fake.replies.push(openAiError(503, 'The server is overloaded')),
  },
  exactUsage: true,
};

describeChatModelConformance(harness);
describeAgentConformance(harness);
