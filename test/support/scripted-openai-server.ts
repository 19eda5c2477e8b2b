/**
 * A small OpenAI-compatible server on 127.0.0.1 for tests: answers each request with the next
 * scripted reply (500 "no scripted reply" when none is left) and keeps what it received. Used by
 * the OpenAI adapter's tests and the `openai:` provider's conformance harness.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted reply: status, body, headers, and an optional delay before it is sent (ms). */
export interface ScriptedReply {
  status: number;
  body: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** What the server received. */
export interface ReceivedRequest {
  method?: string;
  url?: string;
  authorization?: string;
  body: Record<string, unknown>;
}

/** The server of one test file: its base URL (`http://127.0.0.1:<port>/v1`), the replies still to send, what it received. */
export interface ScriptedOpenAiServer {
  baseUrl: string;
  replies: ScriptedReply[];
  received: ReceivedRequest[];
}

/**
 * Start the server before the file's tests, empty its replies and what it received before each
 * test, stop it after them (jest's `beforeAll`, `beforeEach`, `afterAll` of the calling scope).
 * @returns the server's state, filled in once `beforeAll` ran.
 */
export function useScriptedOpenAiServer(): ScriptedOpenAiServer {
  const state: ScriptedOpenAiServer = { baseUrl: '', replies: [], received: [] };
  let server: http.Server | undefined;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let data = '';
      req.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
      req.on('end', () => {
        state.received.push({
          method: req.method,
          url: req.url,
          authorization: req.headers.authorization,
          body: JSON.parse(data || '{}') as Record<string, unknown>,
        });
        const reply = state.replies.shift() ?? { status: 500, body: '{"error":{"message":"no scripted reply"}}' };
        const send = (): void => {
          if (res.destroyed) return;
          res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
          res.end(reply.body);
        };
        if (reply.delayMs) {
          const timer = setTimeout(send, reply.delayMs);
          res.on('close', () => clearTimeout(timer));
        } else send();
      });
    });
    const listening = server;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    state.baseUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    const listening = server;
    if (listening === undefined) return;
    listening.closeAllConnections();
    await new Promise<void>((resolve) => listening.close(() => resolve()));
  });
  beforeEach(() => {
    state.replies = [];
    state.received = [];
  });
  return state;
}
