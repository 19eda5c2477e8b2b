/**
 * `extagents serve`: the API of the deployed stack (shared/api: the same router, schemas and core)
 * on 127.0.0.1 over ONE long-lived local stack (local/stack.ts, persistent under the state
 * directory: the bucket in `<stateDir>/bucket`, DynamoDB data in `<stateDir>/dynamodb`), with
 * executions run in the background in this process (local/run-launcher.ts).
 *
 * Differences from AWS, each standing in for an AWS service:
 * - Authentication: a bearer token (RFC 6750) instead of SigV4; every API route needs
 *   `Authorization: Bearer <token>`, else 401 problem+json with `WWW-Authenticate: Bearer`.
 *   The token is generated (crypto) and printed at start unless given.
 * - Upload URLs: `POST /v1/corpora` returns URLs of this server's own `PUT /_local/uploads/<key>`,
 *   signed with HMAC-SHA256 under a per-process secret (like an S3 presigned URL, they need no
 *   token; they expire, and bind the key and the signed length / content type).
 * - Idempotency records: BlobIdempotencyStore (atomic within this one process).
 * - Ingestion: each upload under `corpora/<id>/` queues an ingestion of that corpus in the
 *   background (`ingestCorpus` of shared/pipeline/ingest.ts, what the upload trigger runs in AWS),
 *   one at a time per corpus, coalescing uploads that arrive meanwhile.
 *
 * Only 127.0.0.1 is served: the server is for trying and testing the API on one machine.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlobIdempotencyStore } from '../shared/api/idempotency';
import type { PresignedUpload, Presigner } from '../shared/api/ports';
import { plainProblem, problemOf, problemResponse, type ApiResponse } from '../shared/api/problem';
import { createApiHandler, type ApiHandler } from '../shared/api/router';
import { MAX_BODY_BYTES } from '../shared/api/schemas';
import { ConfigurationError, UnauthorizedError } from '../shared/errors';
import { corpusIdOfKey, ingestCorpus } from '../shared/pipeline/ingest';
import type { AgentModel, BlobStore } from '../shared/ports';
import { LocalRunLauncher } from './run-launcher';
import { startLocalStack, type LocalStack } from './stack';

/** Default port of `extagents serve`. */
export const DEFAULT_PORT = 8787;
/** Default number of runs executed at once. */
export const DEFAULT_MAX_CONCURRENT_RUNS = 2;
/** Largest upload the local server accepts: 512 MiB (S3 accepts 5 GiB per PUT). */
export const MAX_LOCAL_UPLOAD_BYTES = 512 * 1024 * 1024;
/** Shortest bearer token accepted from --token / EXTAGENTS_TOKEN, characters. */
export const MIN_TOKEN_CHARS = 16;
/** Path prefix of the local upload endpoint. */
export const UPLOAD_PATH = '/_local/uploads/';

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
  /** `extractive` (default) or `bedrock:<seeker>[,<reasoner>]`. */
  modelSpec?: string;
  /** Runs executed at once. @default DEFAULT_MAX_CONCURRENT_RUNS */
  maxConcurrentRuns?: number;
  /** Use this model instead of the spec's (tests). */
  model?: AgentModel;
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
  readonly launcher: LocalRunLauncher;
  readonly stack: LocalStack;
  /** Stop accepting requests, abort and await running executions, stop the stack. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Start the local API server.
 * @throws ConfigurationError for a host other than 127.0.0.1, a token shorter than
 *   MIN_TOKEN_CHARS, an invalid model spec or concurrency; the listen error (e.g. EADDRINUSE).
 */
