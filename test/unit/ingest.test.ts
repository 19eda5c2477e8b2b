/**
 * Corpus ingestion and the chunk cache (shared/pipeline/ingest.ts), and Prepare's reuse of it
 * (shared/pipeline/prepare.ts), over the local directory bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsBlobStore } from '../../local/engine/fs-blob-store';
import { EmptyCorpusError, InvalidInputError } from '../../shared/errors';
import { corpusIdOfKey } from '../../shared/corpus';
import type { BlobStore } from '../../shared/ports';
import { chunkCacheKey, corpusContentHash, decodeAndChunk, getCorpusIngestion, ingestCorpus, type CorpusIngestion } from '../../shared/pipeline/ingest';
import { manifestKey, runChunkKey, runRecordKey } from '../../shared/pipeline/layout';
import { prepareRun } from '../../shared/pipeline/prepare';
import type { RunRecord } from '../../shared/pipeline/run-record';
import type { Chunk } from '../../shared/types';

/** A BlobStore that records the keys written (puts and copies), over a real one. */
class RecordingBlobStore implements BlobStore {
  readonly written: string[] = [];
  constructor(private readonly inner: FsBlobStore) {}
  put(key: string, body: string | Uint8Array, contentType?: string) {
    this.written.push(key);
    return this.inner.put(key, body, contentType);
  }
  get(key: string) {
    return this.inner.get(key);
  }
  getText(key: string) {
    return this.inner.getText(key);
  }
  list(prefix: string) {
    return this.inner.list(prefix);
  }
  exists(key: string) {
    return this.inner.exists(key);
  }
  copy(sourceKey: string, targetKey: string) {
    this.written.push(targetKey);
    return this.inner.copy(sourceKey, targetKey);
  }
  reset(): void {
    this.written.length = 0;
  }
}

const paragraph = (topic: string, i: number): string =>
  `The ${topic} report number ${i} describes the state of the harbour, the roads and the granaries in plain words. ` +
  `It lists what was built, what was repaired and what remains to be done before the winter comes.`;

const CORPUS = {
  'a.txt': [paragraph('first', 1), paragraph('first', 2), paragraph('first', 3)].join('\n\n'),
  'b.txt': [paragraph('second', 1), paragraph('second', 2)].join('\n\n'),
  'notes/c.md': paragraph('third', 1),
};

