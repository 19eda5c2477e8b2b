/**
 * The run list, cancelling, health and the served OpenAPI document of `extagents serve` over HTTP on
 * 127.0.0.1 (local/services/serve.ts, the same route table and core as the Lambda): `GET /v1/runs`
 * paged newest first, `POST /v1/runs/{runId}/cancel` of a running run (a slow model keeps it running)
 * ending ABORTED with its state kept (and resumed afterwards under its run id, as `ask --run-id`
 * does), 409 for a finished run, `GET /v1/health` and `GET /v1/openapi.json` without a token.
 * No network beyond 127.0.0.1, no AWS credentials.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { OPENAPI_PATH } from '../../local/generate/openapi';
import { startServer, type LocalApiServer } from '../../local/services/serve';
import { startLocalStack } from '../../local/engine/stack';
import { webRunKey, type WebRunRecord } from '../../local/services/web';
import { resultKey, runRecordKey } from '../../shared/pipeline/layout';
import type { RunRecord } from '../../shared/pipeline/run-record';
import type { RunResult } from '../../shared/types';
import { ExtractiveReader } from '../../shared/extractive/reader';
import type { AgentModel, ReasonRequest, ReasonResult, SeekRequest, SeekResult } from '../../shared/ports';
import {
  API_VERSION,
  CreateRunResponseSchema,
  MessagePageSchema,
  ProblemSchema,
  RunPageSchema,
  RunStatusSchema,
  RunSummarySchema,
  type Problem,
  type RunStatus,
} from '../../shared/api/schemas';

jest.setTimeout(120_000);

const TOKEN = 'integration-test-token-0123456789';
/** Questions with this word are sought slowly (each seek waits SLOW_SEEK_MS), so their runs stay RUNNING. */
const SLOW = 'slowly';
const SLOW_SEEK_MS = 150;

/** The extractive reader, slowed down for the questions that ask for it; counts the slow seeks. */
class SlowModel implements AgentModel {
  readonly description = 'extractive, slowed down for tests';
  slowSeeks = 0;
  private readonly inner = new ExtractiveReader();

  async seek(request: SeekRequest): Promise<SeekResult> {
    if (request.question.includes(SLOW)) {
      this.slowSeeks += 1;
      await new Promise((resolve) => setTimeout(resolve, SLOW_SEEK_MS));
    }
    return this.inner.seek(request);
  }

  reason(request: ReasonRequest): Promise<ReasonResult> {
    return this.inner.reason(request);
  }
}

const filler = (i: number): string =>
  `Report ${i}. The harvest of the year was abundant and the treasury received its customary revenues. ` +
  'Roads were repaired in several districts and the postal service extended its routes to new towns. ' +
  'A delegation of the Cherokees visited the seat of government to speak of the villages on the river.';

let dir: string;
let server: LocalApiServer;
const model = new SlowModel();

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-serve-runs-'));
  server = await startServer({ stateDir: path.join(dir, 'state'), port: 0, token: TOKEN, retryIntervalMs: 1, model, maxConcurrentRuns: 2 });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Headers;
  json: unknown;
}

