/**
 * The S3 adapter against s3rver on 127.0.0.1 (the real SDK, no AWS account). Local runs use a
 * directory instead; this test keeps the S3 adapter honest.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { NotFoundError } from '../../shared/errors';
import { S3BlobStore } from '../../lambdas/adapters/s3-blob-store';

describe('S3BlobStore against s3rver', () => {
  let server: S3rver;
  let dir: string;
  let store: S3BlobStore;
  let client: S3Client;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 's3rver-'));
    server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir });
    const address = (await server.run()) as AddressInfo;
    client = new S3Client({
      endpoint: `http://127.0.0.1:${address.port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      // s3rver 3.7 stores aws-chunked framing verbatim when the SDK adds default checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    await client.send(new CreateBucketCommand({ Bucket: 'test-bucket' }));
    store = new S3BlobStore(client, 'test-bucket');
  });

  afterAll(async () => {
    client.destroy();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes and reads text and bytes exactly', async () => {
    const text = 'Chickamaugas 范围内产生的二氧化碳排放量 😀\n';
    await store.put('corpora/a/one.txt', text, 'text/plain');
    const bytes = new Uint8Array([0, 255, 137, 80, 78, 71]);
    await store.put('corpora/a/two.bin', bytes);

    expect(await store.getText('corpora/a/one.txt')).toBe(text);
    expect(Array.from(await store.get('corpora/a/two.bin'))).toEqual(Array.from(bytes));
  });

  it('turns a missing key into NotFoundError and exists() into false', async () => {
    await expect(store.get('corpora/missing.txt')).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.exists('corpora/missing.txt')).toBe(false);
    await store.put('corpora/present.txt', 'x');
    expect(await store.exists('corpora/present.txt')).toBe(true);
  });

  it('lists every key under a prefix across pages, sorted', async () => {
    const keys = Array.from({ length: 25 }, (_, i) => `listing/k${String(i).padStart(4, '0')}.json`);
    await Promise.all(keys.map((k) => store.put(k, '{}')));
    await store.put('other/k.json', '{}');
    const paged = new S3BlobStore(client, 'test-bucket', { listPageSize: 10 });

    const listed = await paged.list('listing/');

    expect(listed.map((o) => o.key)).toEqual(keys);
    expect(listed.every((o) => o.size === 2)).toBe(true);
  });

  it('copies an object server-side, bytes exact, and reports a missing source as NotFoundError', async () => {
    // Arrange
    const bytes = new Uint8Array([1, 2, 3, 0, 255]);
    await store.put('cache/chunks/k/chunks/0000000.json', bytes);
    // s3rver 3 answers PutObject when its hashing stream ends, before its file write stream has
    // flushed (lib/stores/filesystem.js putObject), so on a loaded machine an immediate copy can read
    // an empty source. S3 itself is read-after-write consistent; wait until the fake is too.
    for (let i = 0; i < 200 && (await store.get('cache/chunks/k/chunks/0000000.json')).length < bytes.length; i++) await new Promise((r) => setTimeout(r, 10));
    // Act
    await store.copy('cache/chunks/k/chunks/0000000.json', 'runs/r/chunks/0000000.json');
    // Assert
    expect(Array.from(await store.get('runs/r/chunks/0000000.json'))).toEqual(Array.from(bytes));
    await expect(store.copy('cache/chunks/k/absent.json', 'runs/r/x.json')).rejects.toBeInstanceOf(NotFoundError);
  });
});
