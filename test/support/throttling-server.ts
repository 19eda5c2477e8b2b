/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 for the throttling tests: the first call
 * (counted from the last `reset`) gets HTTP 429 with `Retry-After: 1`, every other call the reply
 * `content` with a small usage.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ThrottlingServer {
  /** `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  /** Calls received since the last `reset`. */
  calls: () => number;
  /** Count from zero again: the next call is throttled. */
  reset: () => void;
  close: () => Promise<void>;
}

export async function startThrottlingServer(content: string): Promise<ThrottlingServer> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls += 1;
      if (calls === 1) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        res.end('{"error":{"message":"Too many requests","type":"rate_limit_error"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content }, finish_reason: 'stop' }], usage: { prompt_tokens: 30, completion_tokens: 8 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls: () => calls,
    reset: () => {
      calls = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
