/**
 * The API core and its HTTP edge (shared/api) over in-memory ports: validation with clear
 * problem+json bodies, idempotency (one execution per key and body, 409 for another body),
 * progress, results, message paging, corpora and upload URLs.
 */
import { InvalidInputError, NotFoundError } from '../../shared/errors';
import { BlobIdempotencyStore } from '../../shared/api/idempotency';
import type { PresignedUpload, Presigner } from '../../shared/api/ports';
import { modelPricing } from '../../models';
import type { ExecutionControl, ExecutionDescription, ExecutionPage, RunLauncher, StopReason } from '../../shared/executions';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES } from '../../shared/api/problem';
import { createApiHandler, isPublicRequest, type ApiRequest } from '../../shared/api/router';
import { buildOpenApiDocument } from '../../shared/api/openapi';
import { encodeCursor } from '../../shared/api/core';
import {
  CorpusSchema,
  CreateCorpusResponseSchema,
  CreateRunResponseSchema,
  MessagePageSchema,
  ProblemSchema,
  RunPageSchema,
  RunStatusSchema,
  RunSummarySchema,
  type Problem,
  API_VERSION,
  MAX_FILE_BYTES,
} from '../../shared/api/schemas';
import type { PrepareEvent } from '../../shared/pipeline/state';
import type { BlobStore, MessagePage, MessageStore, StoredStep } from '../../shared/ports';
import type { Message, RunResult } from '../../shared/types';

// ---------------------------------------------------------------------------------------------
// In-memory ports
// ---------------------------------------------------------------------------------------------

class MemoryBlobs implements BlobStore {
  readonly objects = new Map<string, Uint8Array>();
  async put(key: string, body: string | Uint8Array): Promise<void> {
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
  }
  async get(key: string): Promise<Uint8Array> {
    const body = this.objects.get(key);
    if (!body) throw new NotFoundError(`no ${key}`);
    return body;
  }
  async getText(key: string): Promise<string> {
    return Buffer.from(await this.get(key)).toString('utf8');
  }
  async list(prefix: string): Promise<Array<{ key: string; size: number }>> {
    return [...this.objects.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([key, body]) => ({ key, size: body.length }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
  }
  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }
}

class MemoryStore implements Pick<MessageStore, 'soughtChunks' | 'getSteps' | 'listMessages'> {
  sought = new Map<number, number[]>();
  steps: StoredStep[] = [];
  messages: Message[] = [];
  async soughtChunks(_runId: string, round: number): Promise<number[]> {
    return this.sought.get(round) ?? [];
  }
  async getSteps(): Promise<StoredStep[]> {
    return this.steps;
  }
  async listMessages(_runId: string, page: { round?: number; limit: number; after?: string }): Promise<MessagePage> {
    if (page.after !== undefined && !/^\d+$/.test(page.after)) throw new InvalidInputError('bad cursor');
    const ordered = this.messages
      .filter((m) => page.round === undefined || m.round === page.round)
      .sort((a, b) => b.score - a.score || a.chunkIndex - b.chunkIndex || a.round - b.round);
    const start = page.after === undefined ? 0 : Number(page.after);
    const slice = ordered.slice(start, start + page.limit);
    return { messages: slice, ...(start + page.limit < ordered.length && { next: String(start + page.limit) }) };
  }
}

class FakeLauncher implements RunLauncher, ExecutionControl {
  readonly starts: Array<{ name: string; input: PrepareEvent }> = [];
  readonly executions = new Map<string, ExecutionDescription>();
  failNext?: Error;
  async start(name: string, input: PrepareEvent): Promise<{ started: boolean }> {
    if (this.failNext) throw this.failNext;
    if (this.executions.has(name)) return { started: false };
    this.starts.push({ name, input });
    this.executions.set(name, { name, status: 'RUNNING', startedAt: '2026-01-02T03:04:05.000Z' });
    return { started: true };
  }
  async describe(name: string): Promise<ExecutionDescription | undefined> {
    return this.executions.get(name);
  }
  /** Newest first; the position is the index of the next execution (an invalid one is refused, as Step Functions' InvalidToken). */
  async list(options: { limit: number; after?: string }): Promise<ExecutionPage> {
    const all = [...this.executions.values()].sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.name.localeCompare(a.name));
    const from = options.after === undefined ? 0 : Number(options.after);
    if (!Number.isInteger(from) || from < 0) throw new InvalidInputError('bad position');
    const next = from + options.limit < all.length ? String(from + options.limit) : undefined;
    return { executions: all.slice(from, from + options.limit), ...(next !== undefined && { next }) };
  }
  async abort(name: string, reason: StopReason): Promise<ExecutionDescription | undefined> {
    const execution = this.executions.get(name);
    if (execution?.status === 'RUNNING') Object.assign(execution, { status: 'ABORTED', stoppedAt: '2026-01-02T03:05:00.000Z', ...reason });
    return execution;
  }
}

const presigner: Presigner = {
  async presignPut(key, options): Promise<PresignedUpload> {
    return {
      method: 'PUT',
      url: `https://uploads.test/${key}?ttl=${options.expiresInSeconds}`,
      headers: options.contentLength === undefined ? {} : { 'content-length': String(options.contentLength) },
      expiresAt: '2026-01-02T03:19:05.000Z',
    };
  },
};

