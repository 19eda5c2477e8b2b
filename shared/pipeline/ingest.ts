/**
 * Corpus ingestion and the chunk cache (docs/UPLOADS.md).
 *
 * Objects uploaded under `corpora/<corpusId>/` are ingested once: read, decoded, token-counted and
 * chunked, and the chunks are cached under a key derived from the corpus content and the tokenizer
 * settings, so that
 * - a later ingestion of identical bytes does no chunking (the content hash is unchanged: recorded as
 *   an unchanged delivery), and
 * - Prepare (shared/pipeline/prepare.ts) of a run over the same objects with the same `chunkTokens`
 *   reads the cached chunk objects in place instead of chunking the corpus again (the run record
 *   names the entry: `chunksFrom`), and a Prepare that chunks writes its chunks into the entry.
 *
 * Memory: objects are read, decoded and chunked one at a time (`chunkIntoCache`, `hashCorpusObjects`:
 * at most two batches of `IO_CONCURRENCY` objects, the documents of the chunk being filled and the
 * chunks being written are held), so it stays flat as the corpus grows.
 *
 * Keys (all in the project bucket):
 *   cache/chunks/<cacheKey>/chunks/<index:07>.json   one `Chunk` (same JSON as runs/<runId>/chunks/…)
 *   cache/chunks/<cacheKey>/manifest.json            `ChunkCacheManifest`, written last (its presence
 *                                                    means every chunk object is in place)
 *   cache/corpora/<corpusId>/ingestion.json          `CorpusIngestion`, the corpus summary
 *
 * The cache key is SHA-256 over the content hash, the tokenizer name, `chunkTokens` and
 * {@link CHUNKING_VERSION}. The content hash is SHA-256 over every object in key order: its id (the
 * key below the corpus prefix; chunks carry document ids, so two corpora with the same bytes under
 * other names do not share chunks), its byte length and its bytes.
 *
 * Domain code: no AWS SDK; storage through the BlobStore port.
 */
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { chunkCorpus, ChunkStream } from '../chunking';
import { corpusPrefix, parseCorpusId } from '../corpus';
import { RunOptionsSchema } from '../config';
import { ConfigurationError } from '../errors';
import { issueMessages } from '../validation';
import type { BlobStore } from '../ports';
import { readDocument } from '../readers';
import { MAX_DOCUMENT_BYTES, tooLargeReason, type DecodeResult } from '../decode';
import { TOKENIZER_NAME, countTokens } from '../tokenizer';
import { documentSummary, type Chunk, type DocumentSummary, type SkippedDocument, type SourceDocument } from '../types';
import { cachedChunkKey, chunkCachePrefix } from './layout';

export { cachedChunkKey, chunkCachePrefix } from './layout';

/** Parallel object reads/writes of one ingestion or Prepare (bounds memory and open sockets). */
export const IO_CONCURRENCY = 16;

/**
 * Version of the chunking algorithm's output, part of the cache key. Bump it whenever
 * `chunkCorpus` (shared/chunking.ts) or the readers (shared/readers/, shared/decode.ts) would cut or read the
 * same bytes differently, so that no run reuses chunks of the old algorithm.
 */
export const CHUNKING_VERSION = 3;

/** The manifest of one cache entry (written last). */
export const chunkCacheManifestKey = (cacheKey: string): string => `${chunkCachePrefix(cacheKey)}manifest.json`;
/** The ingestion summary of a corpus. */
export const ingestionKey = (corpusId: string): string => `cache/corpora/${corpusId}/ingestion.json`;

/** One corpus object as read from the bucket. */
export interface CorpusObject {
  /** Document id: the key below the corpus prefix (the whole key when there is no prefix). */
  id: string;
  /** The object's bytes; empty, never read, for an object over `MAX_DOCUMENT_BYTES` (see `size`). */
  bytes: Uint8Array;
  /**
   * The object's size in bytes when it was not read: set (and over `MAX_DOCUMENT_BYTES`) only for an
   * object skipped as too large by its listed size, so that no path loads it into memory.
   */
  tooLargeSize?: number;
}

/** The size an object counts with: its bytes, or the listed size of one too large to read. */
export const objectSize = (object: CorpusObject): number => object.tooLargeSize ?? object.bytes.length;

/**
 * An object's document or skip reason: `readDocument` (shared/readers), or "too large" by its listed
 * size for an object that was not read.
 */
export async function readCorpusObject(object: CorpusObject): Promise<DecodeResult> {
  if (object.tooLargeSize !== undefined) return { skipped: { documentId: object.id, reason: tooLargeReason(object.tooLargeSize) } };
  return readDocument(object.id, object.bytes);
}

