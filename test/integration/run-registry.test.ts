/**
 * One run registry (local/engine/executions.ts): the runs of an `ask` (the CLI's and the library's)
 * are executions of the state directory as `serve`'s are, so `runs ls`, `serve`'s `GET /v1/runs` and
 * its page's run list show the same runs with the same status; and `serve` does not ingest, at its
 * start, the content-addressed corpora an `ask` made.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { executionRecordKey } from '../../local/engine/executions';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { runLiveKey } from '../../local/engine/run-heartbeat';
import { runLocal } from '../../local/engine/run';
import { listRuns } from '../../local/engine/runs';
import { startServer } from '../../local/services/serve';
import { ModelConfigurationError } from '../../shared/errors';
import type { AgentModel } from '../../shared/ports';
import { scriptedModel, writeCorpus } from '../support/corpus';

jest.setTimeout(120_000);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-registry-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test("an ask's runs are listed alike by runs ls, GET /v1/runs and the page, and serve does not ingest their corpus at start", async () => {
  // Arrange: one ask that answers, one whose reasoning model is misconfigured
  const stateDir = path.join(dir, 'state');
  const files = await resolveCorpus([writeCorpus(dir, { 'a.txt': 'The answer is saffron.', 'b.txt': 'Nothing here.' })]);
  const options = { chunkTokens: 64, rounds: 1 };
  await runLocal({ files, question: 'What is the answer?', options, stateDir, runId: 'ask-ok', model: scriptedModel() });
  const broken: AgentModel = { ...scriptedModel(), reason: async () => Promise.reject(new ModelConfigurationError('no such reasoning model')) };
  const failure = await runLocal({ files, question: 'What is the answer?', options, stateDir, runId: 'ask-failed', model: broken, retryIntervalMs: 1 }).catch(
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(ModelConfigurationError);
  const ingestionSummaries = (): string[] =>
    existsSync(path.join(stateDir, 'bucket', 'cache', 'corpora')) ? readdirSync(path.join(stateDir, 'bucket', 'cache', 'corpora')) : [];
  const token = 'registry-test-token-0123456789abcdef';

  // Act
  const listed = await listRuns(stateDir);
  const logs: string[] = [];
  const server = await startServer({ stateDir, port: 0, token, log: (line: string) => logs.push(line) });
  let api: { runs: Array<{ runId: string; status: string }> };
  let page: { runs: Array<{ runId: string; status: string; question: string | null; answer: string | null }> };
  let one: { status: string; result?: { answer: string } };
  try {
    const headers = { authorization: `Bearer ${token}` };
    api = (await (await fetch(`${server.url}/v1/runs`, { headers })).json()) as typeof api;
    page = (await (await fetch(`${server.url}/_web/runs`, { headers })).json()) as typeof page;
    one = (await (await fetch(`${server.url}/v1/runs/ask-ok`, { headers })).json()) as typeof one;
  } finally {
    await server.stop(); // waits for any ingestion it started
  }

  // Assert: the same runs, the same words
  const statuses = (runs: Array<{ runId: string; status: string }>) => Object.fromEntries(runs.map((r) => [r.runId, r.status]));
  expect(statuses(listed)).toEqual({ 'ask-ok': 'SUCCEEDED', 'ask-failed': 'FAILED' });
  expect(statuses(api.runs)).toEqual(statuses(listed));
  expect(statuses(page.runs)).toEqual(statuses(listed));
  expect(page.runs.find((r) => r.runId === 'ask-ok')).toMatchObject({ question: 'What is the answer?', answer: 'saffron' });
  expect(one).toMatchObject({ status: 'SUCCEEDED', result: { answer: 'saffron' } });
  // The ask's content-addressed corpus is not ingested again (nor at all) by serve's start
  expect(logs.filter((l) => /ingest/.test(l))).toEqual([]);
  expect(ingestionSummaries().filter((id) => id.startsWith('local-'))).toEqual([]);
});

test("GET /v1/runs/{id} of an ask another process runs with its own table shows its heartbeat's seeking counts", async () => {
  // Arrange: a finished ask made to look as if another live process still ran it (round 2, 5 of 9
  // chunks sought), as a CLI `ask` beside `serve` is: its table is its own, only its heartbeat is shared.
  const stateDir = path.join(dir, 'state');
  const files = await resolveCorpus([writeCorpus(dir, { 'a.txt': 'The answer is saffron.', 'b.txt': 'Nothing here.' })]);
  await runLocal({ files, question: 'What is the answer?', options: { chunkTokens: 64, rounds: 2 }, stateDir, runId: 'elsewhere', model: scriptedModel() });
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 60_000)'], { stdio: 'ignore' });
  const blobs = new FsBlobStore(path.join(stateDir, 'bucket'));
  const startedAt = new Date().toISOString();
  await blobs.put(executionRecordKey('elsewhere'), JSON.stringify({ status: 'RUNNING', startedAt, pid: other.pid }));
  const heartbeat = {
    pid: other.pid,
    host: hostname(),
    startedAt,
    heartbeatAt: new Date().toISOString(),
    seek: { type: 'seek', round: 2, done: 5, failed: 0, total: 9, messages: 3, etaMs: null },
  };
  await blobs.put(runLiveKey('elsewhere'), JSON.stringify(heartbeat));
  const token = 'registry-test-token-0123456789abcdef';
  const server = await startServer({ stateDir, port: 0, token, log: () => undefined });
  let run: { status: string; progress: { phase: string; rounds: Array<{ round: number; sought: number; total: number }> } };
  try {
    // Act
    run = (await (await fetch(`${server.url}/v1/runs/elsewhere`, { headers: { authorization: `Bearer ${token}` } })).json()) as typeof run;
  } finally {
    await server.stop();
    other.kill();
  }

  // Assert: round 1 done, round 2 as the heartbeat counts it
  expect(run.status).toBe('RUNNING');
  expect(run.progress.rounds.at(-1)).toEqual({ round: 2, sought: 5, total: 9 });
  expect(run.progress.rounds[0].sought).toBe(run.progress.rounds[0].total);
});
