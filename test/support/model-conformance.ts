/**
 * The conformance suite of the model providers (models/port.ts), as a function each provider's test
 * file runs with its own harness (test/unit/providers/<kind>.test.ts; the shape of LangGraph's
 * checkpoint-validation `specTest`): the provider is reached through the table (models/index.ts
 * `loadModels`), as the commands, the Lambdas and the eval reach it.
 *
 * What every language-model provider must do (`describeChatModelConformance`): a reply to a request
 * with a reply schema is that schema's JSON (constrained by the provider, or prose the lenient parser
 * reads), a complete reply stops with `end_turn` and one cut at the token limit with `max_tokens`,
 * usage counts the provider's tokens, and the same failures are the same typed errors (the names the
 * workflow's Retry/Catch match). What every provider must do (`describeAgentConformance`): agents
 * that answer from the evidence and cite it, with usage per role; a reply withheld by a content
 * filter is a refusal and no message, for a provider that has one.
 */
import { loadModels, type LoadedModels, type ModelKind, type ProviderDeps } from '../../models';
import { ContextOverflowError, ModelThrottledError, ModelUnavailableError } from '../../shared/errors';
import { reasonReplySchema } from '../../shared/llm/schemas';
import type { ChatRequest } from '../../shared/ports';
import { NO_ANSWER, type Message } from '../../shared/types';

/** A failure every service provider can be made to produce. */
export type Failure = 'throttled' | 'contextOverflow' | 'unavailable';

/** A scripted reply of a stand-in: text, whether it was cut at the token limit, usage. */
export interface Scripted {
  text: string;
  cut?: boolean;
  inputTokens: number;
  outputTokens: number;
}

/** One provider under test: its spec, deps and how to script its stand-in. */
export interface ConformanceHarness {
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

/**
 * A loaded set per test (`beforeEach`): what a provider keeps (an OpenAI-compatible server's detected
 * structured mode) is the set's, so no test sees another's. The first load (`beforeAll`, with time
 * for an in-process model) reads the model; later loads reuse it.
 * @returns the current test's loaded set.
 */
function loadedPerTest(spec: string): () => LoadedModels {
  let loaded: LoadedModels | undefined;
  beforeAll(async () => {
    await loadModels(spec);
  }, 120_000);
  beforeEach(async () => {
    loaded = await loadModels(spec);
  });
  return () => {
    if (loaded === undefined) throw new Error('loadedPerTest: used outside a test');
    return loaded;
  };
}

/**
 * The chat model rows for one language-model provider: reply schema, stop reasons and usage, typed
 * failures (those its stand-in can produce; an in-process model only a prompt over its context).
 */
export function describeChatModelConformance(h: ConformanceHarness): void {
  describe(`chat model conformance: ${h.kind}`, () => {
    const loaded = loadedPerTest(h.spec);

    it("answers a request with a reply schema with that schema's JSON", async () => {
      h.reply?.([{ text: JSON.stringify(ANSWER), inputTokens: 40, outputTokens: 12 }]);
      const model = loaded().chat('reasoner', h.deps())!;

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
      const model = loaded().chat('seeker', h.deps())!;
      const plain: ChatRequest = {
        role: 'seeker',
        system: 'Answer in one word.',
        messages: [{ role: 'user', text: 'What is the capital of France?' }],
        maxTokens: 16,
        temperature: 0,
      };

      const complete = await model.complete(plain);
      const cut = await model.complete({
        ...plain,
        system: 'Answer at length.',
        messages: [{ role: 'user', text: 'Describe Paris in detail.' }],
        maxTokens: 4,
      });

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
        const model = loaded().chat('seeker', h.deps())!;
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
}

/** The agent rows for any provider: answers from the evidence with citations and usage; a content filter's reply (when it has one). */
export function describeAgentConformance(h: ConformanceHarness): void {
  describe(`agent conformance: ${h.kind}`, () => {
    const loaded = loadedPerTest(h.spec);

    it('answers from the evidence and cites it, with the reasoner usage of its calls', async () => {
      h.reply?.([{ text: JSON.stringify(ANSWER), inputTokens: 50, outputTokens: 12 }]);
      const agents = loaded().agents(h.deps());

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
        const agents = loaded().agents(h.deps());

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
}
