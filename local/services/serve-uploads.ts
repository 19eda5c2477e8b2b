/**
 * Uploads of `extagents serve` (local/services/serve.ts), standing in for S3 presigned URLs:
 * `POST /v1/corpora` returns URLs of the server's own `PUT /_local/uploads/<key>`, signed with
 * HMAC-SHA256 under a secret kept in the state directory ({@link loadUploadSecret}), so URLs keep
 * working across restarts on the same state directory and port until they expire. Like an S3
 * presigned URL they need no token; they expire, and bind the key and the signed length / content
 * type ({@link LocalUploadSigner}). {@link handleUpload} checks a PUT against its URL and streams the
 * body to disk (never held in memory, at most MAX_LOCAL_UPLOAD_BYTES), then moves it into the bucket
 * and queues the ingestion of its corpus (local/services/ingestion-queue.ts).
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { PresignedUpload, Presigner } from '../../shared/api/ports';
import { plainProblem, problemResponse, type ApiResponse } from '../../shared/api/problem';
import { MAX_FILE_BYTES } from '../../shared/api/schemas';
import { corpusIdOfKey } from '../../shared/corpus';
import { ConfigurationError, InvalidInputError } from '../../shared/errors';
import type { BlobStore } from '../../shared/ports';
import { FsBlobStore } from '../engine/fs-blob-store';
import type { LocalIngestion } from './ingestion-queue';
import { drain } from './request-body';

/**
 * Largest upload the local server accepts: the API's MAX_FILE_BYTES (500 MiB, the largest document
 * the corpus readers decode), so the local server and the deployed API take the same files.
 */
export const MAX_LOCAL_UPLOAD_BYTES = MAX_FILE_BYTES;
/** Path prefix of the local upload endpoint. */
export const UPLOAD_PATH = '/_local/uploads/';
/** File of the upload URLs' signing secret, in the state directory. */
export const UPLOAD_SECRET_FILE = 'upload-secret';
/** Folder of uploads being received, in the state directory (emptied at start). */
export const UPLOAD_TEMP_DIR = path.join('tmp', 'uploads');

/** What {@link handleUpload} uses of the server's request context (local/services/serve.ts). */
export interface UploadContext {
  /** Signs and verifies the upload URLs. */
  uploads: LocalUploadSigner;
  /** Queues the ingestion of an uploaded file's corpus. */
  ingestion: LocalIngestion;
  /** The local bucket. */
  blobs: BlobStore;
  /** Folder of uploads being received. */
  uploadTemp: string;
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
 * Why a request's `Content-Encoding` cannot be taken (anything but none or `identity`), or undefined.
 * @returns the problem's detail (HTTP 415).
 */
export function contentEncodingProblem(header: string | undefined): string | undefined {
  const codings = (header ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  return codings.length === 0
    ? undefined
    : `Content-Encoding ${JSON.stringify(header)} is not decoded here: send the file's own bytes, without a Content-Encoding`;
}

/**
 * `PUT /_local/uploads/<key>?…`: check the signature, then store the body at `<key>`. The body is
 * streamed to a file (never held in memory) and refused with 413 past the signed length or
 * MAX_LOCAL_UPLOAD_BYTES, whichever is smaller.
 */
export async function handleUpload(req: IncomingMessage, url: URL, ctx: UploadContext): Promise<ApiResponse> {
  if (req.method !== 'PUT') {
    req.resume();
    return problemResponse(plainProblem(405, 'Upload URLs take PUT'), { allow: 'PUT' });
  }
  const check = ctx.uploads.verify(url, req.headers['content-length'], req.headers['content-type']);
  if (!check.ok) {
    req.resume();
    return problemResponse(plainProblem(403, check.detail));
  }
  // A compressed body would be stored as its compressed bytes (S3 stores an object as sent, too): the
  // document would be read as a binary file. Refused, saying what to send.
  const encoding = contentEncodingProblem(req.headers['content-encoding']);
  if (encoding !== undefined) {
    await drain(req);
    return problemResponse(plainProblem(415, encoding));
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
