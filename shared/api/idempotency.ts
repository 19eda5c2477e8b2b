/**
 * Idempotency of `POST /v1/runs` (the `Idempotency-Key` header, draft-ietf-httpapi-idempotency-key-header):
 * the same key and the same request start one execution, not two; the same key with a different
 * request is a conflict (409).
 *
 * - The key is scoped to the caller: `keyHash = SHA-256(principal + "\n" + key)` (hex), so two
 *   callers that happen to pick the same key never meet.
 * - The run id, and so the Step Functions execution name, is derived from it:
 *   `run-<first 32 hex digits of keyHash>` (128 bits). A retry therefore addresses the same
 *   execution, and StartExecution's own name uniqueness backs the record below up.
 * - `requestHash = SHA-256(canonical JSON of the normalized request)`: question (trimmed), corpus
 *   (resolved to prefix or keys) and options (defaults filled), object keys sorted; two requests
 *   that mean the same run have the same hash.
 * - The first request's hashes are stored with a create-if-absent write (`IdempotencyStore.claim`):
 *   an S3 conditional PUT in AWS (lambdas/adapters/s3-idempotency-store.ts); locally
 *   {@link BlobIdempotencyStore}.
 */
import { createHash } from 'node:crypto';
import { NotFoundError } from '../errors';
import type { BlobStore } from '../ports';
import { idempotencyRecordKey } from './layout';
import type { IdempotencyRecord, IdempotencyStore } from './ports';

/** Lower-case hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * JSON with object keys sorted at every level (arrays keep their order; `undefined` members are
 * dropped as JSON.stringify does), so equal values serialize equally.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The caller-scoped hash of an idempotency key. */
export function idempotencyKeyHash(principal: string, key: string): string {
  return sha256Hex(`${principal}\n${key}`);
}

/** The run id (and execution name) of an idempotency key: `run-<32 hex>`. */
export function idempotentRunId(keyHash: string): string {
  return `run-${keyHash.slice(0, 32)}`;
}

/** The hash of a normalized request (see the file comment). */
export function requestHash(normalized: unknown): string {
  return sha256Hex(canonicalJson(normalized));
}

/**
 * An {@link IdempotencyStore} in the bucket (`api/idempotency/<keyHash>.json`) through the
 * BlobStore port, for the local server. `claim` is a read then a write, made atomic by running
 * the claims of one key one after the other inside this process; that suffices because one
 * server process owns its state directory (AWS uses the conditional write of
 * S3IdempotencyStore instead).
 */
export class BlobIdempotencyStore implements IdempotencyStore {
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(private readonly blobs: BlobStore) {}

  async get(keyHash: string): Promise<IdempotencyRecord | undefined> {
    try {
      return JSON.parse(await this.blobs.getText(idempotencyRecordKey(keyHash))) as IdempotencyRecord;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord | undefined> {
    const previous = this.pending.get(record.keyHash) ?? Promise.resolve();
    const next = previous.then(async () => {
      const existing = await this.get(record.keyHash);
      if (existing) return existing;
      await this.blobs.put(idempotencyRecordKey(record.keyHash), JSON.stringify(record), 'application/json');
      return undefined;
    });
    const settled = next.catch(() => undefined);
    this.pending.set(record.keyHash, settled);
    void settled.then(() => {
      if (this.pending.get(record.keyHash) === settled) this.pending.delete(record.keyHash);
    });
    return next;
  }
}
