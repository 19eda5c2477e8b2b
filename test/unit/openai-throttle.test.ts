/**
 * Throttling towards an OpenAI-compatible server (models/openai/openai.ts `send`,
 * models/adaptive-gate.ts): a server that answers 429 above a few calls at once is driven at what it
 * takes, and every call is answered, none failed (issue 37: 19 of 375 chunks ran out of retries).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AdaptiveGate, resetGates } from '../../models/adaptive-gate';
import { OpenAiChatModel } from '../../models/openai/openai';
import type { ChatRequest } from '../../shared/ports';

const request: ChatRequest = { role: 'seeker', system: 'Answer.', messages: [{ role: 'user', text: 'Q?' }], maxTokens: 8, temperature: 0 };

describe('AdaptiveGate', () => {
  it('lets every call through until the first throttle, then halves what may be in flight and adds one per answered call', async () => {
    const gate = new AdaptiveGate();
    for (let i = 0; i < 8; i++) await gate.acquire();
    expect(gate.limit).toBe(Number.POSITIVE_INFINITY);

    gate.throttled();
    const ninth = gate.acquire();
    let entered = false;
    void ninth.then(() => (entered = true));
    await new Promise((resolve) => setImmediate(resolve));

    expect(gate.limit).toBe(4);
    expect(entered).toBe(false);
    for (let i = 0; i < 5; i++) gate.release();
    await ninth;
    expect(entered).toBe(true);
    gate.succeeded();
    expect(gate.limit).toBe(5);
  });

  it('gives up a wait when the run is aborted, taking no slot', async () => {
    const gate = new AdaptiveGate();
    await gate.acquire();
    gate.throttled();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);

    controller.abort();

    await expect(waiting).resolves.toBe(false);
  });
});

describe('a server that throttles above 3 calls at once', () => {
  let server: http.Server;
  let baseUrl = '';
  let inFlight = 0;
  let most = 0;
  let throttled = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (inFlight >= 3) {
          throttled++;
          res.writeHead(429, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"Too many requests","type":"rate_limit_error"}}');
          return;
        }
        inFlight++;
        most = Math.max(most, inFlight);
        setTimeout(() => {
          inFlight--;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } }));
        }, 20);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    resetGates();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('answers all of 60 calls sent at once, each throttled call sent again, with fewer in flight', async () => {
    const model = new OpenAiChatModel('m', { baseUrl });

    const replies = await Promise.all(Array.from({ length: 60 }, () => model.complete(request)));

    expect(replies.every((r) => r.text === 'ok')).toBe(true);
    expect(throttled).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(3);
    expect(replies.some((r) => /throttled this call/.test(r.warnings?.join('\n') ?? ''))).toBe(true);
  }, 60_000);
});

describe('the time a call waits out a throttling server (issue 51, item 11)', () => {
  it('is counted apart from model time: throttleWaitMs in the response and the role usage', async () => {
    const { startThrottlingServer } = await import('../support/throttling-server');
    const server = await startThrottlingServer('Paris');
    try {
      resetGates();
      const { LlmAgents } = await import('../../shared/llm/agents');
      const chat = new OpenAiChatModel('m', { baseUrl: server.baseUrl, apiKey: 'k' });
      const reply = await chat.complete(request);
      expect(reply.throttleWaitMs).toBeGreaterThanOrEqual(1000);

      // Through the agents: the role's model time leaves the wait out, which is counted apart.
      server.reset();
      resetGates();
      const agents = new LlmAgents({ seeker: chat, reasoner: chat, reasonerReply: 'prose' });
      const result = await agents.reason({
        question: 'What is the capital of France?',
        messages: [{ id: 'm1', chunkIndex: 0, round: 1, score: 90, evidence: 'Paris is the capital of France.', quotes: [], sources: ['d'] } as never],
        force: false,
      });
      expect(result.usage.throttleWaitMs).toBeGreaterThanOrEqual(1000);
      expect(result.usage.modelMs ?? 0).toBeLessThan(1000);
    } finally {
      await server.close();
    }
  });
});
