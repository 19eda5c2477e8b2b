/**
 * `extagents serve` end to end over HTTP on 127.0.0.1 (local/services/serve.ts): the API's router and core
 * over one persistent local stack, the synthesized workflow run in the background with the offline
 * extractive reader. Create a corpus and upload through the returned URLs, start a run, poll it to
 * completion, read its messages; the unauthenticated, malformed and conflicting requests; the local
 * upload limit; a port in use and a second server on one state directory; an idempotent retry that
 * starts nothing new, and upload URLs that still work, after a restart of the server.
 */
import { gzipSync } from 'node:zlib';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigurationError } from '../../shared/errors';
import {
  CorpusSchema,
  CreateCorpusResponseSchema,
  CreateRunResponseSchema,
  MessagePageSchema,
  ProblemSchema,
  RunStatusSchema,
  type Problem,
  type RunStatus,
} from '../../shared/api/schemas';
import { MAX_LOCAL_UPLOAD_BYTES, startServer, type LocalApiServer } from '../../local/services/serve';
import { FsBlobStore } from '../../local/engine/fs-blob-store';

jest.setTimeout(120_000);

const TOKEN = 'integration-test-token-0123456789';
const QUESTION = 'By what name was the part of the Cherokees living in five villages on the Tennessee River known?';
const NEEDLE =
  'A part of the Cherokees, known by the name of Chickamaugas, inhabiting five villages on the Tennessee River, have long been in the practice of committing depredations.';

/** A paragraph of filler that mentions nothing the question asks about. */
const filler = (i: number): string =>
  `Report ${i}. The harvest of the year was abundant and the treasury received its customary revenues. ` +
  `Roads were repaired in several districts and the postal service extended its routes to new towns. ` +
  `Commerce with foreign nations continued on a footing of mutual advantage and good faith.`;

function corpusTexts(): Record<string, string> {
  const docs: Record<string, string> = {};
  for (let i = 0; i < 6; i++) docs[`address-${i}.txt`] = [filler(i), filler(i + 100)].join('\n\n');
  docs['address-3.txt'] = [filler(3), NEEDLE, filler(103)].join('\n\n');
  // Partly relevant sentences, so that several chunks yield messages (with lower scores).
  docs['address-1.txt'] = [filler(1), 'A delegation of the Cherokees visited the seat of government.', filler(101)].join('\n\n');
  docs['address-4.txt'] = [filler(4), 'Five new villages were founded on the Tennessee River.', filler(104)].join('\n\n');
  docs['address-5.txt'] = [filler(5), 'The river was known by the name of the Holston in those parts.', filler(105)].join('\n\n');
  return docs;
}

let dir: string;
let server: LocalApiServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'extagents-serve-'));
  server = await startServer({ stateDir: path.join(dir, 'state'), port: 0, token: TOKEN, retryIntervalMs: 1 });
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

