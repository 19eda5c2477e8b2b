/**
 * `extagents serve`: the API of the deployed stack (shared/api: the same router, schemas and core)
 * on 127.0.0.1 over ONE long-lived local stack (local/engine/stack.ts, persistent under the state
 * directory: the bucket in `<stateDir>/bucket`, DynamoDB data in `<stateDir>/dynamodb`), with
 * executions run in the background in this process (local/engine/executions.ts).
 *
 * Differences from AWS, each standing in for an AWS service:
 * - Authentication: a bearer token (RFC 6750) instead of SigV4; every API route needs
 *   `Authorization: Bearer <token>` (but `GET /v1/health` and `GET /v1/openapi.json`, as on AWS), else 401 problem+json with `WWW-Authenticate: Bearer`.
 *   The token is generated (crypto) and printed at every start unless given (--token or
 *   EXTAGENTS_TOKEN), so a generated token does not survive a restart.
 * - Upload URLs: `POST /v1/corpora` returns URLs of this server's own `PUT /_local/uploads/<key>`,
 *   signed with HMAC-SHA256 under a secret kept in the state directory (`<stateDir>/upload-secret`,
 *   32 random bytes created once, mode 0600), so URLs keep working across restarts on the same
 *   state directory and port until they expire. Like an S3 presigned URL they need no token; they
 *   expire, and bind the key and the signed length / content type. Uploads are limited to
 *   MAX_LOCAL_UPLOAD_BYTES (an announced larger `size` is refused by `POST /v1/corpora`, a larger
 *   body by the PUT) and streamed to disk, never held in memory.
 * - Idempotency records: BlobIdempotencyStore (atomic within this one process).
 * - Ingestion: each upload under `corpora/<id>/` queues an ingestion of that corpus in the
 *   background (`ingestCorpus` of shared/pipeline/ingest.ts, what the upload trigger runs in AWS, in a
 *   worker thread so that it never holds the server's requests: local/services/ingest-worker.ts),
 *   one at a time per corpus, coalescing uploads that arrive meanwhile.
 *
 * Only 127.0.0.1 is served: the server is for trying and testing the API on one machine.
 */
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { IngestJob, IngestReply } from './ingest-worker';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { BlobIdempotencyStore } from '../../shared/api/idempotency';
import type { PresignedUpload, Presigner } from '../../shared/api/ports';
import { PROBLEM_CONTENT_TYPE, plainProblem, problemOf, problemResponse, type ApiResponse } from '../../shared/api/problem';
import { createApiHandler, isPublicRequest, type ApiHandler } from '../../shared/api/router';
import { ApiCore } from '../../shared/api/core';
import { modelPricing } from '../../models';
import { RunIdSchema } from '../../shared/pipeline/state';
import { formatSse, RunEventHub } from './run-events';
import { RunProgressTracker } from '../engine/run-progress';
import { LOCAL_CORPUS_ID_PREFIX } from '../engine/runs';
import { recordWebRun, serveStatic, WebEndpoints } from './web';
import { MAX_BODY_BYTES, MAX_FILE_BYTES } from '../../shared/api/schemas';
import { MAX_LAST_EVENT_ID_CHARS } from '../../shared/api/openapi';
import { CORPORA_PREFIX, CorpusIdSchema, corpusIdOfKey, corpusPrefix } from '../../shared/corpus';
import { readIngestedCounts } from '../../shared/api/corpus-index';
import { ConfigurationError, InvalidInputError } from '../../shared/errors';
import { UnauthorizedError } from '../../shared/api/errors';
import type { RunOptions } from '../../shared/config';
import type { ModelSpecInput } from '../../shared/llm/model-spec';
import type { AgentModel, BlobStore } from '../../shared/ports';
import { FsBlobStore } from '../engine/fs-blob-store';
import { LocalExecutions } from '../engine/executions';
import { MAX_LLAMA_SEQUENCES, startLocalStack, type LocalStack } from '../engine/stack';
import { DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_PORT } from '../engine/defaults';

/** Default port and runs at once of `extagents serve` (local/engine/defaults.ts). */
export { DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_PORT };
/**
 * Largest upload the local server accepts: the API's MAX_FILE_BYTES (500 MiB, the largest document
 * the corpus readers decode), so the local server and the deployed API take the same files.
 */
