/**
 * IdempotencyStore (shared/api/ports.ts) in the project bucket at `api/idempotency/<keyHash>.json`,
 * made atomic by an S3 conditional write: PutObject with `If-None-Match: *` succeeds only when no
 * object has the key; otherwise S3 answers 412 Precondition Failed (the record is then read), or
 * 409 ConditionalRequestConflict while a concurrent conditional write of the same key is in flight
 * (retried, bounded).
 * Source: https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html
 */
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { StorageError } from '../../shared/errors';
import { idempotencyRecordKey } from '../../shared/api/layout';
import type { IdempotencyRecord, IdempotencyStore } from '../../shared/api/ports';

/** Attempts of a claim that meets 409 ConditionalRequestConflict (then StorageError). */
const CLAIM_ATTEMPTS = 4;

interface S3ErrorLike {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

export class S3IdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  async get(keyHash: string): Promise<IdempotencyRecord | undefined> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: idempotencyRecordKey(keyHash) }));
      return JSON.parse((await out.Body?.transformToString('utf-8')) ?? '') as IdempotencyRecord;
    } catch (error) {
      if (error instanceof NoSuchKey || (error as S3ErrorLike).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: idempotencyRecordKey(record.keyHash),
            Body: JSON.stringify(record),
            ContentType: 'application/json',
            IfNoneMatch: '*',
          }),
        );
        return undefined;
      } catch (error) {
        const e = error as S3ErrorLike;
        const status = e.$metadata?.httpStatusCode;
        if (e.name === 'PreconditionFailed' || status === 412) {
          const existing = await this.get(record.keyHash);
          if (existing) return existing;
          throw new StorageError(`Idempotency record ${record.keyHash} exists but cannot be read`, { cause: error });
        }
        if (e.name === 'ConditionalRequestConflict' || status === 409) {
          if (attempt >= CLAIM_ATTEMPTS) throw new StorageError(`Idempotency record ${record.keyHash}: concurrent writes did not settle`, { cause: error });
          await this.sleep(Math.random() * 100 * 2 ** attempt);
          continue;
        }
        throw error;
      }
    }
  }
}