async function api(method: string, route: string, options: { json?: unknown; token?: string | null } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TOKEN}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${route}`, { method, headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

function problem(reply: Reply, status: number): Problem {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  return ProblemSchema.parse(reply.json);
}

/** A corpus of `files` documents under `corpora/<id>/`, through the API and its upload URLs. */
async function createCorpus(files: number): Promise<string> {
  const texts = Object.fromEntries(Array.from({ length: files }, (_, i) => [`doc-${i}.txt`, [filler(i), filler(i + 100), filler(i + 200)].join('\n\n')]));
  const created = await api('POST', '/v1/corpora', { json: { files: Object.keys(texts).map((p) => ({ path: p })) } });
  expect(created.status).toBe(201);
  const body = created.json as { corpusId: string; uploads: Array<{ path: string; url: string; method: string; headers: Record<string, string> }> };
  for (const upload of body.uploads) {
    const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: texts[upload.path] });
    expect(put.status).toBe(200);
  }
  return body.corpusId;
}

async function startRun(question: string, corpusId: string, options: Record<string, unknown> = {}): Promise<string> {
  const reply = await api('POST', '/v1/runs', { json: { question, corpus: { id: corpusId }, options: { rounds: 1, ...options } } });
  expect(reply.status).toBe(202);
  return CreateRunResponseSchema.parse(reply.json).runId;
}

async function waitFor(runId: string, done: (run: RunStatus) => boolean): Promise<RunStatus> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const run = RunStatusSchema.parse((await api('GET', `/v1/runs/${runId}`)).json);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run.status} (${run.progress.phase})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let corpusId: string;
const finished: string[] = [];
/** The run cancelled below, and what it had sought when cancelled. */
let cancelledRun: { runId: string; sought: number; total: number } | undefined;

describe('GET /v1/runs on extagents serve', () => {
  beforeAll(async () => {
    corpusId = await createCorpus(3);
    // Started one after the other, so their start times differ and the newest is the last.
    for (const question of ['Who visited the seat of government?', 'What was repaired?', 'What did the treasury receive?']) {
      const runId = await startRun(question, corpusId);
      await waitFor(runId, (run) => run.status !== 'RUNNING');
      finished.push(runId);
    }
  });

  it('pages 3 runs at limit 2 into two pages, newest first, following nextCursor and links.next', async () => {
    const first = RunPageSchema.parse((await api('GET', '/v1/runs?limit=2')).json);
    expect(first.nextCursor).not.toBeNull();
    const next = new URL(first.links.next ?? '');
    const second = RunPageSchema.parse((await api('GET', `${next.pathname}${next.search}`)).json);

    expect(first.runs.map((r) => r.runId)).toEqual([finished[2], finished[1]]);
    expect(second.runs.map((r) => r.runId)).toEqual([finished[0]]);
    expect(second.nextCursor).toBeNull();
    for (const run of [...first.runs, ...second.runs]) {
      expect(run).toMatchObject({ status: 'SUCCEEDED', links: { self: `${server.url}/v1/runs/${run.runId}` } });
      expect(run.stoppedAt).toBeDefined();
    }
  });

  it('answers 401 without the token, and 400 naming the parameter for a cursor it did not issue or a limit over 100', async () => {
    problem(await api('GET', '/v1/runs', { token: null }), 401);
    expect(problem(await api('GET', `/v1/runs?cursor=${'A'.repeat(30)}`), 400).errors?.[0]?.parameter).toBe('cursor');
    expect(problem(await api('GET', '/v1/runs?limit=101'), 400).errors?.[0]?.parameter).toBe('limit');
    expect(problem(await api('GET', '/v1/runs?limit=2&limit=3'), 400).errors).toEqual([{ parameter: 'limit', detail: 'given more than once: give one value' }]);
  });
});

describe('POST /v1/runs/{runId}/cancel on extagents serve', () => {
  it('cancels a running run: it ends ABORTED (RunCancelled), keeps the messages found so far, and a second cancel answers 202 again', async () => {
    const slowCorpus = await createCorpus(12);
    const runId = await startRun(`Who visited the seat of government, ${SLOW}?`, slowCorpus, { chunkTokens: 64 });
    await waitFor(runId, (run) => (run.progress.rounds[0]?.sought ?? 0) >= 2);
    const seeksBefore = model.slowSeeks;

    const cancelled = await api('POST', `/v1/runs/${runId}/cancel`);
    const run = RunStatusSchema.parse((await api('GET', `/v1/runs/${runId}`)).json);
    const again = await api('POST', `/v1/runs/${runId}/cancel`);
    const messages = MessagePageSchema.parse((await api('GET', `/v1/runs/${runId}/messages?limit=100`)).json);
    const listed = RunPageSchema.parse((await api('GET', '/v1/runs?limit=1')).json);
    await new Promise((resolve) => setTimeout(resolve, 5 * SLOW_SEEK_MS));

    expect(cancelled.status).toBe(202);
    expect(RunSummarySchema.parse(cancelled.json)).toMatchObject({ runId, status: 'ABORTED' });
    expect(run.status).toBe('ABORTED');
    expect(run.error?.name).toBe('RunCancelled');
    expect(run.progress.rounds[0].sought).toBeLessThan(run.progress.rounds[0].total);
    expect(again.status).toBe(202);
    expect(again.json).toEqual(cancelled.json);
    expect(messages.messages.length).toBeGreaterThan(0);
    expect(listed.runs[0]).toMatchObject({ runId, status: 'ABORTED' });
    cancelledRun = { runId, sought: run.progress.rounds[0].sought, total: run.progress.rounds[0].total };
    // The seeks in flight at the abort settle (the waits above); after that nothing seeks for the run.
    // (How many started between reading the progress and the abort depends on the machine's load.)
    expect(model.slowSeeks).toBeGreaterThanOrEqual(seeksBefore);
    const after = model.slowSeeks;
    await new Promise((resolve) => setTimeout(resolve, 2 * SLOW_SEEK_MS));
    expect(model.slowSeeks).toBe(after);
  });

  it('answers 409 (run-not-cancellable) for a finished run and leaves it SUCCEEDED; 404 for an unknown run; 400 for a malformed id', async () => {
    const runId = finished[0];

    const conflict = problem(await api('POST', `/v1/runs/${runId}/cancel`), 409);

    expect(conflict.type).toBe('tag:extagents,2026:run-not-cancellable');
    expect(conflict.detail).toContain('SUCCEEDED');
    expect(RunStatusSchema.parse((await api('GET', `/v1/runs/${runId}`)).json).status).toBe('SUCCEEDED');
    problem(await api('POST', '/v1/runs/run-does-not-exist/cancel'), 404);
    problem(await api('POST', '/v1/runs/%2E%2E%2Fx/cancel'), 400);
    problem(await api('POST', `/v1/runs/${runId}/cancel`, { token: null }), 401);
  });
});

describe('GET /v1/health and GET /v1/openapi.json on extagents serve', () => {
  it('answers the health without a token, with the version and nothing secret', async () => {
    const reply = await api('GET', '/v1/health', { token: null });

    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ status: 'ok', version: API_VERSION });
    expect(JSON.stringify(reply.json)).not.toContain(TOKEN);
    // Only GET is unauthenticated: another method on the path still needs the token.
    problem(await api('POST', '/v1/health', { token: null }), 401);
  });

  it('serves the OpenAPI document without a token: it parses, equals docs/openapi.yaml and lists the new paths', async () => {
    const reply = await fetch(`${server.url}/v1/openapi.json`);
    const document = (await reply.json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };

    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(document.openapi).toBe('3.1.0');
    expect(document).toEqual(parse(readFileSync(OPENAPI_PATH, 'utf8')));
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/runs', '/v1/runs/{runId}/cancel', '/v1/health', '/v1/openapi.json']));
    expect(Object.keys(document.paths['/v1/runs'])).toEqual(['post', 'get']);
  });
});

describe('a cancelled run resumes', () => {
  it('to SUCCEEDED when run again under its run id on the same state directory (as `ask --run-id`), seeking only the chunks not sought before', async () => {
    if (!cancelledRun) throw new Error('the cancel test did not run');
    const { runId, sought, total } = cancelledRun;
    await server.stop(); // the state directory's lock: one process at a time
    const stack = await startLocalStack({ stateDir: path.join(dir, 'state'), persistent: true, model, retryIntervalMs: 1, lockCommand: 'test' });
    try {
      const web = JSON.parse(await stack.blobs.getText(webRunKey(runId))) as WebRunRecord;
      const record = JSON.parse(await stack.blobs.getText(runRecordKey(runId))) as RunRecord;
      const seeksBefore = model.slowSeeks;

      await stack.execute({ runId, question: web.question, corpus: web.corpus, options: record.options });
      const result = JSON.parse(await stack.blobs.getText(resultKey(runId))) as RunResult;

      expect(result.answer.length).toBeGreaterThan(0);
      expect(model.slowSeeks - seeksBefore).toBe(total - sought);
    } finally {
      await stack.stop();
    }
  });
});