export const MAX_LOCAL_UPLOAD_BYTES = MAX_FILE_BYTES;
/** Shortest bearer token accepted from --token / EXTAGENTS_TOKEN, characters. */
export const MIN_TOKEN_CHARS = 16;
/** Path prefix of the local upload endpoint. */
export const UPLOAD_PATH = '/_local/uploads/';
/** File of the upload URLs' signing secret, in the state directory. */
export const UPLOAD_SECRET_FILE = 'upload-secret';
/** Folder of uploads being received, in the state directory (emptied at start). */
const UPLOAD_TEMP_DIR = path.join('tmp', 'uploads');

/** Options of {@link startServer}. */
export interface ServeOptions {
  /** State directory: the local bucket and the DynamoDB data. */
  stateDir: string;
  /** Port; 0 picks a free one. @default DEFAULT_PORT */
  port?: number;
  /** Only `127.0.0.1`. @default "127.0.0.1" */
  host?: string;
  /** Bearer token; generated when absent. */
  token?: string;
  /** The model spec, text or parsed (shared/llm/model-spec.ts); `extractive` by default. */
  modelSpec?: ModelSpecInput;
  /** Runs executed at once. @default DEFAULT_MAX_CONCURRENT_RUNS */
  maxConcurrentRuns?: number;
  /** Use this model instead of the spec's (tests). */
  model?: AgentModel;
  /** The context size, tokens, of the stand-in `model` (tests: a small-context model, as a `llama:` one). */
  modelContextTokens?: number;
  /** Replace every Retry backoff by this pause, ms (tests). */
  retryIntervalMs?: number;
  /** One line per request and per finished run (the CLI passes stderr). */
  log?: (line: string) => void;
}

/** A running local API server. */
export interface LocalApiServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The bearer token every API request needs. */
  readonly token: string;
  /** Whether the token was generated (then print it). */
  readonly tokenGenerated: boolean;
  readonly launcher: LocalExecutions;
  readonly stack: LocalStack;
  /** Stop accepting requests, abort and await running executions, stop the stack. Idempotent. */
  stop(): Promise<void>;
}

/** Why a bearer token cannot be used, or undefined. */
export function tokenProblem(token: string): string | undefined {
  if (token.length < MIN_TOKEN_CHARS) return `must have at least ${MIN_TOKEN_CHARS} characters (got ${token.length})`;
  if (!/^[\x21-\x7e]+$/.test(token)) return 'must be printable ASCII without spaces (it is sent as "Authorization: Bearer <token>")';
  return undefined;
}

/**
 * The upload URLs' signing secret of a state directory: `<stateDir>/upload-secret` (64 hex digits),
 * created with 32 random bytes and mode 0600 on first use and read afterwards, so URLs issued before
 * a restart still verify. Deleting the file invalidates every URL issued so far.
 * @throws ConfigurationError when the file exists but holds no valid secret.
 */
export async function loadUploadSecret(stateDir: string): Promise<Buffer> {
  const file = path.join(path.resolve(stateDir), UPLOAD_SECRET_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  try {
    await writeFile(file, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, 0o600);
  }
  const text = (await readFile(file, 'utf8')).trim();
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new ConfigurationError(
      `${file} does not hold an upload secret (64 hex digits): delete it to have a new one generated (upload URLs issued before stop working)`,
    );
  }
  return Buffer.from(text, 'hex');
}

/**
 * Start the local API server. The port is bound first, so a port in use fails before the local
 * stack starts.
 * @throws ConfigurationError for a host other than 127.0.0.1, a token shorter than
 *   MIN_TOKEN_CHARS or with spaces, an invalid model spec or concurrency, a port in use or not
 *   permitted (one line, no stack trace needed).
 */