function setup(options: { maxContentLength?: number; modelSpec?: string; quota?: { requestsPerMinute?: number; tokensPerMinute?: number } } = {}) {
  const blobs = new MemoryBlobs();
  const store = new MemoryStore();
  const launcher = new FakeLauncher();
  const internalErrors: unknown[] = [];
  let counter = 0;
  const handle = createApiHandler(
    {
      blobs,
      store,
      launcher,
      presigner: options.maxContentLength === undefined ? presigner : { ...presigner, maxContentLength: options.maxContentLength },
      idempotency: new BlobIdempotencyStore(blobs),
      now: () => new Date('2026-01-02T03:04:05Z'),
      randomHex: (bytes) => String(++counter).padStart(bytes * 2, '0'),
      ...(options.modelSpec !== undefined && { pricing: modelPricing(options.modelSpec) }),
      ...(options.quota !== undefined && { quota: options.quota }),
    },
    { onInternalError: (error) => internalErrors.push(error) },
  );
  const call = async (request: Partial<ApiRequest> & { json?: unknown }) => {
    const { json, ...rest } = request;
    const response = await handle({
      method: 'GET',
      path: '/',
      query: {},
      headers: json === undefined ? {} : { 'Content-Type': 'application/json' },
      principal: 'arn:aws:iam::123456789012:user/alice',
      baseUrl: 'https://api.test/prod',
      ...(json !== undefined && { body: JSON.stringify(json) }),
      ...rest,
    });
    return { ...response, json: JSON.parse(response.body || 'null') as unknown };
  };
  return { blobs, store, launcher, internalErrors, call };
}

/** Assert an RFC 9457 problem response and return the problem. */
function problemOf(response: { status: number; headers: Record<string, string>; json: unknown }, status: number): Problem {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_CONTENT_TYPE);
  const problem = ProblemSchema.parse(response.json);
  expect(problem.status).toBe(status);
  expect(problem.title.length).toBeGreaterThan(0);
  expect(problem.detail.length).toBeGreaterThan(0);
  return problem;
}

const corpusFiles = (blobs: MemoryBlobs, id = 'c1') => {
  void blobs.put(`corpora/${id}/a.txt`, 'Alpha text.');
  void blobs.put(`corpora/${id}/b.txt`, 'Beta text, longer.');
};

const startRun = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  path: '/v1/runs',
  json: body,
  headers: { 'content-type': 'application/json', ...headers },
});

// ---------------------------------------------------------------------------------------------
// POST /v1/runs
// ---------------------------------------------------------------------------------------------