/** One object of an ingested corpus. */
export interface IngestedFile {
  /** Document id (key below `corpora/<corpusId>/`). */
  id: string;
  /** Size in bytes. */
  bytes: number;
  /** Characters (UTF-16 code units) of the decoded text; absent when skipped. */
  chars?: number;
  /** Tokens of the decoded text (shared/tokenizer.ts); absent when skipped. */
  tokens?: number;
  /** Why the object was not chunked (binary, invalid UTF-8, empty, whitespace only). */
  skipped?: string;
}

/** `cache/chunks/<cacheKey>/manifest.json`: what one chunking of one content produced. */
export interface ChunkCacheManifest {
  version: 1;
  cacheKey: string;
  contentHash: string;
  tokenizer: string;
  /** L: maximum tokens per chunk. */
  chunkTokens: number;
  chunkingVersion: number;
  /** Every object, in key order. */
  files: IngestedFile[];
  /** The chunked documents with their length in characters and locations (the run record's `documents`). */
  documents: DocumentSummary[];
  skipped: SkippedDocument[];
  /** Number of chunk objects (0 when no document has usable text). */
  chunks: number;
  /** Total tokens of all chunk texts. */
  chunkTokensTotal: number;
  /** ISO-8601 time the entry was written. */
  createdAt: string;
}

/** `cache/corpora/<corpusId>/ingestion.json`: the ingestion summary of a corpus (GET /v1/corpora/{id}). */
export interface CorpusIngestion {
  corpusId: string;
  /** `corpora/<corpusId>/`. */
  prefix: string;
  contentHash: string;
  /** Key of the chunk cache entry (`cache/chunks/<cacheKey>/`). */
  cacheKey: string;
  tokenizer: string;
  chunkTokens: number;
  /** Every object, in key order, with size, characters and tokens, or why it was skipped. */
  files: IngestedFile[];
  skipped: SkippedDocument[];
  totals: {
    files: number;
    /** Sum of object sizes, bytes. */
    bytes: number;
    /** Objects with usable text. */
    documents: number;
    /** Sum of the documents' token counts. */
    tokens: number;
    chunks: number;
  };
  /** ISO-8601 time this content was ingested (chunked, or found in the cache). */
  ingestedAt: string;
  /** ISO-8601 time of the last ingestion request, including unchanged deliveries. */
  lastCheckedAt: string;
  /** Ingestion requests since `ingestedAt` that found identical bytes and did nothing. */
  unchangedDeliveries: number;
}

/**
 * What an ingestion did: `ingested` (chunked and cached), `reused` (new for this corpus, but the
 * cache already held this content: no chunking), `unchanged` (same content as the corpus's last
 * ingestion: no work beyond reading and hashing), `no-objects` (nothing under the prefix; nothing
 * written).
 */
export type IngestOutcome = { outcome: 'ingested' | 'reused' | 'unchanged'; ingestion: CorpusIngestion } | { outcome: 'no-objects'; corpusId: string };

/** Dependencies of {@link ingestCorpus}. */
export interface IngestDeps {
  blobs: BlobStore;
  /** Clock for the summary (tests pass a fixed one). */
  now?: () => Date;
}

/** Options of {@link ingestCorpus}. */
export interface IngestOptions {
  /** L, tokens per chunk, as in the run options (64-200,000). @default the run option default, 8000 */
  chunkTokens?: number;
}

/**
 * SHA-256 (hex) of a corpus's content, fed one object at a time: for each object in the given order,
 * its id, its byte length and its bytes. Objects must be in key order (as `BlobStore.list` returns them).
 */
export class CorpusHasher {
  private readonly hash = createHash('sha256').update('extagents-corpus-v1\n');