export async function startServer(options: ServeOptions): Promise<LocalApiServer> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new ConfigurationError(`extagents serve listens on 127.0.0.1 only (got --host ${host})`);
  const problem = options.token === undefined ? undefined : tokenProblem(options.token);
  if (problem !== undefined) throw new ConfigurationError(`The token ${problem}`);
  const maxConcurrentRuns = options.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS;
  if (!Number.isInteger(maxConcurrentRuns) || maxConcurrentRuns < 1) throw new ConfigurationError('--max-concurrent-runs must be a positive integer');
  const token = options.token ?? randomBytes(24).toString('base64url');
  const log = options.log ?? (() => undefined);
  const port = options.port ?? DEFAULT_PORT;
  const stateDir = path.resolve(options.stateDir);

  // Requests wait for the context, set once the stack is up (nobody knows the URL before).
  let context: ServeContext | undefined;
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const server = createServer((req, res) => {
    void started
      .then(() => serveRequest(req, res, context as ServeContext))
      .then((status) => log(`${req.method ?? '?'} ${(req.url ?? '').split('?')[0]} ${status}`));
  });
  // Requests Node's HTTP parser refuses before any handler runs (headers over its limit, malformed
  // request lines) get a problem+json answer too, not Node's bare one.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket));
  try {
    await listen(server, port, host);
  } catch (error) {
    throw listenError(error, host, port);
  }

  let stack: LocalStack;
  let uploads: LocalUploadSigner;
  const uploadTemp = path.join(stateDir, UPLOAD_TEMP_DIR);
  try {
    uploads = new LocalUploadSigner(await loadUploadSecret(stateDir));
    await rm(uploadTemp, { recursive: true, force: true }); // uploads a stopped server never finished
    stack = await startLocalStack({
      stateDir: options.stateDir,
      modelSpec: options.modelSpec,
      model: options.model,
      modelContextTokens: options.modelContextTokens,
      persistent: true,
      lockCommand: 'serve',
      retryIntervalMs: options.retryIntervalMs,
      llamaSequences: MAX_LLAMA_SEQUENCES,
    });
  } catch (error) {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    throw error;
  }
  let events!: RunEventHub;
  const launcher = new LocalExecutions({
    execute: async (input, signal) => {
      await recordWebRun(stack.blobs, input, new Date());
      // The run's progress events (local/engine/run-progress.ts), which the event hub streams.
      const tracker = new RunProgressTracker({
        runId: input.runId,
        question: input.question,
        store: stack.store,
        blobs: stack.blobs,
        emit: () => events.changed(input.runId),
      });
      events.track(input.runId, tracker);
      try {
        return await stack.execute(input, { signal, ...tracker.callbacks });
      } finally {
        await tracker.flush();
        events.executionEnded(input.runId);
      }
    },
    blobs: stack.blobs,
    maxConcurrentRuns,
    onEnded: (d) => log(`run ${d.name} ${d.status}${d.error ? ` (${d.error}: ${d.cause ?? ''})` : ''}`),
  });
  const ingestion = new LocalIngestion(stack.blobs, path.join(path.resolve(options.stateDir), 'bucket'), log);
  // Ingestions a previous server left undone (stopped or killed meanwhile) run again.
  void ingestion
    .resumeStale()
    .catch((error: unknown) => log(`could not check the corpora for ingestion: ${error instanceof Error ? error.message : String(error)}`));
  const boundPort = (server.address() as AddressInfo).port;
  const baseUrl = `http://${host}:${boundPort}`;
  const apiDeps = {
    blobs: stack.blobs,
    store: stack.store,
    launcher,
    presigner: uploads.presigner(() => baseUrl),
    idempotency: new BlobIdempotencyStore(stack.blobs),
    pricing: modelPricing(stack.modelSpec),
    // A small-context model's defaults and chunk-size check, as `ask` applies them (422 at POST /v1/runs).
    runOptionDefaults: stack.runOptionDefaults,
    runOptionProblems: (runOptions: RunOptions) => stack.runOptionProblems(runOptions),
  };
  const core = new ApiCore(apiDeps);
  events = new RunEventHub({ getRun: (runId, call) => core.getRun(runId, call), store: stack.store });
  const web = new WebEndpoints({ blobs: stack.blobs, executions: launcher, modelSpec: stack.modelSpec, runOptionDefaults: stack.runOptionDefaults });
  const handleApi = createApiHandler(apiDeps, {
    onInternalError: (error) => log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  });
  context = { handleApi, uploads, ingestion, blobs: stack.blobs, uploadTemp, expected: digest(token), baseUrl: () => baseUrl, events, web };
  ready();

  let stopped: Promise<void> | undefined;
  return {
    url: baseUrl,
    port: boundPort,
    token,
    tokenGenerated: options.token === undefined,
    launcher,
    stack,
    stop: () =>
      (stopped ??= (async () => {
        events.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await ingestion.drain();
        await launcher.stop();
        await stack.stop();
      })()),
  };
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