describe('corpus ingestion', () => {
  let dir: string;
  let blobs: RecordingBlobStore;
  const clock = (iso: string) => () => new Date(iso);

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'extagents-ingest-'));
    blobs = new RecordingBlobStore(new FsBlobStore(dir));
    for (const [name, text] of Object.entries(CORPUS)) await blobs.put(`corpora/reports/${name}`, text);
    await blobs.put('corpora/reports/logo.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]));
    blobs.reset();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('chunks a new corpus, caches its chunks and records files, sizes, token counts and skipped objects', async () => {
    // Act
    const outcome = await ingestCorpus('reports', { blobs, now: clock('2025-01-02T03:04:05Z') }, { chunkTokens: 64 });
    // Assert
    expect(outcome.outcome).toBe('ingested');
    const ingestion = (outcome as { ingestion: CorpusIngestion }).ingestion;
    expect(ingestion.files.map((f) => f.id)).toEqual(['a.txt', 'b.txt', 'logo.png', 'notes/c.md']);
    expect(ingestion.files.find((f) => f.id === 'logo.png')).toEqual({ id: 'logo.png', bytes: 11, skipped: 'binary file (PNG image)' });
    const a = ingestion.files.find((f) => f.id === 'a.txt');
    expect(a).toMatchObject({ bytes: Buffer.byteLength(CORPUS['a.txt']), chars: CORPUS['a.txt'].length });
    expect(a?.tokens).toBeGreaterThan(40);
    expect(ingestion.skipped).toEqual([{ documentId: 'logo.png', reason: 'binary file (PNG image)' }]);
    expect(ingestion.totals).toMatchObject({ files: 4, documents: 3 });
    expect(ingestion.totals.chunks).toBeGreaterThan(1);
    expect(ingestion.totals.tokens).toBe(ingestion.files.reduce((sum, f) => sum + (f.tokens ?? 0), 0));
    expect(ingestion.ingestedAt).toBe('2025-01-02T03:04:05.000Z');
    const cachedChunks = blobs.written.filter((k) => k.startsWith(`cache/chunks/${ingestion.cacheKey}/chunks/`));
    expect(cachedChunks).toHaveLength(ingestion.totals.chunks);
    expect(await getCorpusIngestion(blobs, 'reports')).toEqual(ingestion);
  });

  it('does no chunking when the same bytes are delivered again, and records the delivery', async () => {
    // Arrange
    const first = await ingestCorpus('reports', { blobs, now: clock('2025-01-01T00:00:00Z') }, { chunkTokens: 64 });
    blobs.reset();
    // Act
    const again = await ingestCorpus('reports', { blobs, now: clock('2025-01-05T00:00:00Z') }, { chunkTokens: 64 });
    // Assert
    expect(again.outcome).toBe('unchanged');
    expect(blobs.written).toEqual(['cache/corpora/reports/ingestion.json']);
    const ingestion = (again as { ingestion: CorpusIngestion }).ingestion;
    expect(ingestion.cacheKey).toBe((first as { ingestion: CorpusIngestion }).ingestion.cacheKey);
    expect(ingestion).toMatchObject({ ingestedAt: '2025-01-01T00:00:00.000Z', lastCheckedAt: '2025-01-05T00:00:00.000Z', unchangedDeliveries: 1 });
  });

  it('chunks again under a new hash when one file changes', async () => {
    // Arrange
    const first = (await ingestCorpus('reports', { blobs }, { chunkTokens: 64 })) as { ingestion: CorpusIngestion };
    await blobs.put('corpora/reports/b.txt', `${CORPUS['b.txt']}\n\nOne more sentence about the lighthouse.`);
    blobs.reset();
    // Act
    const second = (await ingestCorpus('reports', { blobs }, { chunkTokens: 64 })) as { outcome: string; ingestion: CorpusIngestion };
    // Assert
    expect(second.outcome).toBe('ingested');
    expect(second.ingestion.contentHash).not.toBe(first.ingestion.contentHash);
    expect(second.ingestion.cacheKey).not.toBe(first.ingestion.cacheKey);
    expect(blobs.written.some((k) => k.startsWith(`cache/chunks/${second.ingestion.cacheKey}/chunks/`))).toBe(true);
  });

  it('keys the cache by chunkTokens too: the same bytes with another chunk size are chunked again', async () => {
    // Arrange
    const first = (await ingestCorpus('reports', { blobs }, { chunkTokens: 64 })) as { ingestion: CorpusIngestion };
    blobs.reset();
    // Act
    const second = (await ingestCorpus('reports', { blobs }, { chunkTokens: 128 })) as { outcome: string; ingestion: CorpusIngestion };
    // Assert
    expect(second.outcome).toBe('ingested');
    expect(second.ingestion.contentHash).toBe(first.ingestion.contentHash);
    expect(second.ingestion.cacheKey).not.toBe(first.ingestion.cacheKey);
    expect(second.ingestion.totals.chunks).toBeLessThan(first.ingestion.totals.chunks);
  });

  it('reuses a cache entry for another corpus id only when the document names are the same too', () => {
    // Arrange
    const bytes = new TextEncoder().encode('same text');
    // Act
    const one = corpusContentHash([{ id: 'x.txt', bytes }]);
    const renamed = corpusContentHash([{ id: 'y.txt', bytes }]);
    // Assert
    expect(one).toBe(corpusContentHash([{ id: 'x.txt', bytes: new TextEncoder().encode('same text') }]));
    expect(renamed).not.toBe(one);
    expect(chunkCacheKey(one, 64)).not.toBe(chunkCacheKey(one, 65));
  });

  it('reports nothing for a prefix without objects and refuses an invalid corpus id', async () => {
    // Act and Assert
    expect(await ingestCorpus('nothing-here', { blobs })).toEqual({ outcome: 'no-objects', corpusId: 'nothing-here' });
    await expect(ingestCorpus('../runs', { blobs })).rejects.toThrow(InvalidInputError);
    expect(await getCorpusIngestion(blobs, 'never-ingested')).toBeUndefined();
  });

  it('finds the corpus id of an uploaded key, and none for keys outside a corpus folder', () => {
    expect(corpusIdOfKey('corpora/reports/a.txt')).toBe('reports');
    expect(corpusIdOfKey('corpora/reports/notes/c.md')).toBe('reports');
    expect(corpusIdOfKey('corpora/loose-file.txt')).toBeUndefined();
    expect(corpusIdOfKey('corpora/reports/folder/')).toBeUndefined();
    expect(corpusIdOfKey('jobs/reports/a.txt')).toBeUndefined();
  });

  describe('Prepare on an ingested corpus', () => {
    const event = (runId: string, chunkTokens: number) => ({
      runId,
      question: 'What was repaired?',
      corpus: { prefix: 'corpora/reports/' },
      options: { chunkTokens },
    });

    it('reads the cached chunks in place instead of chunking, and they equal what chunking gives', async () => {
      // Arrange: one run before ingestion (chunked), then ingestion, then a run that hits the cache
      await prepareRun(event('fresh', 64), { blobs });
      const ingested = (await ingestCorpus('reports', { blobs }, { chunkTokens: 64 })) as { ingestion: CorpusIngestion };
      blobs.reset();
      // Act
      const state = await prepareRun(event('cached', 64), { blobs });
      // Assert: the run names the entry and wrote only its record and manifest (no corpus, no chunk copied)
      const record = JSON.parse(await blobs.getText(runRecordKey('cached'))) as RunRecord;
      const fresh = JSON.parse(await blobs.getText(runRecordKey('fresh'))) as RunRecord;
      expect(record.chunkCache).toEqual({ key: ingested.ingestion.cacheKey, hit: true });
      expect(fresh.chunkCache).toEqual({ key: ingested.ingestion.cacheKey, hit: false });
      expect([record.chunksFrom, fresh.chunksFrom]).toEqual([ingested.ingestion.cacheKey, ingested.ingestion.cacheKey]);
      expect(state.chunks).toBe(ingested.ingestion.totals.chunks);
      expect({ ...record, runId: 'x', createdAt: 'x', chunkCache: undefined }).toEqual({ ...fresh, runId: 'x', createdAt: 'x', chunkCache: undefined });
      expect(blobs.written.sort()).toEqual([manifestKey('cached'), runRecordKey('cached')]);
      const objects = Object.entries(CORPUS).map(([id, text]) => ({ id, bytes: new TextEncoder().encode(text) }));
      const expected = (
        await decodeAndChunk(
          objects.sort((a, b) => a.id.localeCompare(b.id)),
          64,
          false,
        )
      ).chunks;
      expect(state.chunks).toBe(expected.length);
      for (let i = 0; i < state.chunks; i++) expect(JSON.parse(await blobs.getText(runChunkKey('cached', i, record.chunksFrom))) as Chunk).toEqual(expected[i]);
      expect(JSON.parse(await blobs.getText(manifestKey('cached')))).toEqual(JSON.parse(await blobs.getText(manifestKey('fresh'))));
    });

    it('writes the cache entry when it chunks, so the next run over the same files reads it in place', async () => {
      // Act
      await prepareRun(event('first', 64), { blobs });
      const firstWrites = [...blobs.written];
      blobs.reset();
      await prepareRun(event('second', 64), { blobs });
      // Assert
      const first = JSON.parse(await blobs.getText(runRecordKey('first'))) as RunRecord;
      const second = JSON.parse(await blobs.getText(runRecordKey('second'))) as RunRecord;
      expect([first.chunkCache?.hit, second.chunkCache?.hit, second.chunkCache?.key]).toEqual([false, true, first.chunkCache?.key]);
      expect(firstWrites.filter((k) => k.startsWith('runs/')).sort()).toEqual([manifestKey('first'), runRecordKey('first')]);
      expect(firstWrites.some((k) => k.startsWith(`cache/chunks/${first.chunksFrom}/chunks/`))).toBe(true);
      expect(blobs.written.sort()).toEqual([manifestKey('second'), runRecordKey('second')]);
    });

    it('lets ingestion count the files of a cache entry a run wrote (which has no per-file token counts)', async () => {
      // Arrange: a run chunks the corpus first and writes the entry
      await prepareRun(event('before-ingestion', 64), { blobs });
      // Act
      const outcome = (await ingestCorpus('reports', { blobs }, { chunkTokens: 64 })) as { outcome: string; ingestion: CorpusIngestion };
      // Assert: counted, not "reused" without counts
      expect(outcome.outcome).toBe('ingested');
      expect(outcome.ingestion.files.filter((f) => f.skipped === undefined).every((f) => (f.tokens ?? 0) > 0)).toBe(true);
    });

    it('chunks when the run asks for another chunk size than the ingestion used', async () => {
      // Arrange
      await ingestCorpus('reports', { blobs }, { chunkTokens: 64 });
      // Act
      await prepareRun(event('other-size', 128), { blobs });
      // Assert
      const record = JSON.parse(await blobs.getText(runRecordKey('other-size'))) as RunRecord;
      expect(record.chunkCache?.hit).toBe(false);
    });

    it('fails with EmptyCorpusError from the cache when no ingested document has usable text', async () => {
      // Arrange
      await blobs.put('corpora/blank/empty.txt', '   \n');
      await ingestCorpus('blank', { blobs }, { chunkTokens: 64 });
      // Act
      const run = prepareRun({ ...event('blank-run', 64), corpus: { prefix: 'corpora/blank/' } }, { blobs });
      // Assert
      await expect(run).rejects.toThrow(EmptyCorpusError);
      await expect(run).rejects.toThrow('empty.txt: whitespace only');
    });
  });
});

describe('counting the tokens of an uploaded file', () => {
  it('counts a 1.5 MB line without spaces in linear time (the library alone is quadratic there)', async () => {
    // Arrange: one run of letters, one pre-token of the o200k pre-tokenizer (found by the breaker
    // session: `extagents serve` ingesting such an upload spun for minutes)
    const bytes = new Uint8Array(1_572_864).fill(0x61);

    // Act
    const chunked = await decodeAndChunk([{ id: 'b.txt', bytes }], 8000, true);

    // Assert: "aaaaaaaa" is one o200k token, so 8 letters a token
    expect(chunked.files).toEqual([{ id: 'b.txt', bytes: bytes.length, chars: bytes.length, tokens: bytes.length / 8 }]);
    expect(chunked.chunks.every((c) => c.tokens <= 8000)).toBe(true);
  });
});
