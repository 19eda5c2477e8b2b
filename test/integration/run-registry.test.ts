/**
 * One run registry (local/engine/executions.ts): the runs of an `ask` (the CLI's and the library's)
 * are executions of the state directory as `serve`'s are, so `runs ls`, `serve`'s `GET /v1/runs` and
 * its page's run list show the same runs with the same status; and `serve` does not ingest, at its
 * start, the content-addressed corpora an `ask` made.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
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