interface ServeContext {
  handleApi: ApiHandler;
  uploads: LocalUploadSigner;
  ingestion: LocalIngestion;
  blobs: BlobStore;
  /** Folder of uploads being received. */
  uploadTemp: string;
  /** SHA-256 of the token (compared in constant time with the request's). */
  expected: Buffer;
  baseUrl: () => string;
  /** Live run events (`GET /v1/runs/{runId}/events`). */
  events: RunEventHub;
  /** The web page's data endpoints (`/_web/…`). */
  web: WebEndpoints;
}

/**
 * Answer a request the HTTP parser refused (Node's `clientError`): 431 for headers over the limit,
 * 400 otherwise, as application/problem+json, then close; a connection already reset or ended is
 * only destroyed. Source: https://nodejs.org/api/http.html#event-clienterror
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const detail = status === 431 ? "The request headers exceed the server's limit (16 KiB)" : `The request is not valid HTTP (${error.code ?? 'parse error'})`;
  const problem = plainProblem(status, detail);
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Answer one request; resolves with the status sent. */
async function serveRequest(req: IncomingMessage, res: ServerResponse, ctx: ServeContext): Promise<number> {
  let response: ApiResponse;
  try {
    // Joined, not resolved: `//v1/runs` is the path "//v1/runs", not a URL with host "v1".
    const url = new URL(`${ctx.baseUrl()}${(req.url ?? '/').startsWith('/') ? (req.url ?? '/') : `/${req.url ?? ''}`}`);
    const page = req.method === 'GET' || req.method === 'HEAD' ? await serveStatic(url.pathname) : undefined;
    if (page) {
      req.resume();
      res.writeHead(page.status, { ...page.headers, 'content-length': String(page.body.length) });
      res.end(req.method === 'HEAD' ? undefined : page.body);
      return page.status;
    }
    if (url.pathname.startsWith(UPLOAD_PATH)) {
      response = await handleUpload(req, url, ctx);
    } else if (!isPublicRequest(req.method ?? 'GET', url.pathname) && !authorized(req.headers.authorization, ctx.expected)) {
      // Every API route needs the token but those the route table marks `auth: "none"` (health, the OpenAPI document).
      const given = req.headers.authorization !== undefined;
      const error = new UnauthorizedError(
        given ? 'The bearer token is not valid' : 'Send the token printed by `extagents serve` as "Authorization: Bearer <token>"',
      );
      response = problemResponse(problemOf(error), {
        'www-authenticate': given ? 'Bearer realm="extagents", error="invalid_token"' : 'Bearer realm="extagents"',
      });
      req.resume();
    } else if (EVENTS_PATH.test(url.pathname)) {
      req.resume();
      return await streamEvents(req, res, url, ctx);
    } else if (url.pathname.startsWith('/_web/')) {
      req.resume();
      response = await ctx.web.handle(req.method ?? 'GET', url.pathname, url.searchParams);
    } else {
      const body = await readBody(req, MAX_BODY_BYTES);
      if (body === undefined) {
        response = problemResponse(plainProblem(413, `The body exceeds ${MAX_BODY_BYTES} bytes`), { connection: 'close' });
      } else {
        const headers: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        response = await ctx.handleApi({
          method: req.method ?? 'GET',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers,
          ...(body.length > 0 && { body: body.toString('utf8') }),
          principal: 'local',
          baseUrl: ctx.baseUrl(),
        });
      }
    }
  } catch (error) {
    response = problemResponse(plainProblem(500, `The request could not be completed (${error instanceof Error ? error.name : 'error'})`));
  }
  if (!res.headersSent) {
    res.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(response.body)) });
    res.end(response.body);
  }
  return response.status;
}

