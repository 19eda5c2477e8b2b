/**
 * A model call that waits for a throttling server says so in the run's progress as the wait starts,
 * with until when (issue 51, item 11), and the wait is counted apart from model time: an `ask` over an
 * OpenAI-compatible server on 127.0.0.1 that answers its first call with HTTP 429 and `Retry-After: 1`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ask } from '../../local/library';
import { resetGates } from '../../models/adaptive-gate';
import type { RunProgressEvent } from '../../shared/progress';
import { startThrottlingServer, type ThrottlingServer } from '../support/throttling-server';

jest.setTimeout(60_000);

let server: ThrottlingServer;
let dir: string;
const saved = { base: process.env.OPENAI_BASE_URL, key: process.env.OPENAI_API_KEY };

beforeAll(async () => {
  server = await startThrottlingServer('The mill opened in 1821.');
  process.env.OPENAI_BASE_URL = server.baseUrl;
  process.env.OPENAI_API_KEY = 'test';
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-throttle-'));
  writeFileSync(path.join(dir, 'mill.txt'), 'The mill opened in 1821. It stands by the river.');
  resetGates();
});

afterAll(async () => {
  await server.close();
  if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
  else process.env.OPENAI_BASE_URL = saved.base;
  if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
  else process.env.OPENAI_API_KEY = saved.key;
  rmSync(dir, { recursive: true, force: true });
});

it('says the wait as it starts, with until when, and counts it apart from model time', async () => {
  const infos: string[] = [];
  const result = await ask({
    corpus: dir,
    question: 'When did the mill open?',
    model: 'openai:throttled-model',
    options: { rounds: 1 },
    onProgress: (event: RunProgressEvent) => {
      if (event.type === 'info') infos.push(event.message);
    },
  });
  expect(infos).toContainEqual(
    expect.stringMatching(
      /^seeking agent of chunk 0 \(round 1\): .*throttled the call \(HTTP 429, Retry-After 1 s\); waiting 1\.0 s, until \d\d:\d\d:\d\d UTC$/,
    ),
  );
  expect(result.usage.seeker.throttleWaitMs).toBeGreaterThanOrEqual(1000);
});
