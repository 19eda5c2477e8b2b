/**
 * Request bodies of `extagents serve` (local/services/serve.ts): read one up to a limit
 * ({@link readBody}), or discard the rest of one ({@link drain}) before an oversized request's 413,
 * so that clients still sending the body see the answer. Used by the API's requests (serve.ts) and
 * the uploads (local/services/serve-uploads.ts).
 */
import type { IncomingMessage } from 'node:http';

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
export function drain(req: IncomingMessage, lingerMs = OVERSIZED_LINGER_MS): Promise<void> {
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
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
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
