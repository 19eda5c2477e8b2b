/**
 * Aborting a run stops its model calls in flight (models/call-signal.ts): the library's
 * `ask({signal})` rejects with the exported RunAbortedError carrying the signal's reason, without
 * waiting for a slow model to answer.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ask, RunAbortedError } from '../../local/library';

let server: http.Server;
let requests = 0;
const pending: http.ServerResponse[] = [];
let dir: string;
const saved = { base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };

beforeAll(async () => {
  // A model server that takes a minute to answer: a call is only ever ended by its caller.
  server = http.createServer((req, res) => {
    requests++;
    req.resume();
    pending.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.env.OPENAI_BASE_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  process.env.OPENAI_API_KEY = 'test';
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-abort-'));
  writeFileSync(path.join(dir, 'mill.txt'), 'The mill opened in 1821. It stands by the river.');
});

afterAll(async () => {
  for (const res of pending) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
  else process.env.OPENAI_BASE_URL = saved.base;
  if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = saved.key;
  rmSync(dir, { recursive: true, force: true });
});

it('rejects at once with RunAbortedError and the reason, stopping the model call in flight', async () => {
  const controller = new AbortController();
  const asking = ask({ corpus: dir, question: 'When did the mill open?', model: 'openai:slow-model', signal: controller.signal }).catch((e: unknown) => e);
  const deadline = Date.now() + 60_000;
  while (requests === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(requests).toBeGreaterThan(0);

  const abortedAt = Date.now();
  controller.abort('the user closed the page');
  const error = await asking;
  const waited = Date.now() - abortedAt;

  expect(error).toBeInstanceOf(RunAbortedError);
  expect((error as RunAbortedError).name).toBe('RunAbortedError');
  expect((error as RunAbortedError).reason).toBe('the user closed the page');
  expect((error as Error).message).toContain('the user closed the page');
  // The server never answers: only a stopped call lets the run end (the adapter's own timeout is 120 s).
  expect(waited).toBeLessThan(20_000);
}, 120_000);