/** `/v1/runs/{runId}/events` (local only: the deployed API has no streaming route). */
const EVENTS_PATH = /^\/v1\/runs\/([^/]+)\/events$/;
/** A comment line sent on an idle event stream, ms, so that proxies and clients keep it open. */
const SSE_HEARTBEAT_MS = 15_000;

/**
 * `GET /v1/runs/{runId}/events`: the run's events as server-sent events (local/services/run-events.ts),
 * resumed after `Last-Event-ID`; closes after the `end` event. An unknown run is 404 and a bad run id
 * 400 (problem+json), before the stream begins. Resolves with the status sent when the stream ends.
 */
async function streamEvents(req: IncomingMessage, res: ServerResponse, url: URL, ctx: ServeContext): Promise<number> {
  const send = (response: ApiResponse): number => {
    res.writeHead(response.status, { ...response.headers, 'content-length': String(Buffer.byteLength(response.body)) });
    res.end(response.body);
    return response.status;
  };
  if (req.method !== 'GET')
    return send(problemResponse(plainProblem(405, `${req.method ?? '?'} is not allowed on ${url.pathname} (allowed: GET)`), { allow: 'GET' }));
  let runId: string;
  try {
    runId = RunIdSchema.parse(decodeURIComponent(EVENTS_PATH.exec(url.pathname)?.[1] ?? ''));
  } catch {
    return send(problemResponse(plainProblem(400, 'Invalid request: runId: not a run id')));
  }
  const header = req.headers['last-event-id'];
  const lastEventId = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get('lastEventId') ?? undefined;
  if (lastEventId !== undefined && lastEventId.length > MAX_LAST_EVENT_ID_CHARS) {
    return send(problemResponse(plainProblem(400, `Invalid request: Last-Event-ID: at most ${MAX_LAST_EVENT_ID_CHARS} characters`)));
  }
  let heartbeat: NodeJS.Timeout | undefined;
  let stop: (() => void) | undefined;
  const startStream = (): void => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.write('retry: 1000\n\n');
    heartbeat = setInterval(() => res.write(': keep-alive\n\n'), SSE_HEARTBEAT_MS);
  };
  const ended = new Promise<void>((resolve) => {
    const finish = (): void => {
      clearInterval(heartbeat);
      stop?.();
      resolve();
    };
    res.once('close', finish);
    void ctx.events
      .subscribe(
        runId,
        lastEventId,
        (event) => {
          if (!res.headersSent) startStream();
          res.write(formatSse(event));
        },
        () => {
          if (!res.headersSent) startStream();
          res.end();
        },
      )
      .then(
        (unsubscribe) => {
          stop = unsubscribe;
          if (res.writableEnded || res.destroyed) unsubscribe();
        },
        (error: unknown) => {
          send(problemResponse(problemOf(error)));
          finish();
        },
      );
  });
  await ended;
  return 200;
}

/** SHA-256 of a token (fixed length, so timingSafeEqual applies to any token length). */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), expected);
}

/**
 * How long an oversized request body is read and discarded before its 413 is sent: clients that
 * send the whole body before reading the answer (Python's urllib, Node's `http.request` with
 * `end(body)`) get EPIPE instead of the 413 if the connection closes while they still send.
 * After this, or once the body has ended, the 413 goes out and the connection closes.
 */
const OVERSIZED_LINGER_MS = 3_000;

/**
 * Discard the rest of a request body until it ends, the client goes away, or `lingerMs` passes.
 * Resolves either way (never rejects).
 */
function drain(req: IncomingMessage, lingerMs = OVERSIZED_LINGER_MS): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      req.off('end', done);
      req.off('close', done);
      req.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, lingerMs);
    req.on('end', done);
    req.on('close', done);
    req.on('error', done);
    req.resume();
  });
}

