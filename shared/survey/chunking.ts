/**
 * Chunking of a survey corpus. Unlike question answering (shared/chunking.ts packs documents and
 * fills chunks with parts of the next document), a survey cites whole papers, so a source is never
 * split across chunks unless it alone exceeds L: sources are packed whole, in corpus order, and a
 * source longer than L is chunked alone by `chunkCorpus` (each piece keeps the source's id). Every
 * chunk segment names its source, so every message carries the ids of the sources it came from.
 */
import { chunkCorpus, SEGMENT_SEPARATOR } from '../chunking';
import { InvalidInputError } from '../errors';
import { countTokens } from '../tokenizer';
import type { Chunk, ChunkSegment } from '../types';
import type { SurveySource } from './types';

/**
 * Pack sources into chunks of at most `chunkTokens` tokens.
 * @param sources distinct ids, in corpus order.
 * @param chunkTokens L, integer >= 64 (tokens of shared/tokenizer.ts).
 * @returns chunks with `index` 0..n-1; a source appears in exactly one chunk unless it is longer
 *   than L (then in consecutive chunks of its own).
 * @throws InvalidInputError for a bad `chunkTokens` or a repeated id.
 */
export function chunkSources(sources: SurveySource[], chunkTokens: number): Chunk[] {
  if (!Number.isInteger(chunkTokens) || chunkTokens < 64) throw new InvalidInputError(`chunkTokens must be an integer >= 64, got ${String(chunkTokens)}`);
  const chunks: Chunk[] = [];
  const separatorTokens = countTokens(SEGMENT_SEPARATOR);
  let open: Array<{ source: SurveySource; tokens: number }> = [];
  let openTokens = 0;
  const close = (): void => {
    if (open.length === 0) return;
    const segments: ChunkSegment[] = [];
    let offset = 0;
    for (const { source } of open) {
      if (segments.length > 0) offset += SEGMENT_SEPARATOR.length;
      segments.push({ documentId: source.id, start: 0, end: source.text.length, chunkStart: offset });
      offset += source.text.length;
    }
    const text = open.map((o) => o.source.text).join(SEGMENT_SEPARATOR);
    chunks.push({ index: chunks.length, tokens: countTokens(text), chars: text.length, segments, text });
    open = [];
    openTokens = 0;
  };
  const seen = new Set<string>();
  for (const source of sources) {
    if (seen.has(source.id)) throw new InvalidInputError(`Two sources have the same id: ${source.id}`);
    seen.add(source.id);
    const tokens = countTokens(source.text);
    if (tokens > chunkTokens) {
      close();
      for (const piece of chunkCorpus([{ id: source.id, text: source.text }], { chunkTokens })) chunks.push({ ...piece, index: chunks.length });
      continue;
    }
    const cost = tokens + (open.length > 0 ? separatorTokens : 0);
    if (openTokens + cost > chunkTokens) close();
    openTokens += tokens + (open.length > 0 ? separatorTokens : 0);
    open.push({ source, tokens });
  }
  close();
  return chunks;
}
