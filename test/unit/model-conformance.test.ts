/**
 * One conformance suite for every model provider (models/port.ts; models/index.ts is the table), run
 * through the table as the commands, the Lambdas and the eval reach them: the same tests for each
 * provider, each against its stand-in (LangGraph's checkpoint-validation runs one suite against every
 * checkpoint saver the same way):
 *
 * - `bedrock`: the real Converse client under aws-sdk-client-mock, replies and the SDK's own exceptions scripted;
 * - `openai`: an OpenAI-compatible server on 127.0.0.1 answering scripted replies;
 * - `llama`: the real test model (SmolLM2-135M GGUF), only when EXTAGENTS_TEST_MODEL names it (its rows take
 *   about 80 s on 2 cores; the real-model integration tests cover it otherwise); a service failure such
 *   as throttling has no in-process counterpart, so its only failure row is a prompt over its context;
 * - `extractive`: the offline reader itself (no chat model, no failures: its rows are the agent ones).
 *
 * What every language-model provider must do: a reply to a request with a reply schema is that
 * schema's JSON (constrained by the provider, or prose the lenient parser reads), a complete reply
 * stops with `end_turn` and one cut at the token limit with `max_tokens`, usage counts the provider's
 * tokens, and the same failures are the same typed errors (the names the workflow's Retry/Catch match).
 * What every provider must do: a table entry of its own kind, agents that answer from the evidence and
 * cite it, with usage per role, and a price lookup for both roles.
 */
import { BedrockRuntimeClient, ConverseCommand, ServiceUnavailableException, ThrottlingException, ValidationException } from '@aws-sdk/client-bedrock-runtime';
import { mockClient } from 'aws-sdk-client-mock';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadModels, modelPricing, providerOf, recordModelIds, type LoadedModels, type ModelKind, type ProviderDeps } from '../../models';
import { disposeLlamaModels } from '../../models/llama/llama';
import { modelTraits } from '../../models/traits';
import { ConfigurationError, ContextOverflowError, ModelThrottledError, ModelUnavailableError } from '../../shared/errors';
import { reasonReplySchema } from '../../shared/llm/schemas';
import type { ChatRequest } from '../../shared/ports';
import { NO_ANSWER, type Message } from '../../shared/types';

/** Every model kind, once: `satisfies` with the exhaustive check below makes a new kind fail to compile here until it is listed. */
const KINDS = ['extractive', 'bedrock', 'openai', 'llama'] as const satisfies readonly ModelKind[];
type Missing = Exclude<ModelKind, (typeof KINDS)[number]>;
const allListed: Missing extends never ? true : false = true;

/** A failure every service provider can be made to produce. */
type Failure = 'throttled' | 'contextOverflow' | 'unavailable';

/** A scripted reply of a stand-in: text, whether it was cut at the token limit, usage. */
interface Scripted {
  text: string;
  cut?: boolean;
  inputTokens: number;
  outputTokens: number;
}

/** One provider under test: its spec, deps and how to script its stand-in. */
interface Harness {
  kind: ModelKind;
  spec: string;
  deps: () => ProviderDeps;
  /** Script the next replies (service stand-ins); undefined for a provider that answers for itself. */
  reply?: (replies: Scripted[]) => void;
  /** Make the next call fail with this failure (the ones the stand-in can produce). */
  fail?: Partial<Record<Failure, () => void>>;
  /** Script the next replies as withheld by the provider's content filter (a service that has one). */
  filter?: (times: number) => void;
  /** Usage is exactly what the stand-in said (a real model counts for itself: only positive). */
  exactUsage: boolean;
}

/** The GGUF file of the llama rows: EXTAGENTS_TEST_MODEL, when set. */
const LLAMA_MODEL = process.env.EXTAGENTS_TEST_MODEL?.trim() || undefined;