/**
 * The body, or undefined when it exceeds `max` bytes, declared (`Content-Length`) or counted as it
 * arrives (a chunked body has no length). An oversized body is never cut off before the answer: the
 * rest is read and discarded ({@link drain}, bounded), then the caller answers 413 with
 * `Connection: close`. (Destroying the request at once resets the connection, and the client never
 * sees the 413.)
 * @throws the request stream's error (a client that disconnects mid-body).
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) return drain(req).then(() => undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.off('end', onEnd);
      chunks.length = 0;
      void drain(req).then(() => resolve(undefined));
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks));
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
}

/**
 * `PUT /_local/uploads/<key>?…`: check the signature, then store the body at `<key>`. The body is
 * streamed to a file (never held in memory) and refused with 413 past the signed length or
 * MAX_LOCAL_UPLOAD_BYTES, whichever is smaller.
 */
async function handleUpload(req: IncomingMessage, url: URL, ctx: ServeContext): Promise<ApiResponse> {
  if (req.method !== 'PUT') {
    req.resume();
    return problemResponse(plainProblem(405, 'Upload URLs take PUT'), { allow: 'PUT' });
  }
  const check = ctx.uploads.verify(url, req.headers['content-length'], req.headers['content-type']);
  if (!check.ok) {
    req.resume();
    return problemResponse(plainProblem(403, check.detail));
  }
  const max = ctx.uploads.maxContentLength;
  const tooLarge = (): ApiResponse =>
    problemResponse(plainProblem(413, `The upload exceeds ${max} bytes, the largest file the local server accepts`), { connection: 'close' });
  if (check.contentLength !== undefined && check.contentLength > max) {
    await drain(req);
    return tooLarge();
  }
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined && declared > max) {
    await drain(req);
    return tooLarge();
  }
  const temp = path.join(ctx.uploadTemp, `${randomUUID()}.part`);
  const size = await receiveToFile(req, temp, check.contentLength ?? max);
  try {
    if (size === undefined) {
      await drain(req);
      return check.contentLength !== undefined && check.contentLength < max
        ? problemResponse(plainProblem(413, `The upload exceeds the ${check.contentLength} bytes the URL was signed for`), { connection: 'close' })
        : tooLarge();
    }
    if (check.contentLength !== undefined && size !== check.contentLength) {
      return problemResponse(plainProblem(400, `The upload has ${size} bytes; the URL was signed for ${check.contentLength}`));
    }
    try {
      await storeFile(ctx.blobs, check.key, temp, check.contentType);
    } catch (error) {
      if (error instanceof InvalidInputError) return problemResponse(plainProblem(400, error.message));
      throw error;
    }
  } finally {
    await rm(temp, { force: true });
  }
  const corpusId = corpusIdOfKey(check.key);
  if (corpusId !== undefined) ctx.ingestion.request(corpusId);
  return { status: 200, headers: { 'cache-control': 'no-store' }, body: '' };
}

/**
 * Write a request body to `file`, at most `limit` bytes.
 * @returns the bytes written, or undefined when the body exceeds `limit` (the rest is discarded and
 *   the file removed; the answer closes the connection).
 */