export async function startServer(options: ServeOptions): Promise<LocalApiServer> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new ConfigurationError(`extagents serve listens on 127.0.0.1 only (got --host ${host})`);
  if (options.token !== undefined && options.token.length < MIN_TOKEN_CHARS) {
    throw new ConfigurationError(`The token must have at least ${MIN_TOKEN_CHARS} characters`);
  }
  const maxConcurrentRuns = options.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS;
  if (!Number.isInteger(maxConcurrentRuns) || maxConcurrentRuns < 1) throw new ConfigurationError('--max-concurrent-runs must be a positive integer');
  const token = options.token ?? randomBytes(24).toString('base64url');
  const log = options.log ?? (() => undefined);

  const stack = await startLocalStack({
    stateDir: options.stateDir,
    modelSpec: options.modelSpec,
    model: options.model,
    persistent: true,
    retryIntervalMs: options.retryIntervalMs,
  });
  const launcher = new LocalRunLauncher({
    execute: (input, signal) => stack.execute(input, { signal }),
    blobs: stack.blobs,
    maxConcurrentRuns,
    onEnded: (d) => log(`run ${d.name} ${d.status}${d.error ? ` (${d.error}: ${d.cause ?? ''})` : ''}`),
  });
  const uploads = new LocalUploadSigner(randomBytes(32));
  const ingestion = new LocalIngestion(stack.blobs, log);
  let baseUrl = '';
  const handleApi = createApiHandler(
    {
      blobs: stack.blobs,
      store: stack.store,
      launcher,
      presigner: uploads.presigner(() => baseUrl),
      idempotency: new BlobIdempotencyStore(stack.blobs),
    },
    { onInternalError: (error) => log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`) },
  );
  const expected = digest(token);

  const server = createServer((req, res) => {
    void serveRequest(req, res, { handleApi, uploads, ingestion, blobs: stack.blobs, expected, baseUrl: () => baseUrl }).then((status) =>
      log(`${req.method ?? '?'} ${(req.url ?? '').split('?')[0]} ${status}`),
    );
  });
  try {
    await listen(server, options.port ?? DEFAULT_PORT, host);
  } catch (error) {
    await launcher.stop();
    await stack.stop();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://${host}:${port}`;

  let stopped: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    token,
    tokenGenerated: options.token === undefined,
    launcher,
    stack,
    stop: () =>
      (stopped ??= (async () => {
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
  /** SHA-256 of the token (compared in constant time with the request's). */
  expected: Buffer;
  baseUrl: () => string;
}

/** Answer one request; resolves with the status sent. */
async function serveRequest(req: IncomingMessage, res: ServerResponse, ctx: ServeContext): Promise<number> {
  let response: ApiResponse;
  try {
    const url = new URL(req.url ?? '/', ctx.baseUrl());
    if (url.pathname.startsWith(UPLOAD_PATH)) {
      response = await handleUpload(req, url, ctx);
    } else if (!authorized(req.headers.authorization, ctx.expected)) {
      const given = req.headers.authorization !== undefined;
      const error = new UnauthorizedError(given ? 'The bearer token is not valid' : 'Send the token printed by `extagents serve` as "Authorization: Bearer <token>"');
      response = problemResponse(problemOf(error), {
        'www-authenticate': given ? 'Bearer realm="extagents", error="invalid_token"' : 'Bearer realm="extagents"',
      });
      req.resume();
    } else {
      const body = await readBody(req, MAX_BODY_BYTES);
      if (body === undefined) {
        response = problemResponse(plainProblem(413, `The body exceeds ${MAX_BODY_BYTES} bytes`));
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

/** SHA-256 of a token (fixed length, so timingSafeEqual applies to any token length). */
function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), expected);
}

/**
 * The body, or undefined when it exceeds `max` bytes (the rest is not read: the connection is
 * closed after the answer).
 */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > max) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) {
      req.destroy();
      return undefined;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** `PUT /_local/uploads/<key>?…`: check the signature, then store the body at `<key>`. */
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
  const limit = check.contentLength ?? MAX_LOCAL_UPLOAD_BYTES;
  const body = await readBody(req, limit);
  if (body === undefined) return problemResponse(plainProblem(413, `The upload exceeds ${limit} bytes`));
  if (check.contentLength !== undefined && body.length !== check.contentLength) {
    return problemResponse(plainProblem(400, `The upload has ${body.length} bytes; the URL was signed for ${check.contentLength}`));
  }
  await ctx.blobs.put(check.key, body, check.contentType);
  const corpusId = corpusIdOfKey(check.key);
  if (corpusId !== undefined) ctx.ingestion.request(corpusId);
  return { status: 200, headers: { 'cache-control': 'no-store' }, body: '' };
}

// ---------------------------------------------------------------------------------------------
// Upload URLs
// ---------------------------------------------------------------------------------------------

/** Signs and verifies the local server's upload URLs (HMAC-SHA256 under a per-process secret). */
export class LocalUploadSigner {
  constructor(
    private readonly secret: Uint8Array,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A Presigner issuing URLs of the server at `baseUrl()`. */
  presigner(baseUrl: () => string): Presigner {
    return {
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
    if (signature.length !== wanted.length || !timingSafeEqual(signature, wanted)) return { ok: false, detail: 'The upload URL signature does not match' };
    if (!Number.isFinite(expires) || this.now().getTime() / 1000 > expires) return { ok: false, detail: 'The upload URL has expired' };
    if (length !== undefined && contentLength !== undefined && Number(contentLength) !== length) {
      return { ok: false, detail: `Content-Length must be ${length}, as signed` };
    }
    if (type !== undefined && contentType !== type) return { ok: false, detail: `Content-Type must be ${type}, as signed` };
    return { ok: true, key, ...(length !== undefined && { contentLength: length }), ...(type !== undefined && { contentType: type }) };
  }

  private sign(key: string, expires: number, length: number | undefined, type: string | undefined): string {
    return createHmac('sha256', this.secret).update(['PUT', key, String(expires), length ?? '', type ?? ''].join('\n')).digest('hex');
  }
}

/**
 * Background ingestion of uploaded corpora, like the upload trigger in AWS: at most one ingestion
 * per corpus at a time; uploads arriving meanwhile cause one more ingestion afterwards.
 */
class LocalIngestion {
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();

  constructor(
    private readonly blobs: BlobStore,
    private readonly log: (line: string) => void,
  ) {}

  /** Ingest the corpus soon (now, or once more after the ingestion in progress). */
  request(corpusId: string): void {
    if (this.running.has(corpusId)) {
      this.again.add(corpusId);
      return;
    }
    const run = (async () => {
      do {
        this.again.delete(corpusId);
        try {
          const outcome = await ingestCorpus(corpusId, { blobs: this.blobs });
          this.log(`ingested corpus ${corpusId}: ${outcome.outcome}`);
        } catch (error) {
          this.log(`ingestion of corpus ${corpusId} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
        }
      } while (this.again.has(corpusId));
    })().finally(() => this.running.delete(corpusId));
    this.running.set(corpusId, run);
  }

  /** Wait until no ingestion runs. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }
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
