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
 *
 * This file is the HTTP layer: the server's start and stop, the bearer token, and the routing of each
 * request. Its parts live beside it: the upload URLs and the upload endpoint
 * (local/services/serve-uploads.ts), the ingestion queue (local/services/ingestion-queue.ts), the
 * event stream of `GET /v1/runs/{runId}/events` (local/services/event-stream.ts), and the reading of
 * request bodies (local/services/request-body.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { BlobIdempotencyStore } from '../../shared/api/idempotency';
import { PROBLEM_CONTENT_TYPE, plainProblem, problemOf, problemResponse, type ApiResponse } from '../../shared/api/problem';
import { createApiHandler, isPublicRequest, type ApiHandler } from '../../shared/api/router';
import { ApiCore } from '../../shared/api/core';
import { modelPricing } from '../../models';
import { RunEventHub } from './run-events';
import { RunProgressTracker } from '../engine/run-progress';
import { recordWebRun, serveStatic, WebEndpoints } from './web';
import { MAX_BODY_BYTES } from '../../shared/api/schemas';
import { ConfigurationError } from '../../shared/errors';
import { UnauthorizedError } from '../../shared/api/errors';
import type { RunOptions } from '../../shared/config';
import type { ModelSpecInput } from '../../shared/model-spec';
import type { AgentModel } from '../../shared/ports';
import { LocalExecutions } from '../engine/executions';
import { runLiveness } from '../engine/run-heartbeat';
import { MAX_MODEL_SEQUENCES, startLocalStack, type LocalStack } from '../engine/stack';
import { DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_PORT } from '../engine/defaults';
import { EVENTS_PATH, streamEvents } from './event-stream';
import { LocalIngestion } from './ingestion-queue';
import { readBody } from './request-body';
import {
  handleUpload,
  loadUploadSecret,
  LocalUploadSigner,
  MAX_LOCAL_UPLOAD_BYTES,
  UPLOAD_PATH,
  UPLOAD_SECRET_FILE,
  UPLOAD_TEMP_DIR,
  type UploadContext,
} from './serve-uploads';

/** Default port and runs at once of `extagents serve` (local/engine/defaults.ts). */
export { DEFAULT_MAX_CONCURRENT_RUNS, DEFAULT_PORT };
/** The upload URLs' signer, their secret and limits (local/services/serve-uploads.ts): part of this module's API. */
export { loadUploadSecret, LocalUploadSigner, MAX_LOCAL_UPLOAD_BYTES, UPLOAD_PATH, UPLOAD_SECRET_FILE };
/** Shortest bearer token accepted from --token / EXTAGENTS_TOKEN, characters. */
export const MIN_TOKEN_CHARS = 16;

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
  /** The model spec, text or parsed (models/spec.ts); `extractive` by default. */
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
      modelSequences: MAX_MODEL_SEQUENCES,
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
    // A CLI `ask` beside the server runs with its own (in-memory) table: its heartbeat has its counts.
    foreignProgress: async (runId: string) => {
      const live = await runLiveness(stack.blobs, runId);
      const seek = live?.state === 'running' && live.heartbeat.pid !== process.pid ? live.heartbeat.seek : undefined;
      return seek && { round: seek.round, sought: seek.done, total: seek.total };
    },
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

/** What a request needs of the server: the upload endpoint's part ({@link UploadContext}) and the rest. */
interface ServeContext extends UploadContext {
  handleApi: ApiHandler;
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
      return await streamEvents(req, res, url, ctx.events);
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
          repeatedQuery: [...new Set(url.searchParams.keys())].filter((name) => url.searchParams.getAll(name).length > 1),
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

/** SHA-256 of a token (fixed length, so timingSafeEqual applies to any token length). */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), expected);
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