async function receiveToFile(req: IncomingMessage, file: string, limit: number): Promise<number | undefined> {
  await mkdir(path.dirname(file), { recursive: true });
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  const size = await new Promise<number | undefined>((resolve, reject) => {
    let received = 0;
    const done = (result: number | undefined, error?: unknown): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      out.off('error', onError);
      if (error !== undefined) {
        out.once('close', () => reject(error)).destroy();
      } else if (result === undefined) {
        req.resume(); // discard the rest; the 413 closes the connection
        out.once('close', () => resolve(undefined)).destroy(); // closed before the file is removed
      } else {
        out.end(() => resolve(result));
      }
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limit) return done(undefined);
      if (!out.write(chunk)) {
        req.pause();
        out.once('drain', () => req.resume());
      }
    };
    const onEnd = (): void => done(received);
    const onError = (error: unknown): void => done(undefined, error);
    const onClose = (): void => {
      if (!req.complete) done(undefined, new Error('The client closed the connection before the upload was complete'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
    out.once('error', onError);
  }).catch(async (error: unknown) => {
    await rm(file, { force: true });
    throw error;
  });
  if (size === undefined) await rm(file, { force: true });
  return size;
}

/** Move a received file to `key` of the bucket: a rename into the directory bucket, else a put. */
async function storeFile(blobs: BlobStore, key: string, file: string, contentType: string | undefined): Promise<void> {
  if (!(blobs instanceof FsBlobStore)) {
    await blobs.put(key, await readFile(file), contentType);
    return;
  }
  const target = blobs.pathOf(key);
  await mkdir(path.dirname(target), { recursive: true });
  try {
    await rename(file, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await blobs.put(key, await readFile(file), contentType); // another file system: copy
  }
}

// ---------------------------------------------------------------------------------------------
// Upload URLs
// ---------------------------------------------------------------------------------------------

/**
 * Signs and verifies the local server's upload URLs (HMAC-SHA256 under the state directory's
 * secret, {@link loadUploadSecret}).
 */
export class LocalUploadSigner {
  /**
   * @param maxContentLength largest upload accepted, bytes. @default MAX_LOCAL_UPLOAD_BYTES
   */
  constructor(
    private readonly secret: Uint8Array,
    private readonly now: () => Date = () => new Date(),
    readonly maxContentLength: number = MAX_LOCAL_UPLOAD_BYTES,
  ) {}

  /** A Presigner issuing URLs of the server at `baseUrl()` (refusing announced sizes over the limit). */
  presigner(baseUrl: () => string): Presigner {
    return {
      maxContentLength: this.maxContentLength,
      presignPut: async (key, options): Promise<PresignedUpload> => {
        const expires = Math.floor(this.now().getTime() / 1000) + options.expiresInSeconds;
        const search = new URLSearchParams({ expires: String(expires) });
        if (options.contentLength !== undefined) search.set('length', String(options.contentLength));
        if (options.contentType !== undefined) search.set('type', options.contentType);
        search.set('signature', this.sign(key, expires, options.contentLength, options.contentType));
        const headers: Record<string, string> = {};
        if (options.contentLength !== undefined) headers['content-length'] = String(options.contentLength);
        if (options.contentType !== undefined) headers['content-type'] = options.contentType;
        const path = key.split('/').map(encodeURIComponent).join('/');
        return { method: 'PUT', url: `${baseUrl()}${UPLOAD_PATH}${path}?${search.toString()}`, headers, expiresAt: new Date(expires * 1000).toISOString() };
      },
    };
  }

  /** Check an upload request against its URL's signature, expiry, length and content type. */
  verify(
    url: URL,
    contentLength: string | undefined,
    contentType: string | undefined,
  ): { ok: true; key: string; contentLength?: number; contentType?: string } | { ok: false; detail: string } {
    let key: string;
    try {
      key = url.pathname.slice(UPLOAD_PATH.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      return { ok: false, detail: 'Malformed upload URL' };
    }
    const expires = Number(url.searchParams.get('expires'));
    const lengthParam = url.searchParams.get('length');
    const length = lengthParam === null ? undefined : Number(lengthParam);
    const type = url.searchParams.get('type') ?? undefined;
    const signature = Buffer.from(url.searchParams.get('signature') ?? '', 'hex');
    const wanted = Buffer.from(this.sign(key, expires, length, type), 'hex');
    if (signature.length !== wanted.length || !timingSafeEqual(signature, wanted)) {
      return {
        ok: false,
        detail:
          'The upload URL signature does not match: the URL was altered, or was issued by a server with another state directory (or before its upload-secret was deleted); get a new URL with POST /v1/corpora',
      };
    }
    if (!Number.isFinite(expires) || this.now().getTime() / 1000 > expires) return { ok: false, detail: 'The upload URL has expired' };
    if (length !== undefined && contentLength !== undefined && Number(contentLength) !== length) {
      return { ok: false, detail: `Content-Length must be ${length}, as signed` };
    }
    if (type !== undefined && contentType !== type) return { ok: false, detail: `Content-Type must be ${type}, as signed` };
    return { ok: true, key, ...(length !== undefined && { contentLength: length }), ...(type !== undefined && { contentType: type }) };
  }

  private sign(key: string, expires: number, length: number | undefined, type: string | undefined): string {
    return createHmac('sha256', this.secret)
      .update(['PUT', key, String(expires), length ?? '', type ?? ''].join('\n'))
      .digest('hex');
  }
}

/**
 * Background ingestion of uploaded corpora, like the upload trigger in AWS: at most one ingestion
 * per corpus at a time; uploads arriving meanwhile cause one more ingestion afterwards.
 */
class LocalIngestion {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  /**
   * @param blobs the local bucket (listing and summaries, on this thread).
   * @param bucketDir its directory, which each ingestion's worker thread opens itself.
   */
  constructor(
    private readonly blobs: BlobStore,
    private readonly bucketDir: string,
    private readonly log: (line: string) => void,
  ) {}

  /** Ingest the corpus soon (now, or once more after the ingestion in progress), in a worker thread. */
  request(corpusId: string): void {
    if (this.running.has(corpusId)) {
      this.again.add(corpusId);
      return;
    }
    const run = (async () => {
      do {
        this.again.delete(corpusId);
        const reply = await ingestInWorker({ bucketDir: this.bucketDir, corpusId });
        this.log(reply.ok ? `ingested corpus ${corpusId}: ${reply.outcome}` : `ingestion of corpus ${corpusId} failed: ${reply.name}: ${reply.message}`);
      } while (this.again.has(corpusId));
    })().finally(() => this.running.delete(corpusId));
    this.running.set(corpusId, run);
  }

  /**
   * Queue the ingestion of every corpus with a file that its summary does not list at its current
   * size: what a server stopped (or killed) in the middle of ingesting, or stopped before it could
   * ingest an upload, left undone. The upload trigger's queue keeps such events in AWS; locally this
   * runs at every start. The content-addressed corpora of `ask` (`corpora/local-<content hash>/`,
   * local/engine/run.ts) are not among them: nobody uploads into them, their files never change (the
   * id is their content's hash) and no ingestion was asked for them (`ask`'s Prepare caches their
   * chunks itself).
   * @returns the corpus ids queued.
   */
  async resumeStale(): Promise<string[]> {
    const byCorpus = new Map<string, Array<{ key: string; size: number }>>();
    for (const object of await this.blobs.list(CORPORA_PREFIX)) {
      const id = object.key.slice(CORPORA_PREFIX.length).split('/')[0];
      if (!CorpusIdSchema.safeParse(id).success || object.key === `${CORPORA_PREFIX}${id}` || id.startsWith(LOCAL_CORPUS_ID_PREFIX)) continue;
      byCorpus.set(id, [...(byCorpus.get(id) ?? []), object]);
    }
    const queued: string[] = [];
    for (const [id, objects] of byCorpus) {
      const ingested = await readIngestedCounts(this.blobs, id, corpusPrefix(id), objects);
      const missing = objects.filter((o) => !ingested.has(o.key)).length;
      if (missing === 0) continue;
      this.log(`ingesting corpus ${id} again: ${missing} file(s) not ingested at their current size`);
      this.request(id);
      queued.push(id);
    }
    return queued;
  }

  /** Wait until no ingestion runs. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }
}

/**
 * Run one ingestion in a worker thread (local/services/ingest-worker.ts) and wait for its reply; a worker that
 * dies without one (out of memory, a crash) is reported as a failed ingestion, never thrown.
 */
function ingestInWorker(job: IngestJob): Promise<IngestReply> {
  return new Promise((resolve) => {
    const worker = new Worker(path.join(__dirname, 'ingest-worker.cjs'), { workerData: job });
    let reply: IngestReply | undefined;
    worker.once('message', (message: IngestReply) => (reply = message));
    worker.once('error', (error) => (reply ??= { ok: false, name: error.name, message: error.message }));
    worker.once('exit', (code) =>
      resolve(reply ?? { ok: false, name: 'WorkerExit', message: `the ingestion worker exited with code ${code} without a result` }),
    );
  });
}

/** A listen error in one line: a port in use or not permitted is a ConfigurationError; anything else as it is. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new ConfigurationError(
      `${host}:${port} is already in use (another extagents serve?): stop that process, or choose another port with --port <n> (0 = any free port)`,
      { cause: error },
    );
  }
  if (code === 'EACCES') {
    return new ConfigurationError(`Not permitted to listen on ${host}:${port} (ports below 1024 need privileges): choose another port with --port <n>`, {
      cause: error,
    });
  }
  return error;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
