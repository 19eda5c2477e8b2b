/**
 * The chunks of CHUNKING_VERSION 3 (shared/pipeline/ingest.ts), pinned byte for byte: SHA-256 over
 * `JSON.stringify(chunk) + "\n"` of every chunk in order, so any change of a cut, a count, a segment
 * or a text changes them. Version 2's one-pass counting (issue 11) kept version 1's bytes; version 3
 * (issue 27, item 4) segments only the part of a paragraph over 16,384 characters where a chunk can
 * close (`refineToSentences`), which moves cuts in such paragraphs (SOTU, whose addresses are one
 * paragraph each, at L = 8000: 278 chunks of 7,480 tokens on average before, 271 of 7,673 now, every
 * cut still at a sentence end or a document end; at L = 1000: 2,205 before, 2,177 now). A change of these
 * hashes is a change of the chunks: bump CHUNKING_VERSION with it, so no cache serves the old ones.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { resolveCorpus } from '../../local/engine/corpus';
import { chunkCorpus, ChunkStream } from '../../shared/chunking';
import { CHUNKING_VERSION } from '../../shared/pipeline/ingest';
import { decodeDocument } from '../../shared/decode';
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

describe('chunks of SOTU are those of chunking version 3', () => {
  test('the pinned hashes are of the current CHUNKING_VERSION', () => {
    expect(CHUNKING_VERSION).toBe(3);
  });

  let docs: SourceDocument[];
  beforeAll(async () => {
    docs = read(await resolveCorpus(['sotu']));
  });
  test.each([
    [8000, 271, 'e9cb7ee88d97706bdacb30d29afbe53f1d8c6f55dcc66e6584e4e822ad938d81'],
    [1000, 2177, 'df0cfdddc4c1dc5f4f1b103d997f66cce031858ef80282643edea652778b1305'],
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

describeWithSharedData('chunks of the Chinese novel and the CMRC data set are those of chunking version 3', () => {
  test('L = 8000', () => {
    const dir = path.join(SHARED_DATA, 'chinese');
    const docs = read([
      { id: 'sanguo_yanyi.txt', path: path.join(dir, 'sanguo_yanyi.txt') },
      { id: 'cmrc2018_dev.squad.json', path: path.join(dir, 'cmrc2018_dev.squad.json') },
    ]);
    const chunks = chunkCorpus(docs, { chunkTokens: 8000 });
    expect(chunks).toHaveLength(185);
    expect(digest(chunks)).toBe('1ccb552aea4e1e2e61b23167b33411d864d14b7adfb99d9f55648287c0a55876');
  });
});
