import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { InvalidInputError, NotFoundError } from '../../shared/errors';
import { FsBlobStore } from '../../local/engine/fs-blob-store';

describe('FsBlobStore', () => {
  let root: string;
  let store: FsBlobStore;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'fs-blob-store-'));
    store = new FsBlobStore(root);
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('reads back what it wrote, as bytes and as text, creating folders on the way', async () => {
    // Arrange
    const key = 'runs/r1/chunks/0.json';

    // Act
    await store.put(key, '{"text":"héllo"}');
    await store.put('runs/r1/raw.bin', new Uint8Array([0, 255, 7]));

    // Assert
    expect(await store.getText(key)).toBe('{"text":"héllo"}');
    expect(Array.from(await store.get('runs/r1/raw.bin'))).toEqual([0, 255, 7]);
    expect(await store.exists(key)).toBe(true);
  });

  it('overwrites an object and leaves no temporary file behind', async () => {
    // Arrange
    await store.put('a/b.json', 'first');

    // Act
    await store.put('a/b.json', 'second');

    // Assert
    expect(await store.getText('a/b.json')).toBe('second');
    expect(await readdir(path.join(root, 'a'))).toEqual(['b.json']);
  });

  it('writes names up to 255 bytes and refuses a longer segment with InvalidInputError, not a file-system error', async () => {
    const longest = `${'é'.repeat(125)}.txt`; // 254 bytes
    await store.put(`corpora/c/${longest}`, 'ok');
    expect(await store.getText(`corpora/c/${longest}`)).toBe('ok');

    const tooLong = `${'界'.repeat(86)}.txt`; // 262 bytes, 90 characters
    await expect(store.put(`corpora/c/${tooLong}`, 'x')).rejects.toThrow(
      /a path segment of 262 bytes; the local bucket \(a directory\) holds names of at most 255 bytes/,
    );
    await expect(store.put(`corpora/c/${tooLong}`, 'x')).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('throws NotFoundError for a missing key and reports it as not existing', async () => {
    // Arrange
    await store.put('present/x.txt', 'x');

    // Act / Assert
    await expect(store.get('absent.txt')).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.getText('present/x.txt/deeper')).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.get('present')).rejects.toBeInstanceOf(NotFoundError); // a folder is not an object
    expect(await store.exists('absent.txt')).toBe(false);
    expect(await store.exists('present')).toBe(false);
  });

  it.each([['../escape.txt'], ['a/../../escape.txt'], ['/etc/passwd'], [''], ['a//b'], ['./a'], ['a/'], ['a\\b']])(
    'rejects the key %j with InvalidInputError',
    async (key) => {
      await expect(store.put(key, 'x')).rejects.toBeInstanceOf(InvalidInputError);
      await expect(store.get(key)).rejects.toBeInstanceOf(InvalidInputError);
      await expect(store.exists(key)).rejects.toBeInstanceOf(InvalidInputError);
    },
  );

  it('rejects a listing prefix that climbs out of the bucket', async () => {
    await expect(store.list('../')).rejects.toBeInstanceOf(InvalidInputError);
    await expect(store.list('/abs')).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('lists keys by string prefix, with sizes, in ascending byte order, like S3', async () => {
    // Arrange
    await store.put('runs/r1/b.json', '12345');
    await store.put('runs/r1/a.json', '1');
    await store.put('runs/r10/z.json', '22');
    await store.put('runs/r2/c.json', '333');
    await store.put('corpora/doc.txt', 'd');

    // Act
    const all = await store.list('');
    const r1Folder = await store.list('runs/r1/');
    const r1Prefix = await store.list('runs/r1');
    const none = await store.list('nothing/here/');

    // Assert
    expect(all.map((o) => o.key)).toEqual(['corpora/doc.txt', 'runs/r1/a.json', 'runs/r1/b.json', 'runs/r10/z.json', 'runs/r2/c.json']);
    expect(r1Folder).toEqual([
      { key: 'runs/r1/a.json', size: 1 },
      { key: 'runs/r1/b.json', size: 5 },
    ]);
    expect(r1Prefix.map((o) => o.key)).toEqual(['runs/r1/a.json', 'runs/r1/b.json', 'runs/r10/z.json']);
    expect(none).toEqual([]);
  });

  it('does not list a write that is still in progress', async () => {
    // Arrange: a temporary file as put() leaves it between write and rename
    await store.put('runs/done.json', '1');
    await writeFile(path.join(root, 'runs', 'next.json.0000.extagents-tmp'), 'partial');

    // Act
    const keys = (await store.list('runs/')).map((o) => o.key);

    // Assert
    expect(keys).toEqual(['runs/done.json']);
  });

  it('copies an object to another key, bytes exact, and reports a missing source as NotFoundError', async () => {
    // Arrange
    const bytes = new Uint8Array([1, 2, 3, 0, 255]);
    await store.put('cache/a.bin', bytes);
    // Act
    await store.copy('cache/a.bin', 'runs/r/b.bin');
    // Assert
    expect(Array.from(await store.get('runs/r/b.bin'))).toEqual(Array.from(bytes));
    expect((await store.list('runs/')).map((o) => o.key)).toEqual(['runs/r/b.bin']);
    await expect(store.copy('cache/absent.bin', 'runs/r/c.bin')).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.exists('runs/r/c.bin')).toBe(false);
  });
});
