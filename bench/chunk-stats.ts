/**
 * What chunking makes of the SOTU corpus (issue 27, item 4): per chunk size, the number of chunks,
 * their mean tokens, where each chunk but the last ends (a document end, a sentence end of
 * Intl.Segmenter over the whole document, or elsewhere), and the share of the corpus's characters
 * given to the sentence segmenter while chunking (docs/PERFORMANCE.md, "Chunking in windows").
 *
 * Usage: npx tsx bench/chunk-stats.ts [--chunk-tokens 8000,1000]
 * Prints one JSON line per chunk size.
 */
import { readFileSync } from 'node:fs';
import { resolveCorpus } from '../local/engine/corpus';
import { chunkCorpus } from '../shared/chunking';
import { decodeDocument } from '../shared/decode';
import type { SourceDocument } from '../shared/types';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/chunk-stats.ts [--chunk-tokens 8000,1000]

Chunks the SOTU corpus (233 addresses) at each chunk size and prints one JSON line per size: chunks,
mean tokens, where the chunks but the last end (document end, sentence end by Intl.Segmenter over the
whole document, other), and the share of the corpus's characters given to the sentence segmenter
while chunking.

Options:
  --chunk-tokens LIST   comma-separated chunk sizes, tokens (default 8000,1000)
  -h, --help            print this and exit
`;

/** Offsets where a sentence starts in `text` (Intl.Segmenter, as the chunker segments). */
function sentenceStarts(text: string): Set<number> {
  return new Set(Array.from(new Intl.Segmenter('en', { granularity: 'sentence' }).segment(text), (s) => s.index));
}

async function main(): Promise<void> {
  const { values } = benchArgs(USAGE, { 'chunk-tokens': { type: 'string', default: '8000,1000' } });
  const sizes = values['chunk-tokens'].split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 4))
    usageError(USAGE, `--chunk-tokens must be integers >= 4 separated by commas, got ${values['chunk-tokens']}`);
  const docs: SourceDocument[] = [];
  for (const file of await resolveCorpus(['sotu'])) {
    const decoded = decodeDocument(file.id, readFileSync(file.path));
    if ('doc' in decoded) docs.push(decoded.doc);
  }
  const byId = new Map(docs.map((doc) => [doc.id, doc]));
  const corpusChars = docs.reduce((sum, doc) => sum + doc.text.length, 0);
  const starts = new Map<string, Set<number>>();
  // Count the characters the chunker gives Intl.Segmenter at sentence granularity.
  const segment = Intl.Segmenter.prototype.segment;
  let segmented = 0;
  Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, input: string) {
    if (this.resolvedOptions().granularity === 'sentence') segmented += input.length;
    return segment.call(this, input);
  };
  for (const chunkTokens of sizes) {
    segmented = 0;
    const chunks = chunkCorpus(docs, { chunkTokens });
    const chars = segmented;
    const ends = { document: 0, sentence: 0, other: 0 };
    for (const chunk of chunks.slice(0, -1)) {
      const last = chunk.segments[chunk.segments.length - 1];
      const doc = byId.get(last.documentId) as SourceDocument;
      if (last.end === doc.text.length) ends.document += 1;
      else {
        if (!starts.has(doc.id)) starts.set(doc.id, sentenceStarts(doc.text));
        ends[starts.get(doc.id)?.has(last.end) ? 'sentence' : 'other'] += 1;
      }
    }
    const meanTokens = Math.round(chunks.reduce((sum, c) => sum + c.tokens, 0) / chunks.length);
    process.stdout.write(
      `${JSON.stringify({ chunkTokens, chunks: chunks.length, meanTokens, ends, sentenceSegmentedShare: Number((chars / corpusChars).toFixed(2)) })}\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
