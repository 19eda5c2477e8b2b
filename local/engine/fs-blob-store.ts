/**
 * The local bucket: a `BlobStore` (shared/ports.ts) over a directory. A key `runs/r1/run.json` is the
 * file `<root>/runs/r1/run.json`. Keys follow S3's listing semantics where the port needs them:
 * `list(prefix)` is a string prefix (not a folder) and returns keys in ascending UTF-8 byte order,
 * as ListObjectsV2 does (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html).
 */
import { randomUUID } from 'node:crypto';
import { copyFile, link, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { InvalidInputError, NotFoundError } from '../../shared/errors';
import type { BlobStore } from '../../shared/ports';

/** Suffix of in-progress writes; such files are never listed (see {@link FsBlobStore.put}). */
const TEMP_SUFFIX = '.extagents-tmp';
/** Longest name of a file or directory (bytes, UTF-8): NAME_MAX of Linux file systems. */
const MAX_SEGMENT_BYTES = 255;
/** A temporary file beside the object: a short name of its own, so that any valid key can be written. */
const tempBeside = (file: string): string => path.join(path.dirname(file), `.${randomUUID()}${TEMP_SUFFIX}`);

/** A `BlobStore` rooted at a directory (created on the first write). */
export class FsBlobStore implements BlobStore {
  /** Absolute path of the root directory. */
  readonly root: string;

  /** @param root the directory that plays the bucket (relative paths resolve against the cwd). */
  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /**
   * Write an object atomically: a temporary file in the same directory, then `rename` (atomic on
   * POSIX within one file system), so a reader never sees a partial object. Hand-written because it
   * is three calls; `write-file-atomic` is not a dependency of the project. `contentType` is ignored.
   * @throws InvalidInputError for an invalid key (see {@link FsBlobStore.pathOf}).
   */
  async put(key: string, body: string | Uint8Array, _contentType?: string): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    const temp = tempBeside(file);
    try {
      await writeFile(temp, body);
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      // A failed write (ENOSPC, EIO) names no path; the object's file is what the user needs to see.
      const failure = error as NodeJS.ErrnoException;
      if (typeof failure.code === 'string' && failure.path === undefined) failure.path = file;
      throw error;
    }
  }

  /**
   * Put a file of this machine as an object without reading it into memory: a hard link to it when
   * it is on the bucket's file system (no copy: a corpus file too large to read, 4 GB, is placed at
   * once), else a file copy; atomically (a temporary name, then `rename`), as `put`.
   * @throws InvalidInputError for an invalid key; the file system's error when the file cannot be read.
   */
  async putFile(key: string, source: string): Promise<void> {
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    const temp = tempBeside(file);
    try {
      await link(source, temp).catch(() => copyFile(source, temp));
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /**
   * Read an object's bytes.
   * @throws NotFoundError when no object has this key; InvalidInputError for an invalid key.
   */
  async get(key: string): Promise<Uint8Array> {
    return this.read(key, async (file) => new Uint8Array(await readFile(file)));
  }

  /**
   * Read an object as UTF-8 text, decoded as the file is read (no copies of its bytes on the way: a
   * warm seek reads two objects, its chunk and the chunk's analysis).
   * @throws NotFoundError when no object has this key; InvalidInputError for an invalid key.
   */
  async getText(key: string): Promise<string> {
    return this.read(key, (file) => readFile(file, 'utf8'));
  }

  /** `reading` of the object's file; a missing file is a NotFoundError naming the key. */
  private async read<T>(key: string, reading: (file: string) => Promise<T>): Promise<T> {
    const file = this.pathOf(key);
    try {
      return await reading(file);
    } catch (error) {
      if (isMissing(error)) throw new NotFoundError(`No object with key ${JSON.stringify(key)} in ${this.root}`, { cause: error });
      throw error;
    }
  }

  /**
   * All keys that start with `prefix` (a string prefix, as in S3: `runs/a` matches `runs/a/x` and
   * `runs/ab`), with their size in bytes, sorted ascending by UTF-8 bytes. `''` lists everything.
   * @throws InvalidInputError for a prefix that is absolute or has a `..` segment.
   */
  async list(prefix: string): Promise<Array<{ key: string; size: number }>> {
    if (prefix !== '') checkKeyShape(prefix, 'prefix');
    // Walk only the deepest folder that can hold matches: everything before the last '/'.
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = folder === '' ? this.root : path.join(this.root, ...folder.split('/'));
    let entries: string[];
    try {
      entries = await readdir(start, { recursive: true });
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const out: Array<{ key: string; size: number }> = [];
    for (const entry of entries) {
      if (entry.endsWith(TEMP_SUFFIX)) continue;
      const relative = entry.split(path.sep).join('/');
      const key = folder === '' ? relative : `${folder}/${relative}`;
      if (!key.startsWith(prefix)) continue;
      const info = await stat(path.join(start, entry)).catch(() => undefined); // removed meanwhile: skip
      if (info?.isFile()) out.push({ key, size: info.size });
    }
    return out.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  }

  /**
   * Copy an object to another key atomically (a file copy to a temporary file, then `rename`).
   * @throws NotFoundError when the source does not exist; InvalidInputError for an invalid key.
   */
  async copy(sourceKey: string, targetKey: string): Promise<void> {
    const source = this.pathOf(sourceKey);
    const file = this.pathOf(targetKey);
    await mkdir(path.dirname(file), { recursive: true });
    const temp = tempBeside(file);
    try {
      await copyFile(source, temp);
      await rename(temp, file);
    } catch (error) {
      await rm(temp, { force: true });
      if (isMissing(error)) throw new NotFoundError(`No object with key ${JSON.stringify(sourceKey)} in ${this.root}`, { cause: error });
      throw error;
    }
  }

  /**
   * Whether an object with this key exists.
   * @throws InvalidInputError for an invalid key.
   */
  async exists(key: string): Promise<boolean> {
    const info = await stat(this.pathOf(key)).catch(() => undefined);
    return info?.isFile() ?? false;
  }

  /**
   * The file of a key.
   * @throws InvalidInputError when the key is empty, absolute, ends with '/', has an empty, `.` or
   *   `..` segment, a backslash or a NUL character (none can be mapped safely to a file below root).
   */
  pathOf(key: string): string {
    checkKeyShape(key, 'key');
    if (key.endsWith('/')) throw new InvalidInputError(`Invalid key ${JSON.stringify(key)}: a key cannot end with '/' in the local bucket`);
    if (key.endsWith(TEMP_SUFFIX)) throw new InvalidInputError(`Invalid key ${JSON.stringify(key)}: the suffix ${TEMP_SUFFIX} is reserved`);
    const file = path.join(this.root, ...key.split('/'));
    if (!file.startsWith(this.root + path.sep)) throw new InvalidInputError(`Invalid key ${JSON.stringify(key)}: outside the bucket`);
    return file;
  }
}

function checkKeyShape(key: string, what: 'key' | 'prefix'): void {
  const invalid = (reason: string): never => {
    throw new InvalidInputError(`Invalid ${what} ${JSON.stringify(key)}: ${reason}`);
  };
  if (key === '') invalid('empty');
  if (key.startsWith('/') || path.isAbsolute(key) || /^[A-Za-z]:/.test(key)) invalid('absolute');
  if (key.includes('\\')) invalid('backslash');
  if (key.includes('\0')) invalid('NUL character');
  // A trailing '/' leaves an empty last segment: allowed in a prefix, refused for a key by pathOf.
  const segments = key.split('/');
  const inner = key.endsWith('/') ? segments.slice(0, -1) : segments;
  for (const segment of inner) {
    if (segment === '..') invalid("'..' segment");
    if (segment === '.' || segment === '') invalid('empty or "." segment');
    // NAME_MAX of Linux file systems: each segment is a file or directory name of the local bucket.
    const bytes = Buffer.byteLength(segment, 'utf8');
    if (bytes > MAX_SEGMENT_BYTES)
      invalid(`a path segment of ${bytes} bytes; the local bucket (a directory) holds names of at most ${MAX_SEGMENT_BYTES} bytes (UTF-8)`);
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}
