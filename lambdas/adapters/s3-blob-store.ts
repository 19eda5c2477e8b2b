/**
 * BlobStore on Amazon S3 (one bucket). Missing keys become NotFoundError at this boundary.
 */
import {
  CopyObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  paginateListObjectsV2,
} from '@aws-sdk/client-s3';
import { NotFoundError } from '../../shared/errors';
import type { BlobStore } from '../../shared/ports';

/** BlobStore over an S3Client (created once per container by the caller). */
export class S3BlobStore implements BlobStore {
  /**
   * @param options.listPageSize keys per ListObjectsV2 page (S3's maximum and default is 1000;
   *   smaller values exercise pagination in tests).
   */
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly options: { listPageSize?: number } = {},
  ) {}

  async put(key: string, body: string | Uint8Array, contentType?: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: contentType }));
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) return new Uint8Array();
      return await out.Body.transformToByteArray();
    } catch (error) {
      if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') {
        throw new NotFoundError(`s3://${this.bucket}/${key} does not exist`, { cause: error });
      }
      throw error;
    }
  }

  async getText(key: string): Promise<string> {
    return new TextDecoder('utf-8').decode(await this.get(key));
  }

  async list(prefix: string): Promise<Array<{ key: string; size: number }>> {
    const out: Array<{ key: string; size: number }> = [];
    for await (const page of paginateListObjectsV2({ client: this.client, pageSize: this.options.listPageSize }, { Bucket: this.bucket, Prefix: prefix })) {
      for (const o of page.Contents ?? []) if (o.Key && !o.Key.endsWith('/')) out.push({ key: o.Key, size: o.Size ?? 0 });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /**
   * Server-side copy within the bucket (CopyObject: objects up to 5 GB, no bytes through Lambda).
   * The copy source is `<bucket>/<key>` with each key segment URL-encoded, as the API requires.
   * Source: https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html
   * @throws NotFoundError when the source does not exist.
   */
  async copy(sourceKey: string, targetKey: string): Promise<void> {
    const source = `${this.bucket}/${sourceKey.split('/').map(encodeURIComponent).join('/')}`;
    try {
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: targetKey, CopySource: source }));
    } catch (error) {
      if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') {
        throw new NotFoundError(`s3://${this.bucket}/${sourceKey} does not exist`, { cause: error });
      }
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (error) {
      if (
        error instanceof NotFound ||
        (error as Error).name === 'NotFound' ||
        (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404
      )
        return false;
      throw error;
    }
  }
}