  add(object: CorpusObject): void {
    if (object.tooLargeSize !== undefined) {
      // Never read: its id and size stand for it (its text is skipped whatever its bytes).
      this.hash.update(`${object.id}\n${object.tooLargeSize}\ntoo-large\n`);
      return;
    }
    this.hash.update(`${object.id}\n${object.bytes.length}\n`);
    this.hash.update(object.bytes);
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}

/** `CorpusHasher` over objects already in memory. */
export function corpusContentHash(objects: readonly CorpusObject[]): string {
  const hasher = new CorpusHasher();
  for (const object of objects) hasher.add(object);
  return hasher.digest();
}

/** The chunk cache key (SHA-256 hex) of a content hash under the given chunk size and this tokenizer. */
export function chunkCacheKey(contentHash: string, chunkTokens: number): string {
  return createHash('sha256').update(`extagents-chunks-v1\n${contentHash}\n${TOKENIZER_NAME}\n${chunkTokens}\n${CHUNKING_VERSION}`).digest('hex');
}

/**
 * Read corpus objects with bounded concurrency, in the given key order.
 * @param prefix removed from each key to form the document id (a key equal to the prefix keeps its
 *   whole key), as Prepare names documents.
 * @throws NotFoundError (from the BlobStore) when an object disappeared since it was listed.
 */
export async function readCorpusObjects(blobs: BlobStore, keys: readonly string[], prefix: string): Promise<CorpusObject[]> {
  const limit = pLimit(IO_CONCURRENCY);
  const sizes = await listedSizes(blobs, keys);
  return Promise.all(keys.map((key) => limit(() => readObject(blobs, key, prefix, sizes))));
}

/**
 * The listed sizes of `keys`, from one listing of their longest common prefix (ListObjectsV2 gives
 * sizes; S3 or the local bucket), so that an object too large to read is known before it is read.
 */
async function listedSizes(blobs: BlobStore, keys: readonly string[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  let common = keys[0];
  for (const key of keys) while (!key.startsWith(common)) common = common.slice(0, -1);
  const wanted = new Set(keys);
  return new Map((await blobs.list(common)).filter((o) => wanted.has(o.key)).map((o) => [o.key, o.size]));
}

/** One corpus object: read, or (over `MAX_DOCUMENT_BYTES` by its listed size) not read, with its size. */
async function readObject(blobs: BlobStore, key: string, prefix: string, sizes: ReadonlyMap<string, number>): Promise<CorpusObject> {
  const size = sizes.get(key);
  const id = documentIdOf(key, prefix);
  if (size !== undefined && size > MAX_DOCUMENT_BYTES) return { id, bytes: new Uint8Array(0), tooLargeSize: size };
  return { id, bytes: await blobs.get(key) };
}

/** Document id of a corpus key: the key below `prefix` (a key equal to the prefix keeps its whole key). */
const documentIdOf = (key: string, prefix: string): string => key.slice(prefix.length) || key;

/**
 * Visit corpus objects in key order, one at a time, reading `IO_CONCURRENCY` of them at once and the
 * next batch while a batch is visited: at most two batches are held, whatever the corpus size.
 * @throws NotFoundError (from the BlobStore) when an object disappeared since it was listed.
 */
export async function forEachCorpusObject(
  blobs: BlobStore,
  keys: readonly string[],
  prefix: string,
  visit: (object: CorpusObject) => Promise<void> | void,
  listed?: ReadonlyMap<string, number>,
): Promise<void> {
  const sizes = listed ?? (await listedSizes(blobs, keys));
  const batch = (start: number): Promise<CorpusObject[]> =>
    Promise.all(keys.slice(start, start + IO_CONCURRENCY).map((key) => readObject(blobs, key, prefix, sizes)));
  let next = batch(0);
  for (let start = 0; start < keys.length; start += IO_CONCURRENCY) {
    const objects = await next;
    if (start + IO_CONCURRENCY < keys.length) next = batch(start + IO_CONCURRENCY);
    for (const object of objects) await visit(object);
  }
}

/** The content hash (`corpusContentHash`) of corpus objects read one batch at a time. */
export async function hashCorpusObjects(blobs: BlobStore, keys: readonly string[], prefix: string, listed?: ReadonlyMap<string, number>): Promise<string> {
  const hasher = new CorpusHasher();
  await forEachCorpusObject(blobs, keys, prefix, (object) => hasher.add(object), listed);
  return hasher.digest();
}

/** What decoding and chunking a corpus produced. */
export interface ChunkedCorpus {
  files: IngestedFile[];
  documents: SourceDocument[];
  skipped: SkippedDocument[];
  chunks: Chunk[];
}

/**
 * Read every object (shared/readers/: plain text, HTML, Markdown, PDF, DOCX; skipping unusable ones
 * with their reason) and chunk the documents.
 * @param countFileTokens also count each document's tokens (one extra tokenizer pass; the ingestion
 *   summary reports them, Prepare does not need them).
 * @throws InvalidInputError from `chunkCorpus` (two documents with one id cannot happen: ids are keys).
 */
export async function decodeAndChunk(objects: readonly CorpusObject[], chunkTokens: number, countFileTokens: boolean): Promise<ChunkedCorpus> {
  const files: IngestedFile[] = [];
  const documents: SourceDocument[] = [];
  const skipped: SkippedDocument[] = [];
  for (const object of objects) {
    const decoded = await readCorpusObject(object);
    if ('doc' in decoded) {
      documents.push(decoded.doc);
      files.push({
        id: object.id,
        bytes: object.bytes.length,
        chars: decoded.doc.text.length,
        ...(countFileTokens && { tokens: countTokens(decoded.doc.text) }),
      });
    } else {
      skipped.push(decoded.skipped);
      files.push({ id: object.id, bytes: objectSize(object), skipped: decoded.skipped.reason });
    }
  }
  const chunks = documents.length > 0 ? chunkCorpus(documents, { chunkTokens }) : [];
  return { files, documents, skipped, chunks };
}

/** The cache manifest of a key, or undefined when that content was never cached with these settings. */
export async function loadChunkCache(blobs: BlobStore, cacheKey: string): Promise<ChunkCacheManifest | undefined> {
  const key = chunkCacheManifestKey(cacheKey);
  if (!(await blobs.exists(key))) return undefined;
  const manifest = JSON.parse(await blobs.getText(key)) as ChunkCacheManifest;
  return manifest.version === 1 && manifest.cacheKey === cacheKey ? manifest : undefined;
}

/** Whether a cache entry counts the tokens of every file it read (ingestion's do; Prepare's do not). */
export function hasFileCounts(manifest: ChunkCacheManifest): boolean {
  return manifest.files.every((f) => f.skipped !== undefined || f.tokens !== undefined);
}

/**
 * Read, decode and chunk a corpus one object at a time (the readers of shared/readers/, skipping
 * unusable objects with their reason), writing each chunk into the cache entry as soon as it is
 * closed, then the entry's manifest (last: its presence means every chunk is in place). Holds at most
 * two batches of objects, the documents of the chunk being filled and the chunks being written.
 * An empty corpus gives an entry of 0 chunks.
 * @param countFileTokens also count each document's tokens (one more tokenizer pass; the ingestion
 *   summary reports them, Prepare does not need them).
 * @returns the manifest written.
 * @throws NotFoundError when an object disappeared since it was listed.
 */
export async function chunkIntoCache(
  blobs: BlobStore,
  keys: readonly string[],
  prefix: string,
  entry: { cacheKey: string; contentHash: string; chunkTokens: number; createdAt: string },
  countFileTokens: boolean,
  listed?: ReadonlyMap<string, number>,
): Promise<ChunkCacheManifest> {
  const files: IngestedFile[] = [];
  const documents: DocumentSummary[] = [];
  const skipped: SkippedDocument[] = [];
  const stream = new ChunkStream({ chunkTokens: entry.chunkTokens });
  const limit = pLimit(IO_CONCURRENCY);
  let pending: Promise<void>[] = [];
  let chunks = 0;
  let chunkTokensTotal = 0;
  const write = async (closed: Chunk[]): Promise<void> => {
    for (const chunk of closed) {
      chunks++;
      chunkTokensTotal += chunk.tokens;
      pending.push(limit(() => blobs.put(cachedChunkKey(entry.cacheKey, chunk.index), JSON.stringify(chunk), 'application/json')));
    }
    // Bound the chunks held in memory by writes not yet done.
    if (pending.length >= 4 * IO_CONCURRENCY) {
      const writing = pending;
      pending = [];
      await Promise.all(writing);
    }
  };
  await forEachCorpusObject(
    blobs,
    keys,
    prefix,
    async (object) => {
      const decoded = await readCorpusObject(object);
      if ('doc' in decoded) {
        const { doc } = decoded;
        documents.push(documentSummary(doc));
        files.push({ id: object.id, bytes: object.bytes.length, chars: doc.text.length, ...(countFileTokens && { tokens: countTokens(doc.text) }) });
        await write(stream.add(doc));
        // Chunking is CPU work on the event loop: let it serve others (a local server's requests)
        // between documents, not only after the whole corpus.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        skipped.push(decoded.skipped);
        files.push({ id: object.id, bytes: objectSize(object), skipped: decoded.skipped.reason });
      }
    },
    listed,
  );
  await write(stream.end());
  await Promise.all(pending);
  const manifest: ChunkCacheManifest = {
    version: 1,
    cacheKey: entry.cacheKey,
    contentHash: entry.contentHash,
    tokenizer: TOKENIZER_NAME,
    chunkTokens: entry.chunkTokens,
    chunkingVersion: CHUNKING_VERSION,
    files,
    documents,
    skipped,
    chunks,
    chunkTokensTotal,
    createdAt: entry.createdAt,
  };
  await blobs.put(chunkCacheManifestKey(entry.cacheKey), JSON.stringify(manifest), 'application/json');
  return manifest;
}

/**
 * Ingest the corpus `corpora/<corpusId>/`: read and hash every object; when the content (and the
 * chunk settings) equal the corpus's last ingestion, only record the delivery (`unchanged`); when
 * the cache already holds this content, write the summary from it (`reused`); otherwise decode,
 * count, chunk, write the cache entry and the summary (`ingested`).
 *
 * Concurrent ingestions of one corpus are safe (every write is a whole object, and equal content
 * writes equal objects); they may repeat work.
 *
 * @throws InvalidInputError for an invalid corpus id; ConfigurationError for an invalid chunkTokens.
 */
export async function ingestCorpus(corpusId: string, deps: IngestDeps, options: IngestOptions = {}): Promise<IngestOutcome> {
  const id = parseCorpusId(corpusId);
  const chunkTokens = parseChunkTokens(options.chunkTokens);
  const { blobs } = deps;
  const now = (deps.now ?? (() => new Date()))().toISOString();
  const prefix = corpusPrefix(id);

  const listed = await blobs.list(prefix);
  if (listed.length === 0) return { outcome: 'no-objects', corpusId: id };
  const keys = listed.map((o) => o.key);
  const sizes = new Map(listed.map((o) => [o.key, o.size]));
  const contentHash = await hashCorpusObjects(blobs, keys, prefix, sizes);
  const cacheKey = chunkCacheKey(contentHash, chunkTokens);

  const previous = await getCorpusIngestion(blobs, id);
  let manifest = await loadChunkCache(blobs, cacheKey);
  // An entry a run's Prepare wrote has no per-file token counts (Prepare does not count files):
  // ingestion then counts and writes the entry again, so its summary has them.
  if (manifest && !hasFileCounts(manifest)) manifest = undefined;
  if (previous && previous.cacheKey === cacheKey && manifest) {
    const ingestion: CorpusIngestion = { ...previous, lastCheckedAt: now, unchangedDeliveries: previous.unchangedDeliveries + 1 };
    await blobs.put(ingestionKey(id), JSON.stringify(ingestion), 'application/json');
    return { outcome: 'unchanged', ingestion };
  }
  const outcome = manifest ? 'reused' : 'ingested';
  manifest ??= await chunkIntoCache(blobs, keys, prefix, { cacheKey, contentHash, chunkTokens, createdAt: now }, true, sizes);
  const ingestion = summaryOf(id, manifest, now);
  await blobs.put(ingestionKey(id), JSON.stringify(ingestion), 'application/json');
  return { outcome, ingestion };
}

/**
 * The ingestion summary of a corpus (files, sizes, token counts, skipped documents, chunk count),
 * or undefined when the corpus was never ingested.
 * @throws InvalidInputError for an invalid corpus id.
 */
export async function getCorpusIngestion(blobs: BlobStore, corpusId: string): Promise<CorpusIngestion | undefined> {
  const key = ingestionKey(parseCorpusId(corpusId));
  if (!(await blobs.exists(key))) return undefined;
  return JSON.parse(await blobs.getText(key)) as CorpusIngestion;
}

function summaryOf(corpusId: string, manifest: ChunkCacheManifest, now: string): CorpusIngestion {
  const documents = manifest.files.filter((f) => f.skipped === undefined);
  return {
    corpusId,
    prefix: corpusPrefix(corpusId),
    contentHash: manifest.contentHash,
    cacheKey: manifest.cacheKey,
    tokenizer: manifest.tokenizer,
    chunkTokens: manifest.chunkTokens,
    files: manifest.files,
    skipped: manifest.skipped,
    totals: {
      files: manifest.files.length,
      bytes: manifest.files.reduce((sum, f) => sum + f.bytes, 0),
      documents: documents.length,
      tokens: documents.reduce((sum, f) => sum + (f.tokens ?? 0), 0),
      chunks: manifest.chunks,
    },
    ingestedAt: now,
    lastCheckedAt: now,
    unchangedDeliveries: 0,
  };
}

/** chunkTokens validated by the run options' own rule (one source of truth for the range). */
function parseChunkTokens(chunkTokens: number | undefined): number {
  // The field's own schema (RunOptionsSchema has cross-field rules, so zod refuses to `.pick` it).
  const result = RunOptionsSchema.shape.chunkTokens.safeParse(chunkTokens);
  if (!result.success) {
    throw new ConfigurationError(`Invalid ingestion chunkTokens ${String(chunkTokens)}: ${issueMessages(result.error)}`);
  }
  return result.data;
}
