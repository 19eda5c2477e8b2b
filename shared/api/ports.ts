/**
 * Ports of the API core (shared/api/core.ts), beside the storage ports of shared/ports.ts and the
 * execution port of shared/executions.ts. Adapters: AWS (lambdas/adapters/s3-presigner.ts,
 * s3-idempotency-store.ts) and local (local/services/serve-uploads.ts, shared/api/idempotency.ts). Nothing here imports the AWS SDK.
 */

/** A presigned upload: everything a client needs to PUT one object without credentials. */
export interface PresignedUpload {
  method: 'PUT';
  url: string;
  /** Headers the client must send with exactly these values (e.g. `content-length` when signed). */
  headers: Record<string, string>;
  /** ISO-8601 time after which the URL no longer works. */
  expiresAt: string;
}

/** Creates upload URLs for objects of the project bucket (S3 presigned PUT in AWS; the local server's own PUT endpoint). */
export interface Presigner {
  /**
   * Largest upload the URLs accept, bytes, when the presigner has its own limit (the local server
   * announces MAX_LOCAL_UPLOAD_BYTES, equal to the API's MAX_FILE_BYTES unless constructed with a
   * smaller one; S3's has none). `POST /v1/corpora` refuses an announced `size` above it (400).
   */
  readonly maxContentLength?: number;
  /**
   * A URL to PUT the object `key`.
   * @param options.expiresInSeconds validity of the URL, seconds.
   * @param options.contentLength when given, the upload must have exactly this many bytes.
   * @param options.contentType when given, the upload must send this `content-type`.
   */
  presignPut(key: string, options: { expiresInSeconds: number; contentLength?: number; contentType?: string }): Promise<PresignedUpload>;
}

/** What an `Idempotency-Key` was first used for. */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the caller and the key (see shared/api/idempotency.ts). */
  keyHash: string;
  /** SHA-256 (hex) of the canonical request (see shared/api/idempotency.ts). */
  requestHash: string;
  /** The run the key started. */
  runId: string;
  /** ISO-8601 time of the first use. */
  createdAt: string;
}

/** Remembers the first request of each idempotency key (atomic create-if-absent). */
export interface IdempotencyStore {
  /** The record of a key, or undefined. */
  get(keyHash: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Store `record` unless the key already has one.
   * @returns undefined when stored, otherwise the record already there (unchanged).
   */
  claim(record: IdempotencyRecord): Promise<IdempotencyRecord | undefined>;
}