async function api(
  method: string,
  route: string,
  options: { json?: unknown; body?: string; headers?: Record<string, string>; token?: string | null } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TOKEN}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await fetch(`${server.url}${route}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text === '' ? null : (JSON.parse(text) as unknown) };
}

function problem(reply: Reply, status: number): Problem {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  return ProblemSchema.parse(reply.json);
}

/** Create a corpus through the API and upload its files through the returned URLs. */
async function createCorpus(texts: Record<string, string | Buffer>): Promise<string> {
  const files = Object.entries(texts).map(([p, text]) => ({ path: p, size: Buffer.byteLength(text), contentType: 'text/plain' }));
  const created = await api('POST', '/v1/corpora', { json: { files } });
  expect(created.status).toBe(201);
  const body = CreateCorpusResponseSchema.parse(created.json);
  for (const upload of body.uploads) {
    const put = await fetch(upload.url, { method: upload.method, headers: upload.headers, body: texts[upload.path] });
    expect(put.status).toBe(200);
  }
  return body.corpusId;
}

/**
 * A PUT with exactly these headers, over node:http (fetch cannot announce a Content-Length it does
 * not send, nor send chunked without a stream). Without `content-length` the body goes chunked;
 * with one larger than `body`, the request is left open and the answer awaited.
 */
function rawPut(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = httpRequest(url, { method: 'PUT', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        settled = true;
        resolve({ status: res.statusCode ?? 0, body: text });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!settled) reject(error);
    });
    req.write(body);
    if (headers['content-length'] === undefined || Number(headers['content-length']) === Buffer.byteLength(body)) req.end();
  });
}

/** Poll a run until it is no longer RUNNING (bounded by the test timeout, not by a clock). */
async function finished(runId: string): Promise<RunStatus> {
  for (;;) {
    const reply = await api('GET', `/v1/runs/${runId}`);
    expect(reply.status).toBe(200);
    const status = RunStatusSchema.parse(reply.json);
    if (status.status !== 'RUNNING') return status;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('extagents serve', () => {
  it('answers what the HTTP parser refuses as problem+json too: 431 for headers over the limit, 400 for a request that is not HTTP', async () => {
    const raw = (request: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const { port } = new URL(server.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });

    const big = await raw(`GET /v1/runs/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const garbage = await raw('NOT HTTP AT ALL\r\n\r\n');

    for (const [reply, status] of [
      [big, 431],
      [garbage, 400],
    ] as const) {
      const [head, body] = reply.split('\r\n\r\n');
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head).toContain('Content-Type: application/problem+json');
      expect(ProblemSchema.parse(JSON.parse(body))).toMatchObject({ type: 'about:blank', status });
    }
  });

  it('reads a path that starts with "//" as a path, not as a host', async () => {
    expect(problem(await api('GET', '//v1/runs/abc'), 404).detail).toBe('No route GET //v1/runs/abc');
  });

  it('answers 401 problem+json without the bearer token, or with a wrong one', async () => {
    const missing = await api('GET', '/v1/corpora/c1', { token: null });
    const wrong = await api('GET', '/v1/corpora/c1', { token: 'not-the-token-at-all' });

    expect(problem(missing, 401).detail).toContain('Authorization: Bearer');
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="extagents"');
    expect(problem(wrong, 401).detail).toBe('The bearer token is not valid');
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('creates a corpus, takes its files through the upload URLs, lists them with sizes, and with token counts once ingested', async () => {
    const texts = corpusTexts();

    const corpusId = await createCorpus(texts);
    const uploaded = CorpusSchema.parse((await api('GET', `/v1/corpora/${corpusId}`)).json);
    // Each upload queues an ingestion in the background, as the upload trigger does in AWS.
    let corpus = uploaded;
    while (corpus.totals.tokens === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      corpus = CorpusSchema.parse((await api('GET', `/v1/corpora/${corpusId}`)).json);
    }

    expect(uploaded.files.map((f) => [f.path, f.size])).toEqual(
      Object.entries(texts)
        .map(([p, t]) => [p, Buffer.byteLength(t)])
        .sort(),
    );
    expect(uploaded.pending).toEqual([]);
    expect(uploaded.totals.bytes).toBe(Object.values(texts).reduce((sum, t) => sum + Buffer.byteLength(t), 0));
    expect(corpus.files.every((f) => f.ingested && (f.tokens ?? 0) > 0 && f.chars === Buffer.byteLength(texts[f.path]))).toBe(true);
    expect(corpus.totals.tokens).toBe(corpus.files.reduce((sum, f) => sum + (f.tokens ?? 0), 0));
  });

  it('refuses an upload whose URL was altered or whose size differs from the signed one', async () => {
    const created = CreateCorpusResponseSchema.parse((await api('POST', '/v1/corpora', { json: { files: [{ path: 'a.txt', size: 5 }] } })).json);
    const upload = created.uploads[0];

    const altered = await fetch(upload.url.replace('/a.txt?', '/b.txt?'), { method: 'PUT', headers: upload.headers, body: 'hello' });
    const tooLong = await fetch(upload.url, { method: 'PUT', body: 'hello, world' });

    expect(altered.status).toBe(403);
    expect(tooLong.status).toBe(403);
    expect(CorpusSchema.parse((await api('GET', `/v1/corpora/${created.corpusId}`)).json).files).toEqual([]);
  });

  it('refuses a compressed upload with 415 instead of storing its compressed bytes as the document', async () => {
    const gzipped = gzipSync('hello');
    const created = CreateCorpusResponseSchema.parse((await api('POST', '/v1/corpora', { json: { files: [{ path: 'a.txt', size: gzipped.length }] } })).json);
    const upload = created.uploads[0];

    const sent = await fetch(upload.url, { method: 'PUT', headers: { ...upload.headers, 'content-encoding': 'gzip' }, body: gzipped });

    expect(sent.status).toBe(415);
    expect(((await sent.json()) as { detail: string }).detail).toContain('without a Content-Encoding');
    expect(CorpusSchema.parse((await api('GET', `/v1/corpora/${created.corpusId}`)).json).files).toEqual([]);
  });

  it.each([
    ['chunked, no Content-Length, written at once', false],
    ['chunked, no Content-Length, still streaming when the limit is crossed', true],
  ])('answers an oversized API body (%s) with 413 problem+json, then closes the connection', async (_label, streaming) => {
    // Arrange: a body over MAX_BODY_BYTES (1 MiB) sent without a length, as a chunked stream
    const url = new URL(`${server.url}/v1/runs`);
    const piece = Buffer.alloc(64 * 1024, 'x');

    // Act
    const reply = await new Promise<{ status: number; type: string | undefined; connection: string | undefined; body: string }>((resolve, reject) => {
      let settled = false;
      const req = httpRequest(
        url,
        { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            settled = true;
            resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], connection: res.headers.connection, body: text });
            req.destroy();
          });
        },
      );
      req.on('error', (error) => {
        if (!settled) reject(error);
      });
      if (!streaming) {
        req.end(Buffer.alloc(2 * 1024 * 1024, 'x'));
        return;
      }
      // Keep writing until the answer arrives (bounded: 64 MiB at most).
      let written = 0;
      const pump = (): void => {
        while (!settled && written < 64 * 1024 * 1024) {
          written += piece.length;
          if (!req.write(piece)) return void req.once('drain', pump);
        }
        if (!settled) req.end();
      };
      pump();
    });

    // Assert
    expect(reply.status).toBe(413);
    expect(reply.type).toBe('application/problem+json');
    expect(reply.connection).toBe('close');
    expect(ProblemSchema.parse(JSON.parse(reply.body)).detail).toBe('The body exceeds 1048576 bytes');
  });

  it('answers 413 to clients that send an oversized body whole before they read (no EPIPE, no reset)', async () => {
    // Arrange: as Python's urllib or Node's http.request with end(body): 8 MiB, declared or chunked
    const url = new URL(`${server.url}/v1/runs`);
    const send = (chunked: boolean): Promise<number | string> =>
      new Promise((resolve) => {
        const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
        if (chunked) headers['transfer-encoding'] = 'chunked';
        else headers['content-length'] = String(8 * 1024 * 1024);
        const req = httpRequest(url, { method: 'POST', headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end(Buffer.alloc(8 * 1024 * 1024, 'a'));
      });

    // Python's urllib sends the whole body (sendall) before it reads: a close before the body
    // ended gave it "Broken pipe" every time (the Python that CI installs the test model with).
    const python = (): Promise<string> =>
      new Promise((resolve) => {
        const script = [
          'import sys, urllib.request, urllib.error',
          "req = urllib.request.Request(sys.argv[1], data=b'a' * 8388608, method='POST', headers={'authorization': 'Bearer ' + sys.argv[2], 'content-type': 'application/json'})",
          'try:\n    urllib.request.urlopen(req); print(200)',
          'except urllib.error.HTTPError as e:\n    print(e.code, e.headers.get("content-type"))',
          'except Exception as e:\n    print("ERR", e)',
        ].join('\n');
        execFile('python3', ['-c', script, url.toString(), TOKEN], (error, stdout, stderr) => resolve(error ? `python3 failed: ${stderr}` : stdout.trim()));
      });

    // Act: several times each, where a close before the body ended gave EPIPE to some of them
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await send(false), await send(true));
    const fromPython = [await python(), await python()];

    // Assert
    expect(statuses).toEqual(Array(8).fill(413));
    expect(fromPython).toEqual(['413 application/problem+json', '413 application/problem+json']);
  });

  it('enforces the 500 MiB upload limit: an announced larger size is a 400 at POST, a larger body a 413 at PUT', async () => {
    const announced = await api('POST', '/v1/corpora', { json: { files: [{ path: 'a.txt', size: 600_000_000 }] } });
    const created = CreateCorpusResponseSchema.parse(
      (await api('POST', '/v1/corpora', { json: { files: [{ path: 'free.txt' }, { path: 'five.txt', size: 5 }] } })).json,
    );
    const [free, five] = created.uploads;

    const declared = await rawPut(free.url, { 'content-length': String(MAX_LOCAL_UPLOAD_BYTES + 1) }, 'x');
    const overSigned = await rawPut(five.url, { 'transfer-encoding': 'chunked' }, 'hello, world');
    const fine = await rawPut(five.url, { 'transfer-encoding': 'chunked' }, 'hello');

    expect(problem(announced, 400).errors).toEqual([
      { pointer: '/files/0/size', detail: `a file may have at most ${MAX_LOCAL_UPLOAD_BYTES} bytes (500 MiB), the largest document the corpus readers decode` },
    ]);
    expect(declared.status).toBe(413);
    expect(ProblemSchema.parse(JSON.parse(declared.body)).detail).toContain(`exceeds ${MAX_LOCAL_UPLOAD_BYTES} bytes`);
    expect(overSigned.status).toBe(413);
    expect(fine.status).toBe(200);
    expect(CorpusSchema.parse((await api('GET', `/v1/corpora/${created.corpusId}`)).json).files.map((f) => [f.path, f.size])).toEqual([['five.txt', 5]]);
  });

  it('refuses to start on a port in use, in one line and before starting the local stack', async () => {
    const blocker = createTcpServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    const other = path.join(dir, 'other-state');
    try {
      const start = startServer({ stateDir: other, port, token: TOKEN });

      await expect(start).rejects.toThrow(ConfigurationError);
      await expect(start).rejects.toThrow(
        `127.0.0.1:${port} is already in use (another extagents serve?): stop that process, or choose another port with --port <n> (0 = any free port)`,
      );
      expect(existsSync(path.join(other, 'dynamodb'))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('refuses a second server on the state directory of a running one', async () => {
    const second = startServer({ stateDir: path.join(dir, 'state'), port: 0, token: TOKEN });

    await expect(second).rejects.toThrow(
      /^The state directory .* is in use by another extagents process \(process \d+, extagents serve\): wait for it to end or stop it, or give this command another --state-dir \(if process \d+ is not extagents, delete .*extagents\.lock\)$/,
    );
  });

  it('starts a run, polls it to completion, reads the answer with its citation and pages through the scored messages', async () => {
    const corpusId = await createCorpus(corpusTexts());

    const started = await api('POST', '/v1/runs', { json: { question: QUESTION, corpus: { id: corpusId }, options: { chunkTokens: 128 } } });
    expect(started.status).toBe(202);
    const { runId, links } = CreateRunResponseSchema.parse(started.json);
    expect(started.headers.get('location')).toBe(`${server.url}/v1/runs/${runId}`);
    const run = await finished(runId);

    expect(run.status).toBe('SUCCEEDED');
    expect(run.result?.answerable).toBe(true);
    expect(`${run.result?.answer} ${run.result?.citations.map((c) => c.quote).join(' ')}`).toContain('Chickamaugas');
    expect(run.result?.citations.some((c) => c.documentId === 'address-3.txt')).toBe(true);
    expect(run.progress.phase).toBe('finished');
    expect(run.progress.rounds[0]).toEqual({ round: 1, sought: run.progress.chunks, total: run.progress.chunks });
    expect(run.progress.karSteps.length).toBe(run.result?.trace.length);
    expect(run.result?.usage.seeker.calls).toBeGreaterThanOrEqual(run.progress.chunks ?? 0);

    const seen: string[] = [];
    const scores: number[] = [];
    let next: string | null = `${links.messages}?limit=2`;
    while (next !== null) {
      const page = MessagePageSchema.parse((await api('GET', next.slice(server.url.length))).json);
      expect(page.messages.length).toBeLessThanOrEqual(2);
      seen.push(...page.messages.map((m) => m.id));
      scores.push(...page.messages.map((m) => m.score));
      next = page.links.next ?? null;
    }
    expect(seen.length).toBe(run.result?.poolSize);
    expect(new Set(seen).size).toBe(seen.length);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(seen.length).toBeGreaterThan(2);
    const round1: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = MessagePageSchema.parse((await api('GET', `/v1/runs/${runId}/messages?round=1&limit=1${cursor ? `&cursor=${cursor}` : ''}`)).json);
      round1.push(...page.messages.map((m) => m.id));
      cursor = page.nextCursor;
    }
    expect(round1).toEqual(seen.filter((id) => id.startsWith('r1-')));
    expect(problem(await api('GET', `/v1/runs/${runId}/messages?cursor=bm90LWEtY3Vyc29y`), 400).errors?.[0]).toMatchObject({ parameter: 'cursor' });
    // `0` is shorter than any cursor the server issues: 400, as docs/openapi.yaml says (minLength), with the form's message
    expect(problem(await api('GET', `/v1/runs/${runId}/messages?cursor=0`), 400).errors).toEqual([
      { parameter: 'cursor', detail: 'cursor must be the nextCursor of a previous page of this run' },
    ]);
  });

  it('answers an idempotent retry with the same run id and starts nothing new; the same key with another body is 409', async () => {
    const corpusId = await createCorpus(corpusTexts());
    const body = { question: QUESTION, corpus: { id: corpusId }, options: { chunkTokens: 128, rounds: 1 } };
    const before = server.launcher.started;

    const first = await api('POST', '/v1/runs', { json: body, headers: { 'Idempotency-Key': 'serve-test-1' } });
    const retry = await api('POST', '/v1/runs', { json: body, headers: { 'Idempotency-Key': 'serve-test-1' } });
    const conflict = await api('POST', '/v1/runs', { json: { ...body, question: 'Something else?' }, headers: { 'Idempotency-Key': 'serve-test-1' } });

    const runId = CreateRunResponseSchema.parse(first.json).runId;
    expect(retry.status).toBe(202);
    expect(CreateRunResponseSchema.parse(retry.json).runId).toBe(runId);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(problem(conflict, 409).type).toBe('tag:extagents,2026:idempotency-conflict');
    expect(server.launcher.started - before).toBe(1);
    expect((await finished(runId)).status).toBe('SUCCEEDED');
  });

  it('answers malformed requests with 400 problem+json that name each problem', async () => {
    const wrongType = problem(await api('POST', '/v1/runs', { json: { question: 5, corpus: { id: 'c1' } } }), 400);
    const unknown = problem(await api('POST', '/v1/runs', { json: { question: 'Q', corpus: { id: 'c1' }, temperature: 0.2 } }), 400);
    const notJson = problem(await api('POST', '/v1/runs', { body: '{"question":', headers: { 'content-type': 'application/json' } }), 400);
    const badLimit = problem(await api('GET', '/v1/runs/any-run/messages?limit=0'), 400);

    expect(wrongType.errors).toEqual([{ pointer: '/question', detail: 'Invalid input: expected string, received number' }]);
    expect(unknown.errors).toEqual([{ pointer: '/temperature', detail: 'unknown field "temperature"' }]);
    expect(notJson.errors?.[0].detail).toMatch(/^the body is not valid JSON/);
    expect(badLimit.errors?.[0]).toMatchObject({ parameter: 'limit' });
  });

  it('reports a run whose corpus has no usable text as FAILED with the domain error', async () => {
    const corpusId = await createCorpus({ 'image.bin': Buffer.from([0, 1, 2, 3, 0, 0, 255, 0]) });

    const { runId } = CreateRunResponseSchema.parse((await api('POST', '/v1/runs', { json: { question: 'Anything?', corpus: { id: corpusId } } })).json);
    const run = await finished(runId);

    expect(run.status).toBe('FAILED');
    expect(run.error?.name).toBe('EmptyCorpusError');
    expect(run.result).toBeUndefined();
  });

  it('keeps runs and upload URLs across a restart on the same state directory: the result, the messages, the idempotency key', async () => {
    const corpusId = await createCorpus(corpusTexts());
    const body = { question: QUESTION, corpus: { id: corpusId }, options: { chunkTokens: 128, rounds: 1 } };
    const { runId } = CreateRunResponseSchema.parse((await api('POST', '/v1/runs', { json: body, headers: { 'Idempotency-Key': 'restart-1' } })).json);
    const before = await finished(runId);
    const later = CreateCorpusResponseSchema.parse((await api('POST', '/v1/corpora', { json: { files: [{ path: 'late.txt', size: 4 }] } })).json);

    await server.stop();
    server = await startServer({ stateDir: path.join(dir, 'state'), port: server.port, token: TOKEN, retryIntervalMs: 1 });
    const after = RunStatusSchema.parse((await api('GET', `/v1/runs/${runId}`)).json);
    const messages = MessagePageSchema.parse((await api('GET', `/v1/runs/${runId}/messages?limit=100`)).json);
    const retry = await api('POST', '/v1/runs', { json: body, headers: { 'Idempotency-Key': 'restart-1' } });
    const upload = await fetch(later.uploads[0].url, { method: 'PUT', headers: later.uploads[0].headers, body: 'late' });

    expect(upload.status).toBe(200);
    expect(CorpusSchema.parse((await api('GET', `/v1/corpora/${later.corpusId}`)).json).files.map((f) => f.path)).toEqual(['late.txt']);
    expect(statSync(path.join(dir, 'state', 'upload-secret')).mode & 0o777).toBe(0o600);
    expect(after.status).toBe('SUCCEEDED');
    expect(after.result).toEqual(before.result);
    expect(messages.messages.length).toBe(before.result?.poolSize);
    expect(CreateRunResponseSchema.parse(retry.json)).toMatchObject({ runId, status: 'SUCCEEDED' });
    expect(server.launcher.started).toBe(0);
  });
});

describe('extagents serve after a stop in the middle of ingesting', () => {
  it('ingests at start every corpus whose files its summary does not list at their current size', async () => {
    // A state directory as a server left it when it was killed after the upload, before ingestion:
    // the files are in the bucket, no summary lists them.
    const stateDir = mkdtempSync(path.join(tmpdir(), 'extagents-serve-restart-'));
    const blobs = new FsBlobStore(path.join(stateDir, 'bucket'));
    await blobs.put('corpora/left/a.txt', filler(1));
    await blobs.put('corpora/left/b.txt', filler(2));
    const restarted = await startServer({ stateDir, port: 0, token: TOKEN, retryIntervalMs: 1 });
    try {
      const get = async () =>
        CorpusSchema.parse(await (await fetch(`${restarted.url}/v1/corpora/left`, { headers: { authorization: `Bearer ${TOKEN}` } })).json());
      let corpus = await get();
      for (let waited = 0; corpus.totals.tokens === null && waited < 30_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        corpus = await get();
      }

      expect(corpus.files.map((f) => [f.path, f.ingested, (f.tokens ?? 0) > 0])).toEqual([
        ['a.txt', true, true],
        ['b.txt', true, true],
      ]);
    } finally {
      await restarted.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