// ---- the Bedrock stand-in ----
const bedrockMock = mockClient(BedrockRuntimeClient);
const bedrockClient = (): BedrockRuntimeClient => new BedrockRuntimeClient({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
const meta = (status: number) => ({ $metadata: { httpStatusCode: status } });

// ---- the OpenAI-compatible stand-in ----
let server: http.Server;
let baseUrl = '';
let openAiReplies: Array<{ status: number; body: string; headers?: Record<string, string> }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const reply = openAiReplies.shift() ?? { status: 500, body: '{"error":{"message":"no scripted reply"}}' };
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await disposeLlamaModels();
});

beforeEach(() => {
  bedrockMock.reset();
  openAiReplies = [];
});

const completion = (r: Scripted) =>
  JSON.stringify({
    choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: r.cut ? 'length' : 'stop' }],
    usage: { prompt_tokens: r.inputTokens, completion_tokens: r.outputTokens, total_tokens: r.inputTokens + r.outputTokens },
  });
const openAiError = (status: number, message: string) => ({ status, body: JSON.stringify({ error: { message, type: 'invalid_request_error' } }) });

const HARNESSES: Harness[] = [
  {
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
  },
  {
    kind: 'openai',
    spec: 'openai:small-model',
    deps: () => ({ openai: { options: { baseUrl, apiKey: 'test-key', structured: 'off' } } }),
    reply: (replies) => void openAiReplies.push(...replies.map((r) => ({ status: 200, body: completion(r) }))),
    filter: (times) => {
      for (let i = 0; i < times; i++) {
        const body = JSON.stringify({
          choices: [{ index: 0, message: { role: 'assistant', content: 'I cannot help with that.' }, finish_reason: 'content_filter' }],
          usage: { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 },
        });
        openAiReplies.push({ status: 200, body });
      }
    },
    fail: {
      // A Retry-After past the adapter's own throttle budget: the 429 comes back at once, typed.
      throttled: () => void openAiReplies.push({ ...openAiError(429, 'Rate limit reached'), headers: { 'retry-after': '3600' } }),
      contextOverflow: () =>
        void openAiReplies.push(openAiError(400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.")),
      unavailable: () => void openAiReplies.push(openAiError(503, 'The server is overloaded')),
    },
    exactUsage: true,
  },
  ...(LLAMA_MODEL === undefined ? [] : [{ kind: 'llama' as const, spec: `llama:${LLAMA_MODEL}`, deps: () => ({}), exactUsage: false }]),
];

const MESSAGE: Message = {
  id: 'r1-c0',
  round: 1,
  chunkIndex: 0,
  score: 90,
  evidence: 'Paris is the capital of France.',
  tokens: 7,
  quotes: [],
  sources: ['d'],
} as Message;
const REASON_REQUEST: ChatRequest = {
  role: 'reasoner',
  system: 'Answer the question from the evidence. Reply with JSON only.',
  messages: [{ role: 'user', text: 'Evidence [r1-c0]: Paris is the capital of France.\nQuestion: What is the capital of France?' }],
  maxTokens: 120,
  temperature: 0,
  schema: reasonReplySchema(['r1-c0']),
};
const ANSWER = { answerable: true, answer: 'Paris', cited: ['r1-c0'] };

if (LLAMA_MODEL === undefined)
  process.stderr.write('model-conformance: the llama rows run only with EXTAGENTS_TEST_MODEL set (the path scripts/fetch-test-model.sh prints)\n');

describe('the table', () => {
  it('lists every model kind, each with the provider of that kind and a price lookup for both roles', () => {
    expect(allListed).toBe(true);
    const specs: Record<ModelKind, string> = {
      extractive: 'extractive',
      bedrock: 'bedrock:meta.llama3-1-8b-instruct-v1:0',
      openai: 'openai:m',
      llama: 'llama:m.gguf',
    };
    for (const kind of KINDS) {
      expect(providerOf(specs[kind]).provider.kind).toBe(kind);
      const pricing = modelPricing(specs[kind]);
      expect(Object.keys(pricing.models).sort()).toEqual(['reasoner', 'seeker']);
      expect(Object.keys(recordModelIds(specs[kind])).sort()).toEqual(['reasoner', 'seeker']);
    }
  });

  it('has traits for every kind (what the CDK app, doctor and the page read without loading a provider), and none for an unknown kind', () => {
    const bedrock = modelTraits('bedrock:us.meta.llama3-1-8b-instruct-v1:0,us.meta.llama3-3-70b-instruct-v1:0');
    expect(bedrock).toMatchObject({
      languageModel: true,
      openAiServer: false,
      bedrockModels: { seeker: 'us.meta.llama3-1-8b-instruct-v1:0', reasoner: 'us.meta.llama3-3-70b-instruct-v1:0' },
    });
    expect(bedrock.cloudRefusal).toBeUndefined();
    expect(modelTraits('extractive')).toMatchObject({ languageModel: false, openAiServer: false });
    expect(modelTraits('openai:m')).toMatchObject({ languageModel: true, openAiServer: true });
    expect(modelTraits('openai:m').bedrockModels).toBeUndefined();
    expect(modelTraits('llama:m.gguf').cloudRefusal).toMatch(/local machine only/);
    for (const kind of KINDS) expect(modelTraits({ kind, seekerModelId: 'a', reasonerModelId: 'a' } as never).service).not.toBe('');
    expect(() => modelTraits({ kind: 'azure' } as never)).toThrow(ConfigurationError);
  });

  it('has no chat model for the extractive reader, and no silent default for a kind it does not know', async () => {
    expect((await loadModels('extractive')).chat('seeker')).toBeUndefined();
    expect(() => providerOf({ kind: 'azure' } as never)).toThrow(ConfigurationError);
  });
});

describe.each(HARNESSES)('chat model conformance: $kind', (h) => {
  // A loaded set per test: what a provider keeps (an OpenAI-compatible server's detected
  // structured mode) is the set's, so no test sees another's. The first load reads an in-process
  // model (once per process: later loads reuse it).
  let loaded: LoadedModels;
  beforeAll(async () => {
    await loadModels(h.spec);
  }, 120_000);
  beforeEach(async () => {
    loaded = await loadModels(h.spec);
  });

  it("answers a request with a reply schema with that schema's JSON", async () => {
    h.reply?.([{ text: JSON.stringify(ANSWER), inputTokens: 40, outputTokens: 12 }]);
    const model = loaded.chat('reasoner', h.deps())!;

    const response = await model.complete(REASON_REQUEST);

    const reply = JSON.parse(response.text) as Record<string, unknown>;
    expect(Object.keys(reply).sort()).toEqual(['answer', 'answerable', 'cited']);
    expect(typeof reply.answerable).toBe('boolean');
    if (h.exactUsage) expect(reply).toEqual(ANSWER);
    expect(['schema', 'json', 'prose']).toContain(response.structured);
  }, 120_000);

  it('stops with end_turn when complete and max_tokens when cut at the limit, and counts usage', async () => {
    h.reply?.([
      { text: 'Paris.', inputTokens: 30, outputTokens: 3 },
      { text: 'Paris is the', cut: true, inputTokens: 30, outputTokens: 4 },
    ]);
    const model = loaded.chat('seeker', h.deps())!;
    const plain: ChatRequest = {
      role: 'seeker',
      system: 'Answer in one word.',
      messages: [{ role: 'user', text: 'What is the capital of France?' }],
      maxTokens: 16,
      temperature: 0,
    };

    const complete = await model.complete(plain);
    const cut = await model.complete({ ...plain, system: 'Answer at length.', messages: [{ role: 'user', text: 'Describe Paris in detail.' }], maxTokens: 4 });

    if (h.exactUsage) {
      expect(complete).toMatchObject({ stopReason: 'end_turn', inputTokens: 30, outputTokens: 3 });
    } else {
      expect(['end_turn', 'max_tokens']).toContain(complete.stopReason);
      expect(complete.inputTokens).toBeGreaterThan(0);
    }
    expect(cut.stopReason).toBe('max_tokens');
    expect(cut.outputTokens).toBe(4);
  }, 120_000);

  // The failures this provider's stand-in can produce; an in-process model has only one of them, a
  // prompt over its context, which it refuses before any generation.
  const failures: Array<[Failure, new (...args: never[]) => Error, string]> = (
    [
      ['throttled', ModelThrottledError, 'ModelThrottledError'],
      ['contextOverflow', ContextOverflowError, 'ContextOverflowError'],
      ['unavailable', ModelUnavailableError, 'ModelUnavailableError'],
    ] as Array<[Failure, new (...args: never[]) => Error, string]>
  ).filter(([failure]) => h.fail?.[failure] !== undefined || (h.reply === undefined && failure === 'contextOverflow'));
  it.each(failures)(
    'fails with the typed error of a %s call',
    async (failure, type, name) => {
      const model = loaded.chat('seeker', h.deps())!;
      const cause = h.fail?.[failure];
      cause?.();
      const request = cause ? REASON_REQUEST : { ...REASON_REQUEST, maxTokens: 1_000_000 };

      const error = await model.complete(request).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(type);
      expect((error as Error).name).toBe(name);
    },
    120_000,
  );
});

describe.each([
  { kind: 'extractive' as ModelKind, spec: 'extractive', deps: (): ProviderDeps => ({}), reply: undefined as Harness['reply'], exactUsage: true },
  ...HARNESSES,
])('agent conformance: $kind', (h) => {
  // A loaded set per test: what a provider keeps (an OpenAI-compatible server's detected
  // structured mode) is the set's, so no test sees another's. The first load reads an in-process
  // model (once per process: later loads reuse it).
  let loaded: LoadedModels;
  beforeAll(async () => {
    await loadModels(h.spec);
  }, 120_000);
  beforeEach(async () => {
    loaded = await loadModels(h.spec);
  });

  it('answers from the evidence and cites it, with the reasoner usage of its calls', async () => {
    h.reply?.([{ text: JSON.stringify(ANSWER), inputTokens: 50, outputTokens: 12 }]);
    const agents = loaded.agents(h.deps());

    const result = await agents.reason({ question: 'What is the capital of France?', messages: [MESSAGE], force: false });

    expect(typeof result.answerable).toBe('boolean');
    expect(result.citedMessageIds.every((id) => id === 'r1-c0')).toBe(true);
    if (h.exactUsage) {
      expect(result.answerable).toBe(true);
      expect(result.answer).toContain('Paris');
      expect(result.citedMessageIds).toEqual(['r1-c0']);
    }
    // Every provider counts its calls and the tokens it read (the extractive reader in o200k tokens).
    expect(result.usage.calls).toBeGreaterThanOrEqual(1);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  }, 120_000);

  // A reply the provider's content filter withheld is the filter's canned text: never an answer, never evidence.
  const filtering = h.filter === undefined ? it.skip : it;
  filtering(
    "reads a reply withheld by the provider's content filter as a refusal with its reason, and a seek as no message",
    async () => {
      h.filter?.(2);
      const agents = loaded.agents(h.deps());

      const reasoned = await agents.reason({ question: 'What is the capital of France?', messages: [MESSAGE], force: true });
      const sought = await agents.seek({
        question: 'What is the capital of France?',
        chunk: { index: 3, tokens: 7, chars: 31, segments: [{ documentId: 'd', start: 0, end: 31, chunkStart: 0 }], text: 'Paris is the capital of France.' },
        round: 1,
        synchronized: [],
      });

      expect(reasoned).toMatchObject({ answerable: false, answer: NO_ANSWER, citedMessageIds: [] });
      expect(reasoned.warnings.join('\n')).toMatch(/content filter \((guardrail_intervened|content_filter)\)/);
      expect(reasoned.usage.calls).toBe(1);
      expect(sought.evidence).toBeNull();
      expect(sought.warnings.join('\n')).toMatch(/content filter .*chunk 3 yields no message/);
    },
    120_000,
  );
});
