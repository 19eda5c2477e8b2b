/**
 * Presigner (shared/api/ports.ts) over Amazon S3: a SigV4 presigned PutObject URL
 * (@aws-sdk/s3-request-presigner `getSignedUrl`). The URL carries the Lambda role's permission
 * (s3:PutObject on `corpora/*`) for `expiresInSeconds`, and no longer than the role's session.
 *
 * - `contentLength`: signed as the `content-length` header, so S3 rejects an upload of another
 *   size (SignatureDoesNotMatch); without it S3 takes up to 5 GiB (a single PUT's limit), and a
 *   file over MAX_DOCUMENT_BYTES (500 MiB) is then skipped with its reason by ingestion and Prepare.
 * - `contentType`: signed too (the presigner leaves it unsigned unless asked, hence
 *   `signableHeaders`), so the upload must send exactly that Content-Type.
 * - The S3 client given must be created with `requestChecksumCalculation: "WHEN_REQUIRED"`:
 *   otherwise the SDK adds a CRC32 checksum of the (empty) body to the signature and every upload
 *   of real content fails (see {@link createPresigningS3Client}).
 * Source: https://docs.aws.amazon.com/AmazonS3/latest/userguide/PresignedUrlUploadObject.html
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { PresignedUpload, Presigner } from '../../shared/api/ports';

/** An S3 client fit for presigning uploads (no flexible checksum of the empty body in the signature). */
export function createPresigningS3Client(config: ConstructorParameters<typeof S3Client>[0] = {}): S3Client {
  return new S3Client({ ...config, requestChecksumCalculation: 'WHEN_REQUIRED' });
}

/** Upload URLs for objects of one bucket. */
export class S3Presigner implements Presigner {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async presignPut(key: string, options: { expiresInSeconds: number; contentLength?: number; contentType?: string }): Promise<PresignedUpload> {
    const signed = new Set<string>();
    const headers: Record<string, string> = {};
    if (options.contentLength !== undefined) {
      signed.add('content-length');
      headers['content-length'] = String(options.contentLength);
    }
    if (options.contentType !== undefined) {
      signed.add('content-type');
      headers['content-type'] = options.contentType;
    }
    const issuedAt = this.now();
    const url = await getSignedUrl(
      this.client,
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        ...(options.contentLength !== undefined && { ContentLength: options.contentLength }),
        ...(options.contentType !== undefined && { ContentType: options.contentType }),
      }),
      { expiresIn: options.expiresInSeconds, signableHeaders: signed, signingDate: issuedAt },
    );
    return { method: 'PUT', url, headers, expiresAt: new Date(issuedAt.getTime() + options.expiresInSeconds * 1000).toISOString() };
  }
}