describe('POST /v1/runs', () => {
  it('answers 422 with the estimate when options.maxCostUsd is under the cost of an ingested corpus, and starts nothing', async () => {
    const { blobs, launcher, call } = setup({ modelSpec: 'bedrock:us.meta.llama3-3-70b-instruct-v1:0' });
    corpusFiles(blobs);
    const ingestion = {
      corpusId: 'c1',
      prefix: 'corpora/c1/',
      chunkTokens: 8000,
      files: [],
      skipped: [],
      totals: { files: 2, bytes: 29, documents: 2, tokens: 400_000, chunks: 60 },
      ingestedAt: '2026-01-02T03:00:00.000Z',
    };
    await blobs.put('cache/corpora/c1/ingestion.json', JSON.stringify(ingestion));

    const refused = problemOf(await call(startRun({ question: 'Who?', corpus: { id: 'c1' }, options: { maxCostUsd: 0.01 } })), 422);
    const within = await call(startRun({ question: 'Who?', corpus: { id: 'c1' }, options: { maxCostUsd: 1000 } }));

    expect(refused.type).toBe('tag:extagents,2026:cost-limit-exceeded');
    expect(refused.detail).toMatch(/^Refused before any model call: the run would cost at most \$/);
    expect(refused.estimate).toMatchObject({ seeker: { calls: 120 }, maxCostUsd: 0.01, totalUsd: expect.any(Number) });
    expect(refused.estimate!.totalUsd!).toBeGreaterThan(0.01);
    expect(within.status).toBe(202);
    expect(launcher.starts).toHaveLength(1);
  });

  it('answers 422 with the refused plan when the stated quota cannot carry the seeks of an ingested corpus, as Prepare would, and starts nothing', async () => {
    const { blobs, launcher, call } = setup({ quota: { tokensPerMinute: 5000 } });
    corpusFiles(blobs);
    // 60 chunks of about 6,700 tokens: one seek counts more than 5,000 tokens a minute.
    const ingestion = {
      corpusId: 'c1',
      prefix: 'corpora/c1/',
      chunkTokens: 8000,
      files: [],
      skipped: [],
      totals: { files: 2, bytes: 29, documents: 2, tokens: 400_000, chunks: 60 },
      ingestedAt: '2026-01-02T03:00:00.000Z',
    };
    await blobs.put('cache/corpora/c1/ingestion.json', JSON.stringify(ingestion));

    const byDeployment = problemOf(await call(startRun({ question: 'Who?', corpus: { id: 'c1' } })), 422);
    const byRun = problemOf(await call(startRun({ question: 'Who?', corpus: { id: 'c1' }, options: { quotaTokensPerMinute: 6000 } })), 422);
    const carried = await call(startRun({ question: 'Who?', corpus: { id: 'c1' }, options: { quotaTokensPerMinute: 2_000_000 } }));

    expect(byDeployment.type).toBe('tag:extagents,2026:quota-exceeded');
    expect(byDeployment.detail).toMatch(/^Refused before any model call: one seek counts [\d,]+ tokens against a quota of 5,000 tokens per minute/);
    expect(byDeployment.concurrency).toMatchObject({ concurrency: 1, boundBy: 'minimum', quota: { tokensPerMinute: 5000 }, tokensPerSeek: expect.any(Number) });
    expect(byDeployment.concurrency!.tokensPerSeek).toBeGreaterThan(5000);
    expect(byRun.detail).toMatch(/against a quota of 6,000 tokens per minute/);
    expect(carried.status).toBe(202);
    expect(launcher.starts).toHaveLength(1);
  });

  it('starts a run over a corpus id and answers 202 with the run id, status, links and Location', async () => {
    const { blobs, launcher, call } = setup();
    corpusFiles(blobs);

    const response = await call(startRun({ question: ' Who? ', corpus: { id: 'c1' }, options: { rounds: 1 } }));

    expect(response.status).toBe(202);
    const body = CreateRunResponseSchema.parse(response.json);
    expect(body.runId).toMatch(/^run-20260102T030405-[0-9a-f]{12}$/);
    expect(body.status).toBe('RUNNING');
    expect(body.links.self).toBe(`https://api.test/prod/v1/runs/${body.runId}`);
    expect(response.headers.location).toBe(body.links.self);
    expect(launcher.starts).toHaveLength(1);
    expect(launcher.starts[0].name).toBe(body.runId);
    expect(launcher.starts[0].input).toMatchObject({
      runId: body.runId,
      question: 'Who?',
      corpus: { prefix: 'corpora/c1/' },
      options: { rounds: 1, chunkTokens: 8000 },
    });
  });

  it('rejects an unknown field with 400 naming it by JSON pointer', async () => {
    const { blobs, launcher, call } = setup();
    corpusFiles(blobs);

    const problem = problemOf(await call(startRun({ question: 'Q', corpus: { id: 'c1', bucket: 'other' }, extra: 1 })), 400);

    expect(problem.type).toBe('tag:extagents,2026:validation-error');
    expect(problem.errors).toEqual(
      expect.arrayContaining([
        { pointer: '/extra', detail: 'unknown field "extra"' },
        { pointer: '/corpus/bucket', detail: 'unknown field "bucket"' },
      ]),
    );
    expect(launcher.starts).toHaveLength(0);
  });

  it('lists every problem of a malformed body: a missing question, a corpus with two sources, an option out of range', async () => {
    const { call } = setup();

    const problem = problemOf(await call(startRun({ corpus: { id: 'c1', prefix: 'corpora/c1/' }, options: { rounds: 99 } })), 400);

    const pointers = (problem.errors ?? []).map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/question', '/corpus', '/options/rounds']));
    expect(problem.errors?.find((e) => e.pointer === '/question')?.detail).toBe('required (string)');
    expect(problem.errors?.find((e) => e.pointer === '/corpus')?.detail).toBe('corpus needs exactly one of id, prefix or keys');
    expect(problem.detail).toMatch(/^Invalid request: /);
  });

  it.each([
    [{ prefix: 's3://other-bucket/data/' }, /not a URI/],
    [{ prefix: 'runs/' }, /must not point into runs\//],
    [{ prefix: 'r' }, /must not point into runs\//],
    [{ keys: ['api/idempotency/x.json'] }, /must not point into api\//],
    [{ prefix: 'cache/chunks/' }, /must not point into cache\//],
    [{ keys: ['corpora/../runs/x/run.json'] }, /"\.\."/],
    [{ keys: ['/etc/passwd'] }, /must not start with "\/"/],
  ])("refuses a corpus outside the project's own corpus data: %j", async (corpus, message) => {
    const { call } = setup();

    const problem = problemOf(await call(startRun({ question: 'Q', corpus })), 400);

    expect(problem.errors?.map((e) => e.detail).join(' ')).toMatch(message);
  });

  it('answers 404 (corpus-not-found) naming the corpus field when a corpus id has no files or a key does not exist', async () => {
    const { blobs, launcher, call } = setup();
    await blobs.put('corpora/c1/a.txt', 'x');

    const missingId = problemOf(await call(startRun({ question: 'Q', corpus: { id: 'nothing-here' } })), 404);
    const missingKey = problemOf(await call(startRun({ question: 'Q', corpus: { keys: ['corpora/c1/a.txt', 'corpora/c1/zz.txt'] } })), 404);
    const missingPrefix = problemOf(await call(startRun({ question: 'Q', corpus: { prefix: 'corpora/none/' } })), 404);

    expect([missingId.type, missingKey.type, missingPrefix.type]).toEqual(Array(3).fill(PROBLEM_TYPES.corpusNotFound));
    expect(missingPrefix.errors).toEqual([{ pointer: '/corpus/prefix', detail: 'no object under prefix "corpora/none/"' }]);

    expect(missingId.errors).toEqual([{ pointer: '/corpus/id', detail: expect.stringContaining('no corpus with id "nothing-here"') }]);
    expect(missingKey.errors).toEqual([{ pointer: '/corpus/keys/1', detail: 'no object with key "corpora/c1/zz.txt"' }]);
    expect(launcher.starts).toHaveLength(0);
  });

  it('answers 415 for a body not sent as JSON and 400 for malformed JSON', async () => {
    const { call } = setup();

    const form = problemOf(
      await call({ method: 'POST', path: '/v1/runs', body: 'question=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
    );
    const broken = problemOf(await call({ method: 'POST', path: '/v1/runs', body: '{"question":', headers: { 'content-type': 'application/json' } }), 400);

    expect(form.detail).toContain('Content-Type: application/json');
    expect(broken.errors?.[0].detail).toMatch(/^the body is not valid JSON/);
  });

  it('answers 415 for a compressed body (Content-Encoding is not decoded) and 400 for a query parameter given twice', async () => {
    const { call, launcher } = setup();

    const gzip = problemOf(
      await call({ method: 'POST', path: '/v1/runs', body: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
      415,
    );
    const twice = problemOf(await call({ method: 'GET', path: '/v1/runs', query: { limit: '3' }, repeatedQuery: ['limit'] }), 400);

    expect(gzip.detail).toContain('without a Content-Encoding');
    expect(twice.errors).toEqual([{ parameter: 'limit', detail: 'given more than once: give one value' }]);
    expect(launcher.starts).toHaveLength(0);
  });

  it('answers 413 for a body over 1 MiB', async () => {
    const { call } = setup();

    const problem = problemOf(await call(startRun({ question: 'x'.repeat(1_100_000), corpus: { id: 'c1' } })), 413);

    expect(problem.title).toBe('Content Too Large');
  });

  it('starts one execution for the same Idempotency-Key and body, and answers the same run id again', async () => {
    const { blobs, launcher, call } = setup();
    corpusFiles(blobs);
    const body = { question: 'Who?', corpus: { id: 'c1' } };

    const first = await call(startRun(body, { 'Idempotency-Key': 'order-42' }));
    const retry = await call(startRun(body, { 'idempotency-key': 'order-42' }));

    expect(first.status).toBe(202);
    expect(retry.status).toBe(202);
    const firstId = CreateRunResponseSchema.parse(first.json).runId;
    expect(CreateRunResponseSchema.parse(retry.json).runId).toBe(firstId);
    expect(firstId).toMatch(/^run-[0-9a-f]{32}$/);
    expect(launcher.starts).toHaveLength(1);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });

  it('treats spelled-out default options as the same request under one Idempotency-Key', async () => {
    const { blobs, launcher, call } = setup();
    corpusFiles(blobs);

    await call(startRun({ question: 'Who?', corpus: { id: 'c1' } }, { 'Idempotency-Key': 'k-1' }));
    const retry = await call(startRun({ corpus: { prefix: 'corpora/c1/' }, question: 'Who?  ', options: { rounds: 2 } }, { 'Idempotency-Key': 'k-1' }));

    expect(retry.status).toBe(202);
    expect(launcher.starts).toHaveLength(1);
  });

  it('answers 409 when the same Idempotency-Key comes with a different body, and starts nothing', async () => {
    const { blobs, launcher, call } = setup();
    corpusFiles(blobs);
    await call(startRun({ question: 'Who?', corpus: { id: 'c1' } }, { 'Idempotency-Key': 'order-42' }));

    const problem = problemOf(await call(startRun({ question: 'Where?', corpus: { id: 'c1' } }, { 'Idempotency-Key': 'order-42' })), 409);

    expect(problem.type).toBe('tag:extagents,2026:idempotency-conflict');
    expect(problem.detail).toContain('different request');
    expect(launcher.starts).toHaveLength(1);
  });

  it('scopes Idempotency-Keys to the caller: another principal with the same key gets its own run', async () => {
    const { blobs, launcher, call } = setup();
    corpusFiles(blobs);
    const body = { question: 'Who?', corpus: { id: 'c1' } };

    const alice = await call(startRun(body, { 'Idempotency-Key': 'same' }));
    const bob = await call({ ...startRun(body, { 'Idempotency-Key': 'same' }), principal: 'arn:aws:iam::123456789012:user/bob' });

    expect(CreateRunResponseSchema.parse(bob.json).runId).not.toBe(CreateRunResponseSchema.parse(alice.json).runId);
    expect(launcher.starts).toHaveLength(2);
  });

  it('rejects an Idempotency-Key that is not printable ASCII', async () => {
    const { blobs, call } = setup();
    corpusFiles(blobs);

    const problem = problemOf(await call(startRun({ question: 'Q', corpus: { id: 'c1' } }, { 'Idempotency-Key': 'clé' })), 400);

    expect(problem.errors?.[0]).toMatchObject({ header: 'Idempotency-Key' });
  });

  it('reports an empty Idempotency-Key and an empty prefix once each, not once per rule', async () => {
    const { launcher, call } = setup();

    const problem = problemOf(await call(startRun({ question: 'Q', corpus: { prefix: '' } }, { 'Idempotency-Key': '' })), 400);

    expect(problem.errors).toEqual([
      { header: 'Idempotency-Key', detail: 'Idempotency-Key must be 1-255 printable ASCII characters (no leading or trailing space)' },
      { pointer: '/corpus/prefix', detail: 'prefix must not be empty' },
    ]);
    expect(launcher.starts).toHaveLength(0);
  });

  it('answers 500 with a generic detail when the launcher fails, and reports the error to the log hook', async () => {
    const { blobs, launcher, internalErrors, call } = setup();
    corpusFiles(blobs);
    launcher.failNext = new Error('socket hang up: secret internals');

    const problem = problemOf(await call(startRun({ question: 'Q', corpus: { id: 'c1' } })), 500);

    expect(problem.detail).not.toContain('secret');
    expect(internalErrors).toHaveLength(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Routing
// ---------------------------------------------------------------------------------------------

describe('routing', () => {
  it('answers 404 for an unknown path and 405 with Allow for a known path with another method', async () => {
    const { call } = setup();

    problemOf(await call({ method: 'GET', path: '/v2/runs' }), 404);
    const notAllowed = await call({ method: 'DELETE', path: '/v1/runs/abc' });

    problemOf(notAllowed, 405);
    expect(notAllowed.headers.allow).toBe('GET');
  });

  it('rejects query parameters on a route that takes none', async () => {
    const { call } = setup();

    const problem = problemOf(await call({ method: 'GET', path: '/v1/runs/abc', query: { verbose: '1' } }), 400);

    expect(problem.errors).toEqual([{ parameter: 'verbose', detail: 'unknown query parameter "verbose"' }]);
  });
});

// ---------------------------------------------------------------------------------------------
// GET /v1/runs, POST /v1/runs/{runId}/cancel, GET /v1/health, GET /v1/openapi.json
// ---------------------------------------------------------------------------------------------

describe('GET /v1/runs', () => {
  const execution = (name: string, startedAt: string, status: ExecutionDescription['status'] = 'SUCCEEDED'): ExecutionDescription => ({
    name,
    status,
    startedAt,
    ...(status !== 'RUNNING' && { stoppedAt: startedAt }),
  });

  it('pages the runs newest first with an opaque cursor: 3 runs at limit 2 are two pages', async () => {
    const { launcher, call } = setup();
    launcher.executions.set('r-old', execution('r-old', '2026-01-01T00:00:00.000Z'));
    launcher.executions.set('r-new', execution('r-new', '2026-01-03T00:00:00.000Z', 'RUNNING'));
    launcher.executions.set('r-mid', execution('r-mid', '2026-01-02T00:00:00.000Z', 'FAILED'));

    const first = await call({ method: 'GET', path: '/v1/runs', query: { limit: '2' } });
    const firstPage = RunPageSchema.parse(first.json);
    const second = RunPageSchema.parse((await call({ method: 'GET', path: '/v1/runs', query: { limit: '2', cursor: firstPage.nextCursor ?? '' } })).json);

    expect(first.status).toBe(200);
    expect(firstPage.runs.map((r) => [r.runId, r.status])).toEqual([
      ['r-new', 'RUNNING'],
      ['r-mid', 'FAILED'],
    ]);
    expect(firstPage.runs[0]).toEqual({
      runId: 'r-new',
      status: 'RUNNING',
      startedAt: '2026-01-03T00:00:00.000Z',
      links: { self: 'https://api.test/prod/v1/runs/r-new', messages: 'https://api.test/prod/v1/runs/r-new/messages' },
    });
    expect(firstPage.links.next).toBe(`https://api.test/prod/v1/runs?limit=2&cursor=${firstPage.nextCursor ?? ''}`);
    expect(second.runs.map((r) => r.runId)).toEqual(['r-old']);
    expect(second.nextCursor).toBeNull();
    expect(second.links.next).toBeUndefined();
  });

  it('answers an empty page when there is no run, with the default page size of 20', async () => {
    const { call } = setup();

    const response = await call({ method: 'GET', path: '/v1/runs' });

    expect(response.json).toEqual({ runs: [], nextCursor: null, links: { self: 'https://api.test/prod/v1/runs?limit=20' } });
  });

  it("rejects a cursor of a run's messages, a made-up cursor and a limit out of range with 400 naming the parameter", async () => {
    const { call } = setup();
    const messagesCursor = encodeCursor('r1', 'x'.repeat(12));

    const problems = [
      problemOf(await call({ method: 'GET', path: '/v1/runs', query: { cursor: messagesCursor } }), 400),
      problemOf(await call({ method: 'GET', path: '/v1/runs', query: { cursor: 'A'.repeat(24) } }), 400),
      problemOf(await call({ method: 'GET', path: '/v1/runs', query: { limit: '0' } }), 400),
    ];

    expect(problems.map((p) => p.errors?.[0]?.parameter)).toEqual(['cursor', 'cursor', 'limit']);
    expect(problems[0].detail).toContain('the run list');
  });
});

describe('POST /v1/runs/{runId}/cancel', () => {
  it('stops a running run: 202 with status ABORTED, and the run reports RunCancelled', async () => {
    const { launcher, call } = setup();
    launcher.executions.set('r1', { name: 'r1', status: 'RUNNING', startedAt: '2026-01-02T03:04:05.000Z' });

    const response = await call({ method: 'POST', path: '/v1/runs/r1/cancel' });
    const run = RunStatusSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1' })).json);

    expect(response.status).toBe(202);
    expect(RunSummarySchema.parse(response.json)).toMatchObject({ runId: 'r1', status: 'ABORTED', stoppedAt: '2026-01-02T03:05:00.000Z' });
    expect(run.status).toBe('ABORTED');
    expect(run.error?.name).toBe('RunCancelled');
    expect(run.progress.phase).toBe('aborted'); // not "finished"
  });

  it('answers 202 again for an ABORTED run, without stopping anything', async () => {
    const { launcher, call } = setup();
    launcher.executions.set('r1', {
      name: 'r1',
      status: 'ABORTED',
      startedAt: '2026-01-02T03:04:05.000Z',
      stoppedAt: '2026-01-02T03:04:09.000Z',
      error: 'ProcessStopped',
    });
    const abort = jest.spyOn(launcher, 'abort');

    const response = await call({ method: 'POST', path: '/v1/runs/r1/cancel' });

    expect(response.status).toBe(202);
    expect(response.json).toMatchObject({ runId: 'r1', status: 'ABORTED', stoppedAt: '2026-01-02T03:04:09.000Z' });
    expect(abort).not.toHaveBeenCalled();
  });

  it('answers 409 (run-not-cancellable) for a run that has already ended, and 404 for an unknown run', async () => {
    const { launcher, blobs, call } = setup();
    launcher.executions.set('done', { name: 'done', status: 'SUCCEEDED', startedAt: '2026-01-02T03:04:05.000Z', stoppedAt: '2026-01-02T03:04:09.000Z' });
    launcher.executions.set('failed', { name: 'failed', status: 'FAILED', startedAt: '2026-01-02T03:04:05.000Z', stoppedAt: '2026-01-02T03:04:09.000Z' });
    await blobs.put('runs/asked/result.json', JSON.stringify({ answer: 'x' }));

    const problems = [
      problemOf(await call({ method: 'POST', path: '/v1/runs/done/cancel' }), 409),
      problemOf(await call({ method: 'POST', path: '/v1/runs/failed/cancel' }), 409),
      problemOf(await call({ method: 'POST', path: '/v1/runs/asked/cancel' }), 409),
    ];
    problemOf(await call({ method: 'POST', path: '/v1/runs/nope/cancel' }), 404);

    expect(problems.map((p) => p.type)).toEqual([PROBLEM_TYPES.runNotCancellable, PROBLEM_TYPES.runNotCancellable, PROBLEM_TYPES.runNotCancellable]);
    expect(problems[1].detail).toContain('FAILED');
    expect(launcher.executions.get('done')?.status).toBe('SUCCEEDED');
  });
});

describe('GET /v1/health and GET /v1/openapi.json', () => {
  it('answers the health with the API version and nothing else', async () => {
    const { call } = setup();

    const response = await call({ method: 'GET', path: '/v1/health', principal: 'anonymous' });

    expect(response.status).toBe(200);
    expect(response.json).toEqual({ status: 'ok', version: API_VERSION });
  });

  it('serves the generated OpenAPI document, listing the new routes', async () => {
    const { call } = setup();

    const response = await call({ method: 'GET', path: '/v1/openapi.json' });

    expect(response.status).toBe(200);
    expect(response.json).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('marks only health and the OpenAPI document as answered without authentication', () => {
    expect(isPublicRequest('GET', '/v1/health')).toBe(true);
    expect(isPublicRequest('get', '/v1/openapi.json')).toBe(true);
    expect(isPublicRequest('POST', '/v1/health')).toBe(false);
    expect(isPublicRequest('GET', '/v1/runs')).toBe(false);
    expect(isPublicRequest('GET', '/v1/health/')).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// GET /v1/runs/{runId}
// ---------------------------------------------------------------------------------------------

const record = {
  runId: 'r1',
  question: 'Who?',
  options: { rounds: 2 },
  documents: [],
  skipped: [],
  chunks: 10,
  tokens: 1234,
  tokenizer: 'o200k_base',
  createdAt: '2026-01-02T03:04:06.000Z',
};

const step = (seq: number, round: number, k: number, outcome: 'answered' | 'refused'): StoredStep => ({
  seq,
  round,
  k,
  messagesUsed: k,
  evidenceTokens: 10 * k,
  outcome,
  answer: outcome === 'answered' ? 'Alpha' : 'NO ANSWER',
  citedMessageIds: [],
});

describe('GET /v1/runs/{runId}', () => {
  it('reports the chunks sought per round and the KAR steps while the run is running', async () => {
    const { blobs, store, launcher, call } = setup();
    launcher.executions.set('r1', { name: 'r1', status: 'RUNNING', startedAt: '2026-01-02T03:04:05.000Z' });
    await blobs.put('runs/r1/run.json', JSON.stringify(record));
    store.sought.set(1, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    store.sought.set(2, [0, 3]);
    store.steps = [step(0, 1, 1, 'refused'), step(1, 1, 2, 'refused')];

    const response = await call({ method: 'GET', path: '/v1/runs/r1' });

    expect(response.status).toBe(200);
    const body = RunStatusSchema.parse(response.json);
    expect(body.status).toBe('RUNNING');
    expect(body.question).toBe('Who?');
    expect(body.progress).toEqual({
      phase: 'seeking',
      chunks: 10,
      tokens: 1234,
      rounds: [
        { round: 1, sought: 10, total: 10 },
        { round: 2, sought: 2, total: 10 },
      ],
      karSteps: [
        { seq: 0, round: 1, k: 1, messagesUsed: 1, evidenceTokens: 10, outcome: 'refused' },
        { seq: 1, round: 1, k: 2, messagesUsed: 2, evidenceTokens: 20, outcome: 'refused' },
      ],
    });
    expect(body.result).toBeUndefined();
  });

  it("reports a reseek promising run's later rounds out of the chunks its rule chose", async () => {
    const { blobs, store, launcher, call } = setup();
    launcher.executions.set('r1', { name: 'r1', status: 'RUNNING', startedAt: '2026-01-02T03:04:05.000Z' });
    await blobs.put('runs/r1/run.json', JSON.stringify({ ...record, options: { ...record.options, reseek: 'promising' } }));
    await blobs.put('runs/r1/reseek/items-round-2.json', JSON.stringify([{ chunk: 0 }, { chunk: 3 }, { chunk: 7 }]));
    store.sought.set(1, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    store.sought.set(2, [0, 3]);

    const body = RunStatusSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1' })).json);

    expect(body.progress?.rounds).toEqual([
      { round: 1, sought: 10, total: 10 },
      { round: 2, sought: 2, total: 3 },
    ]);
  });

  it('reports the preparing phase before the run record exists', async () => {
    const { launcher, call } = setup();
    launcher.executions.set('r1', { name: 'r1', status: 'RUNNING', startedAt: '2026-01-02T03:04:05.000Z' });

    const body = RunStatusSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1' })).json);

    expect(body.progress).toEqual({ phase: 'preparing', chunks: null, tokens: null, rounds: [], karSteps: [] });
  });

  it('returns the answer, citations, trace and usage once the run succeeded', async () => {
    const { blobs, launcher, call } = setup();
    launcher.executions.set('r1', { name: 'r1', status: 'SUCCEEDED', startedAt: '2026-01-02T03:04:05.000Z', stoppedAt: '2026-01-02T03:05:00.000Z' });
    await blobs.put('runs/r1/run.json', JSON.stringify(record));
    const result: RunResult = {
      runId: 'r1',
      question: 'Who?',
      answer: 'Alpha',
      answerable: true,
      citations: [{ messageId: 'r1-c0', chunkIndex: 0, round: 1, score: 90, documentId: 'a.txt', start: 0, end: 5, quote: 'Alpha' }],
      trace: [{ round: 1, k: 1, messagesUsed: 1, evidenceTokens: 3, outcome: 'answered' }],
      usage: { seeker: { calls: 10, inputTokens: 100, outputTokens: 10 }, reasoner: { calls: 1, inputTokens: 20, outputTokens: 2 } },
      rounds: 2,
      chunks: 10,
      poolSize: 3,
      skipped: [],
      chunkFailures: [],
      retries: { total: 0, byRole: { seeker: 0, reasoner: 0 }, byError: {} },
      warnings: [],
    };
    await blobs.put('runs/r1/result.json', JSON.stringify(result));

    const body = RunStatusSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1' })).json);

    expect(body.status).toBe('SUCCEEDED');
    expect(body.stoppedAt).toBe('2026-01-02T03:05:00.000Z');
    expect(body.progress.phase).toBe('finished');
    expect(body.result).toEqual(result);
  });

  it('returns the error name and message of a failed run', async () => {
    const { launcher, call } = setup();
    launcher.executions.set('r1', {
      name: 'r1',
      status: 'FAILED',
      startedAt: 't0',
      stoppedAt: 't1',
      error: 'EmptyCorpusError',
      cause: 'The corpus has no usable text',
    });

    const body = RunStatusSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1' })).json);

    expect(body.error).toEqual({ name: 'EmptyCorpusError', message: 'The corpus has no usable text' });
  });

  it('answers 404 for an unknown run and 400 for a malformed run id', async () => {
    const { call } = setup();

    problemOf(await call({ method: 'GET', path: '/v1/runs/nope' }), 404);
    const invalid = problemOf(await call({ method: 'GET', path: '/v1/runs/..%2Fsecret' }), 400);

    expect(invalid.errors?.[0]).toMatchObject({ parameter: 'runId' });
  });
});

// ---------------------------------------------------------------------------------------------
// GET /v1/runs/{runId}/messages
// ---------------------------------------------------------------------------------------------

const message = (round: number, chunkIndex: number, score: number): Message => ({
  id: `r${round}-c${chunkIndex}`,
  round,
  chunkIndex,
  score,
  evidence: `evidence ${chunkIndex}`,
  tokens: 2,
  quotes: [],
  sources: ['a.txt'],
});

describe('GET /v1/runs/{runId}/messages', () => {
  function withMessages() {
    const context = setup();
    context.launcher.executions.set('r1', { name: 'r1', status: 'SUCCEEDED', startedAt: 't0' });
    context.store.messages = [message(1, 0, 40), message(1, 1, 90), message(1, 2, 70), message(2, 0, 95), message(2, 2, 10)];
    return context;
  }

  it('pages the scored messages in pool order, following nextCursor to the end', async () => {
    const { call } = withMessages();

    const first = MessagePageSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { limit: '2' } })).json);
    const cursor = first.nextCursor ?? '';
    const second = MessagePageSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { limit: '2', cursor } })).json);
    const third = MessagePageSchema.parse(
      (await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { limit: '2', cursor: second.nextCursor ?? '' } })).json,
    );

    expect([...first.messages, ...second.messages, ...third.messages].map((m) => m.id)).toEqual(['r2-c0', 'r1-c1', 'r1-c2', 'r1-c0', 'r2-c2']);
    expect(first.links.next).toBe(`https://api.test/prod/v1/runs/r1/messages?limit=2&cursor=${cursor}`);
    expect(third.nextCursor).toBeNull();
    expect(third.links.next).toBeUndefined();
  });

  it('filters by round and uses the default page size of 20', async () => {
    const { call } = withMessages();

    const page = MessagePageSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { round: '2' } })).json);

    expect(page.round).toBe(2);
    expect(page.messages.map((m) => m.id)).toEqual(['r2-c0', 'r2-c2']);
    expect(page.links.self).toBe('https://api.test/prod/v1/runs/r1/messages?round=2&limit=20');
  });

  it('rejects a limit over 100, a non-numeric round, an unknown parameter and a cursor it did not issue', async () => {
    const { call } = withMessages();

    const bad = problemOf(await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { limit: '500', round: 'two', sort: 'asc' } }), 400);
    const cursor = problemOf(await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { cursor: 'bm90LWEtY3Vyc29y' } }), 400);

    expect(bad.errors?.map((e) => e.parameter).sort()).toEqual(['limit', 'round', 'sort']);
    expect(cursor.errors).toEqual([{ parameter: 'cursor', detail: expect.stringContaining('nextCursor') }]);
  });

  it('says what is expected of empty or non-integer round and limit parameters', async () => {
    const { call } = withMessages();

    const empty = problemOf(await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { round: '', limit: '' } }), 400);
    const fraction = problemOf(await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { round: '1.5', limit: '0' } }), 400);
    const emptyCursor = problemOf(await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { cursor: '' } }), 400);

    const expected = [
      { parameter: 'round', detail: 'round must be an integer from 1 to 10' },
      { parameter: 'limit', detail: 'limit must be an integer from 1 to 100' },
    ];
    expect(empty.errors).toEqual(expected);
    expect(fraction.errors).toEqual(expected);
    expect(emptyCursor.errors).toEqual([{ parameter: 'cursor', detail: 'cursor must be the nextCursor of a previous page of this run' }]);
  });

  it('rejects a cursor of another run with 400 instead of paging this run from it', async () => {
    const { launcher, call } = withMessages();
    launcher.executions.set('r2', { name: 'r2', status: 'SUCCEEDED', startedAt: 't0' });
    const first = MessagePageSchema.parse((await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { limit: '2' } })).json);

    const other = problemOf(await call({ method: 'GET', path: '/v1/runs/r2/messages', query: { limit: '2', cursor: first.nextCursor ?? '' } }), 400);
    const same = await call({ method: 'GET', path: '/v1/runs/r1/messages', query: { limit: '2', cursor: first.nextCursor ?? '' } });

    expect(other.errors).toEqual([{ parameter: 'cursor', detail: 'a cursor of another run: pass nextCursor of a previous page of run r2' }]);
    expect(same.status).toBe(200);
  });

  it('answers 404 for the messages of an unknown run', async () => {
    const { call } = setup();

    problemOf(await call({ method: 'GET', path: '/v1/runs/nope/messages' }), 404);
  });
});

