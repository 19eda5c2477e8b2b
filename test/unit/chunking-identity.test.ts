/**
 * Chunks are byte-identical to those of the chunking before the one-pass counting (issue 11, item 3:
 * shared/chunking.ts counts ranges from each document's pre-token index instead of re-encoding every
 * piece and every final chunk text). The hashes below were computed with the previous algorithm
 * (commit f3d8aee) over the same inputs: SHA-256 over `JSON.stringify(chunk) + "\n"` of every chunk
 * in order, so any change of a cut, a count, a segment or a text changes them. CHUNKING_VERSION
 * (shared/pipeline/ingest.ts) is unchanged because the bytes are.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { chunkCorpus, ChunkStream } from '../../shared/chunking';
import { decodeDocument } from '../../shared/text';
import type { Chunk, SourceDocument } from '../../shared/types';
import { describeWithSharedData, SHARED_DATA } from '../support/shared-data';

jest.setTimeout(180_000);

function read(files: { id: string; path: string }[]): SourceDocument[] {
  const docs: SourceDocument[] = [];
  for (const f of files) {
    const decoded = decodeDocument(f.id, readFileSync(f.path));
    if ('doc' in decoded) docs.push(decoded.doc);
  }
  return docs;
}

function digest(chunks: Chunk[]): string {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(JSON.stringify(chunk)).update('\n');
  return hash.digest('hex');
}

describe('chunks of SOTU equal those of the previous algorithm', () => {
  let docs: SourceDocument[];
  beforeAll(async () => {
    docs = read(await resolveCorpus(['sotu']));
  });
  test.each([
    [8000, 278, '855bb0e4e9c1fe171c422aecc976364382e8f411da4da3251e9f32cf14e38967'],
    [1000, 2205, '22625df89630b075e173139c7032cfabc6aa08d9a8456ac9098bb2cdc5864841'],
  ])('L = %i', (chunkTokens, count, sha256) => {
    const chunks = chunkCorpus(docs, { chunkTokens });
    expect(chunks).toHaveLength(count);
    expect(digest(chunks)).toBe(sha256);
  });

  test('a ChunkStream fed one document at a time gives the same chunks, holding only the documents of the open chunk', () => {
    const stream = new ChunkStream({ chunkTokens: 8000 });
    const chunks: Chunk[] = [];
    for (const doc of docs.slice(0, 40)) chunks.push(...stream.add(doc));
    chunks.push(...stream.end());
    expect(digest(chunks)).toBe(digest(chunkCorpus(docs.slice(0, 40), { chunkTokens: 8000 })));
  });
});

describeWithSharedData('chunks of the Chinese novel and the CMRC data set equal those of the previous algorithm', () => {
  test('L = 8000', () => {
    const dir = path.join(SHARED_DATA, 'chinese');
    const docs = read([
      { id: 'sanguo_yanyi.txt', path: path.join(dir, 'sanguo_yanyi.txt') },
      { id: 'cmrc2018_dev.squad.json', path: path.join(dir, 'cmrc2018_dev.squad.json') },
    ]);
    const chunks = chunkCorpus(docs, { chunkTokens: 8000 });
    expect(chunks).toHaveLength(185);
    expect(digest(chunks)).toBe('57191277bdb90f7d0aaec26b9e9834e21a8ac5b36da93035d051be78d18c6db5');
  });
});