// ---------------------------------------------------------------------------------------------
// Corpora
// ---------------------------------------------------------------------------------------------

describe('corpora', () => {
  it('creates a corpus with one upload URL per file under corpora/<id>/ and lists pending files', async () => {
    const { blobs, call } = setup();

    const created = await call({
      method: 'POST',
      path: '/v1/corpora',
      json: { files: [{ path: 'a.txt', size: 11 }, { path: 'notes/b.md' }], expiresInSeconds: 600 },
    });

    expect(created.status).toBe(201);
    const body = CreateCorpusResponseSchema.parse(created.json);
    expect(body.corpusId).toMatch(/^c-20260102-[0-9]{16}$/);
    expect(body.prefix).toBe(`corpora/${body.corpusId}/`);
    expect(body.uploads).toEqual([
      {
        path: 'a.txt',
        key: `corpora/${body.corpusId}/a.txt`,
        method: 'PUT',
        url: `https://uploads.test/corpora/${body.corpusId}/a.txt?ttl=600`,
        headers: { 'content-length': '11' },
        expiresAt: '2026-01-02T03:19:05.000Z',
      },
      {
        path: 'notes/b.md',
        key: `corpora/${body.corpusId}/notes/b.md`,
        method: 'PUT',
        url: `https://uploads.test/corpora/${body.corpusId}/notes/b.md?ttl=600`,
        headers: {},
        expiresAt: '2026-01-02T03:19:05.000Z',
      },
    ]);
    expect(created.headers.location).toBe(`https://api.test/prod/v1/corpora/${body.corpusId}`);

    await blobs.put(`corpora/${body.corpusId}/a.txt`, 'Alpha text.');
    const corpus = CorpusSchema.parse((await call({ method: 'GET', path: `/v1/corpora/${body.corpusId}` })).json);
    expect(corpus.files.map((f) => f.path)).toEqual(['a.txt']);
    expect(corpus.pending).toEqual(['notes/b.md']);
    expect(corpus.createdAt).toBe('2026-01-02T03:04:05.000Z');
  });

  it('refuses an announced size over the upload limit of a presigner that has one with 400 naming the file', async () => {
    const limited = setup({ maxContentLength: 1024 * 1024 });
    const aws = setup();
    const files = [
      { path: 'small.txt', size: 10 },
      { path: 'a.txt', size: 2_000_000 },
    ];

    const refused = problemOf(await limited.call({ method: 'POST', path: '/v1/corpora', json: { files } }), 400);
    const accepted = await aws.call({ method: 'POST', path: '/v1/corpora', json: { files } });

    expect(refused.errors).toEqual([
      { pointer: '/files/1/size', detail: 'a.txt is 2000000 bytes; this server accepts uploads of at most 1048576 bytes (1 MiB)' },
    ]);
    expect(limited.blobs.objects.size).toBe(0);
    expect(accepted.status).toBe(201);
  });

  it('refuses a file over MAX_FILE_BYTES (the largest readable document) on every server, with or without a presigner limit', async () => {
    const files = [{ path: 'huge.txt', size: MAX_FILE_BYTES + 1 }];

    const refused = problemOf(await setup().call({ method: 'POST', path: '/v1/corpora', json: { files } }), 400);
    const atLimit = await setup().call({ method: 'POST', path: '/v1/corpora', json: { files: [{ path: 'big.txt', size: MAX_FILE_BYTES }] } });

    expect(refused.errors).toEqual([
      { pointer: '/files/0/size', detail: `a file may have at most ${MAX_FILE_BYTES} bytes (500 MiB), the largest document the corpus readers decode` },
    ]);
    expect(atLimit.status).toBe(201);
  });

  it('rejects duplicate paths, unsafe paths and an empty file list', async () => {
    const { call } = setup();

    const duplicate = problemOf(await call({ method: 'POST', path: '/v1/corpora', json: { files: [{ path: 'a.txt' }, { path: 'a.txt' }] } }), 400);
    const unsafe = problemOf(await call({ method: 'POST', path: '/v1/corpora', json: { files: [{ path: '../runs/x' }] } }), 400);
    const empty = problemOf(await call({ method: 'POST', path: '/v1/corpora', json: { files: [] } }), 400);

    expect(duplicate.errors?.[0]).toEqual({ pointer: '/files', detail: 'file paths must be unique' });
    expect(unsafe.errors?.[0].pointer).toBe('/files/0/path');
    expect(empty.errors?.[0].pointer).toBe('/files');
  });

  /** An ingestion summary (shared/pipeline/ingest.ts `CorpusIngestion`) of corpus c1 with these files. */
  const summary = (files: Array<{ id: string; bytes: number; tokens?: number; chars?: number; skipped?: string }>) =>
    JSON.stringify({ corpusId: 'c1', prefix: 'corpora/c1/', files, skipped: [], totals: {}, ingestedAt: '2026-01-02T03:00:00.000Z' });

  it('reports sizes and marks tokens as not yet ingested until the ingestion summary lists the file at its size', async () => {
    const { blobs, call } = setup();
    corpusFiles(blobs);
    // Ingested before b.txt was re-uploaded with another size: only a.txt counts.
    await blobs.put(
      'cache/corpora/c1/ingestion.json',
      summary([
        { id: 'a.txt', bytes: 11, tokens: 3, chars: 11 },
        { id: 'b.txt', bytes: 5, tokens: 2, chars: 5 },
      ]),
    );

    const partial = CorpusSchema.parse((await call({ method: 'GET', path: '/v1/corpora/c1' })).json);
    await blobs.put(
      'cache/corpora/c1/ingestion.json',
      summary([
        { id: 'a.txt', bytes: 11, tokens: 3, chars: 11 },
        { id: 'b.txt', bytes: 18, tokens: 5, chars: 18 },
      ]),
    );
    const complete = CorpusSchema.parse((await call({ method: 'GET', path: '/v1/corpora/c1' })).json);

    expect(partial.files).toEqual([
      { path: 'a.txt', key: 'corpora/c1/a.txt', size: 11, ingested: true, tokens: 3, chars: 11 },
      { path: 'b.txt', key: 'corpora/c1/b.txt', size: 18, ingested: false, tokens: null, chars: null },
    ]);
    expect(partial.totals).toEqual({ files: 2, bytes: 29, tokens: null });
    expect(complete.totals).toEqual({ files: 2, bytes: 29, tokens: 8 });
    expect(partial.pending).toEqual([]);
  });

  it('reports a file ingestion skipped with its reason and no tokens', async () => {
    const { blobs, call } = setup();
    await blobs.put('corpora/c1/image.bin', new Uint8Array([0, 1, 2]));
    await blobs.put('cache/corpora/c1/ingestion.json', summary([{ id: 'image.bin', bytes: 3, skipped: 'binary (NUL bytes)' }]));

    const corpus = CorpusSchema.parse((await call({ method: 'GET', path: '/v1/corpora/c1' })).json);

    expect(corpus.files).toEqual([
      { path: 'image.bin', key: 'corpora/c1/image.bin', size: 3, ingested: true, tokens: 0, chars: 0, skipped: 'binary (NUL bytes)' },
    ]);
    expect(corpus.totals.tokens).toBe(0);
  });

  it('answers 404 for a corpus with neither files nor a creation record', async () => {
    const { call } = setup();

    problemOf(await call({ method: 'GET', path: '/v1/corpora/unknown' }), 404);
  });
});
